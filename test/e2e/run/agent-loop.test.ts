// The agent loop against a real daemon, real extensions and a loopback OpenAI-compatible server:
// steering at a round boundary, and a daemon crash between dispatch and answer.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { isAlive, waitFor } from "../../support/daemon.js";
import { attachUi, daemonIn, notesWorkspace, openaiEnv, processTree, useCleanups, useFakeOpenAI, type Workspace } from "../../support/e2e.js";
import { FakeOpenAI, completionChunk, sseEvent, textResponse, toolCallResponse } from "../../support/fake-openai.js";
import { replayJournal, validateJournalRecord, type JournalRecord } from "../../../handwritten/store/index.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s));
const cleanups = useCleanups();

function workspace(): Workspace {
  const w = notesWorkspace(cleanups);
  return { ...w, env: { ...w.env, ...openaiEnv(fake, "sk-loop") } };
}

type Entry = { name: string; data: Record<string, unknown> };
function agentJournal(home: string, agentId: string): Entry[] {
  const r = replayJournal<JournalRecord>(join(home, "state", "agents", agentId, "events.cbor"), { validate: validateJournalRecord });
  return r.records.map((x) => ({ name: x.event.name, data: x.event.data }));
}
const brief = (j: Entry[]) =>
  j.map((e) => [e.name, e.data.prompt_id === undefined ? "" : String(e.data.prompt_id), e.data.round ?? e.data.mode ?? e.data.outcome ?? ""].join(" ").trim());

/**
 * The journal without its first `agent.initialization_context_set`, checked to sit after
 * `agent.started` and before the first round: a new agent's initialization finishes once the
 * session is ready (SPEC-extension-declarations), which may be after its first prompt was queued.
 */
function initializedBeforeFirstRound(j: Entry[]): Entry[] {
  const at = j.findIndex((e) => e.name === "agent.initialization_context_set");
  const firstRound = j.findIndex((e) => e.name === "agent.prompt_started");
  expect(at).toBeGreaterThan(0);
  if (firstRound >= 0) expect(at).toBeLessThan(firstRound);
  expect(j.slice(0, at).every((e) => e.name === "agent.started" || e.name === "agent.prompt_submitted")).toBe(true);
  return [...j.slice(0, at), ...j.slice(at + 1)];
}

describe("agent loop through a real daemon", () => {
  it("[run.openai.steer-next-round] delivers a steered prompt at the next round boundary, or as its own turn when none follows", async () => {
    const { env, home, project } = workspace();
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d);
    const agentId = await c.createAgent();

    // Round 0 streams a tool call slowly; the steer arrives while it streams.
    fake.enqueue(toolCallResponse([{ id: "call_ls", name: "ls", arguments: ['{"path"', ':"."}'] }], { delayMs: 500 }), textResponse("done with both"));
    const before = fake.chatRequests.length;
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "list the files" });
    const p1 = String((await c.delivered("agent.prompt_submitted", (x) => x.text === "list the files", 30_000)).prompt_id);
    await waitFor(() => fake.chatRequests.length === before + 1, "round 0 request", 20_000);
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "steer", text: "also read notes.txt" });
    const p2 = String((await c.delivered("agent.prompt_submitted", (x) => x.mode === "steer", 30_000)).prompt_id);
    const end1 = await c.delivered("agent.outer_turn_finished", (x) => x.prompt_id === p1, 30_000);
    expect(end1).toMatchObject({ outcome: "completed", rounds: 2 });
    expect(fake.chatRequests.length).toBe(before + 2);
    const round1 = (fake.chatRequests[before + 1]!.body as { messages: Array<{ role: string; content: unknown; tool_call_id?: string }> }).messages;
    expect(round1.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "user"]);
    expect(round1[1]?.content).toBe("<user>\nlist the files\n</user>");
    expect(round1[3]?.tool_call_id).toBe("call_ls");
    expect(round1[4]?.content).toBe("<user>\nalso read notes.txt\n</user>");
    // The round-0 request did not carry the steer.
    const round0 = (fake.chatRequests[before]!.body as { messages: Array<{ content: unknown }> }).messages;
    expect(JSON.stringify(round0)).not.toContain("notes.txt");

    // A steer into a turn that has no further round runs as a turn of its own, right after it.
    fake.enqueue(textResponse(["slow ", "answer"], { delayMs: 500 }), textResponse("steer answered"));
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "just talk" });
    const p3 = String((await c.delivered("agent.prompt_submitted", (x) => x.text === "just talk", 30_000)).prompt_id);
    await waitFor(() => fake.chatRequests.length === before + 3, "p3 request", 20_000);
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "steer", text: "and be brief" });
    const p4 = String((await c.delivered("agent.prompt_submitted", (x) => x.text === "and be brief", 30_000)).prompt_id);
    await c.delivered("agent.outer_turn_finished", (x) => x.prompt_id === p4, 30_000);
    expect(fake.chatRequests.length).toBe(before + 4);
    const last = (fake.chatRequests[before + 3]!.body as { messages: Array<{ role: string; content: unknown }> }).messages;
    expect(last.at(-2)).toEqual({ role: "assistant", content: "slow answer" });
    expect(last.at(-1)).toEqual({ role: "user", content: "<user>\nand be brief\n</user>" });

    expect(brief(initializedBeforeFirstRound(agentJournal(home, agentId)))).toEqual([
      "agent.started",
      `agent.prompt_submitted ${p1} queue`,
      `agent.prompt_started ${p1} 0`,
      `agent.prompt_submitted ${p2} steer`,
      `provider.response_finished ${p1} 0`,
      "provider.tool_result " + p1,
      "tool.result_display  ok",
      `agent.prompt_started ${p1} 1`,
      `provider.response_finished ${p1} 1`,
      `agent.outer_turn_finished ${p1} completed`,
      `agent.prompt_submitted ${p3} queue`,
      `agent.prompt_started ${p3} 0`,
      `agent.prompt_submitted ${p4} steer`,
      `provider.response_finished ${p3} 0`,
      `agent.outer_turn_finished ${p3} completed`,
      `agent.prompt_started ${p4} 0`,
      `provider.response_finished ${p4} 0`,
      `agent.outer_turn_finished ${p4} completed`,
    ]);
  });

  it("[daemon.crash.dispatch-uncertain] a daemon killed between dispatch and answer resumes the prompt as dispatch-uncertain and never resends it", async () => {
    const { env, home, project } = workspace();
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d);
    const agentId = await c.createAgent();

    // The answer starts and then hangs: the daemon dies while the provider is still streaming.
    fake.enqueue({ chunks: [sseEvent(completionChunk({ role: "assistant", content: "" })), sseEvent(completionChunk({ content: "thinking" }))], end: "hang" });
    const before = fake.chatRequests.length;
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "a long job" });
    const p1 = String((await c.delivered("agent.prompt_submitted", undefined, 30_000)).prompt_id);
    await waitFor(() => fake.chatRequests.length === before + 1, "the dispatched request", 20_000);
    await c.delivered("provider.response_updated", (x) => x.prompt_id === p1, 30_000); // the stream is live
    // A second prompt waits in the queue behind it: durable, never started.
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "queued behind" });
    const pq = String((await c.delivered("agent.prompt_submitted", (x) => x.text === "queued behind", 30_000)).prompt_id);
    const tree = processTree(d.pid);
    expect(tree.length).toBeGreaterThanOrEqual(3);
    process.kill(d.pid, "SIGKILL");
    await waitFor(() => !isAlive(d.pid), "the daemon to die");
    for (const pid of tree.slice(1)) {
      try {
        process.kill(pid, "SIGKILL"); // a crash takes the whole tree; no orderly goodbye from anyone
      } catch {
        // already gone
      }
    }
    c.close();
    expect(brief(initializedBeforeFirstRound(agentJournal(home, agentId)))).toEqual([
      "agent.started",
      `agent.prompt_submitted ${p1} queue`,
      `agent.prompt_started ${p1} 0`,
      `agent.prompt_submitted ${pq} queue`,
    ]);

    // Cold resume: the open prompt is closed as dispatch-uncertain, the queued one as interrupted,
    // and nothing is sent again.
    const resumed = await daemonIn(cleanups, env, ["--resume", d.session_id, "--project-root", project]);
    expect(resumed.session_id).toBe(d.session_id);
    const c2 = await attachUi(cleanups, resumed);
    // The resume closes both prompts before it takes new ones; a resend would be a turn the agent
    // runs first, so the next prompt's request (below) is the barrier that proves none was sent.
    await waitFor(() => agentJournal(home, agentId).length >= 7, "the resume to close both prompts");
    expect(fake.chatRequests.length).toBe(before + 1);
    const journal = agentJournal(home, agentId);
    expect(brief(initializedBeforeFirstRound(journal))).toEqual([
      "agent.started",
      `agent.prompt_submitted ${p1} queue`,
      `agent.prompt_started ${p1} 0`,
      `agent.prompt_submitted ${pq} queue`,
      `agent.outer_turn_finished ${p1} dispatch_uncertain`,
      `agent.outer_turn_finished ${pq} interrupted`,
    ]);
    expect(journal.at(-2)?.data).toEqual({ agent_id: agentId, prompt_id: p1, outcome: "dispatch_uncertain", rounds: 1 });
    expect(journal.at(-1)?.data).toEqual({ agent_id: agentId, prompt_id: pq, outcome: "interrupted", rounds: 0 });

    // The agent still works: the next prompt is answered, with the uncertain prompt kept as context only.
    fake.enqueue(textResponse("fresh answer"));
    c2.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "next one" });
    const p2 = String((await c2.delivered("agent.prompt_submitted", (x) => x.text === "next one", 30_000)).prompt_id);
    await c2.delivered("agent.outer_turn_finished", (x) => x.prompt_id === p2, 30_000);
    expect(fake.chatRequests.length).toBe(before + 2); // the next prompt's, and nothing sent again before it
    const msgs = (fake.chatRequests[before + 1]!.body as { messages: Array<{ role: string; content: unknown }> }).messages;
    expect(msgs.slice(1)).toEqual([
      { role: "user", content: "<user>\na long job\n</user>" },
      { role: "user", content: "<user>\nnext one\n</user>" },
    ]);
    // The resumed agent initialized again at its first prompt in this process, with a fresh id:
    // recorded after that prompt's submission and before its first round, as side state only.
    const resumedJournal = agentJournal(home, agentId);
    expect(brief(resumedJournal.slice(7, 10))).toEqual([`agent.prompt_submitted ${p2} queue`, "agent.initialization_context_set", `agent.prompt_started ${p2} 0`]);
    const ids = resumedJournal.filter((e) => e.name === "agent.initialization_context_set").map((e) => e.data.initialization_id);
    expect(ids).toHaveLength(2);
    expect(ids[0]).not.toBe(ids[1]);
    expect(resumedJournal[8]?.data).toEqual({ agent_id: agentId, initialization_id: ids[1], context: [] });
    // Each is closed exactly once.
    expect(agentJournal(home, agentId).filter((e) => e.data.outcome === "dispatch_uncertain")).toHaveLength(1);
    expect(agentJournal(home, agentId).filter((e) => e.data.outcome === "interrupted")).toHaveLength(1);
  });
});
