// Emergency steering (SPEC-handoff "Emergency steering"): while a handoff is requested and not
// finished, a turn that completes with the context at critical_percent (90 by default) or more gets
// one steering prompt — stop, fetch the template if missing, finalize the dossier, Finish — never a
// second, and a turn below it none; a model that follows it completes the handoff.
// Real daemon, the real handoff extension, the loopback model reporting its token usage.
import { describe, expect, it } from "vitest";
import { waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { textResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { attach, command, createAgent, daemon, delivered, handoffWorkspace, kill, messages, runningSession, scriptHandoff } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const lastText = (r: { body: unknown }) => JSON.stringify(messages(r as never).at(-1));

describe("emergency steering of a waiting handoff", () => {
  it("[handoff.emergency.at-90] a completed turn at 90 % or more while the handoff waits: one steering prompt, none below, never a second", async () => {
    // No reminder in the test's time, and no automatic compaction below 99 %.
    const w = handoffWorkspace(fake, cleanups, { reminder_ms: 86_400_000 }, { compaction: { auto_threshold: 0.99 } });
    scriptHandoff(fake, {
      // The readiness request (and the emergency's) is answered with work, not GO, at 50 %.
      callAnswer: (r) => (textResponse("still working on it", { usage: { prompt_tokens: 50_000, completion_tokens: 0 } })),
      other: (_r, text) => (text.includes("fill 92") ? textResponse("filled", { usage: { prompt_tokens: 92_000, completion_tokens: 0 } }) : text.includes("fill 95") ? textResponse("filled", { usage: { prompt_tokens: 95_000, completion_tokens: 0 } }) : undefined),
    });
    const d = await daemon(w.env, ["--project-root", w.project], cleanups);
    const c = await attach(d, cleanups);
    const agentId = await createAgent(c);
    const emergencies = () => fake.chatRequests.filter((r) => lastText(r).includes("EMERGENCY")).length;
    expect((await command(c, agentId, "h1", "start")).ok).toBe(true);
    // The readiness turn completes unanswered at 50 %: no emergency.
    await delivered(c, "agent.stats_updated", (x) => x.context_tokens === 50_000);
    await delivered(c, "agent.outer_turn_finished", (x) => x.outcome === "completed");
    // A user's turn completes at 92 % while the handoff waits: one emergency steering prompt.
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "fill 92" });
    await waitFor(() => emergencies() === 1, "the emergency steering", 30_000);
    expect(lastText(fake.chatRequests.find((r) => lastText(r).includes("EMERGENCY"))!)).toMatch(/context window is 92% full/);
    // Its turn completes unanswered at 50 %; another turn at 95 %: still only the one.
    const steer = await delivered(c, "agent.prompt_submitted", (x) => x.mode === "steer" && x.source === "extension");
    await delivered(c, "agent.outer_turn_finished", (x) => x.prompt_id === steer.prompt_id);
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "fill 95" });
    await delivered(c, "agent.stats_updated", (x) => x.context_tokens === 95_000);
    const fill95 = await delivered(c, "agent.prompt_submitted", (x) => x.text === "fill 95");
    await delivered(c, "agent.outer_turn_finished", (x) => x.prompt_id === fill95.prompt_id);
    expect(emergencies()).toBe(1);
    expect((await command(c, agentId, "s", "status")).text).toMatch(/^handoff requested/);
    expect((await command(c, agentId, "x", "cancel")).ok).toBe(true);
  }, 120_000);

  it("[handoff.emergency.writing] with the template already retrieved, the steering says to finalize the dossier and Finish (no second retrieval asked for); the model that follows it hands off", async () => {
    const w = handoffWorkspace(fake, cleanups, { reminder_ms: 86_400_000 }, { compaction: { auto_threshold: 0.99 } });
    let retrievals = 0;
    scriptHandoff(fake, {
      // The first retrieval's answer ends the turn at 92 % without writing; after the steering the model writes and finishes.
      templateResult: () => (retrievals++ === 0 ? textResponse("I will write it later", { usage: { prompt_tokens: 92_000, completion_tokens: 0 } }) : undefined),
    });
    const d = await daemon(w.env, ["--project-root", w.project], cleanups);
    const c = await attach(d, cleanups);
    const agentId = await createAgent(c);
    expect((await command(c, agentId, "h1", "start")).ok).toBe(true);
    const handedOff = await delivered(c, "session.handed_off", undefined, 60_000);
    const emergencies = fake.chatRequests.filter((r) => lastText(r).includes("EMERGENCY"));
    expect(emergencies).toHaveLength(1);
    const text = lastText(emergencies[0]!);
    expect(text).toMatch(/context window is 92% full/);
    expect(text).toContain("Finish writing the dossier into its reserved file and call `session_handoff_finish`");
    expect(text).not.toContain("at once, then write");
    const row = await runningSession(w.home, String(handedOff.successor_session_id));
    cleanups.push(() => row && kill(row.pid));
  }, 120_000);
});
