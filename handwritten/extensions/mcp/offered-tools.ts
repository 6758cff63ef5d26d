// A server's tools as this instance offers them (SPEC-mcp, "Tools" and "Asking before a call"):
// each listing planned into tau tools (registered, withdrawn), and each call asked of the user
// first when the entry's `ask` holds it, then made, its result rendered as untrusted text.
import { ToolFailure, type Extension } from "../../sdk/index.js";
import type { Elicitations } from "./elicitation.js";
import { MCP_MAX_TOOLS } from "./limits.js";
import { callNeedsAsking, mcpToolPrefix, planTools, type ListedTool, type OfferedTool } from "./names.js";
import type { ServerReport } from "./report.js";
import { renderResult } from "./results.js";
import type { McpServer } from "./server.js";

export interface OfferedToolsOptions {
  readonly name: string;
  /** The entry's `ask` as it stands for the next call (its default follows how the server runs: askOf). */
  readonly ask: () => "never" | "writes" | "always";
  /** Nobody can be asked (`--approval never`): a held call is refused. */
  readonly headless: boolean;
  readonly report: ServerReport;
  readonly elicitations: Elicitations;
}

export class OfferedTools {
  /** What is registered now: tau name → the server's own tool name. */
  private readonly registered = new Map<string, string>();
  private readonly labels: { group: string; tags: string[] };
  /** The server the calls go to (set once it exists: it reports its listings here). */
  server: McpServer | undefined;

  constructor(
    private readonly ext: Extension,
    private readonly o: OfferedToolsOptions,
  ) {
    this.labels = { group: "mcp", tags: ["mcp", `mcp_${o.name}`] };
  }

  /** A fresh listing: what is no longer offered goes, the rest is registered (again). */
  offer(tools: readonly ListedTool[]): void {
    const plan = planTools(this.o.name, tools, MCP_MAX_TOOLS);
    for (const why of plan.refused) this.o.report.say("warning", `tool ${why}; it is not offered`);
    const next = new Map(plan.offered.map((t) => [t.name, t] as const));
    for (const old of this.registered.keys()) if (!next.has(old)) this.ext.unregisterTool(old);
    this.registered.clear();
    for (const tool of next.values()) this.register(tool);
    this.o.report.offering(this.registered.size);
  }

  private register(tool: OfferedTool): void {
    const name = this.o.name;
    this.registered.set(tool.name, tool.mcpName);
    this.ext.registerTool({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      ...this.labels,
      run: async (args, ctx) => {
        const mcpName = this.registered.get(tool.name);
        const server = this.server;
        if (mcpName === undefined || server === undefined) throw new ToolFailure(`MCP server ${name} no longer offers ${tool.name}`);
        const input = typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
        const ask = this.o.ask();
        if (callNeedsAsking(ask, tool)) await this.askFirst(tool.name, input, ctx.callId, ctx.signal, ask);
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
  }

  /** A call the entry's `ask` holds goes ahead only once the user allowed it; a run with nobody to ask refuses it. */
  private async askFirst(tool: string, input: Record<string, unknown>, callId: string, signal: AbortSignal, ask: "writes" | "always" | "never"): Promise<void> {
    const { name } = this.o;
    const why = `the server's entry asks before ${ask === "always" ? "every call" : "each call of a tool that does not say it only reads"} (ask: ${ask})`;
    if (this.o.headless) throw new ToolFailure(`${mcpToolPrefix(name)}${tool} was not called: ${why}, and this run has nobody to ask; set ask: never in its entry to call it without asking`);
    const args = JSON.stringify(input);
    const shown = args.length > 400 ? `${args.slice(0, 399)}…` : args;
    if (!(await this.o.elicitations.allow(`the model calls ${mcpToolPrefix(name)}${tool} with ${shown}: allow this call?`, callId, signal))) {
      throw new ToolFailure(`${mcpToolPrefix(name)}${tool} was not called: the user did not allow it (${why})`);
    }
  }
}
