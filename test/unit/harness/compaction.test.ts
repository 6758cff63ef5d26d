// Compaction, its tools and context-size alerts through the harness's ports (SPEC-compaction): a
// real harness, real journals, and a provider that is a publisher on the bus.
import { afterEach, describe, expect, it } from "vitest";
import { HarnessKit, until, type KitExtension } from "../../support/harness-kit.js";
import type { HarnessOptions } from "../../../handwritten/harness/index.js";
import { chooseCut, closedBoundaries, emptyTranscript, type Transcript } from "../../../handwritten/harness/compaction.js";
import { SUMMARY_SYSTEM_PROMPT } from "../../../handwritten/harness/compaction.js";
import type { JournalRecord } from "../../../handwritten/store/index.js";
import type { ProviderMessage } from "../../../generated/index.js";

const kits: HarnessKit[] = [];
afterEach(async () => {
  while (kits.length) await kits.pop()?.close();
});

async function kit(options: Partial<HarnessOptions> = {}): Promise<HarnessKit> {
  const k = await HarnessKit.open({ compaction: { autoThreshold: 0, keepRecentTokens: 0, alerts: [] }, ...options });
  kits.push(k);
  return k;
}

async function provider(k: HarnessKit, window = 1000): Promise<KitExtension> {
  const p = k.extension("llm", "provider");
  expect((await p.emit("provider.models_declared", { models: [{ id: "m1", context_window: window }] })).status).toBe("committed");
  await until(() => k.committed("harness.models_available").length > 0, "the models");
  return p;
}

type Call = { call_id: string; tool: string; arguments_json: string };

/** The whole request of one round: its head, messages (parts joined) and tools. */
function request(p: KitExtension, promptId: string, round = 0): { system: string; messages: ProviderMessage[]; tools: string[] } {
  const head = p.directed("provider.request").find((r) => r.prompt_id === promptId && r.round === round) as { system: string } | undefined;
  if (!head) throw new Error(`no request for ${promptId} round ${round}`);
  const parts = p.directed("provider.request_part").filter((r) => r.prompt_id === promptId && r.round === round) as Array<{ messages: ProviderMessage[]; tools: Array<{ name: string }> }>;
  return { system: head.system, messages: parts.flatMap((x) => x.messages), tools: parts.flatMap((x) => x.tools.map((t) => t.name)) };
}

async function nextRequest(p: KitExtension, before: number): Promise<{ prompt_id: string; round: number }> {
  await until(() => p.directed("provider.request").length > before, "a provider request");
  return p.directed("provider.request")[before] as { prompt_id: string; round: number };
}

async function submit(k: HarnessKit, p: KitExtension, agentId: string, text: string): Promise<{ prompt_id: string; round: number }> {
  const before = p.directed("provider.request").length;
  await k.h.bus.publish({ name: "ui.prompt_submit", data: { agent_id: agentId, mode: "queue", text } }, k.ui.publisher);
  return nextRequest(p, before);
}

function answer(p: KitExtension, promptId: string, round: number, o: { text?: string; calls?: Call[]; input?: number; output?: number } = {}) {
  const calls = o.calls ?? [];
  return p.emit("provider.response_finished_reported", {
    prompt_id: promptId,
    round,
    model: "m1",
    text: o.text ?? (calls.length ? "" : "done"),
    tool_calls: calls,
    finish_reason: calls.length ? "tool_calls" : "stop",
    ...(o.input !== undefined ? { usage: { input_tokens: o.input, output_tokens: o.output ?? 0 } } : {}),
  });
}

/** Runs one whole text turn and waits for its end. */
async function turn(k: HarnessKit, p: KitExtension, agentId: string, text: string, reply: string, usage?: number): Promise<string> {
  const r = await submit(k, p, agentId, text);
  await answer(p, r.prompt_id, 0, { text: reply, ...(usage !== undefined ? { input: usage } : {}) });
  await until(() => k.committed("agent.outer_turn_finished", (d) => d.prompt_id === r.prompt_id).length > 0, "the turn's end");
  return r.prompt_id;
}

function journal(k: HarnessKit, agentId: string): Array<{ name: string; data: Record<string, unknown> }> {
  return ((k.h.agents.get(agentId)?.log.readAll() ?? []) as JournalRecord[]).map((r) => ({ name: r.event.name, data: r.event.data }));
}

const names = (j: Array<{ name: string }>) => j.map((e) => e.name);

describe("the cut", () => {
  const m = (role: ProviderMessage["role"], extra: Partial<ProviderMessage> = {}): ProviderMessage => ({ role, text: "x".repeat(40), ...extra });
  function transcript(entries: Array<[ProviderMessage, number]>): Transcript {
    const t = emptyTranscript();
    for (const [msg, seq] of entries) {
      t.messages.push(msg);
      t.seqs.push(seq);
      for (const c of msg.tool_calls ?? []) t.calls.add(c.call_id);
    }
    return t;
  }

  it("[compaction.cut.closed-prefix] never splits a tool-calling response from its results, a running call from the suffix, nor one record's messages", () => {
    const call = (id: string) => ({ call_id: id, tool: "echo", arguments_json: "{}" });
    const t = transcript([
      [m("user"), 1], // 0
      [m("assistant", { tool_calls: [call("a"), call("b")] }), 3], // 1
      [m("tool", { call_id: "a" }), 4], // 2
      [m("tool", { call_id: "b" }), 5], // 3
      [m("user"), 7], // 4: two prompts that entered at one round start
      [m("user"), 7], // 5
      [m("assistant", { tool_calls: [call("c")] }), 8], // 6: its call still runs
    ]);
    const open = new Set(["c"]);
    // 1: after the first prompt; 4: after both results; 6: before the running call's response.
    expect(closedBoundaries(t, open)).toEqual([1, 4, 6]);
    // Nothing may ever fall between a response and its results, or inside the running tail.
    for (const b of closedBoundaries(t, open)) {
      const before = new Set(t.messages.slice(0, b).flatMap((x) => (x.tool_calls ?? []).map((c) => c.call_id)));
      expect(t.messages.slice(b).some((x) => x.role === "tool" && before.has(x.call_id as string))).toBe(false);
      expect([...open].some((c) => before.has(c))).toBe(false);
      if (b < t.messages.length) expect(t.seqs[b - 1]).not.toBe(t.seqs[b]);
    }
    // With every call finished the end is a boundary too.
    expect(closedBoundaries(t, new Set())).toEqual([1, 4, 6, 7]);
    // The earliest boundary whose suffix fits the budget, else the latest one.
    expect(chooseCut(t, open, 1_000)).toBe(1);
    expect(chooseCut(t, open, 35)).toBe(4); // from 4: 126 characters (32 tokens) fit 35; from 1 they do not
    expect(chooseCut(t, open, 25)).toBe(6);
    expect(chooseCut(t, open, 0)).toBe(6);
    // After a committed summary, a cut never goes back past it, and one with nothing new is refused.
    const after = transcript([
      [m("user", { text: "<summary>" }), 9],
      [m("assistant", { tool_calls: [call("d")] }), 10],
    ]);
    after.cut = 9;
    expect(chooseCut(after, new Set(["d"]), 0)).toBeUndefined();
    expect(closedBoundaries(after, new Set())).toEqual([2]);
  });
});

describe("compaction through the harness", () => {
  it("[compaction.ui.compact-request] :compact from the live UI summarizes a closed prefix; the next request is the summary and the suffix", async () => {
    const k = await kit({ compaction: { autoThreshold: 0, keepRecentTokens: 5, alerts: [] } });
    const p = await provider(k);
    const a = await k.createAgent();
    await turn(k, p, a, "first question", "a long first answer ".repeat(20));
    await turn(k, p, a, "second question", "ok");

    // A request from a connection that is not a live attached UI is an observation only.
    await k.h.bus.publish({ name: "ui.compact_request", data: { agent_id: a } }, { class: "ui_attached", generation: 999 });
    await k.settled();
    expect(k.committed("agent.compaction_started")).toHaveLength(0);

    const before = p.directed("provider.request").length;
    await k.h.bus.publish({ name: "ui.compact_request", data: { agent_id: a, instructions: "keep the questions" } }, k.ui.publisher);
    const s = await nextRequest(p, before);
    const started = k.committed("agent.compaction_started")[0] as { compaction_id: string; cut_seq: number; trigger: string };
    expect(started).toMatchObject({ compaction_id: s.prompt_id, trigger: "user", instructions: "keep the questions" });
    const summaryRequest = request(p, s.prompt_id);
    expect(summaryRequest.system).toBe(SUMMARY_SYSTEM_PROMPT);
    expect(summaryRequest.tools).toEqual([]);
    // The prefix: everything but the last answer (the 5-token budget keeps "ok" only), then the ask.
    expect(summaryRequest.messages.map((x) => x.role)).toEqual(["user", "assistant", "user", "user"]);
    expect(summaryRequest.messages.at(-1)?.text).toContain("keep the questions");

    await answer(p, s.prompt_id, 0, { text: "SUMMARY: two questions asked", input: 900 });
    await until(() => k.committed("agent.compaction_committed").length === 1, "the commit");
    expect(names(journal(k, a)).slice(-3)).toEqual(["agent.compaction_started", "agent.compaction_summarized", "agent.compaction_committed"]);
    // A summary response raises no context use.
    expect(k.committed("agent.stats_updated").at(-1)).toMatchObject({ context_tokens: expect.any(Number) });
    expect((k.committed("agent.stats_updated").at(-1) as { context_tokens: number }).context_tokens).toBeLessThan(900);

    const next = await submit(k, p, a, "third question");
    const msgs = request(p, next.prompt_id).messages;
    expect(msgs.map((x) => x.role)).toEqual(["user", "assistant", "user"]);
    expect(msgs[0]?.text).toContain("SUMMARY: two questions asked");
    expect(msgs[1]).toMatchObject({ role: "assistant", text: "ok" });
    expect(msgs[2]?.text).toContain("third question");
    expect(JSON.stringify(msgs)).not.toContain("first question");
  });

  it("[compaction.tool.self-only-and-policy] compact acts on the calling agent only; its response stays in the suffix; role policy revokes it", async () => {
    const k = await kit({ roles: { locked: { deny_tools: ["group:compaction"] } } });
    const p = await provider(k);
    const a = await k.createAgent();
    const other = await k.createAgent();
    await turn(k, p, other, "the other agent's work", "noted");
    await turn(k, p, a, "earlier work", "done earlier");
    const r = await submit(k, p, a, "tidy up");
    expect(request(p, r.prompt_id).tools).toContain("compact");
    expect(request(p, r.prompt_id).tools).not.toContain("agent_compact");
    const before = p.directed("provider.request").length;
    await answer(p, r.prompt_id, 0, { calls: [{ call_id: "k1", tool: "compact", arguments_json: '{"instructions":"keep file names"}' }] });
    const s = await nextRequest(p, before);
    expect(s.prompt_id).toMatch(/^c/);
    // The prefix ends before the response that called compact: that response is still open.
    const prefix = request(p, s.prompt_id).messages;
    expect(prefix.some((x) => (x.tool_calls ?? []).some((c) => c.call_id === "k1"))).toBe(false);
    expect(prefix.at(-1)?.text).toContain("keep file names");
    await answer(p, s.prompt_id, 0, { text: "SUMMARY of a" });
    const round1 = await nextRequest(p, before + 1);
    expect(round1).toMatchObject({ prompt_id: r.prompt_id, round: 1 });
    const msgs = request(p, r.prompt_id, 1).messages;
    expect(msgs.map((x) => x.role)).toEqual(["user", "assistant", "tool"]);
    expect(msgs[0]?.text).toContain("SUMMARY of a");
    expect(msgs[2]).toMatchObject({ call_id: "k1", text: expect.stringContaining("compacted") });
    // Only the caller compacted.
    expect(names(journal(k, other)).filter((n) => n.startsWith("agent.compaction"))).toEqual([]);

    // A role that revokes the compaction group neither lists compact nor runs it.
    const locked = await k.createAgent({ role: "locked" });
    const lr = await submit(k, p, locked, "try it");
    expect(request(p, lr.prompt_id).tools).not.toContain("compact");
    await answer(p, lr.prompt_id, 0, { calls: [{ call_id: "k2", tool: "compact", arguments_json: "{}" }] });
    await until(() => k.committed("provider.tool_error", (d) => d.call_id === "k2").length === 1, "the refusal");
    expect(k.committed("provider.tool_error", (d) => d.call_id === "k2")[0]?.error).toContain("not available");
    expect(names(journal(k, locked)).filter((n) => n.startsWith("agent.compaction"))).toEqual([]);
  });

  it("[compaction.agent-compact.off-by-default] agent_compact is refused unless granted; granting it compacts another idle agent and leaves compact's policy alone", async () => {
    const k = await kit({ roles: { lead: { allow_tools: ["agent_compact"], deny_tools: ["compact"] } } });
    const p = await provider(k);
    const plain = await k.createAgent();
    const lead = await k.createAgent({ role: "lead" });
    const target = await k.createAgent();
    await turn(k, p, target, "target's work", "target answer");
    await turn(k, p, target, "more target work", "again");

    const r1 = await submit(k, p, plain, "compact the target");
    expect(request(p, r1.prompt_id).tools).not.toContain("agent_compact");
    await answer(p, r1.prompt_id, 0, { calls: [{ call_id: "x1", tool: "agent_compact", arguments_json: JSON.stringify({ agent_id: target }) }] });
    await until(() => k.committed("provider.tool_error", (d) => d.call_id === "x1").length === 1, "the refusal");
    expect(k.committed("agent.compaction_started")).toHaveLength(0);

    const r2 = await submit(k, p, lead, "compact the target");
    expect(request(p, r2.prompt_id).tools).toContain("agent_compact");
    expect(request(p, r2.prompt_id).tools).not.toContain("compact");
    const before = p.directed("provider.request").length;
    await answer(p, r2.prompt_id, 0, { calls: [{ call_id: "x2", tool: "agent_compact", arguments_json: JSON.stringify({ agent_id: target }) }] });
    const s = await nextRequest(p, before);
    expect(k.committed("agent.compaction_started")[0]).toMatchObject({ agent_id: target, trigger: "agent", requested_by: lead });
    await answer(p, s.prompt_id, 0, { text: "SUMMARY of target" });
    await until(() => k.committed("provider.tool_result", (d) => d.call_id === "x2").length === 1, "the caller's result");
    expect(names(journal(k, target))).toContain("agent.compaction_committed");
    expect(names(journal(k, lead)).filter((n) => n.startsWith("agent.compaction"))).toEqual([]);
    // Its own compact stays revoked.
    const r3 = await nextRequest(p, before + 1);
    await answer(p, r3.prompt_id, r3.round, { calls: [{ call_id: "x3", tool: "compact", arguments_json: "{}" }] });
    await until(() => k.committed("provider.tool_error", (d) => d.call_id === "x3").length === 1, "compact refused");
  });

  it("[compaction.failed.transcript-intact] a failed summary leaves the transcript intact and visible; the next prompt owes a successor, and fails closed when it fails too", async () => {
    const k = await kit();
    const p = await provider(k);
    const a = await k.createAgent();
    await turn(k, p, a, "q1", "a1");
    await turn(k, p, a, "q2", "a2");
    const before = p.directed("provider.request").length;
    await k.h.bus.publish({ name: "ui.compact_request", data: { agent_id: a } }, k.ui.publisher);
    const s = await nextRequest(p, before);
    await p.emit("provider.response_failed_reported", { prompt_id: s.prompt_id, round: 0, error_class: "server_error", diagnostic: "boom" });
    await until(() => k.committed("agent.compaction_failed").length === 1, "the failure");
    expect(k.committed("agent.compaction_failed")[0]).toMatchObject({ compaction_id: s.prompt_id, reason: expect.stringContaining("boom") });
    expect(names(journal(k, a))).not.toContain("agent.compaction_committed");
    // The next prompt runs a successor first, over the same intact transcript.
    await k.h.bus.publish({ name: "ui.prompt_submit", data: { agent_id: a, mode: "queue", text: "q3" } }, k.ui.publisher);
    const s2 = await nextRequest(p, before + 1);
    expect(k.committed("agent.compaction_started")[1]).toMatchObject({ compaction_id: s2.prompt_id, trigger: "successor", successor_of: s.prompt_id });
    const prefix = request(p, s2.prompt_id).messages.map((x) => x.text ?? "");
    for (const t of ["q1", "a1", "q2"]) expect(prefix.some((x) => x.includes(t))).toBe(true);
    // It fails too: the prompt fails closed, nothing reaches the provider for it.
    await p.emit("provider.response_failed_reported", { prompt_id: s2.prompt_id, round: 0, error_class: "server_error", diagnostic: "boom again" });
    await until(() => k.committed("agent.outer_turn_finished", (d) => d.outcome === "failed").length === 1, "the prompt's end");
    expect(p.directed("provider.request")).toHaveLength(before + 2);
    // A successful successor pays the debt and the prompt after it runs on summary plus suffix.
    await k.h.bus.publish({ name: "ui.prompt_submit", data: { agent_id: a, mode: "queue", text: "q4" } }, k.ui.publisher);
    const s3 = await nextRequest(p, before + 2);
    await answer(p, s3.prompt_id, 0, { text: "SUMMARY q1 q2" });
    const q4 = await nextRequest(p, before + 3);
    expect(request(p, q4.prompt_id).messages[0]?.text).toContain("SUMMARY q1 q2");
  });
});

describe("automatic compaction", () => {
  it("[compaction.daemon.threshold-summary-and-suffix] past the threshold between rounds it compacts; :cancel ends the turn but not the compaction, and queued prompts wait for it", async () => {
    const k = await kit({ compaction: { autoThreshold: 0.5, keepRecentTokens: 0, alerts: [] } });
    const p = await provider(k, 1000);
    const a = await k.createAgent();
    await turn(k, p, a, "earlier", "earlier answer");
    const r = await submit(k, p, a, "work");
    const before = p.directed("provider.request").length;
    await answer(p, r.prompt_id, 0, { calls: [{ call_id: "m1", tool: "missing", arguments_json: "{}" }], input: 600 });
    const s = await nextRequest(p, before);
    expect(k.committed("agent.compaction_started")[0]).toMatchObject({ compaction_id: s.prompt_id, trigger: "auto" });
    await k.h.bus.publish({ name: "agent.cancel_request", data: { agent_id: a } }, k.ui.publisher);
    await until(() => k.committed("agent.outer_turn_finished", (d) => d.prompt_id === r.prompt_id).length === 1, "the cancelled turn");
    await k.h.bus.publish({ name: "ui.prompt_submit", data: { agent_id: a, mode: "queue", text: "queued meanwhile" } }, k.ui.publisher);
    await k.settled();
    expect(p.directed("provider.request")).toHaveLength(before + 1); // it waits for the compaction
    await answer(p, s.prompt_id, 0, { text: "AUTO SUMMARY" });
    const next = await nextRequest(p, before + 1);
    expect(k.committed("agent.compaction_committed")).toHaveLength(1);
    const msgs = request(p, next.prompt_id).messages;
    expect(msgs[0]?.text).toContain("AUTO SUMMARY");
    expect(msgs.at(-1)?.text).toContain("queued meanwhile");
  });
});

describe("context-size alerts", () => {
  const alerts = [{ name: "high", threshold: 0.7, text: "context is getting full" }];

  async function alertKit() {
    const k = await kit({ compaction: { autoThreshold: 0, keepRecentTokens: 0, alerts } });
    const p = await provider(k, 1000);
    const a = await k.createAgent();
    return { k, p, a };
  }
  const delivered = (k: HarnessKit) => k.committed("agent.prompt_submitted", (d) => d.internal_kind === "context_size_alert");

  it("[context-alert.crossing-once] a crossing queues one alert, delivered at the next round start as a steered harness prompt; it re-arms only below the threshold", async () => {
    const { k, p, a } = await alertKit();
    const r = await submit(k, p, a, "work");
    const before = p.directed("provider.request").length;
    await answer(p, r.prompt_id, 0, { calls: [{ call_id: "c1", tool: "missing", arguments_json: "{}" }], input: 750 });
    await nextRequest(p, before); // the unknown tool's error ends the round; round 1 starts
    expect(delivered(k)).toHaveLength(1);
    expect(delivered(k)[0]).toMatchObject({ source: "harness_internal", mode: "steer", alert: "high", text: "context is getting full" });
    expect(request(p, r.prompt_id, 1).messages.some((x) => x.text === "context is getting full")).toBe(true);
    // Still above: no second alert.
    await answer(p, r.prompt_id, 1, { input: 800 });
    await until(() => k.committed("agent.outer_turn_finished").length === 1, "the turn's end");
    await turn(k, p, a, "more", "fine", 820);
    expect(delivered(k)).toHaveLength(1);
    // A compaction brings the use below: the alert re-arms and fires at the next crossing.
    const b2 = p.directed("provider.request").length;
    await k.h.bus.publish({ name: "ui.compact_request", data: { agent_id: a } }, k.ui.publisher);
    const s = await nextRequest(p, b2);
    await answer(p, s.prompt_id, 0, { text: "short summary" });
    await until(() => k.committed("agent.compaction_committed").length === 1, "the commit");
    await turn(k, p, a, "again", "crossing", 710);
    const r2 = await submit(k, p, a, "after");
    expect(delivered(k)).toHaveLength(2);
    expect(request(p, r2.prompt_id).messages.some((x) => x.text === "context is getting full")).toBe(true);
  });

  it("[context-alert.excluded-responses] cancelled, stale, duplicate, failed and compaction responses create no alert", async () => {
    const { k, p, a } = await alertKit();
    // Cancelled: the report arrives after the cancel.
    const r1 = await submit(k, p, a, "one");
    await k.h.bus.publish({ name: "agent.cancel_request", data: { agent_id: a } }, k.ui.publisher);
    await until(() => k.committed("agent.outer_turn_finished").length === 1, "the cancelled turn");
    await answer(p, r1.prompt_id, 0, { input: 990 });
    // Failed: a failure report carries no usage to cross with, and ends the turn.
    const r2 = await submit(k, p, a, "two");
    await p.emit("provider.response_failed_reported", { prompt_id: r2.prompt_id, round: 0, error_class: "server_error", diagnostic: "x" });
    await until(() => k.committed("agent.outer_turn_finished").length === 2, "the failed turn");
    // Duplicate: a second report for the same round, with high usage, after a low one.
    const r3 = await submit(k, p, a, "three");
    await answer(p, r3.prompt_id, 0, { input: 10 });
    await answer(p, r3.prompt_id, 0, { input: 990 });
    await until(() => k.committed("agent.outer_turn_finished").length === 3, "the third turn");
    expect(k.committed("provider.response_finished", (d) => d.prompt_id === r3.prompt_id)).toHaveLength(1);
    // Stale: a report from a previous connection generation of the provider.
    const r4 = await submit(k, p, a, "four");
    const stale = k.extension("llm", "provider"); // the instance reconnected: p is now stale
    await answer(p, r4.prompt_id, 0, { input: 990 });
    await k.h.bus.publish({ name: "agent.cancel_request", data: { agent_id: a } }, k.ui.publisher);
    await until(() => k.committed("agent.outer_turn_finished").length === 4, "the fourth turn");
    await stale.emit("provider.models_declared", { models: [{ id: "m1", context_window: 1000 }] });
    await k.settled();
    // Compaction: a summary response with a usage past every threshold.
    const b = stale.directed("provider.request").length;
    await k.h.bus.publish({ name: "ui.compact_request", data: { agent_id: a } }, k.ui.publisher);
    const s = await nextRequest(stale, b);
    await answer(stale, s.prompt_id, 0, { text: "summary", input: 995 });
    await until(() => k.committed("agent.compaction_committed").length === 1, "the commit");
    // None of them alerted, and the next round delivers nothing.
    const r5 = await submit(k, stale, a, "five");
    expect(delivered(k)).toHaveLength(0);
    expect(request(stale, r5.prompt_id).messages.some((x) => x.text === "context is getting full")).toBe(false);
    // The control: an accepted response past the threshold does alert.
    await answer(stale, r5.prompt_id, 0, { input: 900 });
    await turn(k, stale, a, "six", "ok");
    expect(delivered(k)).toHaveLength(1);
  });
});
