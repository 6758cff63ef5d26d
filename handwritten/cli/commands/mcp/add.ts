// `tau mcp add NAME [flags] -- COMMAND [ARG…]` or `tau mcp add NAME --url URL [--header …]`.
import { Args, Command, Flags } from "@oclif/core";
import { ConfigError, addMcpServer, resolveRoots } from "../../../config/index.js";
import type { McpAsk, McpServerConfig } from "../../../../generated/index.js";
import { TauError, errorOptions } from "../../errors.js";

/** `KEY=VALUE` (env) or `Name: value` (headers) pairs into a record; a malformed one is refused. */
function pairs(list: readonly string[], sep: "=" | ":", what: string): Record<string, string> | undefined {
  if (list.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const item of list) {
    const at = item.indexOf(sep);
    const key = at > 0 ? item.slice(0, at).trim() : "";
    if (key === "" || /\s/.test(key)) throw new ConfigError(`${what} ${JSON.stringify(item.slice(0, 40).split(sep)[0])}…: give it as ${sep === "=" ? "KEY=VALUE" : '"Name: value"'}`);
    out[key] = item.slice(at + 1).replace(sep === ":" ? /^\s+/ : /^/, "");
  }
  return out;
}

export default class McpAdd extends Command {
  static override summary = "Add an MCP server: its tools join every session as mcp__NAME__TOOL.";
  static override description =
    "A local server runs as the command after `--` (on stdio, inside the sandbox unless its entry says `sandbox: false`); a remote " +
    "one is reached at --url (Streamable HTTP). The entry is written to harness.d/mcp-NAME.yaml (mode 0600) and the " +
    "configuration is loaded again before the command ends; env and header values are never printed or logged.";
  static override examples = [
    "<%= config.bin %> mcp add files -- npx -y @modelcontextprotocol/server-filesystem .",
    '<%= config.bin %> mcp add docs --url https://mcp.example.com/mcp --header "Authorization: Bearer $TOKEN"',
  ];
  static override strict = false;
  static override args = { name: Args.string({ description: "Server name: lowercase letters, digits and single underscores.", required: true }) };
  static override flags = {
    url: Flags.string({ description: "A Streamable HTTP server's endpoint (http:// or https://)." }),
    header: Flags.string({ description: '"Name: value" sent with every request to --url; repeat for more.', multiple: true }),
    env: Flags.string({ char: "e", description: "KEY=VALUE added to a local server's environment; repeat for more.", multiple: true }),
    cwd: Flags.string({ description: "The folder a local server starts in (the project root when absent)." }),
    "startup-timeout-ms": Flags.integer({ description: "Milliseconds its whole start may take (default 30000).", min: 1 }),
    "wait-at-start": Flags.boolean({ description: "Hold the session's first prompt until this server is ready or failed." }),
    "no-sandbox": Flags.boolean({ description: "Run a local server with your full rights instead of inside the sandbox (`sandbox: false`); its calls are then asked about by default." }),
    "allow-host": Flags.string({ description: "A host a sandboxed local server may connect to beyond sandbox.yaml's allowlist (`api.example.com`, `*.example.com`); repeat for more.", multiple: true }),
    ask: Flags.string({ description: "Ask before its tools' calls: never, writes (each call of a tool that does not say it only reads) or always. Default: never for a server that runs sandboxed, else writes.", options: ["never", "writes", "always"] }),
    force: Flags.boolean({ description: "Replace a server added earlier with `tau mcp add` under the same name." }),
  };

  async run(): Promise<void> {
    const { args, argv, flags } = await this.parse(McpAdd);
    const command = (argv as string[]).slice(1);
    try {
      if (flags.url !== undefined && command.length > 0) throw new ConfigError("give either --url or a command after `--`, not both");
      if (flags.url === undefined && command.length === 0) throw new ConfigError("give the server's command after `--` (tau mcp add NAME -- COMMAND ARG…), or --url for a remote server");
      if (flags.url !== undefined && (flags["no-sandbox"] || flags["allow-host"] !== undefined)) throw new ConfigError("--no-sandbox and --allow-host are for a local server (a command after `--`); a --url server runs elsewhere");
      if (flags["no-sandbox"] && flags["allow-host"] !== undefined) throw new ConfigError("--allow-host widens a sandboxed server's network; with --no-sandbox the server is not sandboxed");
      const env = pairs(flags.env ?? [], "=", "--env");
      const headers = pairs(flags.header ?? [], ":", "--header");
      const def: McpServerConfig = {
        ...(flags.url !== undefined ? { url: flags.url } : { command: command[0] as string, ...(command.length > 1 ? { args: command.slice(1) } : {}) }),
        ...(env !== undefined ? { env } : {}),
        ...(headers !== undefined ? { headers } : {}),
        ...(flags.cwd !== undefined ? { cwd: flags.cwd } : {}),
        ...(flags["startup-timeout-ms"] !== undefined ? { startup_timeout_ms: flags["startup-timeout-ms"] } : {}),
        ...(flags["wait-at-start"] ? { wait_at_start: true } : {}),
        ...(flags["no-sandbox"] ? { sandbox: false } : {}),
        ...(flags["allow-host"] !== undefined ? { allowed_hosts: flags["allow-host"] } : {}),
        ...(flags.ask !== undefined ? { ask: flags.ask as McpAsk } : {}),
      };
      const path = await addMcpServer(resolveRoots().config, process.cwd(), args.name, def, flags.force);
      this.log(`wrote ${path}`);
      this.log(`its tools: mcp__${args.name}__TOOL, from the next session on`);
    } catch (err) {
      if (err instanceof ConfigError) this.error(err.message, errorOptions(new TauError("TAU-E0201", err.message)));
      throw err;
    }
  }
}
