// Found by the SIGKILL soak (bench/soak, `npm run soak -- --seed 31 --round 41`): a compaction whose
// cut falls at the start of a prompt's turn (the prompt submitted before the cut, its turn started at
// it) keeps the prompt in the live transcript, but a resumed daemon loads the transcript from the
// cut (SPEC-compaction, "Resume reads from the cut") and drops the prompt's text: the model then
// sees the prompt's answer without the prompt. No crash is needed; an orderly restart lost it too.
// The agent's fold now lists the prompts taken in since the last cut (SPEC-compaction).
import { describe, expect, it } from "vitest";
import { TestClient, startDaemon, type StartedDaemon } from "../../support/daemon.js";
import { processTree, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(): { env: NodeJS.ProcessEnv; project: string } {
  const yaml = JSON.stringify({
    model: "fake-model",
    extensions: [
      { name: "provider", kind: "provider", command: ["tau", "ext", "provider"], config: { profile: "chat_completions", base_url: fake.baseUrl, models: [{ id: "fake-model", context_window: 10_000 }] }, startup_timeout_seconds: 30 },
      { name: "shell", kind: "tool", require: true, command: ["tau", "ext", "shell"], startup_timeout_seconds: 30 },
    ],
    compaction: { auto_threshold: 0, keep_recent_tokens: 300 },
  });
  return workspaceIn(cleanups, yaml);
}

async function daemon(env: NodeJS.ProcessEnv, args: string[]): Promise<StartedDaemon> {
  const d = await startDaemon(env, args);
  cleanups.push(() => {
    for (const pid of processTree(d.pid)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  });
  return d;
}

async function attach(d: StartedDaemon): Promise<TestClient> {
  const c = await TestClient.ui(d.socket, d.session_id);
  cleanups.push(() => c.close());
  c.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: ["*"] } });
  await c.next((m) => m.message === "deliver" && m.payload.event.name === "harness.models_available" && (m.payload.event.data.models as unknown[]).length > 0, 30_000);
  return c;
}

function delivered(c: TestClient, name: string, pred: (d: Record<string, unknown>) => boolean = () => true): Promise<Record<string, unknown>> {
  return c.next((m) => m.message === "deliver" && m.payload.event.name === name && pred(m.payload.event.data), 60_000, name).then((m) => (m.message === "deliver" ? m.payload.event.data : {}));
}

type Msg = { role: string; content?: unknown };
const messages = (i: number): Msg[] => (fake.chatRequests[i]?.body as { messages: Msg[] }).messages;

describe("a prompt across a compaction's cut and a restart (found by the soak)", () => {
  it("[soak.repro.cut-at-turn-start] a prompt whose turn starts at a compaction's cut is still in the transcript after a restart", async () => {
    const { env, project } = workspace();
    const d = await daemon(env, ["--project-root", project]);
    const c = await attach(d);
    c.emit("ui.create_agent", { request_id: "r-agent" });
    const created = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === "r-agent");
    if (created.message !== "direct") throw new Error("no agent");
    const agentId = String(created.payload.event.data.agent_id);
    // A long first answer (about 600 tokens, past keep_recent_tokens) and a short second turn: the
    // earliest cut whose suffix fits is the second prompt's turn start.
    fake.enqueue(textResponse(`long answer ${"words ".repeat(400)}`), textResponse("short answer"), textResponse("SUMMARY-OF-FIRST"));
    for (const text of ["first prompt", "second prompt"]) {
      c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text });
      await delivered(c, "agent.outer_turn_finished", (x) => x.agent_id === agentId && x.outcome === "completed");
    }
    c.emit("ui.compact_request", { agent_id: agentId });
    await delivered(c, "agent.compaction_committed");
    // Live, the transcript after the summary starts with the second prompt.
    fake.enqueue(textResponse("live answer"));
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "third prompt" });
    await delivered(c, "agent.outer_turn_finished", (x) => x.outcome === "completed");
    const live = messages(3);
    expect(live.map((m) => m.role)).toEqual(["system", "user", "user", "assistant", "user"]);
    expect(live[2]?.content).toBe("<user>\nsecond prompt\n</user>");
    c.close();
    process.kill(d.pid, "SIGTERM");
    await c.conn.closed;

    const d2 = await daemon(env, ["--resume", d.session_id, "--project-root", project]);
    const c2 = await attach(d2);
    fake.enqueue(textResponse("resumed answer"));
    c2.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "fourth prompt" });
    await delivered(c2, "agent.outer_turn_finished", (x) => x.outcome === "completed");
    const resumed = messages(4);
    // The resumed transcript extends the live one: the second prompt is still there, once.
    expect(resumed.slice(0, live.length + 1)).toEqual([...live, { role: "assistant", content: "live answer" }]);
  }, 120_000);
});
