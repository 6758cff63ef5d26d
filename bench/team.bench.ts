// A large agent team (SPEC-agent-team, "Bounds"), through a real daemon with its real provider
// extension and a loopback model: a model that makes every agent start five more grows the team to
// 1,000 agents (limits raised for the run). Measured: the roster's answer (a page of 256 rows) at
// 1,000 agents, p50 and p99 over 200 requests, beside the same request at one agent (the baseline);
// the daemon's descriptors per agent once the team is idle; and how long cancelling the whole tree
// takes to be recorded while every agent waits on its model. Prints figures; asserts nothing.
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient, startDaemon, tauHome, type StartedDaemon } from "../test/support/daemon.js";
import { FakeOpenAI, textResponse, toolCallResponse, type ReceivedRequest } from "../test/support/fake-openai.js";
import { processTree } from "../test/support/e2e.js";
import { fmt, percentile } from "./support.js";

const AGENTS = Number(process.env.TAU_TEAM_BENCH_AGENTS ?? 1000);
const ROSTER_REQUESTS = 200;

type Msg = { role: string; content?: unknown };
const messagesOf = (r: ReceivedRequest): Msg[] => (r.body as { messages: Msg[] }).messages;
const descriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

async function rosterTimes(c: TestClient, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const request_id = `roster-${i}-${Math.random()}`;
    const t0 = performance.now();
    c.send({ message: "ui_roster_request", payload: { request_id, include_unloaded: false, limit: 256 } });
    await c.next((m) => m.message === "ui_roster_result" && m.payload.request_id === request_id, 30_000, "the roster");
    times.push(performance.now() - t0);
  }
  return times;
}

export async function run(): Promise<void> {
  const fake = await FakeOpenAI.start();
  let hang = false;
  let starts = 0;
  fake.respondWith((r: ReceivedRequest) => {
    if (hang) return { chunks: [], end: "hang" };
    if (messagesOf(r).some((m) => m.role === "assistant")) return textResponse("done");
    return toolCallResponse(Array.from({ length: 5 }, () => ({ id: `call_${++starts}`, name: "agent_start", arguments: JSON.stringify({ task: "start five more" }) })));
  });
  const h = tauHome();
  let d: StartedDaemon | undefined;
  try {
    writeFileSync(
      join(h.home, "config", "harness.yaml"),
      JSON.stringify({
        model: "fake-model",
        agent_limits: { agents_per_session: AGENTS, max_depth: 5, children_per_agent: 5, starts_per_minute: 10_000 },
        extensions: [{ name: "provider", kind: "provider", command: ["tau", "ext", "provider"], config: { profile: "chat_completions", base_url: fake.baseUrl, models: [{ id: "fake-model" }] } }],
      }),
    );
    d = await startDaemon(h.env, ["--project-root", h.home]);
    const c = await TestClient.ui(d.socket, d.session_id);
    c.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: ["harness.models_available", "agent.outer_turn_finished"] } });
    await c.next((m) => m.message === "deliver" && m.payload.event.name === "harness.models_available" && (m.payload.event.data.models as unknown[]).length > 0, 30_000);
    c.emit("ui.create_agent", { request_id: "lead" });
    const m = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === "lead");
    const lead = m.message === "direct" ? String(m.payload.event.data.agent_id) : "";
    const baseline = await rosterTimes(c, ROSTER_REQUESTS);
    const fdBefore = descriptors(d.pid);
    const t0 = performance.now();
    c.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "go" });
    let finished = 0;
    while (finished < AGENTS) {
      await c.next((x) => x.message === "deliver" && x.payload.event.name === "agent.outer_turn_finished", 600_000, "the team's turns");
      finished++;
    }
    const grown = performance.now() - t0;
    const fdAfter = descriptors(d.pid);
    const big = await rosterTimes(c, ROSTER_REQUESTS);
    // Every agent busy again, each waiting on its model; then the whole tree is cancelled at once.
    hang = true;
    const ids: string[] = [];
    for (let cursor: string | undefined, more = true; more; ) {
      const request_id = `ids-${ids.length}`;
      c.send({ message: "ui_roster_request", payload: { request_id, include_unloaded: false, limit: 256, ...(cursor ? { cursor } : {}) } });
      const page = await c.next((x) => x.message === "ui_roster_result" && x.payload.request_id === request_id, 30_000);
      if (page.message !== "ui_roster_result") break;
      ids.push(...page.payload.rows.map((r) => r.agent_id));
      cursor = page.payload.next_cursor;
      more = cursor !== undefined;
    }
    const asked = fake.chatRequests.length;
    for (const id of ids) c.emit("ui.prompt_submit", { agent_id: id, mode: "queue", text: "again" });
    while (fake.chatRequests.length < asked + ids.length) await new Promise((r) => setTimeout(r, 20));
    const c0 = performance.now();
    c.emit("agent.cancel_request", { agent_id: lead });
    for (let n = 0; n < ids.length; n++) {
      await c.next((x) => x.message === "deliver" && x.payload.event.name === "agent.outer_turn_finished" && x.payload.event.data.outcome === "cancelled", 120_000, "the tree cancelled");
    }
    const cancelled = performance.now() - c0;
    c.close();
    console.log(`team grown to ${AGENTS} agents by a fork-bombing model     ${fmt(grown).padStart(8)} ms`);
    console.log(`roster page (256 rows), 1 agent (baseline)    p50 ${fmt(percentile(baseline, 50), 2).padStart(7)} ms   p99 ${fmt(percentile(baseline, 99), 2).padStart(7)} ms`);
    console.log(`roster page (256 rows), ${AGENTS} agents          p50 ${fmt(percentile(big, 50), 2).padStart(7)} ms   p99 ${fmt(percentile(big, 99), 2).padStart(7)} ms (${(percentile(big, 99) / percentile(baseline, 99)).toFixed(2)}x baseline p99)`);
    console.log(`daemon descriptors: ${fdBefore} with one agent, ${fdAfter} with ${AGENTS} idle (${((fdAfter - fdBefore) / AGENTS).toFixed(3)} per agent)`);
    console.log(`cancelling the lead with all ${ids.length} agents waiting on the model  ${fmt(cancelled).padStart(8)} ms until every turn's cancel was recorded`);
  } finally {
    if (d) for (const pid of processTree(d.pid)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    h.dispose();
    await fake.close();
  }
}
