// `tau agent trace --descendants` through the real binary, on journals written by tau's own store
// writer: the rooted workflow found only through valid creation records, every format naming its
// agents, unrelated or broken candidates left out, a reachable corrupt journal failing with no
// output, and the state directory untouched.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tauHome } from "../../support/daemon.js";
import { runTau } from "../../support/run-tau.js";
import { useCleanups } from "../../support/e2e.js";
import { snapshotTree } from "../../support/files.js";
import { openFileStateStore, type EventLog } from "../../../handwritten/store/index.js";

const cleanups = useCleanups();

const SESSION = "s-workflow-0001";
const ROOT = "a-root-0001";
const CHILD_A = "a-child-000a";
const CHILD_B = "a-child-000b";
const GRANDCHILD = "a-grand-0001";

interface Extra {
  /** Agents written after the workflow: id → its first record's data (or raw bytes for the journal). */
  others?: Record<string, Record<string, unknown> | Buffer>;
}

/** A state directory with ROOT → (CHILD_A → GRANDCHILD, CHILD_B), each agent one prompt with one round. */
function workflowHome(extra: Extra = {}): { home: string; env: NodeJS.ProcessEnv; state: string } {
  const h = tauHome();
  cleanups.push(h.dispose);
  const state = join(h.home, "state");
  const store = openFileStateStore({ stateDir: state });
  let clock = 1_780_000_000_000_000;
  const harness = { class: "harness" } as const;
  const put = (log: EventLog, name: string, data: Record<string, unknown>) =>
    log.append({ event: { name, data }, source: harness, recorded_at: (clock += 1000), parent: log.nextSeq > 0 ? log.nextSeq - 1 : null });
  const session = store.openSession(SESSION);
  put(session, "session.started", { session_id: SESSION, project_root: "/work/p", resumed: false, ephemeral: false });
  const turn = (log: EventLog, id: string, n: number, calls: Array<{ call_id: string; tool: string }>) => {
    const prompt = `p-${id}`;
    put(log, "agent.prompt_submitted", { agent_id: id, prompt_id: prompt, source: "human_ui", mode: "queue", text: `task ${n}` });
    put(log, "agent.prompt_started", { agent_id: id, prompt_id: prompt, round: 0, model: "m" });
    put(log, "provider.response_finished", {
      agent_id: id, prompt_id: prompt, round: 0, model: "m", text: calls.length ? "" : `done ${n}`,
      tool_calls: calls.map((c) => ({ ...c, arguments_json: "{}" })), finish_reason: calls.length ? "tool_calls" : "stop",
      usage: { input_tokens: 100 * n, output_tokens: 10 * n },
    });
    for (const c of calls) put(log, "provider.tool_result", { agent_id: id, prompt_id: prompt, call_id: c.call_id, tool: c.tool, output: "started" });
    put(log, "agent.outer_turn_finished", { agent_id: id, prompt_id: prompt, outcome: "completed", rounds: 1 });
  };
  const agent = (id: string, parent: { id: string; call: string } | null, n: number, calls: Array<{ call_id: string; tool: string }> = []) => {
    const log = store.openAgent(id);
    put(log, "agent.started", {
      agent_id: id, session_id: SESSION, cwd: "/work/p", ephemeral: false,
      ...(parent ? { creator: "agent", parent_id: parent.id, created_by: { agent_id: parent.id, call_id: parent.call } } : { creator: "ui" }),
    });
    put(session, "session.agent_loaded", { agent_id: id });
    turn(log, id, n, calls);
  };
  agent(ROOT, null, 1, [{ call_id: "c-start-a", tool: "agent_start" }, { call_id: "c-start-b", tool: "agent_start" }]);
  agent(CHILD_A, { id: ROOT, call: "c-start-a" }, 2, [{ call_id: "c-start-g", tool: "agent_start" }]);
  agent(CHILD_B, { id: ROOT, call: "c-start-b" }, 3);
  agent(GRANDCHILD, { id: CHILD_A, call: "c-start-g" }, 4);
  for (const [id, first] of Object.entries(extra.others ?? {})) {
    if (Buffer.isBuffer(first)) continue;
    put(store.openAgent(id), "agent.started", first);
  }
  store.close();
  for (const [id, first] of Object.entries(extra.others ?? {})) if (Buffer.isBuffer(first)) writeJournal(state, id, first);
  return { home: h.home, env: h.env, state };
}

function writeJournal(state: string, id: string, bytes: Buffer): void {
  const dir = join(state, "agents", id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "events.cbor"), bytes);
}

const lines = (out: string) => out.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
const WORKFLOW = [ROOT, CHILD_A, CHILD_B, GRANDCHILD];

describe("tau agent trace --descendants", () => {
  it("[trace.descendants.workflow] exports the root and its descendants breadth first in every format, each line naming its agent", async () => {
    const f = workflowHome();
    const before = snapshotTree(f.state);
    for (const format of ["native", "jsonl"]) {
      const r = await runTau(["agent", "trace", ROOT, "--descendants", "--format", format], { env: f.env });
      expect([r.code, r.stderr]).toEqual([0, ""]);
      const ls = lines(r.stdout);
      // Agent after agent in workflow order, each from its own seq 0, with `agent` right after `seq`.
      const order = ls.map((l) => l.agent).filter((a, i, all) => i === 0 || all[i - 1] !== a);
      expect(order).toEqual(WORKFLOW);
      for (const l of ls) expect(Object.keys(l).slice(0, 2)).toEqual(["seq", "agent"]);
      expect(ls.filter((l) => l.seq === 0).map((l) => l.agent)).toEqual(WORKFLOW);
    }
    // Without --descendants the same command exports the root alone, without `agent`.
    const alone = await runTau(["agent", "trace", ROOT, "--format", "jsonl"], { env: f.env });
    expect(lines(alone.stdout).every((l) => !("agent" in l))).toBe(true);
    expect(lines(alone.stdout)).toHaveLength(lines((await runTau(["agent", "trace", ROOT, "--descendants", "--format", "jsonl"], { env: f.env })).stdout).filter((l) => l.agent === ROOT).length);

    const toon = await runTau(["agent", "trace", ROOT, "--descendants", "--format", "toon"], { env: f.env });
    expect(toon.code).toBe(0);
    const { decode } = await import("@toon-format/toon");
    const jsonl = lines((await runTau(["agent", "trace", ROOT, "--descendants", "--format", "jsonl"], { env: f.env })).stdout);
    expect(decode(toon.stdout)).toEqual(jsonl);

    // perf: each agent's lines, the agent line saying where it came from, then the workflow's sums.
    const perf = lines((await runTau(["agent", "trace", ROOT, "--descendants", "--perf"], { env: f.env })).stdout);
    const agents = perf.filter((l) => l.kind === "agent");
    expect(agents.map((a) => [a.agent_id, a.parent_id, a.created_by_call_id])).toEqual([
      [ROOT, null, null],
      [CHILD_A, ROOT, "c-start-a"],
      [CHILD_B, ROOT, "c-start-b"],
      [GRANDCHILD, CHILD_A, "c-start-g"],
    ]);
    const workflow = perf.at(-1) as { kind: string; root_id: string; agents: number; prompts: number; tokens: { input: number; output: number } };
    expect(workflow).toMatchObject({ kind: "workflow", root_id: ROOT, agents: 4, prompts: 4, rounds: 4 });
    expect(workflow.tokens).toMatchObject({ input: 100 + 200 + 300 + 400, output: 10 + 20 + 30 + 40 });

    // otlp: a child's root span links to the execute_tool span of the call that started it.
    const otlp = lines((await runTau(["agent", "trace", ROOT, "--descendants", "--format", "otlp"], { env: f.env })).stdout) as Array<{
      resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }; scopeSpans: Array<{ spans: Array<{ name: string; traceId: string; spanId: string; attributes: Array<{ key: string; value: { stringValue?: string } }>; links?: Array<{ traceId: string; spanId: string }> }> }> }>;
    }>;
    expect(otlp).toHaveLength(4);
    const spans = otlp.flatMap((t) => t.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => ({ ...s, agent: rs.resource.attributes.find((a) => a.key === "tau.agent.id")?.value.stringValue })))));
    const callSpan = (agent: string, call: string) => spans.find((s) => s.agent === agent && s.attributes.some((a) => a.key === "gen_ai.tool.call.id" && a.value.stringValue === call));
    const rootOf = (agent: string) => spans.find((s) => s.agent === agent && s.name === "invoke_agent tau");
    for (const [child, parent, call] of [[CHILD_A, ROOT, "c-start-a"], [CHILD_B, ROOT, "c-start-b"], [GRANDCHILD, CHILD_A, "c-start-g"]] as const) {
      const target = callSpan(parent, call);
      expect(target).toBeDefined();
      expect(rootOf(child)?.links?.map((l) => [l.traceId, l.spanId])).toEqual([[target?.traceId, target?.spanId]]);
    }
    expect(rootOf(ROOT)?.links ?? []).toEqual([]);
    // Read-only.
    expect(snapshotTree(f.state)).toEqual(before);
  });

  it("[trace.descendants.workflow] a subtree root exports only its own descendants; --session narrows the candidates", async () => {
    const f = workflowHome();
    const r = await runTau(["agent", "trace", CHILD_A, "--descendants", "--format", "perf"], { env: f.env });
    expect(lines(r.stdout).filter((l) => l.kind === "agent").map((l) => [l.agent_id, l.parent_id])).toEqual([[CHILD_A, null], [GRANDCHILD, CHILD_A]]);
    const s = await runTau(["agent", "trace", ROOT, "--session", SESSION, "--descendants", "--format", "perf"], { env: f.env });
    expect(lines(s.stdout).filter((l) => l.kind === "agent").map((l) => l.agent_id)).toEqual(WORKFLOW);
  });

  it("[trace.descendants.ignore-unrelated-creation-record] candidates whose first record is unrelated, invalid, unsupported or unreadable are left out", async () => {
    const started = (id: string, more: Record<string, unknown>) => ({ agent_id: id, session_id: SESSION, cwd: "/w", ephemeral: false, ...more });
    const f = workflowHome({
      others: {
        // created_by names the root, but parent_id does not: no edge.
        "a-x-mismatch": started("a-x-mismatch", { creator: "agent", parent_id: CHILD_B, created_by: { agent_id: ROOT, call_id: "c-1" } }),
        // creator is not "agent": no edge, even with created_by.
        "a-x-creator": started("a-x-creator", { creator: "ui", parent_id: ROOT, created_by: { agent_id: ROOT, call_id: "c-2" } }),
        // An older shape without created_by: no edge.
        "a-x-legacy": started("a-x-legacy", { creator: "agent", parent_id: ROOT }),
        // The root's child in another session: no edge.
        "a-x-session": { ...started("a-x-session", { creator: "agent", parent_id: ROOT, created_by: { agent_id: ROOT, call_id: "c-3" } }), session_id: "s-other-0001" },
        // The record names another agent than its folder: no edge.
        "a-x-misfiled": started("a-somebody-else", { creator: "agent", parent_id: ROOT, created_by: { agent_id: ROOT, call_id: "c-4" } }),
        // Not CBOR at all, and an empty journal.
        "a-x-garbage": Buffer.from("this is not a journal at all, not even close"),
        "a-x-empty": Buffer.alloc(0),
      },
    });
    const r = await runTau(["agent", "trace", ROOT, "--descendants", "--format", "perf"], { env: f.env });
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(lines(r.stdout).filter((l) => l.kind === "agent").map((l) => l.agent_id)).toEqual(WORKFLOW);
  });

  it("[trace.descendants.reject-reachable-corrupt-journal] a corrupt frame in a descendant's journal fails the whole export with no output", async () => {
    const f = workflowHome();
    const journal = join(f.state, "agents", GRANDCHILD, "events.cbor");
    const bytes = readFileSync(journal);
    const offsets: number[] = [];
    for (let at = 0; at < bytes.length; at += 8 + Number(bytes.readBigUInt64LE(at))) offsets.push(at);
    const corrupt = Buffer.from(bytes);
    corrupt[(offsets[2] ?? 0) + 8] = 0xff; // the creation record stays valid: the edge holds
    writeFileSync(journal, corrupt);
    const before = snapshotTree(f.state);
    for (const format of ["native", "jsonl", "toon", "otlp", "perf"]) {
      const r = await runTau(["agent", "trace", ROOT, "--descendants", "--format", format], { env: f.env });
      expect([r.code, r.stdout]).toEqual([1, ""]);
      expect(r.stderr).toMatch(/corrupt frame at offset \d+/);
    }
    // The same root without --descendants does not reach it.
    expect((await runTau(["agent", "trace", ROOT, "--format", "native"], { env: f.env })).code).toBe(0);
    expect(snapshotTree(f.state)).toEqual(before);
  });

  it("[trace.flags.refused] --full with a format it cannot change, two formats, or none, fail with exit 1 and nothing on stdout", async () => {
    const f = workflowHome();
    const cases: Array<[string[], RegExp]> = [
      [["--format", "native", "--full"], /--full applies to --format jsonl and toon; native is always whole/],
      [["--format", "otlp", "--full"], /--full applies to --format jsonl and toon; otlp carries no bodies/],
      [["--perf", "--full"], /--full applies to --format jsonl and toon; perf carries no bodies/],
      [["--perf", "--format", "jsonl"], /--perf and --format jsonl ask for two formats/],
      [[], /which format\? give --format native\|jsonl\|toon\|otlp\|perf \(or --perf\)/],
    ];
    for (const [flags, message] of cases) {
      const r = await runTau(["agent", "trace", ROOT, ...flags], { env: f.env });
      expect([r.code, r.stdout]).toEqual([1, ""]);
      expect(r.stderr).toMatch(message);
    }
    const ok = await runTau(["agent", "trace", ROOT, "--perf", "--format", "perf"], { env: f.env });
    expect(ok.code).toBe(0);
  });
});
