// The model starts a handoff itself (SPEC-handoff, "Flow" 1): the `handoff_start` tool, offered to
// the model with a description that allows it only on the user's explicit request, through a real
// daemon, the real handoff extension and the loopback model.
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { waitFor } from "../../support/daemon.js";
import { attach, command, createAgent, daemon, delivered, handoffWorkspace, kill, messages, runningSession, scriptHandoff } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const lastText = (r: { body: unknown }) => JSON.stringify(messages(r as never).at(-1));
const toolOf = (r: { body: unknown }, name: string) => ((r.body as { tools?: Array<{ function: { name: string; description: string } }> }).tools ?? []).find((t) => t.function.name === name)?.function;

describe("the model's handoff_start tool", () => {
  it("[handoff.tool.model-start] handoff_start is offered only for an explicit user request, refuses a call without the user's words, starts one handoff (a second call is refused) whose request follows once the agent is idle, and the handoff completes", async () => {
    const w = handoffWorkspace(fake, cleanups);
    scriptHandoff(fake, {
      other: (_r, text) => {
        if (text.includes("NO-WORDS")) return toolCallResponse([{ id: "call_start_empty", name: "handoff_start", arguments: JSON.stringify({ user_request: "   " }) }]);
        if (text.includes("hand this off"))
          return toolCallResponse([
            { id: "call_start_1", name: "handoff_start", arguments: JSON.stringify({ user_request: "please hand this off to a fresh session" }) },
            { id: "call_start_2", name: "handoff_start", arguments: JSON.stringify({ user_request: "please hand this off to a fresh session" }) },
          ]);
        return undefined;
      },
    });
    const d = await daemon(w.env, ["--project-root", w.project], cleanups);
    const c = await attach(d, cleanups, "handoff_start");
    const agentId = await createAgent(c);

    // Without the user's words the call is refused and nothing starts.
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "NO-WORDS: do what you like" });
    const empty = await delivered(c, "tool.result", (x) => x.call_id === "call_start_empty");
    expect(empty.outcome).toBe("error");
    expect(String(empty.output)).toContain("user_request must quote the user's request");
    await delivered(c, "agent.outer_turn_finished");
    expect((await command(c, agentId, "st0", "status")).text).toMatch(/^no handoff;/);
    // The tool the model was offered says when it may be called.
    const offered = toolOf(fake.chatRequests.find((r) => lastText(r).includes("NO-WORDS"))!, "handoff_start");
    expect(offered?.description).toContain("ONLY when the user has explicitly asked for a handoff");

    // The user asks; the model starts the handoff, and a second start in the same answer is refused.
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "please hand this off to a fresh session" });
    const first = await delivered(c, "tool.result", (x) => x.call_id === "call_start_1");
    expect(first.outcome).toBe("ok");
    expect(String(first.output)).toMatch(/^handoff requested for agent .*\. Finish your turn now; the handoff's request follows\.$/);
    const second = await delivered(c, "tool.result", (x) => x.call_id === "call_start_2");
    expect(second.outcome).toBe("error");
    expect(String(second.output)).toContain("a handoff is already under way");
    // Once the agent is idle, the handoff's request: retrieve the template, write, Finish.
    const turnOver = await delivered(c, "agent.outer_turn_finished");
    const isCall = (r: Parameters<typeof lastText>[0]) => lastText(r).includes("The user asked to hand this session off");
    await waitFor(() => fake.chatRequests.some(isCall), "the request", 30_000);
    const callRequest = fake.chatRequests.find(isCall);
    expect(lastText(callRequest!)).toContain("session_handoff_finish");
    expect(fake.chatRequests.indexOf(callRequest!)).toBeGreaterThan(fake.chatRequests.findIndex((r) => lastText(r).includes("hand this off")));
    expect(turnOver.outcome).toBe("completed");
    // The model follows it; the handoff runs to its replacement session.
    const successor = String((await delivered(c, "session.handed_off")).successor_session_id);
    let row: Awaited<ReturnType<typeof runningSession>>;
    await waitFor(async () => (row = await runningSession(w.home, successor)) !== undefined, "the replacement daemon", 30_000);
    cleanups.push(() => kill(row!.pid));
    expect(fake.chatRequests.filter(isCall)).toHaveLength(1);
  }, 120_000);
});
