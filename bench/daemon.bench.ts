// Idle daemon memory: RSS of a running `tau daemon` with no peers, beside an idle bare Node process
// (a timer keeping it alive), both measured in this run after one second of settling.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fmt, report } from "./support.js";

const TAU = fileURLToPath(new URL("../bin/tau.cjs", import.meta.url));

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

async function idleRss(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 1500));
  const rss = rssMiB(child.pid as number);
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  return rss;
}

export async function run(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "tau-bench-"));
  try {
    const daemon = await idleRss([TAU, "daemon", "--project-root", home], { TAU_HOME: home });
    const bare = await idleRss(["-e", "setInterval(() => {}, 1000)"], {});
    report("idle daemon RSS", `${fmt(daemon)} MiB`, "idle node process", `${fmt(bare)} MiB`, daemon / bare);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
