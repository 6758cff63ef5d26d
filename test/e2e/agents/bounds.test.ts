// A model that makes every agent start five more (a fork bomb), through a real daemon, its real
// provider and shell extensions and a loopback model: the team stops at the configured bounds, the
// refusals reach the model as tool errors naming the bound, the daemon holds a bounded number of
// descriptors, and a live "*" subscriber that reads promptly sees every event without being cut off.
import { describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import { waitFor } from "../../support/daemon.js";
import { agentHarnessYaml, attachUi, daemonIn, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse, type ReceivedRequest } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(limits: Record<string, number>) {
  return workspaceIn(cleanups, agentHarnessYaml(fake, { settings: { agent_limits: limits } }));
}

type Msg = { role: string; content?: unknown };
const messages = (r: ReceivedRequest): Msg[] => (r.body as { messages: Msg[] }).messages;
let starts = 0;
/** Every agent's first round starts five agents; its next round answers. */
function forkBomb(r: ReceivedRequest) {
  if (messages(r).some((m) => m.role === "assistant")) return textResponse("done");
  return toolCallResponse(Array.from({ length: 5 }, () => ({ id: `call_start_${++starts}`, name: "agent_start", arguments: JSON.stringify({ task: "start five more agents" }) })));
}

const descriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

describe("bounded agent teams", () => {
  it("[agent-team.e2e.fork-bomb-bounded] a model that makes every agent start five more stops at the session's bounds, each refusal naming its bound, the daemon's descriptors bounded", async () => {
    const { env, project } = workspace({ agents_per_session: 24, max_depth: 2, children_per_agent: 5, starts_per_minute: 1000 });
    fake.respondWith(forkBomb);
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d);
    const lead = await c.createAgent("r1", { display_name: "lead" });
    const before = descriptors(d.pid);
    c.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "go" });
    // Lead (depth 0) starts 5 (depth 1), each starts 5 (depth 2) until the session holds 24; depth 2 may start none.
    await c.next((m) => m.message === "deliver" && m.payload.event.name === "agent.outer_turn_finished" && m.payload.event.data.agent_id === lead, 120_000, "the lead's turn");
    await waitFor(async () => (await c.roster({ limit: 256 }, 30_000)).rows.every((r) => r.status === "idle"), "every agent settled", 120_000);
    const page = await c.roster({ limit: 256 }, 30_000);
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
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d);
    const lead = await c.createAgent("r1", { display_name: "lead" });
    c.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "go" });
    await c.next((m) => m.message === "deliver" && m.payload.event.name === "agent.outer_turn_finished" && m.payload.event.data.agent_id === lead, 300_000, "the lead's turn");
    await waitFor(async () => (await c.roster({ limit: 256 }, 30_000)).total === 601 && (await c.roster({ limit: 256 }, 30_000)).rows.every((r) => r.status === "idle"), "every agent settled", 300_000);
    // Still connected and subscribed: a new event reaches it.
    c.emit("ui.create_agent", { request_id: "r2", display_name: "after" });
    await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === "r2", 30_000, "the subscriber still served");
  }, 600_000);
});
