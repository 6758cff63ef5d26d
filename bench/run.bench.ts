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

export async function run(): Promise<void> {
  const fake = await FakeOpenAI.start();
  const home = mkdtempSync(join(tmpdir(), "tau-bench-run-"));
  const project = join(home, "project");
  mkdirSync(project);
  writeFileSync(join(project, "README.md"), "bench\n");
  mkdirSync(join(home, "config"));
  writeFileSync(join(home, "config", "harness.yaml"), "model: fake-model\n");
  const env = { ...process.env, TAU_HOME: home, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "k", OPENAI_MODEL: "fake-model" };
  const rounds = 9;
  const walls: number[] = [];
  const baseline: number[] = [];
  const peaks = new Map<string, number>();
  try {
    for (let i = 0; i < rounds + 1; i++) {
      fake.enqueue(
        toolCallResponse([{ id: `call_${i}`, name: "shell", arguments: '{"command":"echo hi"}' }]),
        textResponse("It printed hi."),
      );
      const start = performance.now();
      const child = spawn(process.execPath, [TAU, "run", "--ephemeral", "-p", "run echo hi"], { env, cwd: project, stdio: "ignore" });
      const timer = setInterval(() => pollPeaks(peaks), 15);
      const code = await new Promise<number | null>((r) => child.once("exit", r));
      clearInterval(timer);
      if (code !== 0) throw new Error(`tau run exited ${code}`);
      if (i > 0) walls.push(performance.now() - start); // the first run warms caches
      const b = performance.now();
      spawnSync(process.execPath, ["-e", "0"]);
      baseline.push(performance.now() - b);
    }
  } finally {
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
  const wall = median(walls);
  const node = median(baseline);
  console.log(`tau run two-round job, median of ${rounds}: ${fmt(wall)} ms | node -e 0: ${fmt(node)} ms | ratio ${fmt(wall / node, 2)}x`);
  for (const [role, mib] of [...peaks.entries()].sort()) console.log(`  peak RSS ${role}: ${fmt(mib)} MiB`);
}
