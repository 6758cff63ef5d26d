// Usage and cost accounting (SPEC-compaction, "Stats"): each response's token use into its agent's
// totals, its cost at its model's rates, and the agent's stats published when they change.
import type { AgentStatsUpdated, EventName, EventPayloads, ProviderResponseFinished, Usage } from "../../generated/index.js";
import { addUsage, type AgentUsageTotals } from "./agent-fold.js";
import type { AgentLoop, AgentLoops } from "./agent-loop-state.js";
import type { ModelRegistry } from "./model-registry.js";

export interface UsagePort {
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<boolean>;
}

export class UsageMeter {
  constructor(
    private readonly port: UsagePort,
    private readonly models: Pick<ModelRegistry, "info" | "lastInfo" | "contextWindow">,
    private readonly loops: AgentLoops,
  ) {}

  /** A resumed agent's stats go on from where they were (a snapshot, so an attaching UI shows them). */
  restore(agentId: string, l: AgentLoop, usage: AgentUsageTotals | undefined): void {
    if (usage) {
      l.usage.totals = structuredClone(usage);
      l.usage.contextTokens = usage.context_tokens;
    }
    this.publishStats(agentId, l);
  }

  /** The cost of a response at the rates its model has now, when it has any. */
  costOf(model: string, usage: Usage | undefined): ProviderResponseFinished["cost"] {
    const info = this.models.info(model);
    if (!usage || !info || (info.input_cost === undefined && info.output_cost === undefined)) return undefined;
    const input_rate = info.input_cost ?? 0;
    const output_rate = info.output_cost ?? 0;
    return { input_rate, output_rate, usd: (input_rate * usage.input_tokens + output_rate * usage.output_tokens) / 1_000_000 };
  }

  /** Response-local usage into the agent's totals; only an ordinary response sets the context use. */
  account(agentId: string, l: AgentLoop, model: string, usage: Usage | undefined, kind: "response" | "summary"): void {
    if (!usage) return;
    const u = l.usage;
    addUsage(u.totals, model, usage.input_tokens, usage.output_tokens, usage.cache_read_tokens ?? 0, kind === "response");
    if (kind === "response") {
      u.contextTokens = usage.input_tokens + usage.output_tokens;
      u.contextFresh = true;
    }
    this.publishStats(agentId, l, model);
  }

  /** The context use of the last response, now weighed for automatic compaction (it is weighed once). */
  weigh(l: AgentLoop): number {
    l.usage.contextFresh = false;
    return l.usage.contextTokens;
  }

  /** After a compaction: the context is its estimate of what is left, weighed already. */
  compacted(l: AgentLoop, contextTokens: number): void {
    l.usage.contextTokens = contextTokens;
    l.usage.contextFresh = false;
  }

  /** Every agent's stats again: prices and context windows may have come with declared models. */
  republish(): void {
    for (const [agentId, l] of this.loops.entries()) this.publishStats(agentId, l);
  }

  /**
   * The agent's stats from its totals, priced with each model's last declared prices (a price or
   * context window that arrives later, as models are declared, republishes them); nothing when
   * unchanged or unused.
   */
  publishStats(agentId: string, l: AgentLoop, model = l.usage.totals.context_model ?? l.model): void {
    const u = l.usage.totals;
    if (u.input_tokens === 0 && u.output_tokens === 0) return;
    let cost = 0;
    for (const [id, [input, output, cachedTokens]] of Object.entries(u.by_model)) {
      const info = this.models.lastInfo(id);
      // Prices are per million tokens; cached input tokens are part of the input tokens, at their own price.
      const cached = Math.min(cachedTokens, input);
      const price = info?.input_cost ?? 0;
      cost += (price * (input - cached) + (info?.cached_input_cost ?? price) * cached + (info?.output_cost ?? 0) * output) / 1_000_000;
    }
    const stats: AgentStatsUpdated = { agent_id: agentId, usage: { input_tokens: u.input_tokens, output_tokens: u.output_tokens }, cost_usd: cost, context_tokens: l.usage.contextTokens };
    const window = model !== undefined ? this.models.contextWindow(model) : undefined;
    if (window !== undefined) stats.context_window = window;
    const key = JSON.stringify(stats);
    if (key === l.usage.lastStats) return;
    l.usage.lastStats = key;
    void this.port.publish("agent.stats_updated", stats);
  }
}
