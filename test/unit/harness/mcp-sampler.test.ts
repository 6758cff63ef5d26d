// An MCP server's sampling through the agent loop's ports, in memory (SPEC-mcp, "Sampling"): the
// requesting instance's entry is the authority — no entry, another model: refused, nothing sent; its
// token bound wins — and the round ends with the answer, the provider's exit or the requester's.
import { describe, expect, it } from "vitest";
import { extensionPublisher, InMemoryHarness } from "../../support/in-memory-ports.js";
import type { EventPayloads } from "../../../generated/index.js";
import { SAMPLING_MAX_CHARS } from "../../../handwritten/harness/mcp-sampler.js";

const LLM = extensionPublisher("llm", 1, "provider");
const MCP = extensionPublisher("mcp-notes", 4, "tool");
const OTHER = extensionPublisher("mcp-other", 5, "tool");

async function harness(): Promise<InMemoryHarness> {
  const h = new InMemoryHarness();
  h.live.set("llm", 1);
  h.live.set("mcp-notes", 4);
  h.live.set("mcp-other", 5);
  h.samplings.set("mcp-notes", { model: "llm/m1", max_tokens: 100 });
  h.fromPeer("provider.models_declared", { models: [{ id: "m1", context_window: 100_000 }] }, LLM);
  await h.settle();
  return h;
}

function ask(h: InMemoryHarness, id: string, from = MCP, model = "llm/m1"): void {
  const data: EventPayloads["mcp.sampling_request"] = { sampling_id: id, model, system: "be brief", messages: [{ role: "user", text: "hi" }], max_tokens: 5000, timeout_ms: 60_000 };
  h.fromPeer("mcp.sampling_request", data, from);
}

const results = (h: InMemoryHarness) => h.directed.filter((d) => d.event.name === "mcp.sampling_result").map((d) => ({ to: d.to, ...(d.event.data as Record<string, unknown>) }));

describe("MCP sampling in the harness", () => {
  it("[mcp.sampling.harness-authority] only an instance whose entry configures sampling, for that model, samples; the entry's token bound wins; the answer goes back to it alone", async () => {
    const h = await harness();
    ask(h, "s-1", OTHER);
    ask(h, "s-2", MCP, "llm/m2");
    await h.settle();
    expect(results(h)).toEqual([
      { to: "mcp-other", sampling_id: "s-1", outcome: "failed", reason: "sampling is not configured for this server" },
      { to: "mcp-notes", sampling_id: "s-2", outcome: "failed", reason: "only the configured model llm/m1 samples for this server" },
    ]);
    expect(h.providerCalls).toHaveLength(0);

    ask(h, "s-3");
    await h.settle();
    expect(h.providerCalls).toHaveLength(1);
    expect(h.providerCalls[0]!.call).toMatchObject({ agent_id: "mcp-notes", prompt_id: "s-3", round: 0, model: "m1", system: "be brief", messages: [{ role: "user", text: "hi" }], tools: [], max_output_tokens: 100 });
    h.fromPeer("provider.response_finished_reported", { prompt_id: "s-3", round: 0, model: "m1", text: "hello", tool_calls: [], finish_reason: "stop", usage: { input_tokens: 3, output_tokens: 1 } }, LLM);
    await h.settle();
    expect(results(h).slice(2)).toEqual([{ to: "mcp-notes", sampling_id: "s-3", outcome: "ok", text: "hello", model: "m1", stop_reason: "stop", usage: { input_tokens: 3, output_tokens: 1 } }]);
  });

  it("[mcp.sampling.total-bound] a request's texts together (system prompt included) are taken up to SAMPLING_MAX_CHARS and refused above it, before anything is sent", async () => {
    const h = await harness();
    // The system prompt "be brief" is 8 characters; the rest in 64 KiB messages.
    const sized = (id: string, total: number): void => {
      const texts: string[] = [];
      for (let left = total - 8; left > 0; left -= 65_536) texts.push("x".repeat(Math.min(65_536, left)));
      h.fromPeer("mcp.sampling_request", { sampling_id: id, model: "llm/m1", system: "be brief", messages: texts.map((text) => ({ role: "user" as const, text })), max_tokens: 10, timeout_ms: 60_000 }, MCP);
    };
    sized("s-at", SAMPLING_MAX_CHARS);
    sized("s-below", SAMPLING_MAX_CHARS - 1);
    sized("s-above", SAMPLING_MAX_CHARS + 1);
    await h.settle();
    expect(h.providerCalls.map((c) => c.call.prompt_id).sort()).toEqual(["s-at", "s-below"]);
    expect(results(h)).toEqual([{ to: "mcp-notes", sampling_id: "s-above", outcome: "failed", reason: `the request's text is larger than ${SAMPLING_MAX_CHARS} characters` }]);
  });

  it("[mcp.sampling.connections-gone] a provider that exits fails its samplings; an instance that leaves has its samplings cancelled at the provider", async () => {
    const h = await harness();
    ask(h, "s-1");
    await h.settle();
    void h.prompts.onProviderGone("llm", 1);
    await h.settle();
    expect(results(h)).toEqual([{ to: "mcp-notes", sampling_id: "s-1", outcome: "failed", reason: "the llm provider exited" }]);

    h.fromPeer("provider.models_declared", { models: [{ id: "m1", context_window: 100_000 }] }, LLM);
    await h.settle();
    ask(h, "s-2");
    await h.settle();
    void h.prompts.onProviderGone("mcp-notes", 4);
    await h.settle();
    expect(h.directed.filter((d) => d.to === "llm" && d.event.name === "provider.cancel_request").map((d) => d.event.data)).toEqual([{ prompt_id: "s-2", round: 0 }]);
  });

  it("[mcp.sampling.withdraw-own-only] a withdrawal cancels the round at the provider only when the instance that asked sends it", async () => {
    const h = await harness();
    ask(h, "s-1");
    await h.settle();
    h.fromPeer("mcp.sampling_cancel", { sampling_id: "s-1" }, OTHER);
    await h.settle();
    const cancels = () => h.directed.filter((d) => d.to === "llm" && d.event.name === "provider.cancel_request");
    expect(cancels()).toHaveLength(0);
    h.fromPeer("mcp.sampling_cancel", { sampling_id: "s-1" }, MCP);
    await h.settle();
    expect(cancels().map((d) => d.event.data)).toEqual([{ prompt_id: "s-1", round: 0 }]);
    expect(results(h)).toEqual([{ to: "mcp-notes", sampling_id: "s-1", outcome: "failed", reason: "the server withdrew it" }]);
  });
});
