// Estimated cost in the perf projection: the harness's recorded figure wins; otherwise usage at the
// model's prices (cached reads at their own price); no price or no usage leaves a round unpriced.
import { describe, expect, it } from "vitest";
import { PerfProjection, PriceTable, roundCost, type PriceOf } from "../../../handwritten/trace/index.js";
import type { Event } from "../../../handwritten/protocol/index.js";

const ev = (name: string, data: Record<string, unknown>) => ({ name, data }) as unknown as Event;
const prices: PriceOf = (m) => ({ priced: { input_cost: 2, output_cost: 8, cached_input_cost: 0.5 }, "no-cached": { input_cost: 1, output_cost: 4 }, "output-only": { output_cost: 10 }, "context-only": {} })[m];

describe("estimated cost", () => {
  it("[trace.perf.cost] a round is priced from the journal's cost, else from the model's prices, else not at all", () => {
    const t = new PriceTable(prices);
    const usage = { input_tokens: 1_000_000, output_tokens: 100_000, cache_read_tokens: 400_000 };
    expect(roundCost(t, "priced", usage, { usd: 0.5 })).toEqual({ usd: 0.5, source: "journal" });
    expect(roundCost(t, "priced", usage, undefined)).toEqual({ usd: 2 * 0.6 + 0.5 * 0.4 + 8 * 0.1, source: "model_info" });
    expect(roundCost(t, "no-cached", usage, undefined)?.usd).toBeCloseTo(1 * 1 + 4 * 0.1, 12);
    expect(roundCost(t, "output-only", usage, undefined)?.usd).toBeCloseTo(1, 12);
    expect(roundCost(t, "context-only", usage, undefined)).toBeNull();
    expect(roundCost(t, "unknown", usage, undefined)).toBeNull();
    expect(roundCost(t, "priced", undefined, undefined)).toBeNull();
    expect(roundCost(new PriceTable(), "priced", usage, undefined)).toBeNull();
  });

  it("[trace.perf.cost] perf lines sum priced rounds per prompt and agent and count the unpriced ones", () => {
    const p = new PerfProjection(prices);
    p.add(ev("agent.started", { agent_id: "a-1" }), 0);
    const round = (prompt: string, n: number, model: string, usage: Record<string, number> | undefined, cost?: { usd: number }) => {
      p.add(ev("agent.prompt_started", { agent_id: "a-1", prompt_id: prompt, round: n, model }), 10 * n + 1);
      p.add(ev("provider.response_finished", { agent_id: "a-1", prompt_id: prompt, round: n, model, text: "", tool_calls: [], finish_reason: "stop", ...(usage ? { usage } : {}), ...(cost ? { cost } : {}) }), 10 * n + 5);
    };
    round("p-1", 0, "priced", { input_tokens: 1000, output_tokens: 10 });
    round("p-1", 1, "unknown", { input_tokens: 1000, output_tokens: 10 });
    round("p-1", 2, "unknown", { input_tokens: 1000, output_tokens: 10 }, { usd: 0.25 });
    round("p-2", 0, "unknown", { input_tokens: 5, output_tokens: 5 });
    round("p-2", 1, "unknown", undefined);
    const [p1, p2, agent] = p.lines().map((l) => JSON.parse(l) as { estimated_cost_usd: number | null; unpriced_rounds: number; rounds?: Array<{ cost_usd: number | null; cost_source: string | null }> });
    expect(p1?.rounds?.map((r) => [r.cost_usd, r.cost_source])).toEqual([[(2 * 1000 + 8 * 10) / 1e6, "model_info"], [null, null], [0.25, "journal"]]);
    expect([p1?.estimated_cost_usd, p1?.unpriced_rounds]).toEqual([(2 * 1000 + 8 * 10) / 1e6 + 0.25, 1]);
    expect([p2?.estimated_cost_usd, p2?.unpriced_rounds]).toEqual([null, 1]);
    expect([agent?.estimated_cost_usd, agent?.unpriced_rounds]).toEqual([(2 * 1000 + 8 * 10) / 1e6 + 0.25, 2]);
  });
});
