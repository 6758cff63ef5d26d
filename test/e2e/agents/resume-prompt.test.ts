// An agent prompted after a resume finishes, and the roster and a parent's agent_wait see it finished
// (issue: every agent that ran a prompt after a resume stayed "running" forever).
import { describe, expect, it } from "vitest";
import { TestClient, isAlive, startDaemon, waitFor, type StartedDaemon } from "../../support/daemon.js";
import { processTree, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";
import type { WireMessage } from "../../../generated/index.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace() {
  const yaml = JSON.stringify({
    model: "fake-model",
    extensions: [
      { name: "provider", kind: "provider", command: ["tau", "ext", "provider"], config: { profile: "chat_completions", base_url: fake.baseUrl, models: [{ id: "fake-model" }] }, startup_timeout_seconds: 30 },
      { name: "shell", kind: "tool", require: true, command: ["tau", "ext", "shell"], startup_timeout_seconds: 30 },
    ],
  });
  return workspaceIn(cleanups, yaml);
}

function kill(d: StartedDaemon): void {
  for (const pid of processTree(d.pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}

async function daemon(env: NodeJS.ProcessEnv, args: string[]): Promise<StartedDaemon> {
  const d = await startDaemon(env, args);
  cleanups.push(() => kill(d));
  return d;
}

async function attach(d: StartedDaemon): Promise<TestClient> {
  const c = await TestClient.ui(d.socket, d.session_id);
  cleanups.push(() => c.close());
  c.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: ["*"] } });
  await c.next((m) => m.message === "deliver" && m.payload.event.name === "harness.models_available" && (m.payload.event.data.models as unknown[]).length > 0, 30_000);
  return c;
}

type RosterPage = Extract<WireMessage, { message: "ui_roster_result" }>["payload"];
let n = 0;
async function roster(c: TestClient): Promise<RosterPage> {
  const request_id = `roster-${++n}`;
  c.send({ message: "ui_roster_request", payload: { request_id, include_unloaded: false } });
  const m = await c.next((x) => x.message === "ui_roster_result" && x.payload.request_id === request_id, 10_000, "the roster");
  return (m as Extract<WireMessage, { message: "ui_roster_result" }>).payload;
}

describe("resume then prompt", () => {
  it("[agent-team.e2e.resume-prompt-finishes] an agent prompted after a resume ends idle in the roster", async () => {
    const { env, project } = workspace();
    fake.respondWith(() => textResponse("hello"));
    const d = await daemon(env, ["--project-root", project]);
    const c = await attach(d);
    c.emit("ui.create_agent", { request_id: "r1", display_name: "lead" });
    const m = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === "r1");
    const lead = String((m as Extract<WireMessage, { message: "direct" }>).payload.event.data.agent_id);
    c.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "one" });
    await c.next((x) => x.message === "deliver" && x.payload.event.name === "agent.outer_turn_finished", 60_000);
    c.close();
    kill(d);
    await waitFor(() => !isAlive(d.pid), "gone", 10_000);
    const d2 = await daemon(env, ["--resume", d.session_id, "--project-root", project]);
    const c2 = await attach(d2);
    expect((await roster(c2)).rows.find((r) => r.agent_id === lead)?.status).toBe("idle");
    c2.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "two" });
    await c2.next((x) => x.message === "deliver" && x.payload.event.name === "agent.outer_turn_finished" && x.payload.replay !== true, 60_000);
    await waitFor(async () => (await roster(c2)).rows.find((r) => r.agent_id === lead)?.status === "idle", "idle after the second prompt", 10_000);
  }, 120_000);
});
