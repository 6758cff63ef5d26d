// `tau resume [SESSION]`: bin/tau.cjs runs the interactive UI directly; this declaration serves
// `tau --help` and `tau resume --help`.
import { Args, Command } from "@oclif/core";
import { main } from "../tui/main.js";

export default class Resume extends Command {
  static override summary = "Restart a saved session and attach the interactive UI.";
  static override description =
    "With no SESSION: the saved session, or a choice among the newest ones when there are several. A session that is still running is attached instead of restarted.";
  static override examples = ["<%= config.bin %> resume", "<%= config.bin %> resume s-abc123"];
  static override args = { session: Args.string({ description: "The session id." }) };

  async run(): Promise<void> {
    const { args } = await this.parse(Resume);
    await main(["resume", ...(args.session ? [args.session] : [])]);
  }
}
