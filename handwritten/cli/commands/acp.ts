// `tau acp`: tau as an Agent Client Protocol agent on standard input and output, for editors (Zed,
// JetBrains IDEs, Neovim and Emacs plugins) that drive coding agents over ACP (SPEC-acp).
import { Command, Flags } from "@oclif/core";
import { resolveRoots } from "../../config/index.js";

export default class Acp extends Command {
  static override summary = "Serve the Agent Client Protocol on standard input and output, for editors.";
  static override description =
    "An editor starts `tau acp` as its agent and speaks ACP (JSON-RPC, one message a line) to it. Each ACP session is a tau " +
    "session in the folder the editor names, saved like any other (tau resume ID continues it in the terminal); prompts " +
    "stream back as updates: the answer, the reasoning, each tool call and its end. What the sandbox would ask a terminal " +
    "user (a host, a path) the editor is asked, with tau's own choices.";
  static override examples = ["<%= config.bin %> acp", "<%= config.bin %> acp --harness-config model=provider/gpt-5"];
  static override flags = {
    "harness-config": Flags.string({ multiple: true, description: "Override one harness.yaml key for every session (KEY=VALUE, dotted keys; repeatable)." }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Acp);
    const { serveAcp } = await import("../acp/index.js");
    await serveAcp(process.stdin, process.stdout, { roots: resolveRoots(process.env), version: this.config.version, overrides: flags["harness-config"] ?? [] });
  }
}
