// `tau attach [SESSION]`: bin/tau.cjs runs the interactive UI directly; this declaration serves
// `tau --help` and `tau attach --help`.
import { Args, Command } from "@oclif/core";
import { main } from "../tui/main.js";

export default class Attach extends Command {
  static override summary = "Attach the interactive UI to a running session.";
  static override description =
    "With no SESSION: the one running session, or a choice when several run. Leaving with :detach keeps the session running; :quit leaves it to the other UIs (a session this terminal started ends when its last UI leaves).";
  static override examples = ["<%= config.bin %> attach", "<%= config.bin %> attach s-abc123"];
  static override args = { session: Args.string({ description: "The session id (tau session list shows them)." }) };

  async run(): Promise<void> {
    const { args } = await this.parse(Attach);
    await main(["attach", ...(args.session ? [args.session] : [])]);
  }
}
