// Found by the SIGKILL soak (bench/soak, `npm run soak -- --seed 31 --round 73`): when the provider
// extension dies, every turn it served is failed at once, even one waiting for its tool calls with
// nothing in flight at the provider, and the turn closes without answering its open calls. An
// extension's call still reports after the turn closed; a harness tool's (`agent_wait` here) never
// gets an outcome: the journal keeps its `tool.request` unanswered, against "each call ... answered
// with exactly one provider.tool_result or provider.tool_error" (SPEC-agent-team). Now answered so.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { waitFor } from "../../support/daemon.js";
import { agentHarnessYaml, agentJournal, agentSession, processTree, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse, type ReceivedRequest } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(): { env: NodeJS.ProcessEnv; home: string; project: string } {
  return workspaceIn(cleanups, agentHarnessYaml(fake));
}

type Msg = { role: string; content?: unknown };
/** A child's request: its first user message is its task, framed as the parent's message. */
const isChild = (r: ReceivedRequest) => String((r.body as { messages: Msg[] }).messages.find((m) => m.role === "user")?.content ?? "").startsWith("<agent_message");

describe("a turn waiting for its calls when the provider dies (found by the soak)", () => {
  it("[soak.repro.provider-gone-open-call] every call of a turn the provider's exit failed gets an outcome", async () => {
    const { env, home, project } = workspace();
    const { d, c, agentId: lead } = await agentSession(cleanups, env, ["--project-root", project, "--harness-config", "sandbox.enabled=false"]);

    // The lead starts a child and waits for it; the child's request hangs at the model.
    let leadRounds = 0;
    fake.respondWith((r) => {
      if (isChild(r)) return { chunks: [], end: "hang" };
      leadRounds++;
      return leadRounds === 1
        ? toolCallResponse([
            { id: "call_start", name: "agent_start", arguments: JSON.stringify({ task: "a long task" }) },
            { id: "call_wait", name: "agent_wait", arguments: JSON.stringify({ timeout_seconds: 120 }) },
          ])
        : textResponse("lead answers");
    });
    c.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "delegate" });
    await c.delivered("tool.request", (x) => x.call_id === "call_wait");
    await waitFor(() => fake.chatRequests.some(isChild), "the child's request at the model", 30_000);
    const provider = processTree(d.pid).find((pid) => /\bext provider\b/.test(readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")));
    process.kill(provider as number, "SIGKILL");
    await c.delivered("agent.outer_turn_finished", (x) => x.agent_id === lead);

    // Once the provider is back, the lead's next prompt runs to its end: anything owed for the cut
    // turn was answered by then.
    await waitFor(() => {
      const restart = c.inbox.findIndex((m) => m.message === "deliver" && m.payload.event.name === "extension.starting");
      return restart >= 0 && c.inbox.slice(restart).some((m) => m.message === "deliver" && m.payload.event.name === "harness.models_available" && (m.payload.event.data.models as unknown[]).length > 0);
    }, "the provider's models after its restart", 30_000);
    c.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "and now?" });
    await c.delivered("agent.outer_turn_finished", (x) => x.agent_id === lead && x.outcome === "completed");
    const outcomes = agentJournal(home, lead).filter((r) => (r.event.name === "provider.tool_result" || r.event.name === "provider.tool_error") && r.event.data.call_id === "call_wait");
    expect(outcomes).toHaveLength(1);
  }, 120_000);
});
