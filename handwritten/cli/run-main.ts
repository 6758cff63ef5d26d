// The `tau run` fast path: bin/tau.cjs calls this without loading the command framework, so a
// headless job starts as fast as the runtime allows.
//
// The daemon is started before anything heavy is loaded: this bundle holds only the argument parsing
// and the launcher, and the rest (protocol, validators, client) is a bundle of its own,
// dist/fast/run-prompt.cjs, loaded while the daemon boots. Where it can, the `tau` launcher script
// has already started the daemon, in parallel with this process (see bin/tau.cjs): it is adopted
// here instead.
import { readFileSync } from "node:fs";
import { mark, markStart } from "../protocol/timeline.js";
import { abandonDaemon, loadFastBundle } from "../transport/launch.js";
import { NO_PROMPT, missingPrompt, parseRunArgs } from "./run-args.js";
import { startRunDaemon, takeEarlyDaemon } from "./run-daemon.js";

type RunPrompt = typeof import("./run-prompt.js");

export async function main(argv: readonly string[]): Promise<void> {
  markStart("run");
  const parsed = parseRunArgs(argv);
  if (!parsed.ok) {
    // The daemon started for this run, if any, finds the same mistake; take it back all the same.
    const early = await takeEarlyDaemon({ json: false, ephemeral: false });
    if (early) await abandonDaemon(early);
    process.stderr.write(`${parsed.message}\n`);
    process.exitCode = 2;
    return;
  }
  const { options } = parsed.args;
  const early = await takeEarlyDaemon(options);
  const daemon = early ?? startRunDaemon(options);
  mark(early ? "run daemon adopted" : "run daemon spawned");
  const prompt = parsed.args.promptStdin ? readFileSync(0, "utf8") : parsed.args.prompt;
  if (missingPrompt(prompt, options.skill)) {
    await abandonDaemon(daemon);
    process.stderr.write(`${NO_PROMPT}\n`);
    process.exitCode = 2;
    return;
  }
  const rest = loadFastBundle<RunPrompt>("run-prompt");
  mark("run run-prompt loaded");
  try {
    process.exitCode = await rest.exports.runPrompt(prompt ?? "", options, daemon);
  } finally {
    rest.settled();
  }
  // Once everything is written and closed (the event loop is empty), leave through process.exit:
  // it skips tearing down the heap and the environment, about 10 ms of a headless job.
  mark("run returned");
  process.once("beforeExit", () => {
    mark("run beforeExit");
    process.exit();
  });
}
