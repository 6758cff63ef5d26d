// What each of the CLI's error codes means and which commands report it (SPEC-cli-errors), for the
// docs site's errors page and the record's test. Kept apart from errors.ts so that the fast path's
// bundles, which need only the codes and kinds, do not carry the text; the type makes this table
// list exactly the codes errors.ts declares.
import { TAU_ERRORS, type ErrorKind, type TauErrorCode } from "./errors.js";
import type { RunStatus } from "./run/ends.js";

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
  "TAU-E0118": { commands: "tau session rm, tau run --resume/--continue, tau agent list", meaning: "A session named is not saved, or its prefix matches several (or, for --continue and agent list without --session, this folder has none); nothing was removed or sent." },
  "TAU-E0201": {
    commands: "tau run, tau, tau attach, tau resume, tau provider, tau swarm",
    meaning:
      "The configuration is wrong (harness.yaml, a drop-in, a `--harness-config` override, a provider profile being added, a swarm key, credential or `--worker`): the message names the file, line and key, or the flag.",
  },
  "TAU-E0202": {
    commands: "tau provider add, tau swarm",
    meaning: "A secret file is unsafe or unreadable (its mode, its owner, its size): the message says how to fix it.",
  },
  "TAU-E0301": {
    commands: "tau run",
    meaning: "The prompt failed: the provider answered with an error (after its retries), or the turn failed in tau; the error follows the message.",
  },
  "TAU-E0302": {
    commands: "tau run",
    meaning: "No provider declared a model in time (60 s), so the prompt was never sent (a refused run).",
  },
  "TAU-E0303": {
    commands: "tau provider remove, tau swarm status",
    meaning: "No profile of that name was added with `tau provider add` (profiles written in harness.yaml are edited there); for `tau swarm status`, no coordinator has run here.",
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
  "TAU-E0309": {
    commands: "tau run",
    meaning: "The prompt was refused before it was sent: no provider serves the model asked for (the message names close matches), or the agent, the skill or the prompt itself was refused.",
  },
  "TAU-E0310": {
    commands: "tau run --fork, tau resume --fork, tau session fork, :fork",
    meaning:
      "The session could not be forked: its agent has not finished a turn yet (there is nothing to copy), the agent named is not the session's or is ephemeral, or its journal could not be read or the fork written. Nothing was written; the message says which.",
  },
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
  "TAU-E0408": {
    commands: "tau run",
    meaning: "The provider could not be reached, or the connection to it broke or timed out, after its retries: the error follows the message. Trying again later may succeed.",
  },
  "TAU-E0409": {
    commands: "tau run",
    meaning: "The session's daemon went away (killed, or it exited) before the prompt's outcome was known: the prompt may have run partly, and its tools may have acted. The message names the daemon's log.",
  },
  "TAU-E0410": { commands: "tau mcp login", meaning: "The MCP server's sign-in did not complete (it does not ask for one, its OAuth discovery or client registration failed, the browser did not come back in time, the code was refused, or the tokens did not work); no new sign-in was stored." },
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

/** One way a `tau run` ends (SPEC-cli-manners, "How a run ends"). */
export interface RunEndDoc {
  readonly status: RunStatus;
  /** The codes a run that ends so reports (their kind is the status). */
  readonly codes: readonly TauErrorCode[];
  /** What the run prints on stderr (on the closing line of --json, without `tau: ` and the code). */
  readonly message: string;
  readonly meaning: string;
}

/** Every way a `tau run` ends, in the order the docs list them; the exit status is the status's (EXIT_CODES). */
export const RUN_ENDS: readonly RunEndDoc[] = [
  { status: "completed", codes: [], message: "nothing (`the prompt completed` on the closing line)", meaning: "The prompt's turn completed and its answer is whole." },
  {
    status: "failed",
    codes: ["TAU-E0301", "TAU-E0306", "TAU-E0308", "TAU-E0310"],
    message: "`tau: the prompt failed: CLASS: DIAGNOSTIC`",
    meaning: "The provider answered with an error (after its retries: authentication, a bad request, the context window, a server error), or the turn failed in tau. Also a continued session that is running (TAU-E0308), a session `--fork` could not copy (TAU-E0310), and a reader of the output that went away (TAU-E0306: nothing is printed, no closing line).",
  },
  {
    status: "refused",
    codes: ["TAU-E0309", "TAU-E0302"],
    message: "`tau: the prompt was refused: WHY`",
    meaning: "Nothing was sent to a model: no provider serves the model asked for, no provider declared a model within 60 s (TAU-E0302), or the agent, the skill or the prompt was refused.",
  },
  {
    status: "unreachable",
    codes: ["TAU-E0408"],
    message: "`tau: the provider could not be reached: CLASS: DIAGNOSTIC`",
    meaning: "The provider could not be reached, or the connection to it broke or timed out (error class `network` or `timeout`), after its retries. Trying again later may succeed.",
  },
  {
    status: "cut_short",
    codes: ["TAU-E0304"],
    message: "`tau: the answer is incomplete: …` (text output only; the events say it with --json)",
    meaning: "The answer came but is not whole: it reached the model's output limit, or a content filter stopped it.",
  },
  {
    status: "daemon_lost",
    codes: ["TAU-E0409"],
    message: "`tau: the session's daemon (pid N) is gone (it was killed or exited) before the prompt finished; the prompt's outcome is unknown; its log: PATH`",
    meaning: "The connection to the session's daemon ended before the prompt's outcome: it may have run partly, and its tools may have acted.",
  },
  { status: "cancelled", codes: ["TAU-E0501"], message: "`tau: the prompt was cancelled`", meaning: "The user interrupted the run (Ctrl-C, SIGINT); a prompt already sent was cancelled first." },
  {
    status: "usage",
    codes: ["TAU-E0101", "TAU-E0102", "TAU-E0103", "TAU-E0104", "TAU-E0105", "TAU-E0107", "TAU-E0108", "TAU-E0117", "TAU-E0118"],
    message: "`tau run: …`, the refusal in its own words",
    meaning: "The command line or the prompt cannot be run as given; nothing was sent. A command line that cannot be parsed writes no closing line.",
  },
  { status: "config", codes: ["TAU-E0201"], message: "`tau: FILE:LINE: …`", meaning: "The configuration is wrong; nothing was sent and the run's new session was removed." },
  {
    status: "unavailable",
    codes: ["TAU-E0401"],
    message: "`tau: REASON (the tau daemon exited before it started; see LOG)`",
    meaning: "The session's daemon exited before its socket was up (an unusable runtime folder, most often).",
  },
];
