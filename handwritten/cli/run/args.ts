// `tau run`'s arguments on its fast path. The client parses them, and so does a daemon that the `tau`
// launcher script started for the run in parallel (`tau daemon --for-run`): one parser, so both reach
// the same answer on whether the run goes ahead and with which daemon arguments. The flags are those
// of flags.ts, which the oclif `run` command (serving `tau run --help`) is made from too.
import { resolve } from "node:path";
import { fstatSync, readSync } from "node:fs";
import { parseArgs } from "node:util";
import { FOR_RUN_FLAG, DAEMON_COMMAND, INSTANCE_PATTERN, SESSION_ID_PATTERN } from "../../startup/launch-facts.js";
import type { TauErrorCode } from "../errors.js";
import type { RunOptions } from "./daemon.js";
import { parseArgsOptions, type RunFlagValues } from "./flags.js";
import { parseInput } from "../tui/command-mode.js";

/** The text a run submits; `literal` when the user escaped a leading colon (`::text`). */
export interface RunPrompt {
  readonly text: string;
  readonly literal: boolean;
}

export interface RunArgs {
  /** The prompt given on the command line (`-p TEXT` or `tau run TEXT`); absent when it is read from stdin. */
  readonly prompt?: RunPrompt;
  /**
   * Where standard input comes in: `explicit` (`--prompt-stdin`, or `-` as the prompt) reads it;
   * `if-piped` (no prompt, no skill) reads it unless it is a terminal, which the client alone can
   * tell (a daemon the launcher script started goes ahead, and is taken back on a refusal); `no`.
   */
  readonly promptStdin: PromptStdin;
  readonly options: RunOptions;
}

export type PromptStdin = "explicit" | "if-piped" | "no";

/** Why a run does not go ahead: the line to print and its code (errors.ts). */
export interface RunRefusal {
  readonly ok: false;
  readonly code: TauErrorCode;
  readonly message: string;
  /** The command line asked for --json and its flags could be read: the refusal writes the closing line. */
  readonly json?: true;
}

export type ParsedRunArgs = { readonly ok: true; readonly args: RunArgs } | RunRefusal;

export const NO_PROMPT = "tau run: give a prompt: tau run TEXT, -p TEXT, text on a pipe (or --prompt-stdin), or a skill with --skill NAME";

/** The refusal of a prompt on standard input over STDIN_PROMPT_MAX_BYTES (readPromptStdin). */
export const STDIN_TOO_LARGE = "tau run: the prompt on standard input is over 8 MiB; give a shorter one (name a file in the prompt instead)";

/** The refusal of piped input that, with the prompt it comes with, is over STDIN_PROMPT_MAX_BYTES (withPipedInput). */
export const PIPED_TOO_LARGE = "tau run: the input piped to tau run is, with the prompt, over 8 MiB; pipe less (or name a file in the prompt instead)";

/** The refusal of two prompt sources at once. */
export const TWO_PROMPTS = "tau run: give the prompt once: as TEXT, with -p TEXT, or on standard input (- or --prompt-stdin)";

export function parseRunArgs(argv: readonly string[]): ParsedRunArgs {
  let values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      options: parseArgsOptions(),
      strict: true,
      allowPositionals: true,
    }));
  } catch (err) {
    return { ok: false, code: "TAU-E0101", message: `tau run: ${(err as Error).message}\nSee: tau run --help` };
  }
  if (positionals.length > 1) {
    return { ok: false, code: "TAU-E0101", message: `tau run: one prompt argument, not ${positionals.length} (quote it: tau run "fix the failing test")\nSee: tau run --help`, ...(values.json === true ? { json: true } : {}) };
  }
  const parsed = runArgsOf(values, positionals[0]);
  return parsed.ok || values.json !== true ? parsed : { ...parsed, json: true };
}

/**
 * What the flags ask for, checked: shared by the fast path and the oclif `run` command. `text` is
 * the prompt argument (`tau run TEXT`; `-` reads standard input). A prompt read from standard input
 * is read (and checked) by the caller, as it is read only once the run's daemon is on its way.
 */
export function runArgsOf(values: RunFlagValues, text?: string): ParsedRunArgs {
  const sources = [values.prompt !== undefined, text !== undefined, values["prompt-stdin"] === true].filter(Boolean).length;
  if (sources > 1) return { ok: false, code: "TAU-E0107", message: TWO_PROMPTS };
  let skill = values.skill;
  const explicitStdin = values["prompt-stdin"] === true || text === "-";
  const given = explicitStdin ? undefined : (values.prompt ?? text);
  const promptStdin: PromptStdin = explicitStdin ? "explicit" : given === undefined && skill === undefined ? "if-piped" : "no";
  let prompt: RunPrompt | undefined;
  if (promptStdin === "no") {
    const read = headlessPrompt(given ?? "", skill);
    if (!read.ok) return read;
    prompt = read.prompt;
    skill = read.skill;
  }
  // A run has no UI to ask: its sandbox refuses a denial at once, with the suggested command (SPEC-sandbox).
  if (values.approval !== undefined && values.approval !== "never") {
    const why = values.approval === "on-request" ? "on-request needs a UI to ask; tau run has none" : `unknown policy ${JSON.stringify(values.approval.slice(0, 40))}`;
    return { ok: false, code: "TAU-E0101", message: `tau run: --approval ${why}: use --approval never (the default)\nSee: tau run --help` };
  }
  const sandbox = [
    "sandbox.approval=never",
    ...(values["no-sandbox"] === true ? ["sandbox.enabled=false"] : []),
    ...(values["sandbox-config"] !== undefined ? [`sandbox.config_file=${JSON.stringify(resolve(values["sandbox-config"]))}`] : []),
  ];
  if (values.continue === true && values.resume !== undefined) return { ok: false, code: "TAU-E0101", message: "tau run: give --continue or --resume ID, not both\nSee: tau run --help" };
  const resumeOf = values.continue === true ? ({ last: true } as const) : values.resume !== undefined ? { session: values.resume } : undefined;
  if (values.fork === true && resumeOf === undefined) return { ok: false, code: "TAU-E0101", message: "tau run: --fork copies a saved session: give it with --continue or --resume ID\nSee: tau run --help" };
  const resume = resumeOf !== undefined && values.fork === true ? { ...resumeOf, fork: true as const } : resumeOf;
  if (resume !== undefined && values.ephemeral === true) return { ok: false, code: "TAU-E0101", message: "tau run: --ephemeral keeps no session, so it cannot continue one\nSee: tau run --help" };
  if (resume !== undefined && "session" in resume && (resume.session ?? "").trim() === "") return { ok: false, code: "TAU-E0101", message: "tau run: --resume needs a session id (tau session list --all shows them)\nSee: tau run --help" };
  const options: RunOptions = {
    json: values.json === true,
    ...(resume !== undefined ? { resume } : {}),
    ...(skill !== undefined ? { skill } : {}),
    ephemeral: values.ephemeral === true,
    ...(values.model ? { model: values.model } : {}),
    harnessConfig: [...sandbox, ...(values["harness-config"] ?? [])],
  };
  return { ok: true, args: { ...(prompt !== undefined ? { prompt } : {}), promptStdin, options } };
}

export type HeadlessPrompt = { readonly ok: true; readonly prompt: RunPrompt; readonly skill?: string } | RunRefusal;

/**
 * What a headless prompt means, read as the interactive UI reads a line (SPEC-cli-command-mode): a
 * leading `:` is never model input. `::text` sends the literal `:text`; `:skill NAME [TEXT]` loads a
 * skill as `--skill` does; any other colon command is refused with the UI's own words. `skill` is
 * the `--skill` flag, whose prompt text may be empty.
 */
export function headlessPrompt(text: string, skill: string | undefined): HeadlessPrompt {
  const parsed = parseInput(text);
  switch (parsed.kind) {
    case "empty":
      return skill === undefined ? { ok: false, code: "TAU-E0102", message: NO_PROMPT } : { ok: true, prompt: { text: "", literal: false }, skill };
    case "prompt":
      return { ok: true, prompt: { text: parsed.text, literal: parsed.literal }, ...(skill !== undefined ? { skill } : {}) };
    case "shell": // `!cmd` runs only in the interactive UI; headless, it is prompt text like any other
      return { ok: true, prompt: { text, literal: false }, ...(skill !== undefined ? { skill } : {}) };
    case "error":
      return { ok: false, code: "TAU-E0104", message: `tau run: ${parsed.message}` };
    case "command": {
      const name = parsed.spec.name;
      if (name === "skill" && skill === undefined) {
        return { ok: true, prompt: { text: parsed.args[1] ?? "", literal: false }, skill: parsed.args[0] as string };
      }
      if (name === "skill") return { ok: false, code: "TAU-E0105", message: "tau run: give the skill once, with --skill NAME or :skill NAME" };
      const sigil = parsed.slash === true ? "/" : ":";
      return { ok: false, code: "TAU-E0103", message: `tau run: ${sigil}${name} is a command of the interactive UI (tau), not a prompt; '${sigil}${sigil}${name}' sends it to the model as text` };
    }
  }
}

/** What the `tau` launcher script minted for the daemon it starts for a run (bin/tau.cjs). */
export interface EarlyLaunch {
  readonly sessionId: string;
  readonly instance: string;
}

/**
 * Reads `daemon --for-run SESSION_ID INSTANCE` at `at` in a command line: the daemon's own arguments,
 * or, seen by the client, the command line of the script's background child once it has become the
 * daemon (through `setsid`, so `at` is 2 or 3 there).
 */
export function parseEarlyLaunch(cmdline: readonly string[], at: number): EarlyLaunch | undefined {
  const [daemon, forRun, sessionId, instance] = cmdline.slice(at, at + 4);
  if (daemon !== DAEMON_COMMAND || forRun !== FOR_RUN_FLAG) return undefined;
  if (sessionId === undefined || !SESSION_ID_PATTERN.test(sessionId) || instance === undefined || !INSTANCE_PATTERN.test(instance)) return undefined;
  return { sessionId, instance };
}

/** The most of standard input a prompt may be: a prompt is body text (8 MiB), and more is not read. */
export const STDIN_PROMPT_MAX_BYTES = 8 * 1024 * 1024;

/** Standard input piped in (a closed or unreadable one gives none); undefined when it is over `max` bytes, which are all it reads. */
function readStdin(max = STDIN_PROMPT_MAX_BYTES): string | undefined {
  const chunks: Buffer[] = [];
  let total = 0;
  const buf = Buffer.alloc(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buf, 0, buf.length, null);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EOF") break;
      // A non-blocking pipe with nothing written yet: wait for the writer, as a blocking read would.
      if (code === "EAGAIN") {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
        continue;
      }
      throw err;
    }
    if (n === 0) break;
    total += n;
    if (total > max) return undefined;
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The prompt on standard input, bounded and read as the interactive UI reads a line (main.ts, commands/run.ts). */
export function readPromptStdin(skill: string | undefined): HeadlessPrompt {
  const text = readStdin();
  return text === undefined ? { ok: false, code: "TAU-E0108", message: STDIN_TOO_LARGE } : headlessPrompt(text, skill);
}

/** The lines that open and close piped input in the prompt the model reads, so it is labelled as such. */
export const PIPED_INPUT_OPEN = "<stdin>";
export const PIPED_INPUT_CLOSE = "</stdin>";
const PIPED_INPUT_LABEL = "The text below was piped to tau run on standard input:";

/**
 * Whether standard input is a pipe or a file (`cat f | tau run "…"`, `tau run "…" < f`): only then
 * is it read beside a prompt argument. A terminal, `/dev/null` or an inherited socket is not read,
 * so a script's run with a prompt never waits on an input nobody writes.
 */
function stdinPiped(): boolean {
  try {
    const s = fstatSync(0);
    return s.isFIFO() || s.isFile();
  } catch {
    return false;
  }
}

/**
 * A prompt given on the command line, with the text piped to the run when there is some: the prompt,
 * then the piped text in a block that names it as standard input. The piped text is read only up to
 * what keeps the whole within STDIN_PROMPT_MAX_BYTES (a prompt's most, as body text); more is
 * refused (`TAU-E0108`), before anything is sent. An empty pipe leaves the prompt as it is.
 */
export function withPipedInput(prompt: RunPrompt | undefined): { readonly ok: true; readonly prompt: RunPrompt | undefined } | RunRefusal {
  if (!stdinPiped()) return { ok: true, prompt };
  const head = prompt === undefined || prompt.text === "" ? "" : `${prompt.text}\n\n`;
  const frame = `${head}${PIPED_INPUT_LABEL}\n${PIPED_INPUT_OPEN}\n\n${PIPED_INPUT_CLOSE}`;
  const piped = readStdin(STDIN_PROMPT_MAX_BYTES - Buffer.byteLength(frame));
  if (piped === undefined) return { ok: false, code: "TAU-E0108", message: PIPED_TOO_LARGE };
  if (piped.trim() === "") return { ok: true, prompt };
  const body = piped.endsWith("\n") ? piped : `${piped}\n`;
  return { ok: true, prompt: { text: `${head}${PIPED_INPUT_LABEL}\n${PIPED_INPUT_OPEN}\n${body}${PIPED_INPUT_CLOSE}`, literal: prompt?.literal ?? false } };
}
