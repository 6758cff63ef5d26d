// A two-round job through `tau run` (one shell tool call, then a text answer) against a loopback
// OpenAI-compatible server: median wall time, and peak RSS of each tau process (client, daemon,
// provider, shell), beside `node -e 0` measured in the same run.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FakeOpenAI, textResponse, toolCallResponse } from "../test/support/fake-openai.js";
import { fmt, median } from "./support.js";

const TAU = fileURLToPath(new URL("../bin/tau.cjs", import.meta.url));
/** `tau run …` as a user's shell runs it: the bin file itself, through its `#!` line. */
const tauRun = (): [string, string[]] => [TAU, ["run", "--ephemeral", "-p", "run echo hi"]];

/** Peak RSS (VmHWM) of every live tau process, polled while a job runs. */
function pollPeaks(peaks: Map<string, number>): void {
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      const at = cmd.findIndex((c) => c === TAU);
      if (at < 0) continue;
      const role = cmd[at + 1] === "ext" ? `ext ${cmd[at + 2]}` : (cmd[at + 1] ?? "?");
      const hwm = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
      peaks.set(role, Math.max(peaks.get(role) ?? 0, hwm));
    } catch {
      // the process ended between listing and reading
    }
  }
}

/** Critical-path milestones (TAU_TIMELINE labels, see handwritten/startup/timeline.ts), in order. */
const MILESTONES: ReadonlyArray<[string, string]> = [
  ["daemon exec", "daemon: process started"],
  ["run main", "client: entry reached"],
  ["run daemon adopted", "client: daemon adopted (started by the launcher script)"],
  ["run daemon spawned", "client: daemon spawned"],
  ["daemon main", "daemon: entry reached"],
  ["daemon extensions spawned early", "daemon: extensions spawned"],
  ["daemon harness loaded", "daemon: harness loaded"],
  ["daemon endpoint published", "daemon: socket published"],
  ["run attached", "client: attached"],
  ["ext ready", "extensions: first ready"],
  ["ext ready #2", "extensions: last ready"],
  ["commit harness.models_available", "daemon: models available"],
  ["run submitted", "client: prompt submitted"],
  ["provider request", "provider: round 1 request"],
  ["commit tool.started", "daemon: tool started"],
  ["commit tool.result", "daemon: tool result"],
  ["provider request #2", "provider: round 2 request"],
  ["run outcome", "client: outcome"],
];

/** Milestone → ms since the spawn, for one timeline file (labels repeated in order get #2, #3…). */
function readTimeline(file: string, start: number): Map<string, number> {
  const at = new Map<string, number>();
  const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => l.split(" "));
  lines.sort((a, b) => Number(a[0]) - Number(b[0]));
  for (const [t, , ...label] of lines) {
    let key = label.join(" ").replace(/^ext [a-z-]+ /, "ext ");
    for (let n = 2; at.has(key); n++) key = `${label.join(" ").replace(/^ext [a-z-]+ /, "ext ")} #${n}`;
    at.set(key, Number(t) - start);
  }
  return at;
}

export async function run(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "tau-bench-run-"));
  const project = join(home, "project");
  mkdirSync(project);
  writeFileSync(join(project, "README.md"), "bench\n");
  mkdirSync(join(home, "config"));
  writeFileSync(join(home, "config", "harness.yaml"), "model: fake-model\n");
  const env = { ...process.env, TAU_HOME: home, OPENAI_API_KEY: "k", OPENAI_MODEL: "fake-model" };
  try {
    await timed(env, project);
    await breakdown(env, project);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** Runs (after the timed ones) that sample each process's peak memory instead of timing. */
const PEAK_RUNS = 3;

/** Median wall time and peak RSS per process, beside `node -e 0`. */
async function timed(baseEnv: NodeJS.ProcessEnv, project: string): Promise<void> {
  const fake = await FakeOpenAI.start();
  const env = { ...baseEnv, OPENAI_BASE_URL: fake.baseUrl };
  const rounds = 9 + PEAK_RUNS;
  const walls: number[] = [];
  const baseline: number[] = [];
  const peaks = new Map<string, number>();
  try {
    for (let i = 0; i < rounds + 1; i++) {
      fake.enqueue(
        toolCallResponse([{ id: `call_${i}`, name: "shell", arguments: '{"command":"echo hi"}' }]),
        textResponse("It printed hi."),
      );
      // Memory is sampled in separate runs: reading /proc every few ms would take CPU from the job.
      const sampled = i > rounds - PEAK_RUNS;
      const start = performance.now();
      const child = spawn(...tauRun(), { env, cwd: project, stdio: "ignore" });
      const timer = sampled ? setInterval(() => pollPeaks(peaks), 15) : undefined;
      const code = await new Promise<number | null>((r) => child.once("exit", r));
      clearInterval(timer);
      if (code !== 0) throw new Error(`tau run exited ${code}`);
      if (i > 0 && !sampled) walls.push(performance.now() - start); // the first run warms caches
      const b = performance.now();
      spawnSync(process.execPath, ["-e", "0"]);
      baseline.push(performance.now() - b);
    }
  } finally {
    await fake.close();
  }
  const wall = median(walls);
  const node = median(baseline);
  console.log(`tau run two-round job, median of ${walls.length}: ${fmt(wall)} ms | node -e 0: ${fmt(node)} ms | ratio ${fmt(wall / node, 2)}x`);
  for (const [role, mib] of [...peaks.entries()].sort()) console.log(`  peak RSS ${role}: ${fmt(mib)} MiB`);
}

/** Where the time goes: a few more runs with TAU_TIMELINE, median ms since the spawn per milestone. */
async function breakdown(baseEnv: NodeJS.ProcessEnv, project: string): Promise<void> {
  const fake = await FakeOpenAI.start();
  const dir = mkdtempSync(join(tmpdir(), "tau-bench-timeline-"));
  const runs = 5;
  const samples = new Map<string, number[]>();
  try {
    for (let i = 0; i < runs; i++) {
      fake.enqueue(toolCallResponse([{ id: `call_${i}`, name: "shell", arguments: '{"command":"echo hi"}' }]), textResponse("It printed hi."));
      const file = join(dir, `timeline-${i}.txt`);
      const start = performance.timeOrigin + performance.now();
      const child = spawn(...tauRun(), {
        env: { ...baseEnv, OPENAI_BASE_URL: fake.baseUrl, TAU_TIMELINE: file },
        cwd: project,
        stdio: "ignore",
      });
      const code = await new Promise<number | null>((r) => child.once("exit", r));
      if (code !== 0) throw new Error(`tau run exited ${code}`);
      const exit = performance.timeOrigin + performance.now() - start;
      const at = readTimeline(file, start);
      for (const [label] of MILESTONES) if (at.has(label)) (samples.get(label) ?? samples.set(label, []).get(label))?.push(at.get(label) as number);
      (samples.get("exit") ?? samples.set("exit", []).get("exit"))?.push(exit);
    }
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`  critical path (TAU_TIMELINE, median of ${runs}, ms since the spawn):`);
  for (const [label, text] of [...MILESTONES, ["exit", "client: exited"] as [string, string]]) {
    const v = samples.get(label);
    if (v && v.length > 0) console.log(`    ${fmt(median(v)).padStart(6)}  ${text}`);
  }
}
