// `tau session stats` (SPEC-compaction, "Session activity stats"): a hand-built journal fixture whose
// every figure is computed by hand below, read by the library and by the real command; the state
// folder's bytes and times are unchanged after it, with and without a running daemon.
import { describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openFileStateStore, type EventLog } from "../../../handwritten/store/index.js";
import { sessionStats } from "../../../handwritten/trace/index.js";
import { isAlive, startDaemon, tauHome } from "../../support/daemon.js";
import { runTau } from "../../support/run-tau.js";
import { useCleanups } from "../../support/e2e.js";

const cleanups = useCleanups();

const S = "s-statsfixture";
const A = "a-stats-one";
const B = "a-stats-two";

/** Two agents' journals with known timestamps (µs), usages and costs. */
function fixture(stateDir: string): void {
  const store = openFileStateStore({ stateDir });
  const harness = { class: "harness" } as const;
  const base = 1_780_000_000_000_000;
  const put = (log: EventLog, ms: number, name: string, data: Record<string, unknown>, source: { class: "harness" | "extension"; instance?: string } = harness) =>
    log.append({ event: { name, data }, source, recorded_at: base + ms * 1000, parent: log.nextSeq > 0 ? log.nextSeq - 1 : null });
  const session = store.openSession(S);
  put(session, 0, "session.started", { session_id: S, project_root: "/p", resumed: false, ephemeral: false });
  const a = store.openAgent(A);
  put(a, 0, "agent.started", { agent_id: A, session_id: S, creator: "ui", cwd: "/p", ephemeral: false });
  put(session, 0, "session.agent_loaded", { agent_id: A });
  put(a, 1, "agent.prompt_submitted", { agent_id: A, prompt_id: "p1", source: "human_ui", mode: "queue", text: "hi" });
  put(a, 2, "agent.prompt_started", { agent_id: A, prompt_id: "p1", round: 0, model: "m1" });
  put(a, 5, "provider.response_finished", {
    agent_id: A, prompt_id: "p1", round: 0, model: "m1", text: "", finish_reason: "tool_calls",
    tool_calls: [{ call_id: "c1", tool: "read", arguments_json: "{}" }, { call_id: "c2", tool: "grep", arguments_json: "{}" }],
    usage: { input_tokens: 100, output_tokens: 10, cache_read_tokens: 40, reasoning_tokens: 5 },
    cost: { input_rate: 1, output_rate: 2, usd: 0.00012 },
  });
  put(a, 6, "provider.tool_result", { agent_id: A, prompt_id: "p1", call_id: "c1", tool: "read", output: "x" });
  put(a, 9, "provider.tool_error", { agent_id: A, prompt_id: "p1", call_id: "c2", tool: "grep", error: "no" });
  put(a, 10, "agent.prompt_started", { agent_id: A, prompt_id: "p1", round: 1, model: "m1" });
  put(a, 12, "provider.response_finished", {
    agent_id: A, prompt_id: "p1", round: 1, model: "m1", text: "done", finish_reason: "stop", tool_calls: [],
    usage: { input_tokens: 200, output_tokens: 20 }, cost: { input_rate: 1, output_rate: 2, usd: 0.00024 },
  });
  // Not the harness's: a provider-authored copy is never counted.
  put(a, 12, "provider.response_finished", { agent_id: A, prompt_id: "p1", round: 1, model: "m1", text: "x", finish_reason: "stop", tool_calls: [], usage: { input_tokens: 9999, output_tokens: 9999 } }, { class: "extension", instance: "rogue" });
  put(a, 13, "agent.outer_turn_finished", { agent_id: A, prompt_id: "p1", outcome: "completed", rounds: 2 });
  put(a, 14, "agent.prompt_submitted", { agent_id: A, prompt_id: "p2", source: "extension", mode: "queue", text: "ext", submitter: "bot" });
  put(a, 15, "agent.prompt_started", { agent_id: A, prompt_id: "p2", round: 0, model: "m1" });
  put(a, 18, "provider.response_failed", { agent_id: A, prompt_id: "p2", round: 0, error_class: "server_error", diagnostic: "x" });
  put(a, 19, "agent.outer_turn_finished", { agent_id: A, prompt_id: "p2", outcome: "failed", rounds: 1 });
  put(a, 20, "agent.compaction_started", { agent_id: A, compaction_id: "k1", cut_seq: 10, trigger: "user", model: "m1" });
  put(a, 26, "agent.compaction_summarized", { agent_id: A, compaction_id: "k1", summary: "s", usage: { input_tokens: 300, output_tokens: 30 }, cost: { input_rate: 1, output_rate: 2, usd: 0.00036 } });
  put(a, 27, "agent.compaction_committed", { agent_id: A, compaction_id: "k1", cut_seq: 10 });
  put(a, 28, "agent.compaction_committed", { agent_id: A, compaction_id: "k1", cut_seq: 10 }); // a duplicate counts once
  put(a, 29, "agent.prompt_submitted", { agent_id: A, prompt_id: "p3", source: "harness_internal", mode: "steer", text: "alert", internal_kind: "context_size_alert", alert: "high" });
  put(a, 30, "agent.prompt_started", { agent_id: A, prompt_id: "p3", round: 0, model: "m1" }); // unterminated (a crash cut)
  a.checkpoint({ created_at: base, ephemeral: false, metadata: {}, open: { p3: 1 }, waiting: {}, next_seq: a.nextSeq });
  const b = store.openAgent(B);
  put(b, 0, "agent.started", { agent_id: B, session_id: S, creator: "ui", cwd: "/p", ephemeral: false });
  put(session, 0, "session.agent_loaded", { agent_id: B });
  put(b, 99, "agent.prompt_submitted", { agent_id: B, prompt_id: "q1", source: "human_ui", mode: "queue", text: "q" });
  put(b, 100, "agent.prompt_started", { agent_id: B, prompt_id: "q1", round: 0, model: "m2" });
  put(b, 101, "provider.response_finished", { agent_id: B, prompt_id: "q1", round: 0, model: "m2", text: "no usage", finish_reason: "stop", tool_calls: [] });
  put(b, 102, "agent.outer_turn_finished", { agent_id: B, prompt_id: "q1", outcome: "completed", rounds: 1 });
  put(b, 103, "agent.prompt_submitted", { agent_id: B, prompt_id: "q2", source: "human_ui", mode: "queue", text: "later" });
  put(b, 104, "agent.outer_turn_finished", { agent_id: B, prompt_id: "q2", outcome: "interrupted", rounds: 0 });
  b.checkpoint({ created_at: base, ephemeral: false, metadata: {}, open: {}, waiting: {}, next_seq: b.nextSeq });
  store.close();
  mkdirSync(join(stateDir, "sessions", S), { recursive: true });
  writeFileSync(join(stateDir, "sessions", S, "manifest.json"), JSON.stringify({ session_id: S, project_root: "/p" }));
}

/** By hand, from the fixture above. */
const EXPECTED = {
  session_id: S,
  agents: 2,
  complete: false, // B's response carries no usage
  prompts: { total: 5, by_source: { human_ui: 3, extension: 1, harness_internal: 1 } },
  turns: { completed: 2, failed: 1, cancelled: 0, dispatch_uncertain: 0, interrupted: 1, unterminated: 1 },
  responses: { finished: 3, failed: 1 },
  tools: { read: { ok: 1, error: 0 }, grep: { ok: 0, error: 1 } },
  compactions: { committed: 1, failed: 0 },
  tokens: {
    m1: { responses: 3, input: 600, output: 60, cached: 40, reasoning: 5 },
    m2: { responses: 1, input: 0, output: 0, cached: 0, reasoning: 0 },
  },
  wall_ms: { model: 3 + 2 + 3 + 1, tools: 4, compaction: 7 },
};

/** Every file under a folder with its bytes and modification time. */
function snapshot(dir: string): Map<string, { bytes: string; mtime: number }> {
  const out = new Map<string, { bytes: string; mtime: number }>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(p, { bytes: readFileSync(p).toString("base64"), mtime: statSync(p).mtimeMs });
    }
  };
  walk(dir);
  return out;
}

describe("tau session stats", () => {
  it("[session-stats.hand-computed] equals the figures computed by hand from a journal fixture, counting only harness-authored facts", () => {
    const h = tauHome();
    cleanups.push(h.dispose);
    const state = join(h.home, "state");
    fixture(state);
    const s = sessionStats(state, "s-stats");
    expect(s).toMatchObject(EXPECTED);
    expect(s.cost_usd).toBeCloseTo(0.00072, 12);
    expect(s.journals.map((j) => j.mode)).toEqual(["eof", "eof"]);
  });

  it("[session-stats.read-only] the command leaves every byte and time of the state folder unchanged, and works beside a running daemon", async () => {
    const h = tauHome();
    cleanups.push(h.dispose);
    const state = join(h.home, "state");
    fixture(state);
    const before = snapshot(state);
    const r = await runTau(["session", "stats", "--json"], { env: h.env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as { cost_usd: number };
    expect(json).toMatchObject(EXPECTED);
    const human = await runTau(["session", "stats", S], { env: h.env });
    expect(human.stdout).toContain("tokens m1: in 600, out 60, cached 40, reasoning 5 (3 responses)");
    expect(human.stdout).toContain("cost: $0.0007");
    expect(snapshot(state)).toEqual(before);

    // A daemon resumes the session and holds its journals: stats read to the checkpoints' cuts.
    const d = await startDaemon(h.env, ["--resume", S]);
    cleanups.push(() => {
      if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
    });
    const agentFiles = [A, B].flatMap((id) => ["events.cbor", "meta.json"].map((f) => join(state, "agents", id, f)));
    const held = agentFiles.map((f) => [readFileSync(f).toString("base64"), statSync(f).mtimeMs]);
    const live = await runTau(["session", "stats", S, "--json"], { env: h.env });
    expect(live.code).toBe(0);
    const liveStats = JSON.parse(live.stdout) as { journals: Array<{ mode: string }> };
    expect(liveStats.journals.map((j) => j.mode)).toEqual(["checkpoint", "checkpoint"]);
    // The resume closed the cut turn (dispatch_uncertain) and that turn's end wrote a checkpoint: the
    // live cut includes the closing fact, so the unterminated turn is counted as closed.
    expect(liveStats).toMatchObject({ ...EXPECTED, turns: { ...EXPECTED.turns, unterminated: EXPECTED.turns.unterminated - 1, dispatch_uncertain: EXPECTED.turns.dispatch_uncertain + 1 } });
    expect(agentFiles.map((f) => [readFileSync(f).toString("base64"), statSync(f).mtimeMs])).toEqual(held);

    // A corrupt journal fails the command and is left as it was.
    process.kill(d.pid, "SIGKILL");
    const file = join(state, "agents", B, "events.cbor");
    const bytes = readFileSync(file);
    // A whole frame in the middle names an event that does not exist.
    const at = bytes.indexOf("agent.prompt_started");
    bytes.write("agent.prompt_startex", at);
    writeFileSync(file, bytes);
    const broken = await runTau(["session", "stats", S], { env: h.env });
    expect(broken.code).not.toBe(0);
    expect(broken.stderr).toContain("TAU-E0307");
    expect(readFileSync(file)).toEqual(bytes);
  }, 60_000);
});
