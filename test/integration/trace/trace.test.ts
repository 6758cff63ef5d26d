// `tau agent trace` through the real binary: golden output per format on a committed journal made
// by tau's own store writer, addressing and errors, no partial output on corruption, no write to
// the state directory, and a trace of a journal a real daemon is writing at that moment.
import { cpSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TestClient, isAlive, startDaemon, tauHome, waitFor } from "../../support/daemon.js";
import { REPO_ROOT } from "../../support/paths.js";
import { runTau } from "../../support/run-tau.js";
import { useCleanups } from "../../support/e2e.js";
import { corruptJournalFrame, snapshotTree } from "../../support/files.js";
import { generateSession } from "../../support/session-generator.js";
import { FIXTURE_AGENT, FIXTURE_SESSION } from "../../fixtures/trace/make-fixture.js";

const FIXTURE = join(REPO_ROOT, "test", "fixtures", "trace");
const cleanups = useCleanups();

/** A TAU_HOME holding a copy of the fixture state (the test never runs against the committed files). */
function fixtureHome(): { home: string; env: NodeJS.ProcessEnv; journal: string } {
  const h = tauHome();
  cleanups.push(h.dispose);
  cpSync(join(FIXTURE, "state"), join(h.home, "state"), { recursive: true });
  return { home: h.home, env: h.env, journal: join(h.home, "state", "agents", FIXTURE_AGENT, "events.cbor") };
}

const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/; // a newline ends each line; nothing else raw

function golden(name: string, actual: string): void {
  const file = join(FIXTURE, "golden", name);
  if (process.env.UPDATE_GOLDEN === "1") writeFileSync(file, actual);
  expect(actual).toBe(readFileSync(file, "utf8"));
}

describe("tau agent trace on the committed fixture", () => {
  /** Runs one format against the fixture, compares it with its golden file, and checks the state directory is untouched. */
  async function goldenCase(flags: string[], file: string): Promise<void> {
    const f = fixtureHome();
    const before = snapshotTree(join(f.home, "state"));
    const r = await runTau(["agent", "trace", FIXTURE_AGENT, ...flags], { env: f.env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    golden(file, r.stdout);
    if (file.endsWith(".jsonl")) for (const line of r.stdout.split("\n").slice(0, -1)) JSON.parse(line);
    expect(RAW_CONTROL.test(r.stdout)).toBe(false);
    // Read-only: nothing in the state directory changed (bytes, mtimes), and no file was left behind.
    expect(snapshotTree(join(f.home, "state"))).toEqual(before);
  }
  it("[trace.golden.native] native matches its golden output, no control raw, the state directory untouched", () => goldenCase(["--format", "native"], "native.jsonl"));
  it("[trace.golden.jsonl] compact lite matches its golden output, no control raw, the state directory untouched", () => goldenCase(["--format", "jsonl"], "compact-lite.jsonl"));
  it("[trace.golden.jsonl-full] compact full matches its golden output, no control raw, the state directory untouched", () => goldenCase(["--format", "jsonl", "--full"], "compact-full.jsonl"));
  it("[trace.golden.perf] perf matches its golden output, no control raw, the state directory untouched", () => goldenCase(["--format", "perf"], "perf.jsonl"));
  it("[trace.golden.toon] compact TOON lite matches its golden output, no control raw, the state directory untouched", () => goldenCase(["--format", "toon"], "compact-lite.toon"));
  it("[trace.golden.toon-full] compact TOON full matches its golden output, no control raw, the state directory untouched", () => goldenCase(["--format", "toon", "--full"], "compact-full.toon"));
  it("[trace.golden.otlp] OTLP JSON matches its golden output, no control raw, the state directory untouched", () => goldenCase(["--format", "otlp"], "otlp.jsonl"));

  it("[trace.toon.round-trip] TOON decodes to the same records as the JSONL output, lite and full, for every event family", async () => {
    const { decode } = await import("@toon-format/toon");
    const f = fixtureHome();
    for (const full of [[], ["--full"]]) {
      const jsonl = await runTau(["agent", "trace", FIXTURE_AGENT, "--format", "jsonl", ...full], { env: f.env });
      const toon = await runTau(["agent", "trace", FIXTURE_AGENT, "--format", "toon", ...full], { env: f.env });
      expect([jsonl.code, toon.code]).toEqual([0, 0]);
      const records = jsonl.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { event: string });
      expect(decode(toon.stdout, { strict: true })).toEqual(records);
      // The fixture holds every family an agent journal can hold.
      expect(new Set(records.map((r) => r.event.split(".")[0]))).toEqual(new Set(["agent", "provider", "shell", "tool"]));
    }
  });

  it("[trace.perf.cost] perf prices rounds without a recorded cost from the configuration's model_info over tau's model table", async () => {
    const f = fixtureHome();
    writeFileSync(join(f.home, "config", "harness.yaml"), "extensions: []\nmodel_info:\n  fixture-model: { input_cost: 1, output_cost: 2 }\n  gpt-4.1-mini: { cached_input_cost: 0.4 }\n");
    const r = await runTau(["agent", "trace", FIXTURE_AGENT, "--format", "perf"], { env: f.env });
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const lines = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { kind: string; prompt_id?: string; estimated_cost_usd: number | null; unpriced_rounds: number });
    const byPrompt = new Map(lines.map((l) => [l.prompt_id ?? l.kind, l]));
    // p-1: two fixture-model rounds, now priced (cached reads at the input price, as none is set).
    expect(byPrompt.get("p-1")?.estimated_cost_usd).toBeCloseTo((1 * 1200 + 2 * 40 + 1 * 9000 + 2 * 25) / 1e6, 12);
    // p-4: its first round's cached reads at the configured 0.4 over the table's 0.1; its second as recorded.
    expect(byPrompt.get("p-4")?.estimated_cost_usd).toBeCloseTo((0.4 * 12_000 + 0.4 * 8000 + 1.6 * 100) / 1e6 + 0.008096, 12);
    expect(byPrompt.get("agent")?.unpriced_rounds).toBe(0);
    // A configuration that cannot be read is noted, and tau's table alone prices the rounds.
    writeFileSync(join(f.home, "config", "harness.yaml"), "model_info: [not, a, map]\n");
    const broken = await runTau(["agent", "trace", FIXTURE_AGENT, "--format", "perf"], { env: f.env });
    expect(broken.code).toBe(0);
    expect(broken.stderr).toMatch(/^tau: note: model_info not read \(.*\); costs use tau's model table\n$/);
    expect(broken.stdout).toBe(readFileSync(join(FIXTURE, "golden", "perf.jsonl"), "utf8"));
  });

  it("[trace.lite.bounded] lite mode keeps 4 KiB of a long output and names its size; --full keeps it whole", async () => {
    const f = fixtureHome();
    const lite = await runTau(["agent", "trace", FIXTURE_AGENT, "--format", "jsonl"], { env: f.env });
    const full = await runTau(["agent", "trace", FIXTURE_AGENT, "--format", "jsonl", "--full"], { env: f.env });
    const pick = (out: string) => out.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { event: string; data: { output?: string }; truncated?: Record<string, number> }).find((l) => l.event === "provider.tool_result");
    const l = pick(lite.stdout);
    const w = pick(full.stdout);
    expect(Buffer.byteLength(l?.data.output ?? "")).toBeLessThanOrEqual(4096);
    expect(l?.truncated).toEqual({ "data.output": Buffer.byteLength(w?.data.output ?? "") });
    expect(w?.data.output?.startsWith(l?.data.output ?? "x")).toBe(true);
    expect(w?.truncated).toBeUndefined();
  });

  it("[trace.native.lossless] native lines are the journal's records, field for field", async () => {
    const f = fixtureHome();
    const r = await runTau(["agent", "trace", FIXTURE_AGENT, "--format", "native"], { env: f.env });
    const { replayJournal, validateJournalRecord } = await import("../../../handwritten/store/index.js");
    const records = replayJournal(f.journal, { validate: validateJournalRecord }).records;
    expect(r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l) as unknown)).toEqual(JSON.parse(JSON.stringify(records)));
  });

  it("[trace.address.prefix-and-errors] unique prefixes and --session resolve; unknown and ambiguous ids fail with exit 1 and no output", async () => {
    const f = fixtureHome();
    const byPrefix = await runTau(["agent", "trace", "a-trace-fixture-0001".slice(0, 19) + "1", "--session", FIXTURE_SESSION.slice(0, 8), "--format", "perf"], { env: f.env });
    expect(byPrefix.code).toBe(0);
    expect(byPrefix.stdout).toContain(FIXTURE_AGENT);
    const ambiguous = await runTau(["agent", "trace", "a-trace", "--format", "perf"], { env: f.env });
    expect([ambiguous.code, ambiguous.stdout]).toEqual([1, ""]);
    expect(ambiguous.stderr).toMatch(/ambiguous: 2 agents match/);
    const unknown = await runTau(["agent", "trace", "a-nope", "--format", "native"], { env: f.env });
    expect([unknown.code, unknown.stdout]).toEqual([1, ""]);
    expect(unknown.stderr).toMatch(/no agent matches "a-nope"/);
    const noSession = await runTau(["agent", "trace", FIXTURE_AGENT, "--session", "s-nope", "--format", "native"], { env: f.env });
    expect([noSession.code, noSession.stdout]).toEqual([1, ""]);
    expect(noSession.stderr).toMatch(/no session matches/);
  });

  it("[trace.corrupt.no-output] a corrupt frame inside the prefix fails with exit 1, nothing on stdout, and the journal untouched", async () => {
    const f = fixtureHome();
    // A frame in the middle broken: the frames before it are fine, so a streaming exporter would
    // already have printed them.
    corruptJournalFrame(f.journal, 9);
    const before = snapshotTree(join(f.home, "state"));
    for (const format of ["native", "jsonl", "toon", "otlp", "perf"]) {
      const r = await runTau(["agent", "trace", FIXTURE_AGENT, "--format", format], { env: f.env });
      expect([r.code, r.stdout]).toEqual([1, ""]);
      expect(r.stderr).toMatch(/corrupt frame at offset \d+/);
    }
    expect(snapshotTree(join(f.home, "state"))).toEqual(before);
  });

  it("[trace.corrupt.no-output] a crash tail after the last complete frame is reported, not exported, and left in place", async () => {
    const f = fixtureHome();
    const bytes = readFileSync(f.journal);
    writeFileSync(f.journal, Buffer.concat([bytes, Buffer.from([9, 0, 0, 0, 0, 0, 0, 0, 1, 2])]));
    const r = await runTau(["agent", "trace", FIXTURE_AGENT, "--format", "native"], { env: f.env });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/incomplete final frame \(10 bytes/);
    expect(r.stdout).toBe(readFileSync(join(FIXTURE, "golden", "native.jsonl"), "utf8"));
    expect(readFileSync(f.journal).length).toBe(bytes.length + 10);
  });
});

describe("tau agent trace while a real daemon writes the journal", () => {
  it("[trace.live.checkpoint-boundary] validates and ends exactly on the bound checkpoint's frame boundary; the daemon keeps writing", async () => {
    const h = tauHome();
    cleanups.push(h.dispose);
    const state = join(h.home, "state");
    const g = generateSession(state, { targetBytes: 256 * 1024, outputBytes: 4096, projectRoot: h.home });
    const journal = join(state, "agents", g.agentId, "events.cbor");
    const checkpoint = JSON.parse(readFileSync(join(state, "agents", g.agentId, "meta.json"), "utf8")) as { boundary: number; next_seq: number };
    const d = await startDaemon(h.env, ["--resume", g.sessionId, "--project-root", h.home]);
    cleanups.push(() => {
      if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
    });
    expect(existsSync(`${journal}.lock`)).toBe(true);
    const ui = await TestClient.ui(d.socket);
    cleanups.push(() => ui.close());
    // Keep the daemon appending to the agent's journal while the trace runs: each request follows
    // the commit of the one before, so the daemon always has the next append in hand.
    ui.send({ message: "subscribe", payload: { historical: [], live: ["agent.metadata_set"] } });
    let writing = true;
    let n = 0;
    const writer = (async () => {
      while (writing) {
        const value = `/work/sub-${n++}`;
        ui.emit("agent.metadata_request", { agent_id: g.agentId, key: "cwd", value });
        await ui.next((m) => m.message === "deliver" && m.payload.event.name === "agent.metadata_set" && m.payload.event.data.value === value, 10_000, `the commit of ${value}`);
      }
    })();
    await waitFor(() => statSync(journal).size > checkpoint.boundary, "the daemon to append");
    const r = await runTau(["agent", "trace", g.agentId.slice(0, 10), "--format", "native"], { env: h.env });
    const grownDuring = statSync(journal).size;
    writing = false;
    await writer;
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { seq: number });
    expect(lines.map((l) => l.seq)).toEqual(Array.from({ length: checkpoint.next_seq }, (_, i) => i));
    expect(grownDuring).toBeGreaterThan(checkpoint.boundary);
    // The daemon was not kept out: it still holds its lock and appends after the trace.
    const sizeAfter = statSync(journal).size;
    ui.emit("agent.metadata_request", { agent_id: g.agentId, key: "cwd", value: "/work/after" });
    await waitFor(() => statSync(journal).size > sizeAfter, "an append after the trace");
    expect(isAlive(d.pid)).toBe(true);
  });
});
