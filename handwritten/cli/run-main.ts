// The `tau run` fast path: bin/tau.cjs calls this without loading the command framework, so a
// headless job starts as fast as the runtime allows. Flags mirror the oclif `run` command (which
// still serves `tau run --help`).
//
// The daemon is started before anything heavy is loaded: this bundle holds only the argument parsing
// and the launcher, and the rest (protocol, validators, configuration, client) is a bundle of its
// own, dist/fast/run-prompt.cjs, loaded while the daemon boots.
import { parseArgs } from "node:util";
import { readFileSync } from "node:fs";
import { mark, markStart } from "../protocol/timeline.js";
import { loadFastBundle } from "../transport/launch.js";
import { startRunDaemon, type RunOptions } from "./run-daemon.js";

type RunPrompt = typeof import("./run-prompt.js");

export async function main(argv: readonly string[]): Promise<void> {
  markStart("run");
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        prompt: { type: "string", short: "p" },
        "prompt-stdin": { type: "boolean" },
        json: { type: "boolean" },
        ephemeral: { type: "boolean" },
        model: { type: "string" },
        skill: { type: "string" },
        "harness-config": { type: "string", multiple: true },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    process.stderr.write(`tau run: ${(err as Error).message}\nSee: tau run --help\n`);
    process.exitCode = 2;
    return;
  }
  const prompt = values["prompt-stdin"] ? readFileSync(0, "utf8") : values.prompt;
  if (values.skill === undefined && (prompt === undefined || prompt.trim() === "")) {
    process.stderr.write("tau run: give a prompt with -p TEXT or --prompt-stdin (or a skill with --skill NAME)\n");
    process.exitCode = 2;
    return;
  }
  const options: RunOptions = {
    json: values.json === true,
    ...(values.skill !== undefined ? { skill: values.skill } : {}),
    ephemeral: values.ephemeral === true,
    ...(values.model ? { model: values.model } : {}),
    harnessConfig: values["harness-config"] ?? [],
  };
  const daemon = startRunDaemon(options);
  mark("run daemon spawned");
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
