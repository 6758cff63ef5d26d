// The CLI's errors (SPEC-cli-errors): each has a stable code (`TAU-E` and four digits), a kind, and a
// message that tells the user what to do. The kind alone decides the exit status, through
// EXIT_CODES: the one map from what went wrong to how tau exits, as the command framework keys its
// own exit statuses on its error classes. Every exit status the CLI sets (the fast paths, the
// commands, the `tau` launcher script's generated lines) is taken from here; a test refuses any
// other (GATE-cli-declared-once). The docs site lists TAU_ERRORS as a table (codegen/docs/).
//
// Small on purpose: the fast path of `tau run` loads it in its first bundle.

import { EXIT_CODES, EXIT_OK, type ExitKind } from "../protocol/exit-codes.js";

export { EXIT_CODES, EXIT_OK };

export type ErrorKind = ExitKind;

export interface ErrorEntry {
  readonly kind: ErrorKind;
  /** The commands that report it. */
  readonly commands: string;
  /** What it means, for the docs site (the message itself says what to do). */
  readonly meaning: string;
  /** Reported by the command framework (oclif) in its own words; tau only fixes its exit status. */
  readonly framework?: true;
}

/** Every code the CLI reports. A code, once given, keeps its meaning; a retired one is never reused. */
export const TAU_ERRORS = {
  "TAU-E0100": {
    kind: "usage",
    commands: "every command the command framework answers",
    meaning: "The command framework refused the command line: an unknown command or flag, a missing argument or flag value.",
    framework: true,
  },
  "TAU-E0101": { kind: "usage", commands: "tau run", meaning: "The arguments of `tau run` could not be parsed: an unknown flag, a flag without its value, or a stray argument." },
  "TAU-E0102": { kind: "usage", commands: "tau run", meaning: "No prompt was given: `-p TEXT`, `--prompt-stdin` (with text on standard input) or `--skill NAME`." },
  "TAU-E0103": {
    kind: "usage",
    commands: "tau run",
    meaning: "The prompt is a colon command of the interactive UI, which a headless run never sends to the model; `::text` sends it as text.",
  },
  "TAU-E0104": { kind: "usage", commands: "tau run", meaning: "The prompt starts with a colon but is not a command as written: an unknown or empty command name, or wrong arguments." },
  "TAU-E0105": { kind: "usage", commands: "tau run", meaning: "A skill was given twice, with `--skill NAME` and with `:skill NAME`." },
  "TAU-E0106": { kind: "usage", commands: "tau daemon --for-run (hidden)", meaning: "The early daemon's command line, which only the `tau` launcher script writes, is malformed." },
  "TAU-E0111": { kind: "usage", commands: "tau, tau attach, tau resume", meaning: "An argument the interactive UI does not take." },
  "TAU-E0112": { kind: "usage", commands: "tau, tau attach, tau resume", meaning: "The interactive UI needs a terminal on standard input and output; scripts use `tau run`." },
  "TAU-E0113": { kind: "usage", commands: "tau attach, tau resume", meaning: "Several sessions match and there is no terminal to choose on: name one." },
  "TAU-E0114": { kind: "usage", commands: "tau attach, tau resume", meaning: "The answer to the session choice is not one of the numbers offered." },
  "TAU-E0115": { kind: "usage", commands: "tau attach", meaning: "No tau session is running, or none with the id given." },
  "TAU-E0116": { kind: "usage", commands: "tau resume", meaning: "There is no saved session to resume, or none with the id given." },
  "TAU-E0201": {
    kind: "config",
    commands: "tau run, tau, tau attach, tau resume, tau provider",
    meaning: "The configuration is wrong (harness.yaml, a drop-in, a `--harness-config` override, a provider profile being added): the message names the file, line and key, or the flag.",
  },
  "TAU-E0202": { kind: "config", commands: "tau provider add", meaning: "A secret file is unsafe or unreadable (its mode, its owner, its size): the message says how to fix it." },
  "TAU-E0301": { kind: "failed", commands: "tau run", meaning: "The prompt failed: the provider's error or the failure that ended the turn follows the message." },
  "TAU-E0302": { kind: "failed", commands: "tau run", meaning: "No provider declared a model in time (60 s), so the prompt was never sent." },
  "TAU-E0303": { kind: "failed", commands: "tau provider remove", meaning: "No profile of that name was added with `tau provider add` (profiles written in harness.yaml are edited there)." },
  "TAU-E0304": {
    kind: "failed",
    commands: "tau run",
    meaning: "The answer came but is incomplete: it reached the model's output limit or the provider's content filter stopped it (the printed answer is what came).",
  },
  "TAU-E0305": { kind: "failed", commands: "tau agent trace", meaning: "The journal could not be exported: no such agent or session, an ambiguous prefix, or a journal that is not whole; the message says which." },
  "TAU-E0306": { kind: "failed", commands: "tau agent trace", meaning: "The reader of the trace went away (a closed pipe, as with `| head`): the export stops quietly." },
  "TAU-E0401": {
    kind: "unavailable",
    commands: "tau run",
    meaning: "The session's daemon exited before its socket was up: its last words (or, for an `--ephemeral` run, what is wrong with the runtime folder) and its log's path follow.",
  },
  "TAU-E0402": { kind: "unavailable", commands: "tau, tau attach, tau resume", meaning: "The session's daemon closed the connection or could not be reached; the message names its log." },
  "TAU-E0403": { kind: "unavailable", commands: "tau session list", meaning: "The runtime folder is unusable (its mode or owner): the message says how to fix it." },
  "TAU-E0404": { kind: "unavailable", commands: "every command", meaning: "This checkout of tau was never built: run `npm ci` (or `npm run build`) in it." },
  "TAU-E0405": {
    kind: "not_started",
    commands: "tau run (the launcher script's background child)",
    meaning: "The launcher script could not start a run's daemon beside its client (no setsid or /proc, no sessions folder yet); the client starts it instead. Seen by no user.",
  },
  "TAU-E0501": { kind: "cancelled", commands: "tau run", meaning: "The prompt was cancelled (Ctrl-C)." },
} as const satisfies Record<`TAU-E${string}`, ErrorEntry>;

export type TauErrorCode = keyof typeof TAU_ERRORS;

/** The exit status of an error with this code. */
export function exitCodeOf(code: TauErrorCode): number {
  return EXIT_CODES[TAU_ERRORS[code].kind];
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
    this.kind = TAU_ERRORS[code].kind;
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
