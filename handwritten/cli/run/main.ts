// The `tau run` fast path: bin/tau.cjs calls this without loading the command framework, so a
// headless job starts as fast as the runtime allows.
//
// The daemon is started before anything heavy is loaded: this bundle holds only the argument parsing
// and the launcher, and the rest (protocol, validators, client) is a bundle of its own,
// dist/fast/run-prompt.cjs, loaded while the daemon boots. Where it can, the `tau` launcher script
// has already started the daemon, in parallel with this process (see bin/tau.cjs): it is adopted
// here instead.
import { mark, markStart } from "../../startup/timeline.js";
import { abandonDaemon, loadFastBundle } from "../../transport/launch.js";
import { TauError, exitWithError } from "../errors.js";
import { NO_PROMPT, parseRunArgs, readPromptStdin, withPipedInput, type RunPrompt, type RunRefusal } from "./args.js";
import { startRunDaemon, takeEarlyDaemon, type RunOptions } from "./daemon.js";
import { resolveRoots } from "../../config/paths.js";
import { startOwnedDaemon } from "../owned-daemon.js";
import { closingLine, endWith } from "./ends.js";

type RunPromptBundle = typeof import("./prompt.js");

export async function main(argv: readonly string[]): Promise<void> {
  markStart("run");
  const parsed = parseRunArgs(argv);
  // No prompt on the command line: one piped in is read; a terminal is not waited on.
  const refusal = !parsed.ok ? parsed : parsed.args.promptStdin === "if-piped" && process.stdin.isTTY === true ? ({ code: "TAU-E0102", message: NO_PROMPT } as const) : undefined;
  if (refusal || !parsed.ok) {
    // The daemon started for this run, if any, finds the same mistake or goes ahead (it cannot
    // tell a terminal from a pipe); take it back all the same.
    const early = await takeEarlyDaemon({ json: false, ephemeral: false });
    if (early) await abandonDaemon(early);
    const r = refusal ?? (parsed as RunRefusal);
    refuse(new TauError(r.code, r.message), parsed.ok ? parsed.args.options.json : parsed.json === true);
    return;
  }
  let { options } = parsed.args;
  if (options.resume !== undefined) return continueSession(parsed.args.prompt, parsed.args.promptStdin !== "no", options);
  const early = await takeEarlyDaemon(options);
  const daemon = early ?? startRunDaemon(options);
  mark(early ? "run daemon adopted" : "run daemon spawned");
  let prompt = parsed.args.prompt;
  if (parsed.args.promptStdin !== "no") {
    const read = readPromptStdin(options.skill);
    if (!read.ok) {
      await abandonDaemon(daemon);
      refuse(new TauError(read.code, read.message), options.json);
      return;
    }
    prompt = read.prompt;
    if (read.skill !== undefined) options = { ...options, skill: read.skill };
  } else {
    // A prompt argument with text piped in: both reach the model, the piped text labelled.
    const piped = withPipedInput(prompt);
    if (!piped.ok) {
      await abandonDaemon(daemon);
      refuse(new TauError(piped.code, piped.message), options.json);
      return;
    }
    prompt = piped.prompt;
  }
  const rest = loadFastBundle<RunPromptBundle>("run-prompt");
  mark("run run-prompt loaded");
  try {
    process.exitCode = await rest.exports.runPrompt(prompt ?? { text: "", literal: false }, options, daemon);
  } finally {
    rest.settled();
  }
  leaveWhenDone();
}

/**
 * A run refused before its daemon was reached: its error on stderr and, with --json, the stream's
 * closing line (a command line whose flags could not be read has no --json to honour: stderr only).
 */
function refuse(err: TauError, json: boolean): void {
  exitWithError(err);
  if (json) process.stdout.write(closingLine(endWith(err)));
}

/** Once everything is written and closed (the event loop is empty), leave through process.exit: it
 * skips tearing down the heap and the environment (DECISION-startup-budget). */
function leaveWhenDone(): void {
  mark("run returned");
  process.once("beforeExit", () => {
    mark("run beforeExit");
    process.exit();
  });
}

/** How long a run waits for a session it would continue to stop running (its last run's daemon closing). */
const RESUME_WAIT_MS = 3_000;

/**
 * `--continue` / `--resume ID`: the prompt is read, the saved session and its agent are found, and
 * only then is that session's daemon started (a daemon the launcher script started for a new
 * session stood down: entries/run-early-daemon.ts). Nothing of the saved session is ever removed here.
 */
async function continueSession(given: RunPrompt | undefined, fromStdin: boolean, options: RunOptions): Promise<void> {
  const early = await takeEarlyDaemon(options);
  if (early) await abandonDaemon(early); // a new session's, started before the flags were read
  let prompt = given;
  if (fromStdin) {
    const read = readPromptStdin(options.skill);
    if (!read.ok) return refuse(new TauError(read.code, read.message), options.json);
    prompt = read.prompt;
    if (read.skill !== undefined) options = { ...options, skill: read.skill };
  } else {
    const piped = withPipedInput(prompt);
    if (!piped.ok) return refuse(new TauError(piped.code, piped.message), options.json);
    prompt = piped.prompt;
  }
  const rest = loadFastBundle<RunPromptBundle>("run-prompt");
  try {
    const roots = resolveRoots();
    const resume = options.resume as NonNullable<RunOptions["resume"]>;
    let target = rest.exports.resumeTarget(roots.state, process.cwd(), resume);
    // The daemon of a run that just ended may still be closing its journals (`tau run A; tau run
    // --continue B`): a session found running is given a moment to stop before the run is refused.
    for (const until = Date.now() + RESUME_WAIT_MS; !target.ok && target.code === "TAU-E0308" && Date.now() < until; ) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      target = rest.exports.resumeTarget(roots.state, process.cwd(), resume);
    }
    if (!target.ok) return refuse(new TauError(target.code, target.message), options.json);
    const daemon = startOwnedDaemon(roots, { resume: target.sessionId, overrides: options.harnessConfig ?? [] });
    mark("run daemon spawned");
    process.exitCode = await rest.exports.runPrompt(prompt ?? { text: "", literal: false }, { ...options, ...(target.agentId !== undefined ? { agentId: target.agentId } : {}) }, daemon);
  } finally {
    rest.settled();
  }
  leaveWhenDone();
}
