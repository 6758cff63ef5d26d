// `tau dev print-system-prompt | print-prompt TEXT | print-tools`: render previews from an
// in-memory harness with the configured extensions; nothing is written. Each exits with the
// preview's own status (the daemon's: 0, or 2 for a configuration mistake), or as a failure when
// the preview was killed.
import { Args, Command } from "@oclif/core";
import { spawnSync } from "node:child_process";
import { forTauProcess } from "../../../startup/index.js";
import { DAEMON_COMMAND } from "../../../startup/launch-facts.js";
import { DAEMON_FLAGS } from "../../../startup/daemon-flags.js";
import { flagArgs } from "../../../startup/flags.js";
import { EXIT_CODES } from "../../errors.js";

function preview(kind: "system-prompt" | "tools" | "prompt", text?: string): number {
  const args = flagArgs(DAEMON_FLAGS, { ephemeral: true, "project-root": process.cwd(), print: kind, ...(text !== undefined ? { "print-text": text } : {}) });
  const r = spawnSync(process.execPath, [process.argv[1] as string, DAEMON_COMMAND, ...args], {
    stdio: "inherit",
    env: forTauProcess(process.env),
  });
  return r.status ?? EXIT_CODES.failed;
}

export class PrintSystemPrompt extends Command {
  static override summary = "Print the system prompt a new agent here would get.";
  async run(): Promise<void> {
    process.exitCode = preview("system-prompt");
  }
}

export class PrintTools extends Command {
  static override summary = "Print the tools a new agent here would be offered, as JSON.";
  async run(): Promise<void> {
    process.exitCode = preview("tools");
  }
}

export class PrintPrompt extends Command {
  static override summary = "Print the full first provider request for a prompt, as JSON.";
  static override args = { text: Args.string({ description: "The prompt text.", required: true }) };
  async run(): Promise<void> {
    const { args } = await this.parse(PrintPrompt);
    process.exitCode = preview("prompt", args.text);
  }
}
