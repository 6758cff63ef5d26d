// The command framework's flags and arguments of a command, made from its declared table
// (startup/flags.ts; GATE-cli-declared-once), so `--help` and the docs site say what the fast
// paths' parsers read.
import { Args, Flags, type Interfaces } from "@oclif/core";
import type { ArgSpec, FlagSpec, FlagTable } from "../startup/flags.js";

/** The framework's flag of each row, typed as the row declares it. */
export type OclifFlags<T extends FlagTable> = {
  [K in keyof T]: T[K] extends { type: "boolean" }
    ? Interfaces.BooleanFlag<boolean>
    : T[K] extends { multiple: true }
      ? Interfaces.OptionFlag<string[] | undefined>
      : Interfaces.OptionFlag<string | undefined>;
};

export function oclifFlags<T extends FlagTable>(table: T): OclifFlags<T> {
  const out: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(table) as Array<[string, FlagSpec]>) {
    const common = { description: f.description, ...(f.char ? { char: f.char as Interfaces.AlphabetLowercase } : {}), ...(f.hidden ? { hidden: true } : {}) };
    out[name] =
      f.type === "boolean"
        ? Flags.boolean(common)
        : f.multiple
          ? Flags.string({ ...common, multiple: true, ...(f.options ? { options: [...f.options] } : {}) })
          : Flags.string({ ...common, ...(f.options ? { options: [...f.options] } : {}) });
  }
  return out as OclifFlags<T>;
}

/** The framework's optional string argument of each declared argument. */
export function oclifArgs(args: readonly ArgSpec[]): Record<string, Interfaces.Arg<string | undefined>> {
  return Object.fromEntries(args.map((a) => [a.name, Args.string({ description: a.description })]));
}
