// Compaction through a real daemon, its real provider and shell extensions, and a loopback
// OpenAI-compatible server (SPEC-compaction): a session driven past its threshold by large tool
// outputs compacts, the next request is the summary plus the suffix, a resume folds the same
// transcript, and a daemon killed at any step of a compaction resumes to a consistent one.
import { describe, expect, it } from "vitest";
import { closeSync, cpSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient, isAlive, waitFor } from "../../support/daemon.js";
import { agentHarnessYaml, agentJournal, agentJournalFile, attachUi, daemonIn, killTree, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse, type ReceivedRequest } from "../../support/fake-openai.js";
import { sessionStats } from "../../../handwritten/trace/index.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const WINDOW = 10_000;

function workspace(): { env: NodeJS.ProcessEnv; home: string; project: string } {
  const yaml = agentHarnessYaml(fake, { models: [{ id: "fake-model", context_window: WINDOW }], settings: { compaction: { auto_threshold: 0.8, keep_recent_tokens: 1000 } } });
  const w = workspaceIn(cleanups, yaml);
  // A large file (about 60 KB of read output) and a small one.
  writeFileSync(join(w.project, "big.txt"), Array.from({ length: 1500 }, (_, i) => `big line ${i} ${"x".repeat(24)}`).join("\n"));
  writeFileSync(join(w.project, "small.txt"), "tiny file\n");
  return w;
}

type Msg = { role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string };
const messages = (r: ReceivedRequest | undefined): Msg[] => (r?.body as { messages: Msg[] }).messages;

/** Keeps the first `count` frames of a journal (a crash cut: appends are ordered) and drops its checkpoint. */
function truncateFrames(file: string, count: number): void {
  const fd = openSync(file, "r");
  let at = 0;
  const head = Buffer.alloc(8);
  for (let i = 0; i < count; i++) {
    readSync(fd, head, 0, 8, at);
    at += 8 + Number(head.readBigUInt64LE(0));
  }
  closeSync(fd);
  const bytes = readFileSync(file).subarray(0, at);
  writeFileSync(file, bytes);
  rmSync(join(file, "..", "meta.json"), { force: true });
}

/** Drives a fresh session past its threshold: read big.txt, read small.txt (usage crosses 80%), then the summary. */
async function pastThreshold(c: TestClient, agentId: string): Promise<void> {
  fake.enqueue(
    toolCallResponse([{ id: "call_big", name: "read", arguments: '{"path":"big.txt"}' }], { usage: { prompt_tokens: 500, completion_tokens: 10 } }),
    toolCallResponse([{ id: "call_small", name: "read", arguments: '{"path":"small.txt"}' }], { usage: { prompt_tokens: 8_500, completion_tokens: 10 } }),
  );
  c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "investigate the files" });
}

describe("compaction through a real daemon", () => {
  it("[compaction.daemon.threshold-summary-and-suffix] past the threshold the session compacts; the next request is the summary plus the suffix, and a resume folds the same transcript", async () => {
    const { env, home, project } = workspace();
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d, { tools: ["read"] });
    const agentId = await c.createAgent();
    await pastThreshold(c, agentId);
    fake.enqueue(textResponse("SUMMARY-OF-THE-BIG-FILE", { usage: { prompt_tokens: 9_000, completion_tokens: 30 } }), textResponse("final answer", { usage: { prompt_tokens: 1_200, completion_tokens: 5 } }));
    const end = await c.delivered("agent.outer_turn_finished");
    expect(end).toMatchObject({ outcome: "completed", rounds: 3 });
    expect(fake.chatRequests).toHaveLength(4);

    // The summary request: the closed prefix (the big output) and the ask; no tools.
    const summaryRequest = fake.chatRequests[2]!;
    expect((summaryRequest.body as { tools?: unknown }).tools).toBeUndefined();
    expect(summaryRequest.rawBody).toContain("big line 1499");
    expect(messages(summaryRequest).at(-1)?.content).toContain("Summarize the conversation above");
    expect(JSON.stringify(messages(summaryRequest))).not.toContain("call_small");

    // The next round: system, the summary, then the untouched suffix (the small read and its result).
    const round2 = messages(fake.chatRequests[3]);
    expect(round2.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(round2[1]?.content).toContain("SUMMARY-OF-THE-BIG-FILE");
    expect(round2[2]?.tool_calls).toMatchObject([{ id: "call_small" }]);
    expect(round2[3]).toMatchObject({ tool_call_id: "call_small" });
    expect(String(round2[3]?.content)).toContain("tiny file");
    expect(fake.chatRequests[3]!.rawBody).not.toContain("big line");

    const names = agentJournal(home, agentId).map((r) => r.event.name);
    expect(names.filter((n) => n.startsWith("agent.compaction"))).toEqual(["agent.compaction_started", "agent.compaction_summarized", "agent.compaction_committed"]);
    const started = agentJournal(home, agentId).find((r) => r.event.name === "agent.compaction_started")!.event.data;
    expect(started).toMatchObject({ trigger: "auto", model: "fake-model" });

    // A live prompt, then the same session resumed: the resumed request extends the live one exactly.
    fake.enqueue(textResponse("live reply"), textResponse("resumed reply"));
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "one more" });
    await c.delivered("agent.outer_turn_finished", (x) => x.outcome === "completed");
    const live = messages(fake.chatRequests[4]);
    expect(live.slice(0, 4)).toEqual(round2);
    c.close();
    killTree(d.pid);
    // The checkpoint the last turn's end wrote lets the resumed load start at the cut: the request
    // below, equal to the live one, was built without reading the records before it.
    const meta = JSON.parse(readFileSync(join(home, "state", "agents", agentId, "meta.json"), "utf8")) as { fold?: { transcript_from?: number } };
    expect(meta.fold?.transcript_from).toBe(started.cut_seq);
    expect(started.cut_seq as number).toBeGreaterThan(0);
    const d2 = await daemonIn(cleanups, env, ["--resume", d.session_id, "--project-root", project]);
    const c2 = await attachUi(cleanups, d2, { tools: ["read"] });
    c2.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "after resume" });
    await c2.delivered("agent.outer_turn_finished", (x) => x.outcome === "completed");
    const resumed = messages(fake.chatRequests[5]);
    expect(resumed.slice(0, live.length)).toEqual(live);
    expect(resumed.slice(live.length)).toEqual([
      { role: "assistant", content: "live reply" },
      { role: "user", content: "<user>\nafter resume\n</user>" },
    ]);
    // The summary is held once.
    expect(JSON.stringify(resumed).split("SUMMARY-OF-THE-BIG-FILE")).toHaveLength(2);
  }, 180_000);

  it("[compaction.resume.context-estimate] after :compact and a resume, the context use shown is the estimate the commit recorded, not the last response's", async () => {
    const { env, project } = workspace();
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d, { tools: ["read"] });
    const agentId = await c.createAgent();
    fake.enqueue(textResponse(`a long answer ${"words ".repeat(3000)}`, { usage: { prompt_tokens: 3_000, completion_tokens: 1_000 } }), textResponse("short", { usage: { prompt_tokens: 4_500, completion_tokens: 2 } }));
    for (const text of ["first", "second"]) {
      c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text });
      await c.delivered("agent.outer_turn_finished", (x) => x.outcome === "completed" && x.agent_id === agentId);
    }
    fake.enqueue(textResponse("SHORT-SUMMARY", { usage: { prompt_tokens: 8_700, completion_tokens: 5 } }));
    c.emit("ui.compact_request", { agent_id: agentId });
    const committed = await c.delivered("agent.compaction_committed");
    const estimate = committed.context_tokens as number;
    expect(estimate).toBeGreaterThan(0);
    expect(estimate).toBeLessThan(1_000); // the summary and a short suffix, far below the last response's 4,502
    c.close();
    killTree(d.pid);
    const d2 = await daemonIn(cleanups, env, ["--resume", d.session_id, "--project-root", project]);
    const c2 = await TestClient.ui(d2.socket, d2.session_id);
    cleanups.push(() => c2.close());
    c2.send({ message: "subscribe", payload: { historical: ["agent.stats_updated"], live: [] } });
    const stats = await c2.delivered("agent.stats_updated", (x) => x.agent_id === agentId);
    expect(stats.context_tokens).toBe(estimate);
  }, 120_000);

  it("[compaction.stats.idle-compact-counted] `session stats` of a running session counts a :compact made while its agent was idle", async () => {
    const { env, home, project } = workspace();
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d, { tools: ["read"] });
    const agentId = await c.createAgent();
    fake.enqueue(textResponse("an answer", { usage: { prompt_tokens: 3_000, completion_tokens: 10 } }));
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "first" });
    await c.delivered("agent.outer_turn_finished", (x) => x.outcome === "completed" && x.agent_id === agentId);
    fake.enqueue(textResponse("IDLE-SUMMARY", { usage: { prompt_tokens: 3_100, completion_tokens: 5 } }));
    c.emit("ui.compact_request", { agent_id: agentId });
    await c.delivered("agent.compaction_committed");
    // The daemon keeps running: stats read up to the boundary its checkpoint names.
    await waitFor(() => sessionStats(join(home, "state"), d.session_id).compactions.committed === 1, "the running session's stats to count the compaction", 5_000);
    const stats = sessionStats(join(home, "state"), d.session_id);
    expect(stats.compactions).toEqual({ committed: 1, failed: 0 });
    expect(isAlive(d.pid)).toBe(true);
  }, 120_000);

  it("[compaction.crash.each-step] a daemon killed at each step of a compaction resumes to a consistent transcript: never resent, never lost, never twice", async () => {
    const { env, home, project } = workspace();
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d, { tools: ["read"] });
    const agentId = await c.createAgent();
    await pastThreshold(c, agentId);
    // The summary request hangs: SIGKILL while it is outstanding (after agent.compaction_started).
    fake.enqueue({ chunks: [], end: "hang", headersDelayMs: 0 });
    await waitFor(() => fake.chatRequests.length === 3, "the summary request", 60_000);
    await waitFor(() => agentJournal(home, agentId).some((r) => r.event.name === "agent.compaction_started"), "the compaction's start", 10_000);
    c.close();
    killTree(d.pid);
    await waitFor(() => !isAlive(d.pid), "the killed daemon to be gone", 10_000);
    const full = agentJournal(home, agentId);
    expect(full.at(-1)?.event.name).toBe("agent.compaction_started"); // the kill cut the transaction there
    const startedAt = full.findIndex((r) => r.event.name === "agent.compaction_started");

    const d2 = await daemonIn(cleanups, env, ["--resume", d.session_id, "--project-root", project]);
    const c2 = await attachUi(cleanups, d2, { tools: ["read"] });
    await waitFor(() => agentJournal(home, agentId).some((r) => r.event.name === "agent.compaction_failed"), "the interrupted compaction's failure", 10_000);
    const after = agentJournal(home, agentId).slice(full.length).map((r) => [r.event.name, r.event.data.outcome ?? r.event.data.reason ?? ""]);
    expect(after[0]).toEqual(["agent.compaction_failed", expect.stringContaining("interrupted")]);
    expect(after[1]).toEqual(["agent.outer_turn_finished", "dispatch_uncertain"]);
    expect(fake.chatRequests).toHaveLength(3); // the summary was not asked for again
    // The next prompt pays the debt with a successor over the intact transcript, then runs on it.
    fake.enqueue(textResponse("SUCCESSOR-SUMMARY"), textResponse("answer after the crash"));
    c2.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "go on" });
    await c2.delivered("agent.outer_turn_finished", (x) => x.outcome === "completed");
    expect(fake.chatRequests[3]!.rawBody).toContain("big line 1499");
    const successor = agentJournal(home, agentId).filter((r) => r.event.name === "agent.compaction_started").at(-1)!.event.data;
    expect(successor).toMatchObject({ trigger: "successor", successor_of: full[startedAt]!.event.data.compaction_id });
    const afterCrash = messages(fake.chatRequests[4]);
    expect(afterCrash[1]?.content).toContain("SUCCESSOR-SUMMARY");
    expect(afterCrash.at(-1)?.content).toBe("<user>\ngo on\n</user>");
    c2.close();
    killTree(d2.pid);
    cpSync(join(home, "state"), join(home, "state-done"), { recursive: true });
    const completed = agentJournal(home, agentId);
    const at = (name: string) => completed.findIndex((r, i) => i > full.length && r.event.name === name);

    // Crash cuts of the successful successor: just after its start, after its summary, after its commit.
    for (const [cut, expectOnResume] of [
      [at("agent.compaction_started") + 1, "agent.compaction_failed"],
      [at("agent.compaction_summarized") + 1, "agent.compaction_committed"],
      [at("agent.compaction_committed") + 1, undefined],
    ] as const) {
      rmSync(join(home, "state"), { recursive: true, force: true });
      cpSync(join(home, "state-done"), join(home, "state"), { recursive: true, force: true });
      truncateFrames(agentJournalFile(home, agentId), cut);
      const before = fake.chatRequests.length;
      const dn = await daemonIn(cleanups, env, ["--resume", d.session_id, "--project-root", project]);
      const cn = await attachUi(cleanups, dn, { tools: ["read"] });
      await waitFor(() => agentJournal(home, agentId).length > cut, "the resume's closing records", 10_000);
      const appended = agentJournal(home, agentId).slice(cut).map((r) => r.event.name);
      if (expectOnResume) expect(appended[0]).toBe(expectOnResume);
      else expect(appended.filter((n) => n.startsWith("agent.compaction"))).toEqual([]);
      expect(fake.chatRequests).toHaveLength(before); // nothing resent on resume
      if (expectOnResume === "agent.compaction_failed") fake.enqueue(textResponse("THIRD-SUMMARY"));
      fake.enqueue(textResponse("ok"));
      cn.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "check" });
      await cn.delivered("agent.outer_turn_finished", (x) => x.outcome === "completed");
      const req = fake.chatRequests.at(-1)!;
      const body = JSON.stringify(messages(req));
      // One summary at the head, never two; nothing of the summarized prefix; the suffix whole.
      expect(body.split("<summary>")).toHaveLength(2);
      expect(body).not.toContain("big line");
      expect(body).toContain(expectOnResume === "agent.compaction_failed" ? "THIRD-SUMMARY" : "SUCCESSOR-SUMMARY");
      expect(body).toContain("<user>\\ncheck\\n</user>");
      cn.close();
      killTree(dn.pid);
    }
  }, 300_000);
});
