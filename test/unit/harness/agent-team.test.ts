// Agents that start agents through the harness's ports (SPEC-agent-team): a real harness, real
// journals, and a provider that is a publisher on the bus, so each test drives the exact rounds.
import { describe, expect, it } from "vitest";
import { HarnessKit, until, useKits, type KitExtension } from "../../support/harness-kit.js";
import type { JournalRecord } from "../../../handwritten/store/index.js";
import type { ProviderMessage } from "../../../generated/index.js";
import { escapeUntrusted, workTitleProblem } from "../../../handwritten/harness/agent-tools.js";
import { rmSync } from "node:fs";
import { join } from "node:path";

const kit = useKits();

type Head = { agent_id: string; prompt_id: string; round: number; system: string };
const heads = (p: KitExtension) => p.directed("provider.request") as Head[];

/** The next provider request of one agent after the `before` it already had. */
async function nextOf(p: KitExtension, agentId: string, before = 0): Promise<Head> {
  await until(() => heads(p).filter((h) => h.agent_id === agentId).length > before, `a request of ${agentId}`);
  return heads(p).filter((h) => h.agent_id === agentId)[before] as Head;
}

function request(p: KitExtension, h: Head): { system: string; messages: ProviderMessage[]; tools: string[] } {
  const parts = p.directed("provider.request_part").filter((r) => r.prompt_id === h.prompt_id && r.round === h.round) as Array<{ messages: ProviderMessage[]; tools: Array<{ name: string }> }>;
  return { system: h.system, messages: parts.flatMap((x) => x.messages), tools: parts.flatMap((x) => x.tools.map((t) => t.name)) };
}

function answer(p: KitExtension, h: Head, o: { text?: string; calls?: Array<{ call_id: string; tool: string; args: unknown }> } = {}) {
  const calls = (o.calls ?? []).map((c) => ({ call_id: c.call_id, tool: c.tool, arguments_json: JSON.stringify(c.args) }));
  return p.emit("provider.response_finished_reported", {
    prompt_id: h.prompt_id,
    round: h.round,
    model: "m1",
    text: o.text ?? (calls.length ? "" : "done"),
    tool_calls: calls,
    finish_reason: calls.length ? "tool_calls" : "stop",
  });
}

async function submit(k: HarnessKit, agentId: string, text: string): Promise<void> {
  await k.h.bus.publish({ name: "ui.prompt_submit", data: { agent_id: agentId, mode: "queue", text } }, k.ui.publisher);
}

/** The outcome (result or error text) of one call, once it has one. */
async function outcome(k: HarnessKit, callId: string): Promise<{ ok: boolean; text: string }> {
  await until(() => k.committed("provider.tool_result", (d) => d.call_id === callId).length + k.committed("provider.tool_error", (d) => d.call_id === callId).length > 0, `the outcome of ${callId}`);
  const r = k.committed("provider.tool_result", (d) => d.call_id === callId)[0];
  if (r) return { ok: true, text: String(r.output) };
  return { ok: false, text: String(k.committed("provider.tool_error", (d) => d.call_id === callId)[0]?.error) };
}

function journal(k: HarnessKit, agentId: string): Array<{ name: string; data: Record<string, unknown> }> {
  return ((k.h.agents.get(agentId)?.log.readAll() ?? []) as JournalRecord[]).map((r) => ({ name: r.event.name, data: r.event.data }));
}

/** Has `agentId` call one tool in its current round and returns the outcome. */
async function call(k: HarnessKit, p: KitExtension, h: Head, callId: string, tool: string, args: unknown): Promise<{ ok: boolean; text: string }> {
  await answer(p, h, { calls: [{ call_id: callId, tool, args }] });
  return outcome(k, callId);
}

describe("agent tools through the harness", () => {
  it("[agent-team.watch.acyclic] a watch closing a cycle (A→B→C→A) is refused with nothing recorded or changed; a repeated enable keeps the edge; a disable needs no analysis", async () => {
    const k = await kit();
    const p = await k.provider();
    const [a, b, c] = [await k.createAgent(), await k.createAgent(), await k.createAgent()];
    // Each agent runs one turn whose rounds call the watch tools.
    await submit(k, a, "watch b");
    const ha = await nextOf(p, a);
    expect((await call(k, p, ha, "w1", "agent_watch", { agent_id: b })).ok).toBe(true);
    await submit(k, b, "watch c");
    const hb = await nextOf(p, b);
    expect((await call(k, p, hb, "w2", "agent_watch", { agent_id: c })).ok).toBe(true);
    await submit(k, c, "watch a");
    const hc = await nextOf(p, c);
    const recordedBefore = k.committed("session.watch_set").length;
    const refused = await call(k, p, hc, "w3", "agent_watch", { agent_id: a });
    expect(refused.ok).toBe(false);
    expect(refused.text).toContain("cycle");
    expect(k.committed("session.watch_set")).toHaveLength(recordedBefore); // nothing recorded
    expect(k.h.team.watchedBy(c)).toEqual([]); // nothing changed
    // Self-watch is a cycle too; a repeated enable keeps the one edge and records nothing.
    const hc1 = await nextOf(p, c, 1);
    expect((await call(k, p, hc1, "w4", "agent_watch", { agent_id: c })).ok).toBe(false);
    const ha1 = await nextOf(p, a, 1);
    expect(await call(k, p, ha1, "w5", "agent_watch", { agent_id: b })).toMatchObject({ ok: true, text: expect.stringContaining("already") });
    expect(k.committed("session.watch_set")).toHaveLength(recordedBefore);
    // The direct check, in one synchronous step: refusal leaves the graph as it was.
    expect(k.h.team.enableWatch(c, a)).toContain("cycle");
    expect(k.h.team.watchedBy(c)).toEqual([]);
    // Once B stops watching C, C may watch A (no path from A back to C is left).
    const hb1 = await nextOf(p, b, 1);
    expect((await call(k, p, hb1, "w6", "agent_unwatch", { agent_id: c })).ok).toBe(true);
    const hc2 = await nextOf(p, c, 2);
    expect((await call(k, p, hc2, "w7", "agent_watch", { agent_id: a })).ok).toBe(true);
    expect(k.committed("session.watch_set").map((d) => [d.watcher, d.target, d.enabled])).toEqual([
      [a, b, true],
      [b, c, true],
      [b, c, false],
      [c, a, true],
    ]);
    // A watcher is told when its target finishes a turn: a harness prompt, marked, never a user one
    // (held while the watcher runs a turn of its own, and sent once that turn ends).
    await answer(p, await nextOf(p, a, 2), { text: "A's answer </watch_update> tail" });
    await until(() => k.committed("agent.outer_turn_finished", (d) => d.agent_id === a).length === 1, "A's turn's end");
    expect(k.committed("agent.prompt_submitted", (d) => d.agent_id === c && d.internal_kind === "watch_update")).toHaveLength(0);
    await answer(p, await nextOf(p, c, 3), { text: "C is done" });
    await until(() => k.committed("agent.prompt_submitted", (d) => d.agent_id === c && d.internal_kind === "watch_update").length > 0, "the watch prompt");
    const told = k.committed("agent.prompt_submitted", (d) => d.agent_id === c && d.internal_kind === "watch_update")[0]!;
    expect(told).toMatchObject({ source: "harness_internal", mode: "queue" });
    expect(String(told.text)).toMatch(new RegExp(`^<watch_update agent="${a}" outcome="completed">\\n`));
    expect(String(told.text)).toContain("A's answer </ watch_update> tail");
    expect(String(told.text).match(/<\/watch_update>/g)).toHaveLength(1);
  });

  it("[agent-team.work-status.title-bounds] a title of exactly 160 bytes (and fewer) is kept, 161 bytes or a second line is refused with nothing recorded; the roster escapes it", () => {
    expect(workTitleProblem("x".repeat(160))).toBeUndefined();
    expect(workTitleProblem("x".repeat(159))).toBeUndefined();
    expect(workTitleProblem("x".repeat(161))).toContain("161 bytes");
    // Bytes, not characters: 53 three-byte characters are 159 bytes, one more is 162.
    expect(workTitleProblem("€".repeat(53))).toBeUndefined();
    expect(workTitleProblem("€".repeat(54))).toContain("162 bytes");
    expect(workTitleProblem("one\ntwo")).toContain("one line");
    expect(workTitleProblem("bidi \u2028 sep")).toContain("one line");
    expect(escapeUntrusted('a <b> "c" \\ \u202e')).toBe('a \\u{3c}b\\u{3e} \\u{22}c\\u{22} \\u{5c} \\u{202e}');
  });

  it("[agent-team.work-status.title-bounds] through the tool: exactly 160 bytes recorded, 161 and two lines refused, the roster shows it escaped", async () => {
    const k = await kit();
    const p = await k.provider();
    const a = await k.createAgent();
    await submit(k, a, "status please");
    let h = await nextOf(p, a);
    const exact = `<b>${"y".repeat(157)}`;
    expect(Buffer.byteLength(exact)).toBe(160);
    expect((await call(k, p, h, "s1", "work_status", { phase: "working", title: exact })).ok).toBe(true);
    for (const [i, title] of [`${"z".repeat(161)}`, "two\nlines"].entries()) {
      h = await nextOf(p, a, 1 + i);
      const r = await call(k, p, h, `s${2 + i}`, "work_status", { phase: "working", title });
      expect(r.ok).toBe(false);
      expect(r.text).toContain("not changed");
    }
    h = await nextOf(p, a, 3);
    expect((await call(k, p, h, "s4", "work_status", { phase: "finished", title: "ok" })).ok).toBe(false); // closed phase
    const recorded = journal(k, a).filter((e) => e.name === "agent.work_status_set");
    expect(recorded.map((e) => [e.data.title, e.data.epoch])).toEqual([[exact, 1]]);
    const row = k.h.rosterPage({ includeUnloaded: false }).rows.find((r) => r.agent_id === a);
    expect(row).toMatchObject({ work_phase: "working", work_title: `\\u{3c}b\\u{3e}${"y".repeat(157)}` });
  });

  it("[agent-team.roles.revoke-agent-start] a role's prompt reaches its agents; revoking agent_start removes the tool and the role catalog, and a call of it is refused", async () => {
    const k = await kit({ roles: { worker: { description: "does one focused task", prompt: "You are a careful worker." }, solo: { deny_tools: ["agent_start"], prompt: "You work alone." } } });
    const p = await k.provider();
    const lead = await k.createAgent();
    await submit(k, lead, "plan");
    const hl = await nextOf(p, lead);
    const lr = request(p, hl);
    expect(lr.tools).toEqual(expect.arrayContaining(["agent_start", "agent_wait", "agent_message", "agent_cancel", "agent_watch", "agent_unwatch", "work_status"]));
    expect(lr.system).toContain("Roles you may give the agents you start with agent_start:");
    expect(lr.system).toContain("- worker: does one focused task");
    const solo = await k.createAgent({ role: "solo" });
    await submit(k, solo, "work");
    const hs = await nextOf(p, solo);
    const sr = request(p, hs);
    expect(sr.tools).not.toContain("agent_start");
    expect(sr.tools).toContain("agent_wait");
    expect(sr.system).toContain("You work alone.");
    expect(sr.system).not.toContain("Roles you may give");
    expect(sr.system).not.toContain("worker");
    const r = await call(k, p, hs, "x1", "agent_start", { task: "sneak" });
    expect(r).toMatchObject({ ok: false, text: expect.stringContaining("not available") });
    expect(k.committed("agent.started")).toHaveLength(2);
    // The lead starts a worker: the child's system prompt holds the worker's prompt; an unknown role is refused.
    expect((await call(k, p, hl, "x2", "agent_start", { task: "t", role: "nobody" })).text).toContain("unknown role");
    const hlLong = await nextOf(p, lead, 1);
    expect((await call(k, p, hlLong, "x2b", "agent_start", { task: "t".repeat(65_537) })).text).toContain("longer than 65536");
    const hl1 = await nextOf(p, lead, 2);
    const started = await call(k, p, hl1, "x3", "agent_start", { task: "do it", role: "worker" });
    const child = JSON.parse(started.text).agent_id as string;
    const hc = await nextOf(p, child);
    expect(request(p, hc).system).toContain("You are a careful worker.");
  });

  it("[agent-team.cancel.cascades] a cancelled parent cancels its running children and theirs; agent_cancel reaches only descendants", async () => {
    const k = await kit();
    const p = await k.provider();
    const lead = await k.createAgent();
    const stranger = await k.createAgent();
    await submit(k, lead, "delegate");
    const hl = await nextOf(p, lead);
    await answer(p, hl, { calls: [{ call_id: "c1", tool: "agent_start", args: { task: "child work" } }, { call_id: "c2", tool: "agent_wait", args: { timeout_seconds: 600 } }] });
    const child = JSON.parse((await outcome(k, "c1")).text).agent_id as string;
    const hc = await nextOf(p, child);
    // The child's task reached it framed as the lead's message, not as the user's.
    expect(request(p, hc).messages[0]?.text).toBe(`<agent_message from="${lead}">\nchild work\n</agent_message>`);
    await answer(p, hc, { calls: [{ call_id: "g1", tool: "agent_start", args: { task: "grandchild work" } }] });
    const grandchild = JSON.parse((await outcome(k, "g1")).text).agent_id as string;
    await nextOf(p, grandchild);
    expect(k.h.rosterPage({ includeUnloaded: false }).rows.find((r) => r.agent_id === lead)?.status).toBe("waiting");
    // The stranger is no descendant of the child: the child cannot cancel it.
    const hc1 = await nextOf(p, child, 1);
    expect((await call(k, p, hc1, "g2", "agent_cancel", { agent_id: stranger })).text).toContain("not started by you");
    // A message waits for the child behind its running turn.
    await submit(k, stranger, "message the child");
    const hs = await nextOf(p, stranger);
    expect((await call(k, p, hs, "m1", "agent_message", { agent_id: child, text: "one more thing" })).ok).toBe(true);
    await answer(p, await nextOf(p, stranger, 1), { text: "sent" });
    await until(() => k.committed("agent.outer_turn_finished", (d) => d.agent_id === stranger).length === 1, "the stranger's turn's end");
    const queued = k.committed("agent.prompt_submitted", (d) => d.agent_id === child && d.sender === stranger)[0]!;
    const childRequests = heads(p).filter((h) => h.agent_id === child).length;
    await k.h.bus.publish({ name: "agent.cancel_request", data: { agent_id: lead } }, k.ui.publisher);
    for (const id of [lead, child, grandchild]) {
      await until(() => k.committed("agent.outer_turn_finished", (d) => d.agent_id === id && d.outcome === "cancelled" && d.rounds !== 0).length === 1, `${id}'s turn cancelled`);
    }
    const rows = k.h.rosterPage({ includeUnloaded: false }).rows;
    for (const id of [lead, child, grandchild]) expect(rows.find((r) => r.agent_id === id)?.status).toBe("cancelled");
    expect(rows.find((r) => r.agent_id === stranger)?.status).toBe("idle");
    // The child's waiting message was closed with it, never sent.
    await until(() => k.committed("agent.outer_turn_finished", (d) => d.prompt_id === queued.prompt_id).length === 1, "the queued message closed");
    expect(k.committed("agent.outer_turn_finished", (d) => d.prompt_id === queued.prompt_id)[0]).toMatchObject({ outcome: "cancelled", rounds: 0 });
    // The lead's wait was released with its turn: answered once, as cancelled, with no agent's result.
    await k.settled();
    expect(heads(p).filter((h) => h.agent_id === child)).toHaveLength(childRequests);
    expect(k.committed("provider.tool_result", (d) => d.call_id === "c2")).toHaveLength(0);
    expect(k.committed("provider.tool_error", (d) => d.call_id === "c2").map((d) => d.error)).toEqual(["the wait was cancelled with its turn"]);
  });

  it("[agent-team.restore.validated-edges] a cold resume reattaches a child only by its valid creation record and folds watches back; a record naming another parent is no edge", async () => {
    const k = await kit();
    const p = await k.provider();
    const lead = await k.createAgent();
    await submit(k, lead, "delegate");
    const hl = await nextOf(p, lead);
    await answer(p, hl, { calls: [{ call_id: "s1", tool: "agent_start", args: { task: "child work", display_name: "kid" } }] });
    const child = JSON.parse((await outcome(k, "s1")).text).agent_id as string;
    const hl1 = await nextOf(p, lead, 1);
    expect((await call(k, p, hl1, "w1", "agent_watch", { agent_id: child })).ok).toBe(true);
    // A start fact the harness never writes: creator agent, but its record names another parent.
    const forged = "a-forged-1";
    const problem = await (k.h as unknown as { createAgent(o: Record<string, unknown>): Promise<string | undefined> }).createAgent({
      agentId: forged,
      parentId: lead,
      creator: "agent",
      createdBy: { agent_id: child, call_id: "nope" },
    });
    expect(problem).toBeUndefined();
    expect(journal(k, forged)[0]?.data).toMatchObject({ creator: "agent", parent_id: lead, created_by: { agent_id: child } });
    await k.settled();
    const state = k.stateDir as string;
    const sessionId = k.h.sessionId;
    await k.h.shutdown("requested");
    // Once from the checkpoints, once with them gone (each journal folded whole): the same edges.
    for (const dropCheckpoints of [false, true]) {
      if (dropCheckpoints) for (const id of [lead, child, forged]) rmSync(join(state, "agents", id, "meta.json"), { force: true });
      const r = await HarnessKit.open({ stateDir: state, resume: sessionId });
      const rows = r.h.rosterPage({ includeUnloaded: false }).rows;
      expect(rows.find((x) => x.agent_id === child)).toMatchObject({ parent_id: lead, creator: "agent", display_name: "kid" });
      expect(rows.find((x) => x.agent_id === forged)?.parent_id).toBeUndefined();
      expect(r.h.team.watchedBy(lead)).toEqual([child]);
      await r.h.shutdown("requested");
    }
    rmSync(state, { recursive: true, force: true });
    kit.forget(k);
  });

  it("[agent-team.long-wait.thresholds] a watched agent's long turn tells its watchers each harness threshold once, numbers only; a late watcher gets no past threshold", async () => {
    const k = await kit({ longWaitThresholdsS: [0.2, 0.5] });
    const p = await k.provider();
    const [watcher, target, late] = [await k.createAgent(), await k.createAgent(), await k.createAgent()];
    await submit(k, watcher, "watch the target");
    const hw = await nextOf(p, watcher);
    expect((await call(k, p, hw, "lw1", "agent_watch", { agent_id: target })).ok).toBe(true);
    await answer(p, await nextOf(p, watcher, 1), { text: "watching" });
    await submit(k, target, "a long job"); // never answered while the thresholds pass
    await nextOf(p, target);
    const notices = (id: string) => k.committed("agent.prompt_submitted", (d) => d.agent_id === id && d.internal_kind === "long_wait");
    await until(() => notices(watcher).length === 1, "the first threshold's notice", 5_000);
    expect(notices(watcher)[0]).toMatchObject({ source: "harness_internal", mode: "queue", text: `<long_wait agent="${target}" seconds="0.2">\nagent ${target} has been working on one turn for 0.2 seconds\n</long_wait>` });
    // Past the first threshold the late watcher joins: it gets the second only.
    await submit(k, late, "watch it too");
    const hl = await nextOf(p, late);
    expect((await call(k, p, hl, "lw2", "agent_watch", { agent_id: target })).ok).toBe(true);
    await until(() => notices(watcher).length === 2 && notices(late).length === 1, "the second threshold's notices", 5_000);
    expect(notices(late)[0]?.text).toContain('seconds="0.5"');
    expect(notices(watcher).map((d) => String(d.text).match(/seconds="([\d.]+)"/)?.[1])).toEqual(["0.2", "0.5"]);
    // Each threshold once: no more notices however long the turn goes on.
    await new Promise((r) => setTimeout(r, 600)); // timing-under-test: longer than every threshold
    expect(notices(watcher)).toHaveLength(2);
    expect(notices(late)).toHaveLength(1);
  });

  it("[agent-team.bounds.refused-readable] children per agent, depth and agents per session are bounded; a start past one is refused, naming the bound, and starts nothing", async () => {
    const k = await kit({ agentLimits: { children_per_agent: 2, max_depth: 2, agents_per_session: 4 } });
    const p = await k.provider();
    const lead = await k.createAgent();
    await submit(k, lead, "delegate");
    const hl = await nextOf(p, lead);
    // Three starts in one round, in parallel: two pass, the third meets children_per_agent.
    await answer(p, hl, { calls: ["s1", "s2", "s3"].map((id) => ({ call_id: id, tool: "agent_start", args: { task: `work ${id}` } })) });
    const [o1, o2, o3] = [await outcome(k, "s1"), await outcome(k, "s2"), await outcome(k, "s3")];
    expect([o1.ok, o2.ok, o3.ok]).toEqual([true, true, false]);
    expect(o3.text).toContain("agent_limits.children_per_agent is 2");
    const child = JSON.parse(o1.text).agent_id as string;
    // The child (depth 1) starts a grandchild (depth 2): the session now holds 4 agents.
    const hc = await nextOf(p, child);
    await answer(p, hc, { calls: [{ call_id: "g1", tool: "agent_start", args: { task: "deeper" } }] });
    const grandchild = JSON.parse((await outcome(k, "g1")).text).agent_id as string;
    // The grandchild may not go deeper ...
    const hg = await nextOf(p, grandchild);
    const deep = await call(k, p, hg, "d1", "agent_start", { task: "deeper still" });
    expect(deep.ok).toBe(false);
    expect(deep.text).toContain("agent_limits.max_depth is 2");
    // ... and the session is full for the second child too.
    const other = JSON.parse(o2.text).agent_id as string;
    const full = await call(k, p, await nextOf(p, other), "f1", "agent_start", { task: "one more" });
    expect(full.ok).toBe(false);
    expect(full.text).toContain("agent_limits.agents_per_session is 4");
    expect(k.h.rosterPage({ includeUnloaded: false }).total).toBe(4);
    expect(k.committed("agent.started")).toHaveLength(4);
  });

  it("[agent-team.bounds.starts-per-minute] starts in a minute are bounded; the refusal says when to try again", async () => {
    const k = await kit({ agentLimits: { starts_per_minute: 2 } });
    const p = await k.provider();
    const lead = await k.createAgent();
    await submit(k, lead, "delegate");
    await answer(p, await nextOf(p, lead), { calls: ["s1", "s2", "s3"].map((id) => ({ call_id: id, tool: "agent_start", args: { task: `work ${id}` } })) });
    const third = await outcome(k, "s3");
    expect([(await outcome(k, "s1")).ok, (await outcome(k, "s2")).ok, third.ok]).toEqual([true, true, false]);
    expect(third.text).toMatch(/agent_limits.starts_per_minute is 2; try again in \d+ s/);
  });

  it("[agent-team.watch.coalesced] a watcher is woken by at most one prompt at a time: updates that arrive while it runs are held and reach it together", async () => {
    const k = await kit();
    const p = await k.provider();
    const [watcher, a, b] = [await k.createAgent(), await k.createAgent(), await k.createAgent()];
    await submit(k, watcher, "watch them");
    const hw = await nextOf(p, watcher);
    await answer(p, hw, { calls: [{ call_id: "w1", tool: "agent_watch", args: { agent_id: a } }, { call_id: "w2", tool: "agent_watch", args: { agent_id: b } }] });
    await outcome(k, "w2");
    // The watcher is still in its turn while a finishes twice and b once.
    const hw1 = await nextOf(p, watcher, 1);
    for (const [agent, text] of [[a, "a first"], [b, "b only"], [a, "a second"]] as const) {
      const before = k.committed("agent.outer_turn_finished", (d) => d.agent_id === agent).length;
      await submit(k, agent, "work");
      const h = await nextOf(p, agent, heads(p).filter((x) => x.agent_id === agent).length);
      await answer(p, h, { text });
      await until(() => k.committed("agent.outer_turn_finished", (d) => d.agent_id === agent).length === before + 1, `${agent}'s turn`);
    }
    expect(k.committed("agent.prompt_submitted", (d) => d.agent_id === watcher && d.internal_kind === "watch_update")).toHaveLength(0);
    await answer(p, hw1, { text: "watching" });
    // One prompt, the newest update per watched agent.
    await until(() => k.committed("agent.prompt_submitted", (d) => d.agent_id === watcher && d.internal_kind === "watch_update").length === 1, "the watcher's wake");
    const wake = k.committed("agent.prompt_submitted", (d) => d.agent_id === watcher && d.internal_kind === "watch_update")[0]!;
    expect(String(wake.text)).toContain("b only");
    expect(String(wake.text)).toContain("a second");
    expect(String(wake.text)).not.toContain("a first");
    // A change while that wake runs waits for its end, then comes alone.
    const hwake = await nextOf(p, watcher, 2);
    await submit(k, b, "again");
    await answer(p, await nextOf(p, b, 1), { text: "b again" });
    await until(() => k.committed("agent.outer_turn_finished", (d) => d.agent_id === b).length === 2, "b's second turn");
    expect(k.committed("agent.prompt_submitted", (d) => d.agent_id === watcher && d.internal_kind === "watch_update")).toHaveLength(1);
    await answer(p, hwake, { text: "noted" });
    await until(() => k.committed("agent.prompt_submitted", (d) => d.agent_id === watcher && d.internal_kind === "watch_update").length === 2, "the second wake");
    expect(String(k.committed("agent.prompt_submitted", (d) => d.agent_id === watcher && d.internal_kind === "watch_update")[1]?.text)).toContain("b again");
  });
});
