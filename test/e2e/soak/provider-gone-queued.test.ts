// Found by the SIGKILL soak (bench/soak, `npm run soak -- --seed 31 --round 92`): when the provider
// extension dies, a prompt queued behind the turn it cut is refused (`agent.prompt_failed`,
// no_provider) while the provider respawns, but no `agent.outer_turn_finished` records that: the
// agent's journal keeps the prompt waiting with no outcome for as long as the daemon runs, and the
// next resume closes it `interrupted` — not what the live UI was told. A prompt that fails before it
// started is closed `failed` with 0 rounds elsewhere (SPEC-compaction's failed successor,
// SPEC-agent-lifecycle's journal failure). Now closed so (SPEC-agent-lifecycle).
import { describe, expect, it } from "vitest";
import { waitFor } from "../../support/daemon.js";
import { agentHarnessYaml, agentJournal, agentSession, processTree, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse } from "../../support/fake-openai.js";
import { readFileSync } from "node:fs";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(): { env: NodeJS.ProcessEnv; home: string; project: string } {
  return workspaceIn(cleanups, agentHarnessYaml(fake));
}

describe("a prompt queued when the provider dies (found by the soak)", () => {
  it("[soak.repro.provider-gone-queued] a queued prompt refused while the provider respawns is closed with an outcome in the journal", async () => {
    const { env, home, project } = workspace();
    const { d, c, agentId } = await agentSession(cleanups, env, ["--project-root", project, "--harness-config", "sandbox.enabled=false"]);

    // A turn whose tool runs while the provider has nothing in flight, and a prompt queued behind it.
    fake.enqueue(toolCallResponse([{ id: "call_sleep", name: "shell", arguments: JSON.stringify({ command: "sleep 5" }) }]));
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "first" });
    await c.delivered("tool.started", (x) => x.call_id === "call_sleep");
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "queued behind" });
    const queued = String((await c.delivered("agent.prompt_submitted", (x) => x.text === "queued behind")).prompt_id);
    const provider = processTree(d.pid).find((pid) => /\bext provider\b/.test(readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")));
    process.kill(provider as number, "SIGKILL");
    await c.delivered("agent.prompt_failed", (x) => x.prompt_id === queued);

    // Once the provider is back (its models declared after its restart), a later prompt runs to its
    // end: the refusal is long done by then.
    const event = (m: (typeof c.inbox)[number], name: string) => m.message === "deliver" && m.payload.event.name === name;
    await waitFor(() => {
      const restart = c.inbox.findIndex((m) => event(m, "extension.starting"));
      return restart >= 0 && c.inbox.slice(restart).some((m) => event(m, "harness.models_available") && m.message === "deliver" && (m.payload.event.data.models as unknown[]).length > 0);
    }, "the provider's models after its restart", 30_000);
    fake.enqueue(textResponse("later answer"));
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "later" });
    const later = String((await c.delivered("agent.prompt_submitted", (x) => x.text === "later")).prompt_id);
    await c.delivered("agent.outer_turn_finished", (x) => x.prompt_id === later);
    const closed = agentJournal(home, agentId).filter((r) => r.event.name === "agent.outer_turn_finished" && r.event.data.prompt_id === queued);
    expect(closed.map((r) => r.event.data)).toEqual([{ agent_id: agentId, prompt_id: queued, outcome: "failed", rounds: 0 }]);
  }, 120_000);
});
