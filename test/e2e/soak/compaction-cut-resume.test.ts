// Found by the SIGKILL soak (bench/soak, `npm run soak -- --seed 31 --round 41`): a compaction whose
// cut falls at the start of a prompt's turn (the prompt submitted before the cut, its turn started at
// it) keeps the prompt in the live transcript, but a resumed daemon loads the transcript from the
// cut (SPEC-compaction, "Resume reads from the cut") and drops the prompt's text: the model then
// sees the prompt's answer without the prompt. No crash is needed; an orderly restart lost it too.
// The agent's fold now lists the prompts taken in since the last cut (SPEC-compaction).
import { describe, expect, it } from "vitest";
import { agentHarnessYaml, agentSession, attachUi, daemonIn, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(): { env: NodeJS.ProcessEnv; project: string } {
  return workspaceIn(cleanups, agentHarnessYaml(fake, { models: [{ id: "fake-model", context_window: 10_000 }], settings: { compaction: { auto_threshold: 0, keep_recent_tokens: 300 } } }));
}

type Msg = { role: string; content?: unknown };
const messages = (i: number): Msg[] => (fake.chatRequests[i]?.body as { messages: Msg[] }).messages;

describe("a prompt across a compaction's cut and a restart (found by the soak)", () => {
  it("[soak.repro.cut-at-turn-start] a prompt whose turn starts at a compaction's cut is still in the transcript after a restart", async () => {
    const { env, project } = workspace();
    const { d, c, agentId } = await agentSession(cleanups, env, ["--project-root", project]);
    // A long first answer (about 600 tokens, past keep_recent_tokens) and a short second turn: the
    // earliest cut whose suffix fits is the second prompt's turn start.
    fake.enqueue(textResponse(`long answer ${"words ".repeat(400)}`), textResponse("short answer"), textResponse("SUMMARY-OF-FIRST"));
    for (const text of ["first prompt", "second prompt"]) {
      c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text });
      await c.delivered("agent.outer_turn_finished", (x) => x.agent_id === agentId && x.outcome === "completed");
    }
    c.emit("ui.compact_request", { agent_id: agentId });
    await c.delivered("agent.compaction_committed");
    // Live, the transcript after the summary starts with the second prompt.
    fake.enqueue(textResponse("live answer"));
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "third prompt" });
    await c.delivered("agent.outer_turn_finished", (x) => x.outcome === "completed");
    const live = messages(3);
    expect(live.map((m) => m.role)).toEqual(["system", "user", "user", "assistant", "user"]);
    expect(live[2]?.content).toBe("<user>\nsecond prompt\n</user>");
    c.close();
    process.kill(d.pid, "SIGTERM");
    await c.conn.closed;

    const d2 = await daemonIn(cleanups, env, ["--resume", d.session_id, "--project-root", project]);
    const c2 = await attachUi(cleanups, d2);
    fake.enqueue(textResponse("resumed answer"));
    c2.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "fourth prompt" });
    await c2.delivered("agent.outer_turn_finished", (x) => x.outcome === "completed");
    const resumed = messages(4);
    // The resumed transcript extends the live one: the second prompt is still there, once.
    expect(resumed.slice(0, live.length + 1)).toEqual([...live, { role: "assistant", content: "live answer" }]);
  }, 120_000);
});
