// What each of the CLI's error codes means and which commands report it (SPEC-cli-errors), for the
// docs site's errors page and the record's test. Kept apart from errors.ts so that the fast path's
// bundles, which need only the codes and kinds, do not carry the text; the type makes this table
// list exactly the codes errors.ts declares.
import { TAU_ERRORS, type ErrorKind, type TauErrorCode } from "./errors.js";

export interface ErrorDoc {
  /** The commands that report it. */
  readonly commands: string;
  /** What it means, for the docs site (the message itself says what to do). */
  readonly meaning: string;
  /** Reported by the command framework (oclif) in its own words; tau only fixes its code and exit status. */
  readonly framework?: true;
}

export const ERROR_DOCS = {
  "TAU-E0100": {
    commands: "every command the command framework answers",
    meaning: "The command framework refused the command line: an unknown command or flag, a missing argument or flag value.",
    framework: true,
  },
  "TAU-E0101": {
    commands: "tau run",
    meaning: "The arguments of `tau run` could not be parsed: an unknown flag, a flag without its value, or a stray argument.",
  },
  "TAU-E0102": {
    commands: "tau run",
    meaning: "No prompt was given: `tau run TEXT`, `-p TEXT`, text piped to standard input (or `--prompt-stdin`), or `--skill NAME`.",
  },
  "TAU-E0103": {
    commands: "tau run",
    meaning: "The prompt is a colon command of the interactive UI, which a headless run never sends to the model; `::text` sends it as text.",
  },
  "TAU-E0104": {
    commands: "tau run",
    meaning: "The prompt starts with a colon but is not a command as written: an unknown or empty command name, or wrong arguments.",
  },
  "TAU-E0105": {
    commands: "tau run",
    meaning: "A skill was given twice, with `--skill NAME` and with `:skill NAME`.",
  },
  "TAU-E0106": {
    commands: "tau daemon --for-run (hidden)",
    meaning: "The early daemon's command line, which only the `tau` launcher script writes, is malformed.",
  },
  "TAU-E0107": {
    commands: "tau run",
    meaning: "The prompt was given twice: two of the prompt argument (`tau run TEXT`), `-p TEXT` and standard input (`-` or `--prompt-stdin`).",
  },
  "TAU-E0108": {
    commands: "tau run",
    meaning: "The prompt piped to standard input is over 8 MiB, the most a prompt may be; only that much is read.",
  },
  "TAU-E0111": {
    commands: "tau, tau attach, tau resume",
    meaning: "An argument the interactive UI does not take.",
  },
  "TAU-E0112": {
    commands: "tau, tau attach, tau resume",
    meaning: "The interactive UI needs a terminal on standard input and output; scripts use `tau run`.",
  },
  "TAU-E0113": {
    commands: "tau attach, tau resume",
    meaning: "Several sessions match and there is no terminal to choose on: name one.",
  },
  "TAU-E0114": {
    commands: "tau attach, tau resume",
    meaning: "The answer to the session choice is not one of the numbers offered.",
  },
  "TAU-E0115": {
    commands: "tau attach",
    meaning: "No tau session is running, or none with the id given.",
  },
  "TAU-E0116": {
    commands: "tau resume",
    meaning: "There is no saved session to resume, or none with the id given.",
  },
  "TAU-E0117": {
    commands: "tau run",
    meaning: "The model given with --model is not one the providers list; the message names close matches. Nothing was sent to a model.",
  },
  "TAU-E0118": { commands: "tau session rm, tau run --resume/--continue", meaning: "A session named is not saved, or its prefix matches several (or, for --continue, this folder has none); nothing was removed or sent." },
  "TAU-E0201": {
    commands: "tau run, tau, tau attach, tau resume, tau provider",
    meaning:
      "The configuration is wrong (harness.yaml, a drop-in, a `--harness-config` override, a provider profile being added): the message names the file, line and key, or the flag.",
  },
  "TAU-E0202": {
    commands: "tau provider add",
    meaning: "A secret file is unsafe or unreadable (its mode, its owner, its size): the message says how to fix it.",
  },
  "TAU-E0301": {
    commands: "tau run",
    meaning: "The prompt failed: the provider's error or the failure that ended the turn follows the message.",
  },
  "TAU-E0302": {
    commands: "tau run",
    meaning: "No provider declared a model in time (60 s), so the prompt was never sent.",
  },
  "TAU-E0303": {
    commands: "tau provider remove",
    meaning: "No profile of that name was added with `tau provider add` (profiles written in harness.yaml are edited there).",
  },
  "TAU-E0304": {
    commands: "tau run",
    meaning: "The answer came but is incomplete: it reached the model's output limit or the provider's content filter stopped it (the printed answer is what came).",
  },
  "TAU-E0305": {
    commands: "tau agent trace",
    meaning: "The journal could not be exported: no such agent or session, an ambiguous prefix, or a journal that is not whole; the message says which.",
  },
  "TAU-E0306": { commands: "tau agent trace, tau run", meaning: "The reader of the output went away (a closed pipe, as with `| head`): the export stops, or the run's prompt is cancelled, quietly." },
  "TAU-E0307": { commands: "tau session stats", meaning: "The session, or one of its agents' journals, could not be read or failed validation; nothing was written." },
  "TAU-E0308": { commands: "tau session rm, tau run --resume/--continue", meaning: "A daemon is running the session (end it, or tau attach it): it was not removed or continued. For rm, its files may also not have moved; the other sessions named were still removed." },
  "TAU-E0401": {
    commands: "tau run",
    meaning:
      "The session's daemon exited before its socket was up: its last words (or, for an `--ephemeral` run, what is wrong with the runtime folder) and its log's path follow.",
  },
  "TAU-E0402": {
    commands: "tau, tau attach, tau resume",
    meaning: "The session's daemon closed the connection or could not be reached; the message names its log.",
  },
  "TAU-E0403": {
    commands: "tau session list",
    meaning: "The runtime folder is unusable (its mode or owner): the message says how to fix it.",
  },
  "TAU-E0404": {
    commands: "every command",
    meaning: "This checkout of tau was never built: run `npm ci` (or `npm run build`) in it.",
  },
  "TAU-E0405": {
    commands: "tau run (the launcher script's background child)",
    meaning: "The launcher script could not start a run's daemon beside its client (no setsid or /proc, no sessions folder yet); the client starts it instead. Seen by no user.",
  },
  "TAU-E0406": { commands: "tau provider add", meaning: "The endpoint did not answer its model listing (unreachable, refused the key, no /models, too slow or too large an answer); no profile or key file was written. --no-check adds it without asking." },
  "TAU-E0407": { commands: "tau provider login", meaning: "The ChatGPT sign-in did not complete (unreachable issuer, device code sign-in not offered, the code not entered in time, a refused exchange); the sign-in file was not written." },
  "TAU-E0501": {
    commands: "tau run",
    meaning: "The prompt was cancelled (Ctrl-C).",
  },
} as const satisfies Record<TauErrorCode, ErrorDoc>;

export interface ErrorEntry extends ErrorDoc {
  readonly kind: ErrorKind;
}

/** Every code with its kind and what it means. */
export function errorEntries(): Record<TauErrorCode, ErrorEntry> {
  const out = {} as Record<TauErrorCode, ErrorEntry>;
  for (const code of Object.keys(TAU_ERRORS) as TauErrorCode[]) out[code] = { kind: TAU_ERRORS[code], ...ERROR_DOCS[code] };
  return out;
}
