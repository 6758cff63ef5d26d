// `tau ext mcp`: one MCP server's tools as tau tools (SPEC-mcp). The harness starts one instance per
// server configured under `mcp_servers` (instance `mcp-SERVER`, tool prefix `mcp__SERVER__`), so
// role policy denies a server's tools by `ext:mcp-SERVER`, all MCP tools by `group:mcp`, one tool by
// its name. The instance is ready at once (unless `wait_at_start`): the server starts beside the
// session and its tools join when it is ready.
import { resolveRoots } from "../../config/index.js";
import { Extension, ToolFailure } from "../../sdk/index.js";
import { ServerSandbox } from "../shell/sandbox/index.js";
import { MCP_MAX_TOOLS } from "./limits.js";
import { askOf, callNeedsAsking, mcpToolPrefix, planTools, type ListedTool, type OfferedTool } from "./names.js";
import { renderResult } from "./results.js";
import { Elicitations } from "./elicitation.js";
import { Samplings } from "./sampling.js";
import { ServerReport } from "./report.js";
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
  const report = new ServerReport(ext, name);
  const headless = settings.sandbox?.approval === "never";
  const ask = askOf(definition, settings.sandbox?.enabled === false);
  /** A call the entry's `ask` holds goes ahead only once the user allowed it; a run with nobody to ask refuses it. */
  const askFirst = async (tool: string, input: Record<string, unknown>, callId: string, signal: AbortSignal): Promise<void> => {
    const why = `the server's entry asks before ${ask === "always" ? "every call" : "each call of a tool that does not say it only reads"} (ask: ${ask})`;
    if (headless) throw new ToolFailure(`${mcpToolPrefix(name)}${tool} was not called: ${why}, and this run has nobody to ask; set ask: never in its entry to call it without asking`);
    const args = JSON.stringify(input);
    const shown = args.length > 400 ? `${args.slice(0, 399)}…` : args;
    if (!(await elicitations.allow(`the model calls ${mcpToolPrefix(name)}${tool} with ${shown}: allow this call?`, callId, signal))) {
      throw new ToolFailure(`${mcpToolPrefix(name)}${tool} was not called: the user did not allow it (${why})`);
    }
  };
  /** What is registered now: tau name → the server's own tool name. */
  const registered = new Map<string, string>();

  const offer = (tools: readonly ListedTool[]): void => {
    const plan = planTools(name, tools, MCP_MAX_TOOLS);
    for (const why of plan.refused) report.say("warning", `tool ${why}; it is not offered`);
    const next = new Map(plan.offered.map((t) => [t.name, t] as const));
    for (const old of registered.keys()) if (!next.has(old)) ext.unregisterTool(old);
    registered.clear();
    for (const tool of next.values()) register(tool);
    report.offering(registered.size);
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
        if (callNeedsAsking(ask, tool)) await askFirst(tool.name, input, ctx.callId, ctx.signal);
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

  const projectRoot = process.cwd();
  // A stdio server runs inside the sandbox unless its entry says otherwise (SPEC-mcp, "The sandbox").
  const sandbox =
    definition.command !== undefined && definition.sandbox !== false
      ? new ServerSandbox({
          owner: `mcp-${name}`,
          projectRoot,
          roots: resolveRoots(),
          ...(settings.sandbox !== undefined ? { launch: settings.sandbox } : {}),
          allowedHosts: definition.allowed_hosts ?? [],
          refused: (host, port) => report.refusedHost(host, port),
        })
      : undefined;
  const elicitations = new Elicitations(ext, (level, text) => report.say(level, text));
  const samplings = definition.sampling !== undefined ? new Samplings(ext, definition.sampling, (level, text) => report.say(level, text)) : undefined;
  const server = new McpServer(
    name,
    definition,
    projectRoot,
    {
      state: (state: ServerState, detail) => report.changed(state, detail),
      tools: offer,
      note: (level, text) => report.say(level, text),
      runs: (how, why) => report.runs(how, why),
      // A run with no UI to ask (`--approval never`, as `tau run`) offers no elicitation: a server that asks anyway is refused.
      ...(settings.sandbox?.approval !== "never" ? { elicit: (params, signal) => elicitations.ask(params, signal) } : {}),
      // Sampling only when the entry configures it (SPEC-mcp, "Sampling").
      ...(samplings !== undefined ? { sample: (params, signal) => samplings.sample(params, signal) } : {}),
    },
    sandbox,
  );
  ext.onHarnessGone(() => server.stop());
  report.changed("starting", undefined);
  if (definition.url !== undefined) report.runs("remote");
  else if (sandbox === undefined) report.runs("unsandboxed", "sandbox: false in its entry");
  server.start();
  if (definition.wait_at_start === true) await server.firstStart;
  ext.ready();
}

