// An agent prompted after a resume finishes, and the roster and a parent's agent_wait see it finished
// (issue: every agent that ran a prompt after a resume stayed "running" forever).
import { describe, expect, it } from "vitest";
import { isAlive, waitFor } from "../../support/daemon.js";
import { agentHarnessYaml, attachUi, daemonIn, killTree, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace() {
  return workspaceIn(cleanups, agentHarnessYaml(fake));
}

describe("resume then prompt", () => {
  it("[agent-team.e2e.resume-prompt-finishes] an agent prompted after a resume ends idle in the roster", async () => {
    const { env, project } = workspace();
    fake.respondWith(() => textResponse("hello"));
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d);
    const lead = await c.createAgent("r1", { display_name: "lead" });
    c.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "one" });
    await c.next((x) => x.message === "deliver" && x.payload.event.name === "agent.outer_turn_finished", 60_000);
    c.close();
    killTree(d.pid);
    await waitFor(() => !isAlive(d.pid), "gone", 10_000);
    const d2 = await daemonIn(cleanups, env, ["--resume", d.session_id, "--project-root", project]);
    const c2 = await attachUi(cleanups, d2);
    expect((await c2.roster()).rows.find((r) => r.agent_id === lead)?.status).toBe("idle");
    c2.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "two" });
    await c2.next((x) => x.message === "deliver" && x.payload.event.name === "agent.outer_turn_finished" && x.payload.replay !== true, 60_000);
    await waitFor(async () => (await c2.roster()).rows.find((r) => r.agent_id === lead)?.status === "idle", "idle after the second prompt", 10_000);
  }, 120_000);
});
