// Runs the oclif command framework for everything bin/tau.cjs did not answer itself. Whatever a
// command ends with leaves through the exit map (errors.ts, SPEC-cli-errors): a command's own error
// carries its code and status already; the framework's refusals of a command line (an unknown
// command or flag, a missing argument) become TAU-E0100; anything else is a failure.
import { Errors, flush, handle, run } from "@oclif/core";
import { EXIT_CODES, TAU_ERRORS, TauError, exitCodeOf } from "./errors.js";

export async function main(binUrl: string): Promise<void> {
  await run(helpArgv(process.argv.slice(2)), binUrl).then(
    () => flush(),
    (err: unknown) => handle(throughExitMap(err)),
  );
}

/**
 * Help the way users ask for it: `-h` as `--help`, and `tau help [COMMAND…]` as `tau [COMMAND…]
 * --help` (the command framework knows only `--help`). Nothing after `--` is touched.
 */
export function helpArgv(argv: readonly string[]): string[] {
  const end = argv.indexOf("--");
  const head = (end < 0 ? argv : argv.slice(0, end)).map((a) => (a === "-h" ? "--help" : a));
  const tail = end < 0 ? [] : argv.slice(end);
  if (head[0] === "help") return [...head.slice(1).filter((a) => a !== "--help"), "--help", ...tail];
  return [...head, ...tail];
}

type Reported = Error & { code?: string; oclif?: { exit?: number } };

/** `err`, its exit status set from the exit map. */
export function throughExitMap(err: unknown): Error {
  // this.exit(status): the command took the status from the map
  if (err instanceof Errors.ExitError) return err;
  const e: Reported = err instanceof Error ? err : new Error(String(err));
  if (e instanceof TauError) return new Errors.CLIError(e.message, { code: e.code, exit: e.exitCode });
  // this.error(message, errorOptions(tauError)): already the map's
  if (typeof e.code === "string" && e.code in TAU_ERRORS) return e;
  if (e instanceof Errors.CLIError) {
    e.code = "TAU-E0100";
    e.oclif = { ...e.oclif, exit: exitCodeOf("TAU-E0100") };
    return e;
  }
  e.oclif = { ...e.oclif, exit: EXIT_CODES.failed };
  return e;
}
