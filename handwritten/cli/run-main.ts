// The `tau run` fast path: bin/tau.cjs calls this without loading the command framework, so a
// headless job starts as fast as the runtime allows.
//
// The daemon is started before anything heavy is loaded: this bundle holds only the argument parsing
// and the launcher, and the rest (protocol, validators, client) is a bundle of its own,
// dist/fast/run-prompt.cjs, loaded while the daemon boots. Where it can, the `tau` launcher script
// has already started the daemon, in parallel with this process (see bin/tau.cjs): it is adopted
// here instead.
import { mark, markStart } from "../startup/timeline.js";
import { abandonDaemon, loadFastBundle } from "../transport/launch.js";
import { TauError, exitWithError } from "./errors.js";
import { NO_PROMPT, parseRunArgs, readPromptStdin, type RunRefusal } from "./run-args.js";
import { startRunDaemon, takeEarlyDaemon } from "./run-daemon.js";

type RunPromptBundle = typeof import("./run-prompt.js");

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
    exitWithError(new TauError(r.code, r.message));
    return;
  }
  let { options } = parsed.args;
  const early = await takeEarlyDaemon(options);
  const daemon = early ?? startRunDaemon(options);
  mark(early ? "run daemon adopted" : "run daemon spawned");
  let prompt = parsed.args.prompt;
  if (parsed.args.promptStdin !== "no") {
    const read = readPromptStdin(options.skill);
    if (!read.ok) {
      await abandonDaemon(daemon);
      exitWithError(new TauError(read.code, read.message));
      return;
    }
    prompt = read.prompt;
    if (read.skill !== undefined) options = { ...options, skill: read.skill };
  }
  const rest = loadFastBundle<RunPromptBundle>("run-prompt");
  mark("run run-prompt loaded");
  try {
    process.exitCode = await rest.exports.runPrompt(prompt ?? { text: "", literal: false }, options, daemon);
  } finally {
    rest.settled();
  }
  // Once everything is written and closed (the event loop is empty), leave through process.exit:
  // it skips tearing down the heap and the environment (DECISION-startup-budget).
  mark("run returned");
  process.once("beforeExit", () => {
    mark("run beforeExit");
    process.exit();
  });
}
