// `tau mcp logout NAME`: removes the sign-in `tau mcp login NAME` stored for the server's URL.
import { Args, Command } from "@oclif/core";
import { ConfigError, remoteMcpServer, removeMcpSignIn, resolveRoots } from "../../../config/index.js";
import { TauError, errorOptions } from "../../errors.js";

export default class McpLogout extends Command {
  static override summary = "Remove the sign-in `tau mcp login` stored for a remote MCP server.";
  static override args = { name: Args.string({ description: "Server name.", required: true }) };

  async run(): Promise<void> {
    const { args } = await this.parse(McpLogout);
    const roots = resolveRoots();
    try {
      const def = await remoteMcpServer(roots.config, process.cwd(), args.name);
      this.log(removeMcpSignIn(roots.config, def.url) ? `signed out of MCP server ${args.name}` : `MCP server ${args.name} has no sign-in stored`);
    } catch (err) {
      if (err instanceof ConfigError) this.error(err.message, errorOptions(new TauError("TAU-E0201", err.message)));
      throw err;
    }
  }
}
