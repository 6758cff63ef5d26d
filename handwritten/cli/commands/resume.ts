// `tau resume [SESSION]`: bin/tau.cjs runs the interactive UI directly; this declaration serves
// `tau --help` and `tau resume --help`. Its flags and arguments are the table's (tui/flags.ts).
import { Command } from "@oclif/core";
import { oclifArgs, oclifFlags } from "../oclif-flags.js";
import { UI_COMMANDS } from "../tui/flags.js";
import { main } from "../tui/main.js";

const COMMAND = UI_COMMANDS.resume;

export default class Resume extends Command {
  static override summary = COMMAND.summary;
  static override description = COMMAND.description;
  static override examples = ["<%= config.bin %> resume", "<%= config.bin %> resume s-abc123", "<%= config.bin %> resume s-abc123 --fork"];
  static override flags = oclifFlags(COMMAND.flags);
  static override args = oclifArgs(COMMAND.args);

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Resume);
    await main(["resume", ...(args.session ? [args.session] : []), ...(flags.fork === true ? ["--fork"] : [])]);
  }
}
