// Runs the real `tau` binary as a child process and captures its output.
import { spawn, type ChildProcess } from "node:child_process";
import { TAU_BIN } from "./paths.js";

export interface TauRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * `asCommand`: run bin/tau.cjs itself, through its `#!` line, as a shell does; otherwise `node
 * bin/tau.cjs`. `onSpawn` is given the process at once (a test that signals it while it runs).
 */
export function runTau(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string; asCommand?: boolean; onSpawn?: (child: ChildProcess) => void } = {},
): Promise<TauRun> {
  return new Promise((resolve, reject) => {
    const [command, argv] = opts.asCommand ? [TAU_BIN, args] : [process.execPath, [TAU_BIN, ...args]];
    const child = spawn(command, argv, {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    opts.onSpawn?.(child);
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
    // A tau that stops reading its input early (a refused prompt) closes the pipe: not an error here.
    child.stdin.on("error", () => {});
    child.stdin.end(opts.input ?? "");
  });
}

/** The data of the first `event` in the output of `tau run --json` (one JSON event a line). */
export function runJsonEvent(stdout: string, event: string): Record<string, unknown> | undefined {
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string; data: Record<string, unknown> })
    .find((e) => e.event === event)?.data;
}
