// `tau mcp list [--json]`: the MCP servers a session here would start; never prints env or header values.
import { Command, Flags } from "@oclif/core";
import { ConfigError, loadHarnessConfig, loadMcpServers, resolveRoots } from "../../../config/index.js";
import { TauError, errorOptions } from "../../errors.js";
import { escapeForLine } from "../session/escape.js";

export default class McpList extends Command {
  static override summary = "List the MCP servers a session in this folder starts: name, how it is reached, and the names (not values) of its env and headers.";
  static override flags = { json: Flags.boolean({ description: "Print JSON." }) };

  async run(): Promise<void> {
    const { flags } = await this.parse(McpList);
    const roots = resolveRoots();
    try {
      const { servers, warnings } = await loadMcpServers(await loadHarnessConfig(roots.config), roots.config, process.cwd());
      for (const w of warnings) process.stderr.write(`warning: ${escapeForLine(w)}\n`);
      const rows = servers.map(([name, d]) => ({
        name,
        transport: d.url !== undefined ? "http" : "stdio",
        target: d.url ?? [d.command ?? "", ...(d.args ?? [])].join(" "),
        env: Object.keys(d.env ?? {}),
        headers: Object.keys(d.headers ?? {}),
        // How it runs and when its calls are asked about, as its entry says (the defaults: SPEC-mcp).
        sandbox: d.url !== undefined ? "remote" : d.sandbox === false ? "unsandboxed" : "sandboxed",
        ...(d.ask !== undefined ? { ask: d.ask } : {}),
        allowed_hosts: d.allowed_hosts ?? [],
        ...(d.sampling !== undefined ? { sampling: d.sampling.model } : {}),
      }));
      if (flags.json) return this.log(JSON.stringify(rows));
      if (rows.length === 0) return this.log("No MCP servers. Add one with `tau mcp add NAME -- COMMAND ARG…` or `tau mcp add NAME --url URL`.");
      for (const r of rows) {
        const keys = [...r.env.map((k) => `env ${k}`), ...r.headers.map((k) => `header ${k}`)];
        const how = [r.sandbox, ...(r.ask !== undefined ? [`ask ${r.ask}`] : []), ...r.allowed_hosts.map((h) => `host ${h}`), ...(r.sampling !== undefined ? [`sampling ${r.sampling}`] : [])];
        this.log(escapeForLine(`${r.name}  ${r.transport}  ${r.target}  [${how.join(", ")}]${keys.length > 0 ? `  (${keys.join(", ")})` : ""}`));
      }
    } catch (err) {
      if (err instanceof ConfigError) this.error(err.message, errorOptions(new TauError("TAU-E0201", err.message)));
      throw err;
    }
  }
}
