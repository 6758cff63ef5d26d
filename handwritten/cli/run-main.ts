// The `tau run` fast path: bin/run.js calls this without loading the command framework, so a
// headless job starts as fast as the runtime allows. Flags mirror the oclif `run` command (which
// still serves `tau run --help`).
import { parseArgs } from "node:util";
import { readFileSync } from "node:fs";
import { runPrompt } from "./run-prompt.js";

export async function main(argv: readonly string[]): Promise<void> {
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
  process.exitCode = await runPrompt(prompt ?? "", {
    json: values.json === true,
    ...(values.skill !== undefined ? { skill: values.skill } : {}),
    ephemeral: values.ephemeral === true,
    ...(values.model ? { model: values.model } : {}),
    harnessConfig: values["harness-config"] ?? [],
  });
}
