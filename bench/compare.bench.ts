// Start-up of this checkout against another one, interleaved in the same run (DECISION-startup-budget):
// `tau --version` and a two-round `tau run` job (one shell tool call, then a text answer, against a
// loopback OpenAI-compatible server), each run as a user's shell runs it (the bin file through its
// `#!` line). Rounds alternate the order (A B, then B A) so a slow moment of a shared machine falls on
// both alike. Both checkouts must be built (`npm run build` in each).
//
//   TAU_BENCH_BASELINE=/path/to/other/checkout npx tsx bench/main.ts compare
//
// Without TAU_BENCH_BASELINE it skips that comparison. Either way it pairs the same two-round job of
// this checkout sandboxed (the default) against `--no-sandbox` (SPEC-sandbox, "Figures"), in
// alternating order, and prints both medians, their ratio and the load average; and the sandboxed
// job as a first start runs it (no wrap kept from an earlier start).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { FakeOpenAI, textResponse, toolCallResponse } from "../test/support/fake-openai.js";
import { fmt, median } from "./support.js";

const HERE = fileURLToPath(new URL("..", import.meta.url));

interface Checkout {
  readonly label: string;
  readonly bin: string;
}

function checkout(label: string, dir: string): Checkout {
  const bin = join(resolve(dir), "bin", "tau.cjs");
  if (!existsSync(join(resolve(dir), "dist", "fast", "run.cjs"))) throw new Error(`${dir} is not built (run npm run build there)`);
  return { label, bin };
}

/** Wall time of one run of `bin args` started as a command (through its `#!` line). */
function versionMs(c: Checkout): number {
  const start = performance.now();
  const r = spawnSync(c.bin, ["--version"], { stdio: "ignore" });
  if (r.status !== 0) throw new Error(`${c.bin} --version exited ${r.status}`);
  return performance.now() - start;
}

async function runJobMs(c: Checkout, env: NodeJS.ProcessEnv, cwd: string, fake: FakeOpenAI, i: number, extra: readonly string[] = []): Promise<number> {
  fake.enqueue(toolCallResponse([{ id: `call_${i}`, name: "shell", arguments: '{"command":"echo hi"}' }]), textResponse("It printed hi."));
  const start = performance.now();
  const child = spawn(c.bin, ["run", "--ephemeral", ...extra, "-p", "run echo hi"], { env, cwd, stdio: "ignore" });
  const code = await new Promise<number | null>((r) => child.once("exit", r));
  if (code !== 0) throw new Error(`${c.bin} run exited ${code}`);
  return performance.now() - start;
}

/** Removes the wraps kept in `home` (SPEC-sandbox, "The wrap kept between starts"): the next start is as a first one. */
function forgetKeptWraps(home: string): void {
  const dir = join(home, "state", "sandbox-probes");
  if (!existsSync(dir)) return;
  for (const f of readdirSync(dir)) if (/^wrap-.*\.json$/.test(f)) rmSync(join(dir, f), { force: true });
}

function line(what: string, a: Checkout, am: number, b: Checkout, bm: number): void {
  console.log(`${what}: ${b.label} ${fmt(bm)} ms | ${a.label} ${fmt(am)} ms | ratio ${fmt(bm / am, 3)}x`);
}

export async function run(): Promise<void> {
  await sandboxPairing();
  const baseDir = process.env.TAU_BENCH_BASELINE;
  if (!baseDir) {
    console.log("checkouts: skipped (set TAU_BENCH_BASELINE to another built checkout, e.g. main's, to compare start-up with this one)");
    return;
  }
  const base = checkout("baseline", baseDir);
  const mine = checkout("this checkout", HERE);
  const pair: [Checkout, Checkout] = [base, mine];
  const order = (i: number): Checkout[] => (i % 2 === 0 ? pair : [mine, base]);

  const versionRounds = Number(process.env.TAU_BENCH_VERSION_ROUNDS ?? 41);
  const times = new Map<Checkout, number[]>([[base, []], [mine, []]]);
  for (const c of pair) versionMs(c); // warm the page cache and the code cache
  for (let i = 0; i < versionRounds; i++) for (const c of order(i)) times.get(c)?.push(versionMs(c));
  line(`tau --version, median of ${versionRounds}`, base, median(times.get(base) ?? []), mine, median(times.get(mine) ?? []));

  const home = mkdtempSync(join(tmpdir(), "tau-bench-compare-"));
  const fake = await FakeOpenAI.start();
  try {
    const project = join(home, "project");
    mkdirSync(project);
    writeFileSync(join(project, "README.md"), "bench\n");
    const homes = new Map<Checkout, string>();
    for (const c of pair) {
      const h = join(home, c === base ? "base" : "mine");
      mkdirSync(join(h, "config"), { recursive: true });
      writeFileSync(join(h, "config", "harness.yaml"), "model: fake-model\n");
      homes.set(c, h);
    }
    const envOf = (c: Checkout): NodeJS.ProcessEnv => ({ ...process.env, TAU_HOME: homes.get(c), OPENAI_API_KEY: "k", OPENAI_MODEL: "fake-model", OPENAI_BASE_URL: fake.baseUrl });
    const runRounds = Number(process.env.TAU_BENCH_RUN_ROUNDS ?? 15);
    const jobs = new Map<Checkout, number[]>([[base, []], [mine, []]]);
    let n = 0;
    for (const c of pair) await runJobMs(c, envOf(c), project, fake, n++); // warm-up
    for (let i = 0; i < runRounds; i++) for (const c of order(i)) jobs.get(c)?.push(await runJobMs(c, envOf(c), project, fake, n++));
    line(`tau run two-round job, median of ${runRounds}`, base, median(jobs.get(base) ?? []), mine, median(jobs.get(mine) ?? []));
  } finally {
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** The load average (1, 5, 15 minutes), for the figures' context. */
function loadAverage(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  } catch {
    return "unknown";
  }
}

/**
 * The two-round job of this checkout sandboxed and with `--no-sandbox`, paired in one run
 * (alternating which goes first), each in a TAU_HOME of its own: the sandbox's whole cost on a
 * short job, its set-up included (SPEC-sandbox, "Figures"). Sandboxed twice: as every start after
 * the first runs (the wrap an earlier start kept taken, the runtime not loaded), and as a first
 * start does (the kept wrap removed before each job: the runtime loaded and its wrap built).
 */
async function sandboxPairing(): Promise<void> {
  const mine = checkout("this checkout", HERE);
  const home = mkdtempSync(join(tmpdir(), "tau-bench-sandbox-pair-"));
  const fake = await FakeOpenAI.start();
  try {
    const project = join(home, "project");
    mkdirSync(project);
    writeFileSync(join(project, "README.md"), "bench\n");
    const modes = [
      { label: "sandboxed", args: [] as string[] },
      { label: "--no-sandbox", args: ["--no-sandbox"] },
      { label: "sandboxed-first-start", args: [] as string[] },
    ];
    const homes = modes.map((m) => join(home, m.label.replace(/\W/g, "")));
    const envs = homes.map((h) => {
      mkdirSync(join(h, "config"), { recursive: true });
      writeFileSync(join(h, "config", "harness.yaml"), "model: fake-model\n");
      return { ...process.env, TAU_HOME: h, OPENAI_API_KEY: "k", OPENAI_MODEL: "fake-model", OPENAI_BASE_URL: fake.baseUrl };
    });
    const job = (i: number, n: number): Promise<number> => {
      if (i === 2) forgetKeptWraps(homes[2] as string);
      return runJobMs(mine, envs[i] as NodeJS.ProcessEnv, project, fake, n, modes[i]?.args);
    };
    const rounds = Number(process.env.TAU_BENCH_RUN_ROUNDS ?? 15);
    const times: number[][] = [[], [], []];
    let n = 0;
    for (const i of [0, 1, 2]) await job(i, n++); // warm-up
    const before = loadAverage();
    for (let r = 0; r < rounds; r++) {
      for (const i of r % 2 === 0 ? [0, 1, 2] : [2, 1, 0]) times[i]?.push(await job(i, n++));
    }
    const [sandboxed, plain, first] = [median(times[0] ?? []), median(times[1] ?? []), median(times[2] ?? [])];
    console.log(
      `tau run two-round job, median of ${rounds} interleaved: sandboxed ${fmt(sandboxed)} ms | --no-sandbox ${fmt(plain)} ms | ratio ${fmt(sandboxed / plain, 3)}x (goal <= 1.15x) | load average ${before} -> ${loadAverage()}`,
    );
    console.log(`  sandboxed as a first start (no kept wrap): ${fmt(first)} ms | ratio ${fmt(first / plain, 3)}x`);
  } finally {
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}
