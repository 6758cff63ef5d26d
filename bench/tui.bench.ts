// The interactive UI in a pseudo-terminal: time from launching `tau` to its first rendered prompt
// frame, and keystroke-to-echo latency once a session is attached, each as p50 and p99. Baselines in
// the same run, also as p50 and p99 (the ratio compares the medians): a pty running `node -e 0`
// (process start and exit), and a minimal raw-mode Node echo program.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pty from "@lydell/node-pty";
import { fmt, median, percentile, report } from "./support.js";

const TAU = fileURLToPath(new URL("../bin/tau.cjs", import.meta.url));
const ECHO = "process.stdin.setRawMode(true);process.stdin.on('data',(d)=>{if(d[0]===3)process.exit(0);process.stdout.write(d)});process.stdout.write('> ')";

interface Session {
  proc: pty.IPty;
  out: () => string;
  started: number;
  waitFor: (pred: (out: string) => boolean, ms?: number) => Promise<number>;
}

/**
 * `p50 X ms, p99 Y ms` (nearest rank: with fewer than 100 samples, p99 is the slowest one seen).
 * The ratio reported beside it compares the medians.
 */
function spread(values: number[]): string {
  return `p50 ${fmt(percentile(values, 50))} ms, p99 ${fmt(percentile(values, 99))} ms`;
}

function spawnPty(args: string[], env: NodeJS.ProcessEnv, cwd: string): Session {
  const started = performance.now();
  const proc = pty.spawn(process.execPath, args, { name: "xterm-256color", cols: 100, rows: 30, cwd, env: env as Record<string, string> });
  let out = "";
  const waiters: Array<() => void> = [];
  proc.onData((d) => {
    out += d;
    // Answer the cursor-position query as a terminal would (the UI waits up to 250 ms otherwise).
    if (d.includes("\x1b[6n")) proc.write("\x1b[1;1R");
    for (const w of waiters.splice(0)) w();
  });
  return {
    proc,
    out: () => out,
    started,
    waitFor: (pred, ms = 20_000) =>
      new Promise((resolve, reject) => {
        const deadline = setTimeout(() => reject(new Error(`timed out; output so far: ${JSON.stringify(out.slice(-400))}`)), ms);
        const check = () => {
          if (pred(out)) {
            clearTimeout(deadline);
            resolve(performance.now());
          } else waiters.push(check);
        };
        check();
      }),
  };
}

export async function run(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "tau-bench-tui-"));
  const project = join(home, "project");
  mkdirSync(project);
  mkdirSync(join(home, "config"));
  writeFileSync(join(home, "config", "harness.yaml"), "{}\n");
  const env: NodeJS.ProcessEnv = { ...process.env, TAU_HOME: home, TERM: "xterm-256color" };
  delete env.OPENAI_BASE_URL;
  delete env.OPENAI_API_KEY;
  try {
    const rounds = 9;
    const firstFrame: number[] = [];
    const nodeStart: number[] = [];
    const keys: number[] = [];
    const echoKeys: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const n = spawnPty(["-e", "0"], env, project);
      await new Promise<void>((r) => n.proc.onExit(() => r()));
      nodeStart.push(performance.now() - n.started);

      const t = spawnPty([TAU], env, project);
      firstFrame.push((await t.waitFor((o) => o.includes("› "))) - t.started);
      await t.waitFor((o) => o.includes("ready"));
      // Keystroke → echo: one printable key at a time, timed to the frame that draws it.
      for (const ch of "abcdefghij") {
        const before = t.out().length;
        const sent = performance.now();
        t.proc.write(ch);
        keys.push((await t.waitFor((o) => o.length > before && o.slice(before).includes(ch))) - sent);
      }
      t.proc.write("\x15:quit\r");
      await new Promise<void>((r) => t.proc.onExit(() => r()));

      const e = spawnPty(["-e", ECHO], env, project);
      await e.waitFor((o) => o.includes("> "));
      for (const ch of "abcdefghij") {
        const before = e.out().length;
        const sent = performance.now();
        e.proc.write(ch);
        echoKeys.push((await e.waitFor((o) => o.length > before && o.slice(before).includes(ch))) - sent);
      }
      e.proc.write("\x03");
      await new Promise<void>((r) => e.proc.onExit(() => r()));
    }
    report(`tau launch → first prompt frame (${firstFrame.length} launches)`, spread(firstFrame), "node -e 0 in a pty", spread(nodeStart), median(firstFrame) / median(nodeStart));
    report(`keystroke → echo (${keys.length} keys)`, spread(keys), "raw-mode node echo", spread(echoKeys), median(keys) / median(echoKeys));
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
