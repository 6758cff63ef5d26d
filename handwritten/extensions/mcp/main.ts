// `tau ext mcp`: one MCP server's tools as tau tools (SPEC-mcp). The harness starts one instance per
// server configured under `mcp_servers` (instance `mcp-SERVER`, tool prefix `mcp__SERVER__`), so
// role policy denies a server's tools by `ext:mcp-SERVER`, all MCP tools by `group:mcp`, one tool by
// its name. The instance is ready at once (unless `wait_at_start`): the server starts beside the
// session and its tools join when it is ready.
import { Extension, ToolFailure } from "../../sdk/index.js";
import { MCP_MAX_TOOLS } from "./limits.js";
import { planTools, type ListedTool, type OfferedTool } from "./names.js";
import { renderResult } from "./results.js";
import { McpServer, type ServerState } from "./server.js";

export async function main(args: readonly string[] = []): Promise<void> {
  if (args[0] === "--login") {
    const { signIn } = await import("./login.js");
    process.exitCode = await signIn();
    return;
  }
  const ext = await Extension.connect();
  const settings = ext.settings("mcp");
  if (settings === undefined) return;
  const { server: name, definition } = settings;
  const labels = { group: "mcp", tags: ["mcp", `mcp_${name}`] };
  /** What is registered now: tau name → the server's own tool name. */
  const registered = new Map<string, string>();

  const offer = (tools: readonly ListedTool[]): void => {
    const plan = planTools(name, tools, MCP_MAX_TOOLS);
    for (const why of plan.refused) say(ext, "warning", `mcp server ${name}: tool ${why}; it is not offered`);
    const next = new Map(plan.offered.map((t) => [t.name, t] as const));
    for (const old of registered.keys()) if (!next.has(old)) ext.unregisterTool(old);
    registered.clear();
    for (const tool of next.values()) register(tool);
  };

  const register = (tool: OfferedTool): void => {
    registered.set(tool.name, tool.mcpName);
    ext.registerTool({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      ...labels,
      run: async (args, ctx) => {
        const mcpName = registered.get(tool.name);
        if (mcpName === undefined) throw new ToolFailure(`MCP server ${name} no longer offers ${tool.name}`);
        const input = typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
        let result;
        try {
          result = await server.call(mcpName, input, ctx.signal, (t) => ctx.progress(t));
        } catch (err) {
          throw new ToolFailure((err as Error).message);
        }
        const text = renderResult(name, mcpName, result);
        if (result.isError === true) throw new ToolFailure(text);
        return { output: text, display: { summary: `mcp ${name}` } };
      },
    });
  };

  const server = new McpServer(name, definition, process.cwd(), {
    state: (state: ServerState, detail) => report(ext, name, state, detail, registered.size),
    tools: offer,
  });
  ext.onHarnessGone(() => server.stop());
  report(ext, name, "starting", undefined, 0);
  server.start();
  if (definition.wait_at_start === true) await server.firstStart;
  ext.ready();
}

/** Every change of state is a notice: a failed server stays visible with its last error. */
function report(ext: Extension, name: string, state: ServerState, detail: string | undefined, tools: number): void {
  if (state === "stopped") return;
  if (state === "ready") return say(ext, "info", `mcp server ${name}: ready`);
  if (state === "starting") return say(ext, "info", `mcp server ${name}: starting`);
  const level = state === "failed" ? "error" : "warning";
  say(ext, level, `mcp server ${name}: ${state}${detail ? ` (${detail})` : ""}${state === "restarting" && tools > 0 ? `; its ${tools} tools fail until it is back` : ""}`);
}

/**
 * A notice is live only: the same line goes to stderr, which the session keeps in its
 * extensions.log, so a refusal or failure reported before a UI attached can still be read.
 */
function say(ext: Extension, level: "info" | "warning" | "error", text: string): void {
  ext.notice(level, text);
  process.stderr.write(`${level}: ${text}\n`);
}
