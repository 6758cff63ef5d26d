// How a `tau run` ends (SPEC-cli-manners, "How a run ends"): it completed, or it ended with one of
// the CLI's errors (errors.ts), whose kind is the end's status and decides the exit status. A run
// prints its end once: the error's line on stderr, and with --json the stream's closing line
// (spec/run-stream.tsp). Small and plain: the fast path's first bundle writes the closing line of
// a run refused before its daemon is reached.
import type { RunEndLine } from "../../../generated/index.js";
import { EXIT_OK, TauError, type ErrorKind } from "../errors.js";

/** The version of the `--json` line format (`format_version` on the closing line). */
export const RUN_STREAM_VERSION = 1;

/** A run's status: `completed`, or its error's kind (never `not_started`: only the launcher script's child has that). */
export type RunStatus = "completed" | Exclude<ErrorKind, "not_started">;

/** How one run ended. */
export type RunEnd =
  | { readonly status: "completed" }
  /** `quiet`: nothing is printed (the reader of the output went away). */
  | { readonly status: Exclude<RunStatus, "completed">; readonly error: TauError; readonly quiet?: boolean };

export const COMPLETED: RunEnd = { status: "completed" };

/** The end of a run that stopped with `error`. */
export function endWith(error: TauError, o: { quiet?: boolean } = {}): RunEnd {
  if (error.kind === "not_started") throw new Error(`${error.code} is not a run's end`);
  return { status: error.kind, error, ...(o.quiet ? { quiet: true } : {}) };
}

/** The exit status of a run that ended so. */
export function exitCodeOfEnd(end: RunEnd): number {
  return end.status === "completed" ? EXIT_OK : end.error.exitCode;
}

/** The end's message without the program's name in front (`tau: `, `tau run: `) or its code. */
export function endMessage(end: RunEnd): string {
  if (end.status === "completed") return "the prompt completed";
  return end.error.message.replace(/^tau( run)?: /, "").slice(0, 1024);
}

/** The run's ids the closing line carries, once known. */
export interface RunIds {
  readonly agentId?: string | undefined;
  readonly promptId?: string | undefined;
}

/** The closing line of `tau run --json` for this end. */
export function closingLine(end: RunEnd, ids: RunIds = {}): string {
  const line: RunEndLine = {
    event: "run.ended",
    at_us: Date.now() * 1000,
    data: {
      status: end.status,
      exit_code: exitCodeOfEnd(end),
      ...(end.status !== "completed" ? { code: end.error.code } : {}),
      message: endMessage(end),
      ...(ids.agentId !== undefined ? { agent_id: ids.agentId } : {}),
      ...(ids.promptId !== undefined ? { prompt_id: ids.promptId } : {}),
      format_version: RUN_STREAM_VERSION,
    },
  };
  return `${JSON.stringify(line)}\n`;
}
