// Compaction waits for a handoff's deferral window (SPEC-handoff, "Deferral window"; SPEC-compaction,
// "Triggers"): the dossier is written from the agent's conversation, so from GO until the window
// closes the harness compacts the agent neither automatically nor by the model's `compact` nor by
// another agent's `agent_compact`; the automatic compaction owed runs at the first round after it.
// Through a real daemon, the real handoff extension and the loopback model.
import { describe, expect, it } from "vitest";
import { waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { textResponse, toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { attach, command, daemon, delivered, handoffWorkspace, messages, scriptHandoff } from "./support.js";
import type { TestClient } from "../../support/daemon.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const lastText = (r: { body: unknown }) => JSON.stringify(messages(r as never).at(-1));
/** 85% of the 100,000-token window: past the automatic threshold (0.8). */
const FULL = { usage: { prompt_tokens: 85_000, completion_tokens: 0 } };

/** The outcome of a harness tool call: its name (`provider.tool_result` or `provider.tool_error`) and data. */
async function outcome(c: TestClient, callId: string): Promise<{ name: string; text: string }> {
  const m = await c.next((x) => x.message === "deliver" && (x.payload.event.name === "provider.tool_error" || x.payload.event.name === "provider.tool_result") && x.payload.event.data.call_id === callId, 60_000, callId);
  if (m.message !== "deliver") throw new Error("not a delivery");
  const data = m.payload.event.data as { error?: unknown; output?: unknown };
  return { name: m.payload.event.name, text: String(data.error ?? data.output) };
}

async function newAgent(c: TestClient, id: string): Promise<string> {
  c.emit("ui.create_agent", { request_id: id });
  const m = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === id);
  if (m.message !== "direct" || m.payload.event.data.ok !== true) throw new Error("agent not created");
  return String(m.payload.event.data.agent_id);
}

describe("compaction during a handoff window", () => {
  it("[handoff.window.compaction-held] from the template's retrieval until the window closes the agent is not compacted: not automatically past the threshold, not by its compact call, not by another agent's agent_compact; the automatic compaction runs at the first round after the window", async () => {
    const w = handoffWorkspace(
      fake,
      cleanups,
      {},
      { roles: { default: { allow_tools: ["agent_compact"] } }, compaction: { keep_recent_tokens: 0 } },
    );
    let a = "";
    scriptHandoff(fake, {
      callAnswer: () => toolCallResponse([{ id: "call_get", name: "session_handoff_get_template", arguments: "{}" }], FULL),
      // With the template retrieved the model asks to compact itself, then ends its turn without a dossier.
      templateResult: () => toolCallResponse([{ id: "call_compact", name: "compact", arguments: "{}" }], FULL),
      other: (_r, text) => {
        if (text.includes("COMPACT-THE-OTHER")) return toolCallResponse([{ id: "call_agent_compact", name: "agent_compact", arguments: JSON.stringify({ agent_id: a }) }]);
        if (text.includes("Summarize the conversation above")) return textResponse("SUMMARY of the work");
        return textResponse("some work done", { usage: { prompt_tokens: 1_000, completion_tokens: 10 } });
      },
    });
    const d = await daemon(w.env, ["--project-root", w.project], cleanups);
    const c = await attach(d, cleanups);
    a = await newAgent(c, "r-a");
    const b = await newAgent(c, "r-b");
    c.emit("ui.prompt_submit", { agent_id: a, mode: "queue", text: "some work first" });
    await delivered(c, "agent.outer_turn_finished", (x) => x.agent_id === a);
    const compactions = () => c.inbox.filter((m) => m.message === "deliver" && m.payload.event.name === "agent.compaction_started").length;

    expect((await command(c, a, "h1", "start")).ok).toBe(true);
    await delivered(c, "handoff.state_reported", (x) => x.phase === "writing");
    // The retrieval's response was past the threshold, and the model then called compact: the
    // turn ends with nothing compacted, the call refused, and the window stays open with the agent idle.
    await delivered(c, "agent.outer_turn_finished", (x) => x.agent_id === a);
    expect(compactions()).toBe(0);
    const refused = await outcome(c, "call_compact");
    expect(refused).toEqual({ name: "provider.tool_error", text: expect.stringContaining("a handoff of this agent is under way") });
    expect((await command(c, a, "st1", "status")).text).toMatch(/^handoff writing/);
    // Another agent's agent_compact of it is refused too.
    c.emit("ui.prompt_submit", { agent_id: b, mode: "queue", text: "COMPACT-THE-OTHER" });
    const other = await outcome(c, "call_agent_compact");
    expect(other).toEqual({ name: "provider.tool_error", text: expect.stringContaining(`agent ${a}: a handoff of this agent is under way`) });
    await delivered(c, "agent.outer_turn_finished", (x) => x.agent_id === b);
    expect(compactions()).toBe(0);

    // The window closes; the automatic compaction the agent owes runs before its next round.
    expect((await command(c, a, "c1", "cancel")).ok).toBe(true);
    await delivered(c, "handoff.state_reported", (x) => x.phase === "idle");
    c.emit("ui.prompt_submit", { agent_id: a, mode: "queue", text: "back to work" });
    const started = await delivered(c, "agent.compaction_started", (x) => x.agent_id === a);
    expect(started.trigger).toBe("auto");
    await delivered(c, "agent.compaction_committed", (x) => x.agent_id === a);
    await waitFor(() => fake.chatRequests.some((r) => lastText(r).includes("back to work")), "the round after the compaction", 30_000);
  }, 180_000);
});
