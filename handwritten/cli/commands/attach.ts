// `tau attach [SESSION]`: bin/tau.cjs runs the interactive UI directly; this declaration serves
// `tau --help` and `tau attach --help`. Its flags and arguments are the table's (tui/flags.ts).
import { Command } from "@oclif/core";
import { oclifArgs, oclifFlags } from "../oclif-flags.js";
import { UI_COMMANDS } from "../tui/flags.js";
import { main } from "../tui/main.js";

const COMMAND = UI_COMMANDS.attach;

export default class Attach extends Command {
  static override summary = COMMAND.summary;
  static override description = COMMAND.description;
  static override examples = ["<%= config.bin %> attach", "<%= config.bin %> attach s-abc123"];
  static override flags = oclifFlags(COMMAND.flags);
  static override args = oclifArgs(COMMAND.args);

  async run(): Promise<void> {
    const { args } = await this.parse(Attach);
    await main(["attach", ...(args.session ? [args.session] : [])]);
  }
}
