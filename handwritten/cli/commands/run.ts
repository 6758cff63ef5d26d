// `tau run -p "…"`: one prompt to completion, headless. Starts a daemon it owns (which exits when
// this client leaves), prints the answer (or, with --json, every event as a JSON line), and exits as
// errors.ts maps: 0 on success, 1 on failure, 2 on a usage or configuration mistake, 130 on cancel.
import { Command, Flags } from "@oclif/core";
import { readFileSync } from "node:fs";
import { TauError, errorOptions } from "../errors.js";
import { runPrompt } from "../run-prompt.js";
import { headlessPrompt } from "../run-args.js";

export default class Run extends Command {
  static override summary = "Run one prompt to completion and print the answer.";
  static override description =
    "Starts a session daemon, creates an agent, submits the prompt and waits for the outer turn to finish. With no model configured, an offline scripted demo answers.";
  static override examples = [
    '<%= config.bin %> run -p "list the files here"',
    'echo "fix the test" | <%= config.bin %> run --prompt-stdin --json',
    '<%= config.bin %> run --skill release-notes -p "for v1.2"',
  ];
  static override flags = {
    prompt: Flags.string({ char: "p", description: "The prompt text." }),
    "prompt-stdin": Flags.boolean({ description: "Read the prompt from standard input." }),
    json: Flags.boolean({ description: "Stream every event as one JSON line instead of printing the answer." }),
    ephemeral: Flags.boolean({ description: "Keep no session files." }),
    model: Flags.string({ description: "The model to use (provider/model or a model id)." }),
    skill: Flags.string({ description: "Load this skill (SKILL.md) as the prompt; -p TEXT, if given, follows it as your own words." }),
    "harness-config": Flags.string({ description: "Override one harness.yaml key for this run (KEY=VALUE, dotted keys; repeatable).", multiple: true }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Run);
    const read = headlessPrompt(flags["prompt-stdin"] ? readFileSync(0, "utf8") : (flags.prompt ?? ""), flags.skill);
    if (!read.ok) {
      // The command framework prints its own `Error:` line, so the message goes without its `tau run: `.
      const err = new TauError(read.code, read.message);
      this.error(err.message.replace(/^tau run: /, ""), errorOptions(err));
    }
    process.exitCode = await runPrompt(read.prompt, {
      json: flags.json,
      ...(read.skill !== undefined ? { skill: read.skill } : {}),
      ephemeral: flags.ephemeral,
      ...(flags.model ? { model: flags.model } : {}),
      harnessConfig: flags["harness-config"] ?? [],
    });
  }
}

