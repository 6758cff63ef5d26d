// Launching an owned daemon: the launcher mints the session id and the runtime instance, starts
// `tau daemon` in its own process group with output to the session's log file, and waits for its
// socket (SPEC-runtime-discovery, SPEC-daemon-peers).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, closeSync } from "node:fs";
import { join } from "node:path";
import { formatStem, instanceEnv, mintInstance, pairPaths } from "./discovery.js";

/** How long a launcher waits for the daemon's socket to appear. */
export const LAUNCH_TIMEOUT_MS = 15_000;

export interface LaunchOptions {
  /** `[node, bin/run.js]`: how to run this installation of tau. */
  readonly tauCommand: readonly string[];
  readonly runtimeDir: string;
  readonly stateDir: string;
  readonly sessionId: string;
  /** Extra daemon arguments (`--ephemeral`, `--resume ID`, `--project-root DIR`, …). */
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  readonly ephemeral: boolean;
  readonly cwd?: string;
}

export interface LaunchedDaemon {
  readonly session_id: string;
  readonly pid: number;
  readonly socket: string;
}

export class LaunchError extends Error {
  override name = "LaunchError";
}

export async function launchDaemon(o: LaunchOptions): Promise<LaunchedDaemon> {
  const instance = mintInstance();
  let log: number | "ignore" = "ignore";
  const logPath = join(o.stateDir, "sessions", o.sessionId, "daemon.log");
  if (!o.ephemeral) {
    mkdirSync(join(o.stateDir, "sessions", o.sessionId), { recursive: true, mode: 0o700 });
    log = openSync(logPath, "a", 0o600);
  }
  const [cmd, ...pre] = o.tauCommand as [string, ...string[]];
  const child = spawn(cmd, [...pre, "daemon", ...o.args], {
    detached: true,
    stdio: ["ignore", log, log],
    env: { ...(o.env ?? process.env), ...instanceEnv(instance) },
    ...(o.cwd ? { cwd: o.cwd } : {}),
  });
  if (typeof log === "number") closeSync(log);
  child.unref();
  const pid = child.pid;
  if (pid === undefined) throw new LaunchError("could not start the tau daemon");
  const pair = pairPaths(o.runtimeDir, formatStem(pid, instance));
  // The metadata is written after the socket listens, so its presence means connections are accepted.
  for (let waited = 0; waited < LAUNCH_TIMEOUT_MS; waited += 10) {
    if (existsSync(pair.metadata)) return { session_id: o.sessionId, pid, socket: pair.socket };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  // A daemon that missed the deadline must not linger unowned: stop its whole process group.
  try {
    process.kill(-pid, "SIGTERM");
  } catch {
    // already gone
  }
  throw new LaunchError(`the tau daemon did not start within ${LAUNCH_TIMEOUT_MS / 1000} s${o.ephemeral ? "" : `; see ${logPath}`}`);
}
