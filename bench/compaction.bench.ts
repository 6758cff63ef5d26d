// Compaction and session-stats benchmarks (SPEC-compaction). Prints figures and ratios against
// baselines measured in the same run; asserts nothing.
//
// 1. `tau session stats` on a large generated session (TAU_STATS_BENCH_MB, default 100 MiB of agent
//    journal): the library in a fresh process (time, peak RSS) against a strict read of the same
//    journal in a fresh process, and the real command end to end (`bin/tau.cjs session stats`).
// 2. One compaction's cost to the harness, the model's time excluded: from `ui.compact_request` to
//    the summary request handed to the provider's connection, plus from the summary report to the
//    committed fact, on a resumed session (TAU_COMPACT_BENCH_MB, default 20 MiB) whose transcript is
//    loaded — against one ordinary round's dispatch (a prompt to its request) on the same transcript.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateSession } from "../test/support/session-generator.js";
import { Harness, type Peer } from "../handwritten/harness/index.js";
import type { PublisherEnvelope } from "../handwritten/bus/index.js";
import type { WireMessage } from "../generated/index.js";

const CHILD = fileURLToPath(new URL("./compaction-child.ts", import.meta.url));
const TAU = fileURLToPath(new URL("../bin/tau.cjs", import.meta.url));

interface Sample {
  ms: number;
  maxRssMiB: number;
}

function child(mode: string, stateDir: string, sessionId: string, agentId: string): Sample {
  return JSON.parse(execFileSync(process.execPath, ["--import", "tsx", CHILD, mode, stateDir, sessionId, agentId], { encoding: "utf8" })) as Sample;
}

async function statsBench(): Promise<void> {
  const mb = Number(process.env.TAU_STATS_BENCH_MB ?? 100);
  const home = fs.mkdtempSync(join(os.tmpdir(), "tau-stats-bench-"));
  try {
    const state = join(home, "state");
    const g = generateSession(state, { targetBytes: mb * 1024 * 1024, outputBytes: 16 * 1024 });
    const size = fs.statSync(join(state, "agents", g.agentId, "events.cbor")).size;
    console.log(`session stats: agent journal ${(size / 1048576).toFixed(1)} MiB, ${g.records} records`);
    let read: Sample = { ms: Infinity, maxRssMiB: Infinity };
    let stats: Sample = { ms: Infinity, maxRssMiB: Infinity };
    let command = Infinity;
    for (let trial = 0; trial < 3; trial++) {
      const r = child("read", state, g.sessionId, g.agentId);
      const s = child("stats", state, g.sessionId, g.agentId);
      read = { ms: Math.min(read.ms, r.ms), maxRssMiB: Math.min(read.maxRssMiB, r.maxRssMiB) };
      stats = { ms: Math.min(stats.ms, s.ms), maxRssMiB: Math.min(stats.maxRssMiB, s.maxRssMiB) };
      const t0 = performance.now();
      execFileSync(process.execPath, [TAU, "session", "stats", g.sessionId, "--json"], { env: { ...process.env, TAU_HOME: home }, stdio: ["ignore", "ignore", "inherit"] });
      command = Math.min(command, performance.now() - t0);
    }
    console.log(`strict read   ${read.ms.toFixed(0).padStart(7)} ms  peak RSS ${read.maxRssMiB.toFixed(0).padStart(4)} MiB`);
    console.log(`stats         ${stats.ms.toFixed(0).padStart(7)} ms (${(stats.ms / read.ms).toFixed(2)}x read)  peak RSS ${stats.maxRssMiB.toFixed(0).padStart(4)} MiB (${(stats.maxRssMiB / read.maxRssMiB).toFixed(2)}x read)`);
    console.log(`tau session stats (whole command) ${command.toFixed(0)} ms (${(command / read.ms).toFixed(2)}x read)`);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** A peer that keeps what the harness sends it. */
function peer(generation: number, publisher: PublisherEnvelope): Peer & { sent: WireMessage[] } {
  const sent: WireMessage[] = [];
  return { generation, publisher, sent, send: (m) => (sent.push(m), "queued"), sendAsync: async (m) => (sent.push(m), "queued") };
}

const tick = () => new Promise((r) => setImmediate(r));

async function until(pred: () => boolean): Promise<void> {
  while (!pred()) await tick();
}

/** One trial: a resumed session, its transcript loaded, then a timed ordinary round and a timed compaction. */
async function compactionTrial(mb: number, seed: number): Promise<{ round: number; compaction: number; messages: number }> {
  const dir = fs.mkdtempSync(join(os.tmpdir(), "tau-compact-bench-"));
  try {
    const g = generateSession(dir, { targetBytes: mb * 1024 * 1024, outputBytes: 16 * 1024, seed, projectRoot: dir });
    const h = await Harness.open({ stateDir: dir, projectRoot: dir, resume: g.sessionId, debugLog: false, defaultModel: "gen-model", compaction: { autoThreshold: 0, keepRecentTokens: 20_000, alerts: [] } });
    const gen = 7;
    h.extensions = { isLive: (i, n) => i === "llm" && n === gen, toolPrefix: () => "", generationOf: (i) => (i === "llm" ? gen : undefined), mayCall: () => false, mayReturn: () => false, counters: () => [] };
    const provider: PublisherEnvelope = Object.freeze({ class: "extension", kind: "provider", instance: "llm", generation: gen });
    const p = peer(gen, provider);
    const ui = peer(1, { class: "ui_attached", generation: 1 });
    h.addPeer(p);
    h.addPeer(ui);
    await h.bus.publishFromPeer({ name: "provider.models_declared", data: { models: [{ id: "gen-model", context_window: 1_000_000 }] } }, provider);
    const requests = () => p.sent.filter((m) => m.message === "direct" && m.payload.event.name === "provider.request").map((m) => (m.message === "direct" ? m.payload.event.data : {})) as Array<{ prompt_id: string; round: number }>;
    let finished = 0;
    h.bus.onCommitted("agent.outer_turn_finished", () => void finished++);
    const answer = (prompt_id: string, text: string) =>
      h.bus.publishFromPeer({ name: "provider.response_finished_reported", data: { prompt_id, round: 0, model: "gen-model", text, tool_calls: [], finish_reason: "stop" } }, provider);
    const prompt = async (text: string): Promise<number> => {
      const before = requests().length;
      const t0 = performance.now();
      await h.bus.publish({ name: "ui.prompt_submit", data: { agent_id: g.agentId, mode: "queue", text } }, ui.publisher);
      await until(() => requests().length > before);
      const ms = performance.now() - t0;
      const done = finished;
      await answer((requests()[before] as { prompt_id: string }).prompt_id, "ok");
      await until(() => finished > done);
      return ms;
    };
    await prompt("load the transcript"); // the first prompt after a resume reads the transcript
    const round = await prompt("an ordinary round");
    const before = requests().length;
    const t0 = performance.now();
    await h.bus.publish({ name: "ui.compact_request", data: { agent_id: g.agentId } }, ui.publisher);
    await until(() => requests().length > before);
    const toRequest = performance.now() - t0;
    const summaryId = (requests()[before] as { prompt_id: string }).prompt_id;
    let committed = false;
    h.bus.onCommitted("agent.compaction_committed", () => void (committed = true));
    const t1 = performance.now();
    await answer(summaryId, "the summary of everything so far");
    await until(() => committed);
    const toCommit = performance.now() - t1;
    const messages = p.sent.filter((m) => m.message === "direct" && m.payload.event.name === "provider.request_part" && m.payload.event.data.prompt_id === summaryId).length;
    await h.shutdown("requested");
    return { round, compaction: toRequest + toCommit, messages };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function compactionBench(): Promise<void> {
  const mb = Number(process.env.TAU_COMPACT_BENCH_MB ?? 20);
  let round = Infinity;
  let compaction = Infinity;
  let parts = 0;
  for (let trial = 0; trial < 3; trial++) {
    const t = await compactionTrial(mb, trial + 1);
    round = Math.min(round, t.round);
    compaction = Math.min(compaction, t.compaction);
    parts = t.messages;
  }
  console.log(`compaction on a ${mb} MiB resumed session (summary request in ${parts} part(s)), model time excluded:`);
  console.log(`ordinary round dispatch ${round.toFixed(1).padStart(7)} ms`);
  console.log(`one compaction          ${compaction.toFixed(1).padStart(7)} ms (${(compaction / round).toFixed(2)}x a round's dispatch)`);
}

export async function run(): Promise<void> {
  await statsBench();
  await compactionBench();
}
