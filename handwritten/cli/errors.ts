// The CLI's errors (SPEC-cli-errors): each has a stable code (`TAU-E` and four digits), a kind, and a
// message that tells the user what to do. The kind alone decides the exit status, through
// EXIT_CODES: the one map from what went wrong to how tau exits, as the command framework keys its
// own exit statuses on its error classes. Every exit status the CLI sets (the fast paths, the
// commands, the `tau` launcher script's generated lines) is taken from here; a test refuses any
// other (GATE-cli-declared-once). The docs site lists the codes as a table (error-docs.ts,
// codegen/docs/).
//
// Small on purpose: the fast path of `tau run` loads it in its first bundle.

import { EXIT_CODES, EXIT_OK, type ExitKind } from "../startup/exit-codes.js";

export { EXIT_CODES, EXIT_OK };

export type ErrorKind = ExitKind;

/**
 * Every code the CLI reports, and its kind. A code, once given, keeps its meaning; a retired one is
 * never reused. What each means is in error-docs.ts, which the docs site reads: the fast path's
 * bundles carry only the codes and kinds.
 */
export const TAU_ERRORS = {
  "TAU-E0100": "usage",
  "TAU-E0101": "usage",
  "TAU-E0102": "usage",
  "TAU-E0103": "usage",
  "TAU-E0104": "usage",
  "TAU-E0105": "usage",
  "TAU-E0106": "usage",
  "TAU-E0107": "usage",
  "TAU-E0108": "usage",
  "TAU-E0111": "usage",
  "TAU-E0112": "usage",
  "TAU-E0113": "usage",
  "TAU-E0114": "usage",
  "TAU-E0115": "usage",
  "TAU-E0116": "usage",
  "TAU-E0117": "usage",
  "TAU-E0118": "usage",
  "TAU-E0201": "config",
  "TAU-E0202": "config",
  "TAU-E0301": "failed",
  "TAU-E0302": "refused",
  "TAU-E0303": "failed",
  "TAU-E0304": "cut_short",
  "TAU-E0305": "failed",
  "TAU-E0306": "failed",
  "TAU-E0307": "failed",
  "TAU-E0308": "failed",
  "TAU-E0309": "refused",
  "TAU-E0310": "failed",
  "TAU-E0401": "unavailable",
  "TAU-E0402": "unavailable",
  "TAU-E0403": "unavailable",
  "TAU-E0404": "unavailable",
  "TAU-E0405": "not_started",
  "TAU-E0406": "unavailable",
  "TAU-E0407": "unavailable",
  "TAU-E0408": "unreachable",
  "TAU-E0409": "daemon_lost",
  "TAU-E0410": "unavailable",
  "TAU-E0501": "cancelled",
} as const satisfies Record<`TAU-E${string}`, ErrorKind>;

export type TauErrorCode = keyof typeof TAU_ERRORS;

/** The exit status of an error with this code. */
export function exitCodeOf(code: TauErrorCode): number {
  return EXIT_CODES[TAU_ERRORS[code]];
}

/**
 * An error the user can act on. `message` is what tau prints for it: the whole line where the site
 * that makes it writes the program's name in (`tau run: …`), or the text after the `tau: ` that the
 * site reporting it adds. Printed, its first line ends with the code (`[TAU-E0102]`), which the docs
 * site's errors page lists.
 */
export class TauError extends Error {
  override readonly name = "TauError";
  readonly kind: ErrorKind;
  constructor(
    readonly code: TauErrorCode,
    message: string,
  ) {
    super(message);
    this.kind = TAU_ERRORS[code];
  }

  /** The process's exit status for this error. */
  get exitCode(): number {
    return EXIT_CODES[this.kind];
  }

  /** What is printed for it, after `prefix`: the message with the code at the end of its first line. */
  line(prefix = ""): string {
    const nl = this.message.indexOf("\n");
    const tag = ` [${this.code}]`;
    return nl < 0 ? `${prefix}${this.message}${tag}` : `${prefix}${this.message.slice(0, nl)}${tag}${this.message.slice(nl)}`;
  }
}

/** Prints the error's line on standard error (after `prefix`); returns the exit status its kind maps to. */
export function printError(err: TauError, prefix = ""): number {
  process.stderr.write(`${err.line(prefix)}\n`);
  return err.exitCode;
}

/** Prints the error and sets this process's exit status from it. */
export function exitWithError(err: TauError, prefix = ""): void {
  process.exitCode = printError(err, prefix);
}

/**
 * The command framework's options for reporting `err` from a command (`this.error(err.message,
 * errorOptions(err))`): the framework prints the message and a `Code:` line, and exits with the
 * status the code's kind maps to.
 */
export function errorOptions(err: TauError): { exit: number; code: TauErrorCode } {
  return { exit: err.exitCode, code: err.code };
}
