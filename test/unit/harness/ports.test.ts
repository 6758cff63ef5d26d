// The agent loop, the tool router and the UI transcript through their ports, in memory: each rule
// one commit at a time, with no daemon, socket or journal file (the process-level tests in
// tool-routing.test.ts and test/e2e/run cover the same paths end to end).
import { afterEach, describe, expect, it, vi } from "vitest";
import { extensionPublisher, InMemoryHarness } from "../../support/in-memory-ports.js";
import { DELTA_SAMPLE_INTERVAL_MS } from "../../../handwritten/harness/turn-loop.js";
import { renderItem, Transcript } from "../../../handwritten/cli/tui/transcript.js";
import type { Event } from "../../../handwritten/bus/index.js";
import type { ToolCall } from "../../../generated/index.js";

const UI = { class: "ui_attached" } as const;
const LLM = extensionPublisher("llm", 1, "provider");
const TOOLS = extensionPublisher("tools", 3, "tool");

/** A harness with one agent, one provider serving model m1 and one tool owner with `echo`. */
async function harness(): Promise<InMemoryHarness> {
  const h = new InMemoryHarness();
  h.addAgent("a-1");
  h.live.set("llm", 1);
  h.live.set("tools", 3);
  h.fromPeer("provider.models_declared", { models: [{ id: "m1", context_window: 1000, input_cost: 1, output_cost: 2 }] }, LLM);
  h.fromPeer("tool.registration_declared", { name: "echo", description: "echo", parameters: { type: "object" } }, TOOLS);
  await h.settle();
  return h;
}

function submit(h: InMemoryHarness, text: string, mode: "queue" | "steer" = "queue"): void {
  h.fromPeer("ui.prompt_submit", { agent_id: "a-1", mode, text }, UI);
}

function finish(h: InMemoryHarness, promptId: string, round: number, text: string, calls: ToolCall[] = [], from = LLM): void {
  h.fromPeer(
    "provider.response_finished_reported",
    { prompt_id: promptId, round, model: "m1", text, tool_calls: calls, finish_reason: calls.length > 0 ? "tool_calls" : "stop", usage: { input_tokens: 10, output_tokens: 5 } },
    from,
  );
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the agent loop through its ports", () => {
  it("[harness.ports.prompt-order] a prompt's content-free start commits before the provider is asked, and the turn closes after the answer", async () => {
    const h = await harness();
    submit(h, "hello");
    const started = await h.next("agent.prompt_started");
    // Nothing has left for the provider at the moment the start commits.
    expect(h.providerCalls).toEqual([]);
    await h.settle();
    expect(h.providerCalls).toHaveLength(1);
    const { call } = h.providerCalls[0]!;
    expect(call).toMatchObject({ agent_id: "a-1", prompt_id: started.data.prompt_id, round: 0, model: "m1", system: "system prompt of a-1" });
    expect(call.messages).toHaveLength(1);
    expect(call.messages[0]!.role).toBe("user");
    expect(call.messages[0]!.text).toContain("hello");
    expect(call.tools.map((t) => t.name)).toEqual(["echo"]);
    finish(h, started.data.prompt_id, 0, "hi there");
    await h.settle();
    expect(h.names("agent.", "provider.response")).toEqual([
      "agent.prompt_submitted",
      "agent.prompt_started",
      "provider.response_finished",
      "agent.stats_updated",
      "agent.outer_turn_finished",
    ]);
    expect(h.all("agent.outer_turn_finished")).toEqual([{ agent_id: "a-1", prompt_id: started.data.prompt_id, outcome: "completed", rounds: 1 }]);
    // Cost from the declared prices: (1 × 10 + 2 × 5) / 10^6 dollars.
    expect(h.all("agent.stats_updated")[0]).toMatchObject({ cost_usd: 20 / 1_000_000, context_tokens: 15, context_window: 1000 });
  });

  it("[harness.ports.tool-round] a response's tool calls are routed to their owner, and the next round carries the call and its result", async () => {
    const h = await harness();
    submit(h, "use the tool");
    const { data: s } = await h.next("agent.prompt_started");
    await h.settle();
    finish(h, s.prompt_id, 0, "", [
      { call_id: "c-1", tool: "echo", arguments_json: '{"x": 1}' },
      { call_id: "c-1", tool: "echo", arguments_json: "{}" },
      { call_id: "c-2", tool: "nosuch", arguments_json: "{}" },
    ]);
    await h.settle();
    // The duplicate id is answered with an error before any call opens; the unknown tool ends at once.
    expect(h.all("provider.tool_error").map((e) => [e.call_id, e.error])).toEqual([
      ["c-1", "tool call id c-1 appears twice in one response; this call was not run"],
      ["c-2", "unknown tool nosuch"],
    ]);
    // The routed call reaches its owner's generation; the model's raw arguments are byte-identical.
    expect(h.all("tool.started")).toEqual([{ agent_id: "a-1", prompt_id: s.prompt_id, call_id: "c-1", tool: "echo", owner: "tools", arguments_json: '{"x": 1}' }]);
    expect(h.providerCalls).toHaveLength(1); // round 1 waits for the open call
    // A report from another generation of the owner is only an observation.
    h.fromPeer("tool.result_reported", { call_id: "c-1", output: "stale" }, extensionPublisher("tools", 2));
    await h.settle();
    expect(h.providerCalls).toHaveLength(1);
    h.fromPeer("tool.result_reported", { call_id: "c-1", output: "echoed" }, TOOLS);
    await h.settle();
    expect(h.providerCalls).toHaveLength(2);
    const next = h.providerCalls[1]!.call;
    expect(next.round).toBe(1);
    // One tool message per call the assistant message shows, in the order their outcomes committed.
    expect(next.messages.map((m) => [m.role, m.call_id ?? "", m.text])).toEqual([
      ["user", "", expect.stringContaining("use the tool")],
      ["assistant", "", ""],
      ["tool", "c-1", "tool call id c-1 appears twice in one response; this call was not run"],
      ["tool", "c-2", "unknown tool nosuch"],
      ["tool", "c-1", "echoed"],
    ]);
    // The assistant message holds each call as the provider sent it (the duplicate too), so the
    // transcript closes every call it shows.
    expect(next.messages[1]!.tool_calls?.map((c) => c.call_id)).toEqual(["c-1", "c-1", "c-2"]);
  });

  it("[harness.ports.reasoning-kept] a response's reasoning and the server's own finish reason reach the fact, and the next round's assistant message carries the reasoning", async () => {
    const h = await harness();
    submit(h, "use the tool");
    const { data: s } = await h.next("agent.prompt_started");
    await h.settle();
    const calls = [{ call_id: "c-9", tool: "nosuch", arguments_json: "{}" }];
    h.fromPeer(
      "provider.response_finished_reported",
      { prompt_id: s.prompt_id, round: 0, model: "m1", text: "", reasoning: "first I think", tool_calls: calls, finish_reason: "tool_calls", server_finish_reason: "stop" },
      LLM,
    );
    await h.settle();
    expect(h.all("provider.response_finished")[0]).toMatchObject({ reasoning: "first I think", server_finish_reason: "stop", finish_reason: "tool_calls" });
    expect(h.providerCalls).toHaveLength(2);
    expect(h.providerCalls[1]!.call.messages[1]).toEqual({ role: "assistant", text: "", tool_calls: calls, reasoning: "first I think" });
  });

  it("[harness.ports.reports-from-owner] reports from another provider, generation, prompt or round are ignored", async () => {
    const h = await harness();
    submit(h, "q");
    const { data: s } = await h.next("agent.prompt_started");
    await h.settle();
    finish(h, s.prompt_id, 0, "wrong generation", [], extensionPublisher("llm", 2, "provider"));
    finish(h, s.prompt_id, 1, "wrong round");
    finish(h, "p-other", 0, "wrong prompt");
    h.live.set("impostor", 1);
    finish(h, s.prompt_id, 0, "wrong instance", [], extensionPublisher("impostor", 1, "provider"));
    await h.settle();
    expect(h.all("provider.response_finished")).toEqual([]);
    finish(h, s.prompt_id, 0, "right");
    await h.settle();
    expect(h.all("provider.response_finished").map((r) => r.text)).toEqual(["right"]);
  });

  it("[harness.ports.start-not-recorded] a start that cannot be recorded sends nothing and the agent takes its next prompt", async () => {
    const h = await harness();
    h.failing.add("agent.prompt_started");
    submit(h, "first");
    const failed = await h.next("agent.prompt_failed");
    expect(failed.data.code).toBe("journal");
    h.failing.delete("agent.prompt_started");
    submit(h, "second");
    await h.next("agent.prompt_started");
    await h.settle();
    expect(h.providerCalls).toHaveLength(1);
    expect(h.providerCalls[0]!.call.messages.at(-1)!.text).toContain("second");
  });

  it("[harness.ports.send-failure] a request that cannot be sent is cancelled at the provider and fails the prompt", async () => {
    const h = await harness();
    h.sendProblem = "the frame exceeds 16 MiB";
    submit(h, "q");
    const failed = await h.next("provider.response_failed");
    expect(failed.data).toMatchObject({ error_class: "network", diagnostic: "the request could not be sent to the provider: the frame exceeds 16 MiB" });
    await h.settle();
    expect(h.directed.map((d) => [d.to, d.event.name])).toEqual([["llm", "provider.cancel_request"]]);
    expect(h.all("agent.outer_turn_finished").map((t) => t.outcome)).toEqual(["failed"]);
  });

  it("[harness.ports.no-provider] a prompt with no model to serve it fails with no_provider; a later declaration serves the next", async () => {
    const h = new InMemoryHarness();
    h.addAgent("a-1");
    submit(h, "q");
    const failed = await h.next("agent.prompt_failed");
    expect(failed.data.code).toBe("no_provider");
    expect(failed.data.diagnostic).toBe("no model is available; configure a provider");
    h.live.set("llm", 1);
    h.fromPeer("provider.models_declared", { models: [{ id: "m1" }] }, LLM);
    await h.settle();
    expect(h.all("harness.models_available").at(-1)).toEqual({ models: [{ provider: "llm", id: "m1" }], default_model: "m1" });
    submit(h, "again");
    await h.next("agent.prompt_started");
  });

  it("[harness.ports.cancel] cancelling ends the turn at once, reaches the provider and the tool owner, and late reports change nothing", async () => {
    const h = await harness();
    submit(h, "q");
    const { data: s } = await h.next("agent.prompt_started");
    await h.settle();
    finish(h, s.prompt_id, 0, "", [{ call_id: "c-9", tool: "echo", arguments_json: "{}" }]);
    await h.settle();
    h.fromPeer("agent.cancel_request", { agent_id: "a-1" }, UI);
    await h.settle();
    expect(h.directed.map((d) => [d.to, d.event.name])).toEqual([
      [3, "tool.call"],
      [3, "tool.cancel_request"],
      ["llm", "provider.cancel_request"],
    ]);
    expect(h.all("agent.prompt_cancelled")).toEqual([{ agent_id: "a-1", prompt_id: s.prompt_id }]);
    expect(h.all("agent.outer_turn_finished").map((t) => t.outcome)).toEqual(["cancelled"]);
    // The owner's late result still ends its call (one outcome per call), but no round follows.
    h.fromPeer("tool.result_reported", { call_id: "c-9", output: "late" }, TOOLS);
    finish(h, s.prompt_id, 1, "late answer");
    await h.settle();
    expect(h.providerCalls).toHaveLength(1);
    expect(h.all("provider.response_finished")).toHaveLength(1);
  });

  it("[harness.ports.steer] a steered prompt joins the current turn at its next round boundary", async () => {
    const h = await harness();
    submit(h, "first");
    const { data: s } = await h.next("agent.prompt_started");
    await h.settle();
    submit(h, "and also this", "steer");
    await h.settle();
    finish(h, s.prompt_id, 0, "", [{ call_id: "c-1", tool: "echo", arguments_json: "{}" }]);
    await h.settle();
    h.fromPeer("tool.result_reported", { call_id: "c-1", output: "ok" }, TOOLS);
    await h.settle();
    const round1 = h.providerCalls[1]!.call;
    expect(round1.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"]);
    expect(round1.messages[3]!.text).toContain("and also this");
    finish(h, s.prompt_id, 1, "done");
    await h.settle();
    // It ran inside the turn: no second turn starts.
    expect(h.all("agent.outer_turn_finished")).toHaveLength(1);
    expect(h.providerCalls).toHaveLength(2);
  });

  it("[harness.ports.provider-gone] a provider's exit fails the prompt it owned and withdraws its models", async () => {
    const h = await harness();
    submit(h, "q");
    await h.next("agent.prompt_started");
    await h.settle();
    h.live.delete("llm");
    await h.prompts.onProviderGone("llm", 1);
    await h.settle();
    expect(h.all("provider.response_failed").map((f) => f.diagnostic)).toEqual(["the llm provider exited"]);
    expect(h.all("harness.models_available").at(-1)).toEqual({ models: [] });
  });

  it("[harness.ports.resumed-transcript] a resumed agent's transcript is read from its journal at its first prompt; an unreadable one fails the prompt", async () => {
    const journal: Event[] = [
      { name: "agent.started", data: { agent_id: "a-1", session_id: "s-1", creator: "ui", cwd: "/work", ephemeral: false, model: "m1" } },
      { name: "agent.prompt_submitted", data: { agent_id: "a-1", prompt_id: "p-old", source: "human_ui", mode: "queue", text: "earlier question" } },
      { name: "agent.prompt_started", data: { agent_id: "a-1", prompt_id: "p-old", round: 0, model: "m1" } },
      { name: "provider.response_finished", data: { agent_id: "a-1", prompt_id: "p-old", round: 0, model: "m1", text: "earlier answer", tool_calls: [], finish_reason: "stop" } },
      { name: "agent.outer_turn_finished", data: { agent_id: "a-1", prompt_id: "p-old", outcome: "completed", rounds: 1 } },
    ];
    const h = await harness();
    h.addAgent("a-2", journal.map((e) => ({ ...e, data: { ...e.data, agent_id: "a-2" } }) as Event), "m1");
    h.fromPeer("ui.prompt_submit", { agent_id: "a-2", mode: "queue", text: "follow-up" }, UI);
    await h.next("agent.prompt_started", (c) => c.data.agent_id === "a-2");
    await h.settle();
    expect(h.providerCalls[0]!.call.messages.map((m) => [m.role, /earlier|follow-up/.test(m.text ?? "")])).toEqual([
      ["user", true],
      ["assistant", true],
      ["user", true],
    ]);
    h.addAgent("a-3", journal.map((e) => ({ ...e, data: { ...e.data, agent_id: "a-3" } }) as Event), "m1");
    h.unreadableJournal = "checksum mismatch at frame 2";
    h.fromPeer("ui.prompt_submit", { agent_id: "a-3", mode: "queue", text: "x" }, UI);
    const failed = await h.next("agent.prompt_failed", (c) => c.data.agent_id === "a-3");
    expect(failed.data.code).toBe("journal");
    expect(failed.data.diagnostic).toContain("checksum mismatch at frame 2");
  });

  it("[harness.ports.resumed-stats] a resumed agent's stats go on from its journal's usage, priced once its models are declared", async () => {
    const used = (prompt: string, input: number, output: number): Event =>
      ({ name: "provider.response_finished", data: { agent_id: "a-9", prompt_id: prompt, round: 0, model: "m2", text: "x", tool_calls: [], finish_reason: "stop", usage: { input_tokens: input, output_tokens: output } } }) as Event;
    const journal: Event[] = [
      { name: "agent.started", data: { agent_id: "a-9", session_id: "s-1", creator: "ui", cwd: "/work", ephemeral: false, model: "m2" } },
      used("p-1", 100, 10),
      used("p-2", 300, 20),
    ];
    const h = new InMemoryHarness();
    h.live.set("llm", 1);
    h.addAgent("a-9", journal);
    await h.settle();
    // Unpriced at first: no provider has declared m2 yet.
    expect(h.all("agent.stats_updated")).toEqual([{ agent_id: "a-9", usage: { input_tokens: 400, output_tokens: 30 }, cost_usd: 0, context_tokens: 320 }]);
    h.fromPeer("provider.models_declared", { models: [{ id: "m2", context_window: 4000, input_cost: 2, output_cost: 10 }] }, LLM);
    await h.settle();
    // (400 × 2 + 30 × 10) / 10^6 dollars, and the last response's context against m2's window.
    expect(h.all("agent.stats_updated").at(-1)).toEqual({ agent_id: "a-9", usage: { input_tokens: 400, output_tokens: 30 }, cost_usd: 1100 / 1_000_000, context_tokens: 320, context_window: 4000 });
    // A compaction's summary counts toward the tokens (as it does live), but not as the context's use.
    const compacted = new InMemoryHarness();
    compacted.live.set("llm", 1);
    compacted.addAgent("a-8", [
      ...journal.map((e) => ({ ...e, data: { ...e.data, agent_id: "a-8" } }) as Event),
      { name: "agent.compaction_started", data: { agent_id: "a-8", compaction_id: "c-1", cut_seq: 2, trigger: "user", model: "m2" } },
      { name: "agent.compaction_summarized", data: { agent_id: "a-8", compaction_id: "c-1", summary: "s", usage: { input_tokens: 50, output_tokens: 5 } } },
      { name: "agent.compaction_committed", data: { agent_id: "a-8", compaction_id: "c-1", cut_seq: 2 } },
    ] as Event[]);
    await compacted.settle();
    expect(compacted.all("agent.stats_updated")).toEqual([{ agent_id: "a-8", usage: { input_tokens: 450, output_tokens: 35 }, cost_usd: 0, context_tokens: 320 }]);
    // The same declaration again changes nothing, so nothing is published again.
    const count = h.all("agent.stats_updated").length;
    h.fromPeer("provider.models_declared", { models: [{ id: "m2", context_window: 4000, input_cost: 2, output_cost: 10 }] }, LLM);
    await h.settle();
    expect(h.all("agent.stats_updated")).toHaveLength(count);
  });

  it("[harness.ports.delta-sampling] the first delta is published at once, later ones at most once per interval, and the rest before the answer", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const h = await harness();
    submit(h, "q");
    const { data: s } = await h.next("agent.prompt_started");
    await h.settle();
    const delta = (text: string) => h.fromPeer("provider.response_delta_reported", { prompt_id: s.prompt_id, round: 0, text }, LLM);
    delta("a");
    await h.settle();
    delta("b");
    delta("c");
    await h.settle();
    expect(h.all("provider.response_updated").map((u) => u.text_delta)).toEqual(["a"]);
    vi.advanceTimersByTime(DELTA_SAMPLE_INTERVAL_MS);
    expect(h.all("provider.response_updated").map((u) => u.text_delta)).toEqual(["a", "bc"]);
    delta("d");
    await h.settle();
    finish(h, s.prompt_id, 0, "abcd");
    await h.settle();
    expect(h.all("provider.response_updated").map((u) => u.text_delta)).toEqual(["a", "bc", "d"]);
    expect(h.names("provider.response_")).toEqual(["provider.response_updated", "provider.response_updated", "provider.response_updated", "provider.response_finished"]);
  });
});

describe("the tool router through its ports", () => {
  it("[harness.ports.registration] a live generation registers a tool; a stale one, a reserved name or a taken name is refused", async () => {
    const h = await harness();
    expect(h.all("tool.register")).toEqual([{ name: "echo", owner: "tools", description: "echo", parameters: { type: "object" } }]);
    h.fromPeer("tool.registration_declared", { name: "grep", description: "g", parameters: {} }, extensionPublisher("tools", 2));
    h.live.set("other", 1);
    h.fromPeer("tool.registration_declared", { name: "echo", description: "mine", parameters: {} }, extensionPublisher("other", 1));
    h.fromPeer("tool.registration_declared", { name: "compact", description: "c", parameters: {} }, extensionPublisher("other", 1));
    await h.settle();
    expect(h.all("tool.register")).toHaveLength(1);
    expect(h.warnings).toEqual(["tool echo from other refused: already registered by tools", "tool compact from other refused: the name is reserved by the harness"]);
  });

  it("[harness.ports.owner-gone] an owner's exit ends each open call with one error and holds its names while it may return", async () => {
    const h = await harness();
    h.callAllowance.set("other", new Set(["echo"]));
    h.live.set("other", 1);
    h.fromPeer("tool.request", { agent_id: "a-1", call_id: "x-1", tool: "echo", arguments_json: "{}" }, extensionPublisher("other", 1));
    await h.settle();
    expect(h.all("tool.started").map((s) => s.call_id)).toEqual(["x-1"]);
    h.restarting.add("tools");
    h.live.delete("tools");
    h.tools.onOwnerGone("tools", 3);
    // An extension's own call: an ownerless result, never a transcript fact.
    expect(h.all("tool.result")).toEqual([{ agent_id: "a-1", call_id: "x-1", tool: "echo", outcome: "error", output: "the tools extension exited during the call" }]);
    expect(h.all("provider.tool_error")).toEqual([]);
    expect(h.all("tool.unregister")).toEqual([{ name: "echo", owner: "tools" }]);
    // The name waits for its owner: another instance cannot take it meanwhile.
    h.fromPeer("tool.registration_declared", { name: "echo", description: "mine", parameters: {} }, extensionPublisher("other", 1));
    await h.settle();
    expect(h.warnings.at(-1)).toBe("tool echo from other refused: it belongs to tools, which is restarting");
    h.live.set("tools", 4);
    h.fromPeer("tool.registration_declared", { name: "echo", description: "echo again", parameters: {} }, extensionPublisher("tools", 4));
    await h.settle();
    expect(h.tools.tools.get("echo")).toMatchObject({ owner: "tools", generation: 4 });
  });

  it("[harness.ports.extension-call-allowance] an extension reaches only the tools its configuration lists, for loaded agents", async () => {
    const h = await harness();
    h.live.set("other", 1);
    const other = extensionPublisher("other", 1);
    h.fromPeer("tool.request", { agent_id: "a-1", call_id: "x-1", tool: "echo", arguments_json: "{}" }, other);
    await h.settle();
    h.callAllowance.set("other", new Set(["echo"]));
    h.fromPeer("tool.request", { agent_id: "a-9", call_id: "x-2", tool: "echo", arguments_json: "{}" }, other);
    h.fromPeer("tool.request", { agent_id: "a-1", call_id: "x-3", tool: "echo", arguments_json: "{}" }, extensionPublisher("other", 0));
    await h.settle();
    expect(h.all("tool.result").map((r) => [r.call_id, r.output])).toEqual([
      ["x-1", "extension other may not call tool echo (its call_tools setting does not list it)"],
      ["x-2", "unknown agent a-9"],
    ]);
    expect(h.warnings).toEqual(["tool request x-3 from a stale or unknown publisher ignored"]);
    expect(h.all("tool.started")).toEqual([]);
  });
});

describe("the UI transcript fed by the agent loop", () => {
  it("[harness.ports.ui-transcript] what the loop publishes for a tool round folds into the prompt, the tool row and the answer", async () => {
    const h = await harness();
    submit(h, "list files");
    const { data: s } = await h.next("agent.prompt_started");
    await h.settle();
    finish(h, s.prompt_id, 0, "", [{ call_id: "c-1", tool: "echo", arguments_json: '{"path":"."}' }]);
    await h.settle();
    h.fromPeer("tool.result_reported", { call_id: "c-1", output: "a.txt\nb.txt" }, TOOLS);
    await h.settle();
    finish(h, s.prompt_id, 1, "Two files.");
    await h.settle();
    const t = new Transcript();
    for (const c of h.published) t.apply({ name: c.name, data: c.data } as Event);
    const a = t.agent("a-1");
    expect(a.busy).toBe(false);
    // Round 0's answer is empty text (it only called the tool): an item with no rows.
    expect(a.items.map((i) => i.kind)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(a.items[0]).toMatchObject({ kind: "user", text: "list files" });
    expect(a.items[1]).toMatchObject({ kind: "assistant", text: "", done: true });
    expect(renderItem(a.items[1]!, 80)).toEqual([]);
    expect(a.items[2]).toMatchObject({ kind: "tool", callId: "c-1", tool: "echo", status: "ok", output: "a.txt\nb.txt", done: true });
    expect(a.items[3]).toMatchObject({ kind: "assistant", text: "Two files.", done: true });
    expect(a.inputTokens).toBe(20);
  });
});
