// `tau init`: writes commented sample harness.yaml and cli.yaml into the config root.
import { Command } from "@oclif/core";
import { resolveRoots } from "../../config/index.js";
import { initConfig } from "../init.js";

export default class Init extends Command {
  static override summary = "Write commented sample configuration files (never overwrites).";
  static override examples = ["<%= config.bin %> init"];

  async run(): Promise<void> {
    const outcome = initConfig(resolveRoots().config);
    for (const p of outcome.written) this.log(`wrote ${p}`);
    for (const p of outcome.kept) this.log(`kept ${p} (it already exists)`);
  }
}
