// A command's flags and arguments as one declared table (GATE-cli-declared-once): the parsers on the
// fast paths, the command framework's commands (`--help`, the docs site) and the argument lists one
// tau process builds for another are all made from it. `tau run`'s table is cli/run/flags.ts,
// `tau`, `tau attach` and `tau resume`'s cli/tui/flags.ts, `tau daemon`'s startup/daemon-flags.ts.
// Plain data and small pure functions: every fast bundle may hold it.

export interface FlagSpec {
  readonly type: "string" | "boolean";
  /** A one-letter alias (`-p`). */
  readonly char?: string;
  /** May be given more than once; the values are kept in order. */
  readonly multiple?: boolean;
  /** One line for `--help` and the docs site. */
  readonly description: string;
  /** What a string flag's value is, in a usage line and help (`ID`, `DIR`, `KEY=VALUE`). */
  readonly value?: string;
  /** The only values a string flag takes. */
  readonly options?: readonly string[];
  /** Flags of one group are alternatives, shown `[--a A | --b B]` in the usage line. */
  readonly group?: string;
  /** Left out of usage and help: what tau's own processes pass one another. */
  readonly hidden?: boolean;
}

export type FlagTable = Readonly<Record<string, FlagSpec>>;

/** A positional argument. */
export interface ArgSpec {
  readonly name: string;
  readonly description: string;
}

/** The flags' values, by name, as a parser gives them. */
export type FlagValues<T extends FlagTable> = {
  readonly [K in keyof T]?: T[K] extends { type: "boolean" } ? boolean : T[K] extends { multiple: true } ? readonly string[] : string;
};

/** node:util's parseArgs option for each flag, typed so that parseArgs types each value. */
export type ParseArgsOptions<T extends FlagTable> = {
  [K in keyof T]: { type: T[K]["type"]; short?: string } & (T[K] extends { multiple: true } ? { multiple: true } : { multiple?: false });
};

/** The table as node:util's parseArgs options. */
export function parseArgsOptions<T extends FlagTable>(table: T): ParseArgsOptions<T> {
  const out: Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }> = {};
  for (const [name, f] of Object.entries(table)) {
    out[name] = { type: f.type, ...(f.char ? { short: f.char } : {}), ...(f.multiple ? { multiple: true } : {}) };
  }
  return out as ParseArgsOptions<T>;
}

/** Why a command line does not fit its table. */
export type FlagProblem =
  | { readonly kind: "unexpected"; readonly arg: string }
  | { readonly kind: "missing_value"; readonly flag: string }
  | { readonly kind: "bad_value"; readonly flag: string; readonly options: readonly string[] };

export type ParsedFlags<T extends FlagTable> = { readonly ok: true; readonly values: FlagValues<T>; readonly positionals: readonly string[] } | { readonly ok: false; readonly problem: FlagProblem };

/**
 * Reads `argv` against `table` and at most `maxPositionals` positional arguments: `--name`,
 * `--name VALUE`, `--name=VALUE` and `-c VALUE`. A separate value may not start with `--` (a
 * forgotten value would swallow the next flag). Anything else is a problem naming the argument.
 */
export function parseFlags<T extends FlagTable>(table: T, argv: readonly string[], maxPositionals = 0): ParsedFlags<T> {
  const values: Record<string, string | boolean | string[]> = {};
  const positionals: string[] = [];
  const byChar = new Map(Object.entries(table).flatMap(([name, f]) => (f.char ? [[f.char, name] as const] : [])));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith("-") || arg === "-") {
      if (positionals.length >= maxPositionals) return { ok: false, problem: { kind: "unexpected", arg } };
      positionals.push(arg);
      continue;
    }
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const name = arg.startsWith("--") ? arg.slice(2, eq < 0 ? undefined : eq) : byChar.get(arg.slice(1));
    const f = name === undefined || !Object.hasOwn(table, name) ? undefined : table[name];
    if (name === undefined || f === undefined) return { ok: false, problem: { kind: "unexpected", arg } };
    if (f.type === "boolean") {
      if (eq >= 0) return { ok: false, problem: { kind: "unexpected", arg } };
      values[name] = true;
      continue;
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || (eq < 0 && value.startsWith("--"))) return { ok: false, problem: { kind: "missing_value", flag: `--${name}` } };
    if (f.options && !f.options.includes(value)) return { ok: false, problem: { kind: "bad_value", flag: `--${name}`, options: f.options } };
    if (f.multiple) values[name] = [...((values[name] as string[] | undefined) ?? []), value];
    else values[name] = value;
  }
  return { ok: true, values: values as FlagValues<T>, positionals };
}

/** A problem as one line. */
export function flagProblemText(p: FlagProblem): string {
  if (p.kind === "missing_value") return `${p.flag} needs a value`;
  if (p.kind === "bad_value") return `${p.flag} takes ${p.options.slice(0, -1).join(", ")}${p.options.length > 1 ? " or " : ""}${p.options[p.options.length - 1] ?? ""}`;
  return `unexpected argument ${JSON.stringify(p.arg.slice(0, 64))}`;
}

/** The argument list that gives `values` (in the table's order): what one tau process passes another. */
export function flagArgs<T extends FlagTable>(table: T, values: FlagValues<T>): string[] {
  const out: string[] = [];
  for (const name of Object.keys(table)) {
    const v = (values as Record<string, unknown>)[name];
    if (v === undefined || v === false) continue;
    if (v === true) out.push(`--${name}`);
    else for (const one of Array.isArray(v) ? v : [v]) out.push(`--${name}`, String(one));
  }
  return out;
}

/** The visible flags (and arguments) as a usage line's words: `[--a A | --b B] [--c] [--d K=V]… [SESSION]`. */
export function usageWords(table: FlagTable, args: readonly ArgSpec[] = []): string {
  const words: string[] = [];
  const done = new Set<string>();
  const shown = Object.entries(table).filter(([, f]) => !f.hidden);
  const one = ([name, f]: [string, FlagSpec]) => `--${name}${f.type === "string" ? ` ${f.value ?? "VALUE"}` : ""}`;
  for (const [name, f] of shown) {
    if (done.has(name)) continue;
    const group = f.group === undefined ? [[name, f] as [string, FlagSpec]] : shown.filter(([, g]) => g.group === f.group);
    for (const [n] of group) done.add(n);
    words.push(`[${group.map(one).join(" | ")}]${f.multiple ? "…" : ""}`);
  }
  for (const a of args) words.push(`[${a.name.toUpperCase()}]`);
  return words.join(" ");
}

/** One aligned line per visible flag: `  --name VALUE   description`. */
export function flagHelp(table: FlagTable): string {
  const rows = Object.entries(table)
    .filter(([, f]) => !f.hidden)
    .map(([name, f]) => [`--${name}${f.type === "string" ? ` ${f.value ?? "VALUE"}` : ""}`, f.description] as const);
  const width = Math.max(0, ...rows.map(([left]) => left.length)) + 2;
  return rows.map(([left, text]) => `  ${left.padEnd(width)}${text}`).join("\n");
}
