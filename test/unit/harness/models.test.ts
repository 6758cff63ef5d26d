// The agent loop's model choice through its ports, in memory (SPEC-provider-chat-completions, "Models"):
// the default provider's first model, the wait for a listing under way, the refusal of a model no
// listing names, the unlisted-model warning and the metadata that reaches the UIs and the cost.
import { afterEach, describe, expect, it, vi } from "vitest";
import { extensionPublisher, InMemoryHarness } from "../../support/in-memory-ports.js";
import { MODEL_LISTING_WAIT_MS } from "../../../handwritten/harness/model-registry.js";
import type { ModelInfo, ModelListing } from "../../../generated/index.js";

const UI = { class: "ui_attached" } as const;
const LLM = extensionPublisher("llm", 1, "provider");
const OTHER = extensionPublisher("other", 2, "provider");

function harness(o: { defaultProvider?: string; defaultModel?: string } = {}): InMemoryHarness {
  const h = new InMemoryHarness();
  h.addAgent("a-1");
  h.live.set("llm", 1);
  h.live.set("other", 2);
  h.defaultProvider = o.defaultProvider;
  h.defaultModel = o.defaultModel;
  return h;
}

function declare(h: InMemoryHarness, models: ModelInfo[], listing?: ModelListing, from = LLM): void {
  h.fromPeer("provider.models_declared", { models, ...(listing ? { listing } : {}) }, from);
}

function submit(h: InMemoryHarness, text = "hello"): void {
  h.fromPeer("ui.prompt_submit", { agent_id: "a-1", mode: "queue", text }, UI);
}

afterEach(() => {
  vi.useRealTimers();
});

describe("choosing the model of a prompt", () => {
  it("[harness.models.default-first-declared] the default provider's first model, once its listing is in", async () => {
    const h = harness({ defaultProvider: "llm" });
    declare(h, [{ id: "zzz-other" }], "configured", OTHER);
    declare(h, [], "pending");
    submit(h);
    await h.settle();
    // The listing is under way: nothing is sent, nor failed.
    expect(h.providerCalls).toEqual([]);
    expect(h.all("agent.prompt_failed")).toEqual([]);
    declare(h, [{ id: "listed-first" }, { id: "aaa-listed-second" }], "listed");
    await h.settle();
    expect(h.providerCalls.map((c) => [c.instance, c.call.model])).toEqual([["llm", "listed-first"]]);
  });

  it("[harness.models.listing-wait-bounded] a model no one declares waits for a listing under way at most MODEL_LISTING_WAIT_MS, then goes to the open provider", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const h = harness({ defaultProvider: "llm" });
    declare(h, [{ id: "configured" }], "pending");
    h.fromPeer("ui.model_select", { agent_id: "a-1", model: "elsewhere" }, UI);
    await h.settle();
    submit(h);
    // (settle() would wait for the waiting dispatch itself: the prompt's start is the barrier instead)
    await h.next("agent.prompt_submitted");
    await vi.advanceTimersByTimeAsync(MODEL_LISTING_WAIT_MS - 1);
    expect(h.providerCalls).toEqual([]);
    expect(h.all("agent.prompt_started")).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await h.settle();
    expect(h.providerCalls.map((c) => [c.instance, c.call.model])).toEqual([["llm", "elsewhere"]]);
    // A declared model never waits.
    h.fromPeer("ui.model_select", { agent_id: "a-1", model: "configured" }, UI);
    await h.settle();
    h.fromPeer("provider.response_finished_reported", { prompt_id: h.providerCalls[0]!.call.prompt_id, round: 0, model: "elsewhere", text: "ok", tool_calls: [], finish_reason: "stop" }, LLM);
    await h.settle();
    submit(h, "again");
    await h.settle();
    expect(h.providerCalls.map((c) => c.call.model)).toEqual(["elsewhere", "configured"]);
  });

  it("[harness.models.unknown-refused] a model that no complete list names fails the prompt with close matches and sends nothing", async () => {
    const h = harness({ defaultProvider: "llm" });
    declare(h, [{ id: "fake-model" }, { id: "other-model" }], "listed");
    h.fromPeer("ui.model_select", { agent_id: "a-1", model: "fake-modl" }, UI);
    await h.settle();
    submit(h);
    await h.settle();
    expect(h.providerCalls).toEqual([]);
    expect(h.all("agent.prompt_failed")).toMatchObject([{ code: "unknown_model", diagnostic: 'unknown model "fake-modl": no provider lists it; close matches: fake-model' }]);
    // provider/model of a listed provider is checked against its list too.
    h.fromPeer("ui.model_select", { agent_id: "a-1", model: "llm/other-modle" }, UI);
    await h.settle();
    submit(h);
    await h.settle();
    expect(h.all("agent.prompt_failed")[1]).toMatchObject({ code: "unknown_model", diagnostic: 'unknown model "llm/other-modle": provider llm does not list it; close matches: llm/other-model' });
    // With an open list beside it, the open provider may serve it.
    declare(h, [{ id: "local" }], "configured", OTHER);
    h.fromPeer("ui.model_select", { agent_id: "a-1", model: "fake-modl" }, UI);
    await h.settle();
    submit(h);
    await h.settle();
    expect(h.providerCalls.map((c) => [c.instance, c.call.model])).toEqual([["other", "fake-modl"]]);
  });

  it("[harness.models.unlisted-warned-once] one mandatory warning per configured model the listing does not name, with close matches", async () => {
    const h = harness({ defaultModel: "llm/gpt-4o-mni" });
    declare(h, [{ id: "fake-modle", listed: false }, { id: "fake-model" }, { id: "gpt-4o-mini" }], "listed");
    await h.settle();
    const warnings = () => h.all("harness.notice").filter((n) => n.level === "warning");
    expect(warnings()).toEqual([
      {
        level: "warning",
        mandatory: true,
        instance: "llm",
        text: 'provider llm: the server does not list the configured models "fake-modle" (close matches: fake-model), "gpt-4o-mni" (close matches: gpt-4o-mini); requests for them are still sent',
      },
    ]);
    // Declared again (a respawn, a second listing): no second warning.
    declare(h, [{ id: "fake-modle", listed: false }, { id: "fake-model" }], "listed");
    await h.settle();
    expect(warnings()).toHaveLength(1);
    // A list that is not the server's own warns about nothing.
    declare(h, [{ id: "never-listed" }], "configured", OTHER);
    await h.settle();
    expect(warnings()).toHaveLength(1);
  });

  it("[harness.models.metadata] what is known of each model reaches harness.models_available, and cached input is priced apart", async () => {
    const h = harness({ defaultProvider: "llm" });
    h.modelInfo = { "gpt-4o": { context_window: 64_000 }, "llm/local": { input_cost: 1, output_cost: 4, cached_input_cost: 0.25, max_output_tokens: 2048 } };
    declare(h, [{ id: "local", context_window: 8192 }, { id: "gpt-4o" }], "listed");
    await h.settle();
    expect(h.all("harness.models_available").at(-1)).toEqual({
      listed_providers: ["llm"],
      // The default provider's first model: where a prompt of an agent without its own goes.
      default_model: "local",
      models: [
        { provider: "llm", id: "local", context_window: 8192, max_output_tokens: 2048, input_cost: 1, output_cost: 4, cached_input_cost: 0.25 },
        { provider: "llm", id: "gpt-4o", context_window: 64_000, max_output_tokens: 16_384, input_cost: 2.5, output_cost: 10, cached_input_cost: 1.25 },
      ],
    });
    submit(h);
    await h.settle();
    const { call } = h.providerCalls[0]!;
    h.fromPeer(
      "provider.response_finished_reported",
      { prompt_id: call.prompt_id, round: 0, model: "local", text: "ok", tool_calls: [], finish_reason: "stop", usage: { input_tokens: 1000, output_tokens: 100, cache_read_tokens: 800 } },
      LLM,
    );
    await h.settle();
    // (200 × 1 + 800 × 0.25 + 100 × 4) / 10^6 dollars
    expect(h.all("agent.stats_updated")[0]).toMatchObject({ cost_usd: 800 / 1_000_000, context_window: 8192 });
  });
});
