// A model that makes every agent start five more (a fork bomb), through a real daemon, its real
// provider and shell extensions and a loopback model: the team stops at the configured bounds, the
// refusals reach the model as tool errors naming the bound, the daemon holds a bounded number of
// descriptors, and a live "*" subscriber that reads promptly sees every event without being cut off.
import { describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import { TestClient, startDaemon, waitFor, type StartedDaemon } from "../../support/daemon.js";
import { processTree, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse, type ReceivedRequest } from "../../support/fake-openai.js";
import type { WireMessage } from "../../../generated/index.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(limits: Record<string, number>) {
  return workspaceIn(
    cleanups,
    JSON.stringify({
      model: "fake-model",
      agent_limits: limits,
      extensions: [
        { name: "provider", kind: "provider", command: ["tau", "ext", "provider"], config: { profile: "chat_completions", base_url: fake.baseUrl, models: [{ id: "fake-model" }] }, startup_timeout_seconds: 30 },
        { name: "shell", kind: "tool", require: true, command: ["tau", "ext", "shell"], startup_timeout_seconds: 30 },
      ],
    }),
  );
}

async function daemon(env: NodeJS.ProcessEnv, args: string[]): Promise<StartedDaemon> {
  const d = await startDaemon(env, args);
  cleanups.push(() => {
    for (const pid of processTree(d.pid)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
  });
  return d;
}

type Msg = { role: string; content?: unknown };
const messages = (r: ReceivedRequest): Msg[] => (r.body as { messages: Msg[] }).messages;
let starts = 0;
/** Every agent's first round starts five agents; its next round answers. */
function forkBomb(r: ReceivedRequest) {
  if (messages(r).some((m) => m.role === "assistant")) return textResponse("done");
  return toolCallResponse(Array.from({ length: 5 }, () => ({ id: `call_start_${++starts}`, name: "agent_start", arguments: JSON.stringify({ task: "start five more agents" }) })));
}

type RosterPage = Extract<WireMessage, { message: "ui_roster_result" }>["payload"];
async function roster(c: TestClient): Promise<RosterPage> {
  const request_id = `roster-${Math.random()}`;
  c.send({ message: "ui_roster_request", payload: { request_id, include_unloaded: false, limit: 256 } });
  return ((await c.next((x) => x.message === "ui_roster_result" && x.payload.request_id === request_id, 30_000, "the roster")) as Extract<WireMessage, { message: "ui_roster_result" }>).payload;
}

const descriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

describe("bounded agent teams", () => {
  it("[agent-team.e2e.fork-bomb-bounded] a model that makes every agent start five more stops at the session's bounds, each refusal naming its bound, the daemon's descriptors bounded", async () => {
    const { env, project } = workspace({ agents_per_session: 24, max_depth: 2, children_per_agent: 5, starts_per_minute: 1000 });
    fake.respondWith(forkBomb);
    const d = await daemon(env, ["--project-root", project]);
    const c = await TestClient.ui(d.socket, d.session_id);
    cleanups.push(() => c.close());
    c.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: ["*"] } });
    await c.next((m) => m.message === "deliver" && m.payload.event.name === "harness.models_available" && (m.payload.event.data.models as unknown[]).length > 0, 30_000);
    c.emit("ui.create_agent", { request_id: "r1", display_name: "lead" });
    const created = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === "r1");
    const lead = String((created as Extract<WireMessage, { message: "direct" }>).payload.event.data.agent_id);
    const before = descriptors(d.pid);
    c.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "go" });
    // Lead (depth 0) starts 5 (depth 1), each starts 5 (depth 2) until the session holds 24; depth 2 may start none.
    await c.next((m) => m.message === "deliver" && m.payload.event.name === "agent.outer_turn_finished" && m.payload.event.data.agent_id === lead, 120_000, "the lead's turn");
    await waitFor(async () => (await roster(c)).rows.every((r) => r.status === "idle"), "every agent settled", 120_000);
    const page = await roster(c);
    expect(page.total).toBe(24);
    const errors = fake.chatRequests.flatMap((r) => messages(r)).filter((m) => m.role === "tool" && String(m.content).startsWith("agent_start was refused"));
    const texts = errors.map((m) => String(m.content));
    expect(texts.some((t) => t.includes("agent_limits.agents_per_session is 24"))).toBe(true);
    expect(texts.some((t) => t.includes("agent_limits.max_depth is 2"))).toBe(true);
    // 23 started of the 5 + 25 + 5×(depth-2 agents) asked for: the rest were refused, nothing run for them.
    expect(fake.chatRequests.filter((r) => !messages(r).some((m) => m.role === "assistant"))).toHaveLength(24);
    expect(descriptors(d.pid) - before).toBeLessThan(70);
  }, 180_000);

  it("[agent-team.e2e.subscriber-keeps-up] while 600 agents start, a live subscriber of every event that reads promptly is never cut off, and the roster answers", async () => {
    const { env, project } = workspace({ agents_per_session: 601, max_depth: 4, children_per_agent: 5, starts_per_minute: 10_000 });
    fake.respondWith(forkBomb);
    const d = await daemon(env, ["--project-root", project]);
    const c = await TestClient.ui(d.socket, d.session_id);
    cleanups.push(() => c.close());
    c.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: ["*"] } });
    await c.next((m) => m.message === "deliver" && m.payload.event.name === "harness.models_available" && (m.payload.event.data.models as unknown[]).length > 0, 30_000);
    c.emit("ui.create_agent", { request_id: "r1", display_name: "lead" });
    const created = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === "r1");
    const lead = String((created as Extract<WireMessage, { message: "direct" }>).payload.event.data.agent_id);
    c.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "go" });
    await c.next((m) => m.message === "deliver" && m.payload.event.name === "agent.outer_turn_finished" && m.payload.event.data.agent_id === lead, 300_000, "the lead's turn");
    await waitFor(async () => (await roster(c)).total === 601 && (await roster(c)).rows.every((r) => r.status === "idle"), "every agent settled", 300_000);
    // Still connected and subscribed: a new event reaches it.
    c.emit("ui.create_agent", { request_id: "r2", display_name: "after" });
    await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === "r2", 30_000, "the subscriber still served");
  }, 600_000);
});
