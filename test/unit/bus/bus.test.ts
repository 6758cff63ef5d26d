import { describe, expect, it } from "vitest";
import { Bus, MemorySink, type Committed, type InterceptAction, type PublisherEnvelope } from "../../../handwritten/bus/index.js";
import { nextTurn, waitFor } from "../../support/wait.js";

const HARNESS: PublisherEnvelope = { class: "harness" };
const UI: PublisherEnvelope = { class: "ui_attached", generation: 1 };
const TOOL: PublisherEnvelope = { class: "extension", kind: "tool", instance: "shell", generation: 3 };
const CORE: PublisherEnvelope = { class: "extension", kind: "core", instance: "watcher", generation: 1 };

function clock(): () => number {
  let t = 1_000_000;
  return () => t++;
}

const focus = (focused: boolean) => ({ name: "ui.focus", data: { focused } });
const notice = (text: string) => ({ name: "harness.notice", data: { level: "info", text, mandatory: false } });

describe("bus admission", () => {
  it("refuses unknown events, unlisted publishers and invalid payloads before the pipeline", async () => {
    const bus = new Bus({ clock: clock() });
    expect(await bus.publishFromPeer({ name: "made.up", data: {} }, HARNESS)).toEqual({ status: "refused", reason: "unknown_event" });
    expect(await bus.publishFromPeer(focus(true), TOOL)).toEqual({ status: "refused", reason: "unauthorized" });
    expect(await bus.publishFromPeer({ name: "provider.tool_result", data: { agent_id: "a", prompt_id: "p", call_id: "c", tool: "t", output: "" } }, TOOL)).toMatchObject({
      status: "refused",
      reason: "unauthorized",
    });
    const bad = await bus.publishFromPeer({ name: "ui.focus", data: { focused: "yes" } }, UI);
    expect(bad).toMatchObject({ status: "refused", reason: "invalid" });
    expect(bus.nextSeq).toBe(0);
  });

  it("commits admitted events with consecutive seqs and an immutable envelope", async () => {
    const bus = new Bus({ clock: clock() });
    const seen: Committed[] = [];
    bus.onCommitted("*", (c) => seen.push(c));
    const publisher = { ...UI };
    expect(await bus.publishFromPeer(focus(true), publisher)).toEqual({ status: "committed", seq: 0 });
    publisher.generation = 99;
    expect(await bus.publishFromPeer(focus(false), publisher)).toEqual({ status: "committed", seq: 1 });
    expect(seen.map((c) => [c.seq, c.publisher.generation])).toEqual([
      [0, 1],
      [1, 99],
    ]);
    expect(Object.isFrozen(seen[0]?.publisher)).toBe(true);
    expect(Object.isFrozen(seen[0]?.data)).toBe(true);
  });
});

describe("bus interception", () => {
  function interceptWith(bus: Bus, owner: number, selectors: string[], priority: number, decide: (name: string) => InterceptAction, log: string[], label: string) {
    bus.addInterceptor(owner, {
      selectors,
      priority,
      intercept: (id, event) => {
        log.push(label);
        queueMicrotask(() => bus.reply(owner, id, decide(event.name)));
      },
    });
  }

  it("[bus.intercept.order] runs exact selectors before prefixes, then by priority and registration", async () => {
    const bus = new Bus({ clock: clock() });
    const log: string[] = [];
    const pass = () => ({ action: "pass" }) as const;
    interceptWith(bus, 1, ["*"], -100, pass, log, "all");
    interceptWith(bus, 2, ["ui.*"], 5, pass, log, "prefix-5");
    interceptWith(bus, 3, ["ui.focus"], 10, pass, log, "exact-10");
    interceptWith(bus, 4, ["ui.*"], 1, pass, log, "prefix-1");
    interceptWith(bus, 5, ["ui.focus", "ui.*"], 10, pass, log, "exact-10-later");
    interceptWith(bus, 6, ["tool.*"], 0, pass, log, "unrelated");
    expect(await bus.publishFromPeer(focus(true), UI)).toMatchObject({ status: "committed" });
    expect(log).toEqual(["exact-10", "exact-10-later", "prefix-1", "prefix-5", "all"]);
  });

  it("[bus.intercept.pass-drop-replace] drop stops the event; replace keeps name and publisher and is re-validated", async () => {
    const bus = new Bus({ clock: clock() });
    const seen: Committed[] = [];
    bus.onCommitted("*", (c) => seen.push(c));
    let mode: "drop" | "replace" | "bad-name" | "bad-data" = "drop";
    bus.addInterceptor(7, {
      selectors: ["ui.focus"],
      priority: 0,
      intercept: (id) => {
        const verdict: InterceptAction =
          mode === "drop"
            ? { action: "drop" }
            : mode === "replace"
              ? { action: "replace", replacement: { name: "ui.focus", data: { focused: false, agent_id: "a1" } } }
              : mode === "bad-name"
                ? { action: "replace", replacement: { name: "ui.prompt_draft", data: { agent_id: "a1", text: "x" } } }
                : { action: "replace", replacement: { name: "ui.focus", data: { focused: 3 } } };
        setTimeout(() => bus.reply(7, id, verdict), 1);
      },
    });
    expect(await bus.publishFromPeer(focus(true), UI)).toEqual({ status: "dropped" });
    expect(seen).toHaveLength(0);
    mode = "replace";
    expect(await bus.publishFromPeer(focus(true), UI)).toMatchObject({ status: "committed", seq: 0 });
    expect(seen[0]?.data).toEqual({ focused: false, agent_id: "a1" });
    expect(seen[0]?.publisher).toEqual(UI);
    mode = "bad-name";
    await bus.publishFromPeer(focus(true), UI);
    expect(seen[1]).toMatchObject({ name: "ui.focus", data: { focused: true } });
    mode = "bad-data";
    await bus.publishFromPeer(focus(true), UI);
    expect(seen[2]).toMatchObject({ name: "ui.focus", data: { focused: true } });
  });

  it("[bus.intercept.protected-must-pass] protected facts can be neither dropped nor rewritten", async () => {
    const warnings: string[] = [];
    const bus = new Bus({ clock: clock(), warn: (w) => warnings.push(w) });
    const seen: Committed[] = [];
    bus.onCommitted("*", (c) => seen.push(c));
    let verdict: InterceptAction = { action: "drop" };
    bus.addInterceptor(1, { selectors: ["harness.*"], priority: 0, intercept: (id) => queueMicrotask(() => bus.reply(1, id, verdict)) });
    expect(await bus.publishFromPeer(notice("kept"), HARNESS)).toMatchObject({ status: "committed" });
    verdict = { action: "replace", replacement: notice("rewritten") };
    expect(await bus.publishFromPeer(notice("original"), HARNESS)).toMatchObject({ status: "committed" });
    expect(seen.map((c) => (c.name === "harness.notice" ? c.data.text : c.name))).toEqual(["kept", "original"]);
    expect(warnings).toHaveLength(2);
  });

  it("[bus.intercept.cancelled-reply-never-binds] a reply from a removed interceptor cannot bind to later work", async () => {
    const bus = new Bus({ clock: clock() });
    const asked: number[] = [];
    bus.addInterceptor(1, { selectors: ["ui.focus"], priority: 0, intercept: (id) => asked.push(id) });
    const first = bus.publishFromPeer(focus(true), UI);
    await waitFor(() => asked.length > 0, "the interceptor to be asked");
    expect(asked).toHaveLength(1);
    bus.removeOwner(1); // disconnect: the outstanding question resolves as pass
    expect(await first).toMatchObject({ status: "committed", seq: 0 });
    bus.addInterceptor(2, { selectors: ["ui.focus"], priority: 0, intercept: (id) => asked.push(id) });
    const second = bus.publishFromPeer(focus(false), UI);
    await waitFor(() => asked.length > 1, "the second interceptor to be asked");
    expect(bus.reply(1, asked[0] as number, { action: "drop" })).toBe(false); // stale id
    expect(bus.reply(1, asked[1] as number, { action: "drop" })).toBe(false); // not the owner asked
    expect(bus.reply(2, asked[1] as number, { action: "pass" })).toBe(true);
    expect(await second).toMatchObject({ status: "committed", seq: 1 });
  });

  it("[bus.intercept.deadline-suspends] an interceptor that does not answer in time passes, is suspended until its late reply, and the pipeline flows on", async () => {
    const warnings: string[] = [];
    const bus = new Bus({ clock: clock(), warn: (w) => warnings.push(w), interceptDeadlineMs: 30 });
    const asked: number[] = [];
    bus.addInterceptor(1, { selectors: ["ui.focus", "harness.*"], priority: 0, intercept: (id) => asked.push(id) }); // never answers
    const seen: Committed[] = [];
    bus.onCommitted("*", (c) => seen.push(c));
    // Neither an unprotected nor a protected event waits past the deadline; both pass unchanged.
    expect(await bus.publishFromPeer(focus(true), UI)).toMatchObject({ status: "committed", seq: 0 });
    expect(asked).toHaveLength(1);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("did not answer about ui.focus within 30 ms");
    // Suspended: later publications are not put to it at all, so they do not wait.
    expect(await bus.publishFromPeer(notice("flows"), HARNESS)).toMatchObject({ status: "committed", seq: 1 });
    expect(await bus.publishFromPeer(focus(false), UI)).toMatchObject({ status: "committed", seq: 2 });
    expect(asked).toHaveLength(1);
    // Its late reply binds nothing (no event is dropped after the fact) and lifts the suspension.
    expect(bus.reply(1, asked[0] as number, { action: "drop" })).toBe(false);
    expect(seen.map((c) => c.seq)).toEqual([0, 1, 2]);
    const next = bus.publishFromPeer(focus(true), UI);
    await waitFor(() => asked.length > 1, "the interceptor to be asked again");
    expect(asked).toHaveLength(2);
    expect(bus.reply(1, asked[1] as number, { action: "drop" })).toBe(true);
    expect(await next).toEqual({ status: "dropped" });
  });

  it("[bus.intercept.unsendable-question-passes] a question that cannot reach its interceptor counts as a pass at once", async () => {
    const bus = new Bus({ clock: clock(), interceptDeadlineMs: 60_000 });
    let calls = 0;
    bus.addInterceptor(1, {
      selectors: ["ui.focus"],
      priority: 0,
      intercept: () => {
        calls++;
        return false; // the peer's queue is full
      },
    });
    bus.addInterceptor(2, {
      selectors: ["ui.focus"],
      priority: 1,
      intercept: () => {
        calls++;
        throw new Error("broken interceptor");
      },
    });
    expect(await bus.publishFromPeer(focus(true), UI)).toMatchObject({ status: "committed", seq: 0 });
    expect(calls).toBe(2);
  });

  it("keeps FIFO order while an interceptor is slow", async () => {
    const bus = new Bus({ clock: clock() });
    const order: string[] = [];
    bus.onCommitted("*", (c) => order.push(`${c.name}:${c.name === "ui.focus" ? c.data.focused : c.name === "harness.notice" ? c.data.text : ""}`));
    bus.addInterceptor(1, { selectors: ["ui.focus"], priority: 0, intercept: (id) => setTimeout(() => bus.reply(1, id, { action: "pass" }), 20) });
    const a = bus.publishFromPeer(focus(true), UI);
    const b = bus.publishFromPeer(notice("after"), HARNESS);
    await Promise.all([a, b]);
    expect(order).toEqual(["ui.focus:true", "harness.notice:after"]);
  });
});

describe("bus commit and broadcast", () => {
  const started = (id: string) => ({ name: "session.agent_loaded", data: { agent_id: id } });

  it("[bus.commit.append-failure-aborts] a failed required append aborts the commit without consuming seq", async () => {
    let fail = true;
    const appended: number[] = [];
    const bus = new Bus({
      clock: clock(),
      append: (c) => {
        if (fail) throw new Error("disk full");
        appended.push(c.seq);
      },
    });
    const sink = new MemorySink();
    bus.subscribe({ historical: [], live: ["*"] }, sink);
    const out = await bus.publishFromPeer(started("a1"), HARNESS);
    expect(out.status).toBe("failed");
    expect(sink.size).toBe(0);
    fail = false;
    expect(await bus.publishFromPeer(started("a1"), HARNESS)).toEqual({ status: "committed", seq: 0 });
    expect(appended).toEqual([0]);
    // transient events are never appended
    await bus.publishFromPeer(focus(true), UI);
    expect(appended).toEqual([0]);
  });

  it("[bus.replay.marked-and-bounded] replays history marked replay:true, ends with session.replay_complete, then goes live", async () => {
    const bus = new Bus({ clock: clock() });
    await bus.publishFromPeer(started("a1"), HARNESS);
    await bus.publishFromPeer(focus(true), UI); // transient: not replayed
    await bus.publishFromPeer(started("a2"), HARNESS);
    await bus.publishFromPeer({ name: "agent.stats_updated", data: { agent_id: "a1", usage: { input_tokens: 1, output_tokens: 2 }, cost_usd: 0, context_tokens: 3 } }, HARNESS);
    const sink = new MemorySink();
    bus.subscribe({ historical: ["session.*", "agent.*"], live: ["session.*"] }, sink);
    // Committed while the history replays: delivered after the boundary, never before or twice.
    await bus.publishFromPeer(started("a3"), HARNESS);
    await bus.publishFromPeer(focus(false), UI); // not selected live
    const got = await sink.take(5);
    expect(got.map((d) => [d.event.name, d.event.data.agent_id ?? null, d.replay ?? false])).toEqual([
      ["session.agent_loaded", "a1", true],
      ["session.agent_loaded", "a2", true],
      ["agent.stats_updated", "a1", true],
      ["session.replay_complete", null, true],
      ["session.agent_loaded", "a3", false],
    ]);
    expect(got[3]?.event.data).toEqual({ replayed: 3, omitted: 0 });
    // A bounded replay keeps the most recent records and counts the rest.
    const recent = new MemorySink();
    bus.subscribe({ historical: ["session.*"], live: [] }, recent, 2);
    const window = await recent.take(3);
    expect(window.map((d) => [d.event.name, d.event.data.agent_id ?? null])).toEqual([
      ["session.agent_loaded", "a2"],
      ["session.agent_loaded", "a3"],
      ["session.replay_complete", null],
    ]);
    expect(window[2]?.event.data).toEqual({ replayed: 2, omitted: 1 });
  });

  it("[bus.subscriber.slow-is-bounded] a full subscriber is cut off and does not stall the others", async () => {
    const bus = new Bus({ clock: clock() });
    const slow = new MemorySink(8);
    const fast = new MemorySink();
    bus.subscribe({ historical: [], live: ["ui.*"] }, slow);
    bus.subscribe({ historical: [], live: ["ui.*"] }, fast);
    const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => bus.publishFromPeer(focus(i % 2 === 0), UI)));
    expect(outcomes.every((o) => o.status === "committed")).toBe(true);
    expect(slow.size).toBe(8);
    expect(slow.closedReason).toBe("subscriber queue full");
    expect(fast.drain()).toHaveLength(50);
    expect(bus.subscriberCount).toBe(1);
  });

  it("caps a subscriber queue by bytes as well as items", async () => {
    const bus = new Bus({ clock: clock() });
    const sink = new MemorySink(1024, 400);
    bus.subscribe({ historical: [], live: ["ui.*"] }, sink);
    for (let i = 0; i < 10; i++) await bus.publishFromPeer({ name: "ui.prompt_draft", data: { agent_id: "a", text: "x".repeat(100) } }, UI);
    expect(sink.queuedBytes).toBeLessThanOrEqual(400);
    expect(sink.closedReason).toBe("subscriber queue full");
  });

  it("[bus.consumer.canonical-successor] a post-commit consumer publishes the canonical fact after the request commits", async () => {
    const bus = new Bus({ clock: clock() });
    const live = new Set([3]);
    bus.onCommitted("agent.metadata_request", (c) => {
      if (c.publisher.generation === undefined || !live.has(c.publisher.generation)) return; // stale generation: observation only
      void bus.publishFromPeer(
        { name: "agent.metadata_set", data: { ...c.data, by: { class: c.publisher.class, instance: c.publisher.instance, kind: c.publisher.kind, generation: c.publisher.generation } } },
        HARNESS,
      );
    });
    const sink = new MemorySink();
    bus.subscribe({ historical: [], live: ["agent.*"] }, sink);
    await bus.publishFromPeer({ name: "agent.metadata_request", data: { agent_id: "a1", key: "cwd", value: "/w" } }, TOOL);
    await bus.publishFromPeer({ name: "agent.metadata_request", data: { agent_id: "a1", key: "cwd", value: "/x" } }, { ...CORE, generation: 9 });
    const got = await sink.take(3);
    expect(got.map((d) => d.event.name)).toEqual(["agent.metadata_request", "agent.metadata_set", "agent.metadata_request"]);
    expect(got[1]?.publisher).toEqual({ class: "harness" });
    // a peer can never publish the canonical fact itself
    expect(await bus.publishFromPeer({ name: "agent.metadata_set", data: { agent_id: "a1", key: "k", value: null, by: { class: "harness" } } }, TOOL)).toMatchObject({
      status: "refused",
      reason: "unauthorized",
    });
  });

  it("[bus.consumer.failure-isolated] a consumer that throws or rejects leaves the commit standing and the other consumers running", async () => {
    const warnings: string[] = [];
    const bus = new Bus({ clock: clock(), warn: (w) => warnings.push(w) });
    const ran: string[] = [];
    const rejected: unknown[] = [];
    const onUnhandled = (reason: unknown) => rejected.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      bus.onCommitted("ui.focus", () => {
        ran.push("throws");
        throw new Error("boom");
      });
      bus.onCommitted("ui.focus", async () => {
        ran.push("rejects");
        await Promise.resolve();
        throw new Error("async boom");
      });
      bus.onCommitted("ui.focus", () => void ran.push("after"));
      bus.onCommitted("*", () => void ran.push("wildcard"));
      const sink = new MemorySink();
      bus.subscribe({ historical: [], live: ["ui.*"] }, sink);
      expect(await bus.publishFromPeer(focus(true), UI)).toEqual({ status: "committed", seq: 0 });
      expect(await bus.publishFromPeer(focus(false), UI)).toEqual({ status: "committed", seq: 1 });
      await waitFor(() => warnings.length >= 4 || rejected.length > 0, "both async consumer failures to be reported");
      await nextTurn(); // an unhandled rejection is reported before the next turn
      expect(ran).toEqual(["throws", "rejects", "after", "wildcard", "throws", "rejects", "after", "wildcard"]);
      expect(sink.drain()).toHaveLength(2);
      expect(warnings.filter((w) => w.includes("seq 0"))).toEqual([
        "a consumer of ui.focus seq 0 failed: boom",
        "a consumer of ui.focus seq 0 failed: async boom",
      ]);
      expect(warnings).toHaveLength(4);
      expect(rejected).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("re-synthesises current state for late subscribers by snapshot key", async () => {
    const bus = new Bus({ clock: clock(), snapshotKey: (e) => `${e.name}:${e.name === "agent.stats_updated" ? e.data.agent_id : ""}` });
    const stats = (agent: string, tokens: number) => ({
      name: "agent.stats_updated",
      data: { agent_id: agent, usage: { input_tokens: tokens, output_tokens: 0 }, cost_usd: 0, context_tokens: tokens },
    });
    await bus.publishFromPeer(stats("a1", 1), HARNESS);
    await bus.publishFromPeer(stats("a1", 2), HARNESS);
    await bus.publishFromPeer(stats("a2", 5), HARNESS);
    const sink = new MemorySink();
    bus.subscribe({ historical: ["agent.stats_updated"], live: [] }, sink);
    const got = await sink.take(3);
    expect(got.map((d) => [d.event.data.agent_id ?? null, d.event.data.context_tokens ?? null])).toEqual([
      ["a1", 2],
      ["a2", 5],
      [null, null],
    ]);
  });

  it("restores journal history with fresh seqs and never appends it again", async () => {
    const appended: string[] = [];
    const bus = new Bus({ clock: clock(), append: (c) => appended.push(c.name) });
    bus.restore([{ name: "session.agent_loaded", data: { agent_id: "a1" }, recordedAt: 5, publisher: HARNESS }]);
    expect(bus.nextSeq).toBe(1);
    expect(await bus.publishFromPeer(started("a2"), HARNESS)).toEqual({ status: "committed", seq: 1 });
    expect(appended).toEqual(["session.agent_loaded"]);
    expect(bus.history().map((c) => ("agent_id" in c.data ? c.data.agent_id : undefined))).toEqual(["a1", "a2"]);
  });
});
