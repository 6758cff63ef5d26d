// Agents that start agents (SPEC-agent-team), through a real daemon with its real provider
// extension and a loopback OpenAI-compatible server. Prints figures and ratios against a baseline
// measured in the same run; asserts nothing.
//
// One parent starts N children (TAU_AGENTS_BENCH_N, default 10) in one response and waits for all of
// them; each child answers with text. Measured: wall time from the parent's prompt to its turn's end,
// against the same daemon's one-agent baseline (a prompt answered with text: two model round trips
// against N + 2), and the daemon's RSS growth per child agent (VmRSS after against before).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient, startDaemon, tauHome, type StartedDaemon } from "../test/support/daemon.js";
import { FakeOpenAI, textResponse, toolCallResponse, type ReceivedRequest } from "../test/support/fake-openai.js";
import { processTree } from "../test/support/e2e.js";
import { fmt, median } from "./support.js";

const N = Number(process.env.TAU_AGENTS_BENCH_N ?? 10);
const TRIALS = 3;

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

type Msg = { role: string; content?: unknown };
const messagesOf = (r: ReceivedRequest): Msg[] => (r.body as { messages: Msg[] }).messages;
const isChild = (r: ReceivedRequest) => String(messagesOf(r).find((m) => m.role === "user")?.content ?? "").startsWith("<agent_message");
const isBaseline = (r: ReceivedRequest) => String(messagesOf(r).find((m) => m.role === "user")?.content ?? "").includes("baseline");
const rounds = (r: ReceivedRequest) => messagesOf(r).filter((m) => m.role === "assistant").length;

async function attach(d: StartedDaemon): Promise<TestClient> {
  const c = await TestClient.ui(d.socket, d.session_id);
  c.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: ["harness.models_available", "agent.outer_turn_finished"] } });
  await c.next((m) => m.message === "deliver" && m.payload.event.name === "harness.models_available" && (m.payload.event.data.models as unknown[]).length > 0, 30_000);
  return c;
}

async function agent(c: TestClient, id: string): Promise<string> {
  c.emit("ui.create_agent", { request_id: id });
  const m = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === id);
  return m.message === "direct" ? String(m.payload.event.data.agent_id) : "";
}

/** Submits a prompt and resolves with the ms until that agent's turn ended. */
async function turn(c: TestClient, agentId: string, text: string): Promise<number> {
  const t0 = performance.now();
  c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text });
  await c.next((m) => m.message === "deliver" && m.payload.event.name === "agent.outer_turn_finished" && m.payload.event.data.agent_id === agentId, 120_000, "the turn's end");
  return performance.now() - t0;
}

async function trial(fake: FakeOpenAI): Promise<{ baseline: number; team: number; rssPerAgent: number }> {
  const h = tauHome();
  let d: StartedDaemon | undefined;
  try {
    writeFileSync(
      join(h.home, "config", "harness.yaml"),
      JSON.stringify({ model: "fake-model", extensions: [{ name: "provider", kind: "provider", command: ["tau", "ext", "provider"], config: { profile: "chat_completions", base_url: fake.baseUrl, models: [{ id: "fake-model" }] } }] }),
    );
    d = await startDaemon(h.env, ["--project-root", h.home]);
    const c = await attach(d);
    const baseAgent = await agent(c, "r-base");
    await turn(c, baseAgent, "baseline warm-up");
    const baseline = await turn(c, baseAgent, "baseline");
    const parent = await agent(c, "r-parent");
    const before = rssMiB(d.pid);
    const team = await turn(c, parent, `start ${N} helpers and wait for them`);
    const after = rssMiB(d.pid);
    c.send({ message: "ui_roster_request", payload: { request_id: "roster", include_unloaded: false } });
    const rosterResult = await c.next((m) => m.message === "ui_roster_result");
    const children = rosterResult.message === "ui_roster_result" ? rosterResult.payload.rows.filter((r) => r.parent_id === parent).length : 0;
    if (children !== N) throw new Error(`expected ${N} children, the roster lists ${children}`);
    c.close();
    return { baseline, team, rssPerAgent: (after - before) / N };
  } finally {
    if (d) for (const pid of processTree(d.pid)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    h.dispose();
  }
}

export async function run(): Promise<void> {
  const fake = await FakeOpenAI.start();
  const start = toolCallResponse([
    ...Array.from({ length: N }, (_, i) => ({ id: `call_start_${i}`, name: "agent_start", arguments: JSON.stringify({ task: `helper task ${i}` }) })),
    { id: "call_wait", name: "agent_wait", arguments: JSON.stringify({ timeout_seconds: 600 }) },
  ]);
  fake.respondWith((r) => {
    if (isBaseline(r) || isChild(r)) return textResponse("done");
    return rounds(r) === 0 ? start : textResponse("all helpers reported");
  });
  try {
    const results = [];
    for (let i = 0; i < TRIALS; i++) results.push(await trial(fake));
    const baseline = median(results.map((r) => r.baseline));
    const team = median(results.map((r) => r.team));
    const rss = median(results.map((r) => r.rssPerAgent));
    console.log(`one agent, one text turn (baseline)          ${fmt(baseline).padStart(8)} ms`);
    console.log(`parent starts ${N} children and waits for all ${fmt(team).padStart(8)} ms (${(team / baseline).toFixed(2)}x baseline; ${fmt(team / N)} ms per child)`);
    console.log(`daemon RSS growth per child agent            ${fmt(rss, 2).padStart(8)} MiB (median of ${TRIALS} trials)`);
  } finally {
    await fake.close();
  }
}
