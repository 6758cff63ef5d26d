// `tau mcp remove NAME`: deletes the drop-in `tau mcp add NAME` wrote.
import { Args, Command } from "@oclif/core";
import { ConfigError, MCP_PROJECT_FILE, removeMcpServer, resolveRoots } from "../../../config/index.js";
import { TauError, errorOptions } from "../../errors.js";

export default class McpRemove extends Command {
  static override summary = "Remove an MCP server added with `tau mcp add`.";
  static override args = { name: Args.string({ description: "Server name.", required: true }) };

  async run(): Promise<void> {
    const { args } = await this.parse(McpRemove);
    try {
      if (!removeMcpServer(resolveRoots().config, args.name)) {
        const missing = new TauError("TAU-E0303", `no MCP server ${args.name} was added with \`tau mcp add\`; tau mcp list shows the servers (those in harness.yaml or ${MCP_PROJECT_FILE} are edited there)`);
        this.error(missing.message, errorOptions(missing));
      }
      this.log(`removed MCP server ${args.name}`);
    } catch (err) {
      if (err instanceof ConfigError) this.error(err.message, errorOptions(new TauError("TAU-E0201", err.message)));
      throw err;
    }
  }
}
