// `tau mcp login NAME`: signs in to a Streamable HTTP server with OAuth (SPEC-mcp, "Sign-in"), in the
// MCP extension's `--login` mode.
import { Args, Command, Flags } from "@oclif/core";
import { ConfigError, remoteMcpServer, resolveRoots } from "../../../config/index.js";
import { TauError, errorOptions, printError } from "../../errors.js";
import { extensionLogin } from "../../extension-login.js";
import { escapeForLine } from "../session/escape.js";

export default class McpLogin extends Command {
  static override summary = "Sign in to a remote MCP server with OAuth; its tokens are stored in a 0600 file bound to the server's URL.";
  static override description =
    "Registers tau with the server's authorization server when it offers that, shows the address to sign in at (and opens it in a " +
    "browser when run in a terminal), takes the browser's redirect on 127.0.0.1 (a free port) and waits 10 minutes at most. The " +
    "tokens are written to secrets/mcp-oauth-HASH (mode 0600), sent only to this server's URL, and refreshed when they expire. " +
    "No token is ever printed.";
  static override examples = ["<%= config.bin %> mcp login docs"];
  static override args = { name: Args.string({ description: "Server name (a server added with --url).", required: true }) };
  static override flags = { open: Flags.boolean({ description: "Open the address in a browser when run in a terminal (--no-open only shows it).", default: true, allowNo: true }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(McpLogin);
    const roots = resolveRoots();
    try {
      const definition = await remoteMcpServer(roots.config, process.cwd(), args.name);
      const v = await extensionLogin("mcp", { config_root: roots.config, server: args.name, definition, open: flags.open && process.stdout.isTTY === true });
      if (v.ok !== true) {
        const reason = typeof v.reason === "string" ? v.reason : "the sign-in gave no answer";
        return this.exit(printError(new TauError("TAU-E0410", `tau: mcp login: ${escapeForLine(reason)}`)));
      }
      const tools = typeof v.tools === "number" ? v.tools : 0;
      this.log(`signed in to MCP server ${args.name}; it offers ${tools} tool${tools === 1 ? "" : "s"}`);
    } catch (err) {
      if (err instanceof ConfigError) this.error(err.message, errorOptions(new TauError("TAU-E0201", err.message)));
      throw err;
    }
  }
}
