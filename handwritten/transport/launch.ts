// Launching an owned daemon: the launcher mints the session id and the runtime instance, starts
// `tau daemon` in its own process group with output to the session's log file, and waits for its
// socket (SPEC-runtime-discovery, SPEC-daemon-peers). Starting and waiting are separate steps, so a
// launcher can do its own start-up work while the daemon boots.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, openSync, closeSync, readFileSync, realpathSync, rmSync, watch, type FSWatcher } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Writable } from "node:stream";
import { forTauProcess } from "../startup/extra-ca-certs.js";
import { DAEMON_COMMAND, DAEMON_LOG, SESSION_DIR_MODE, SESSIONS_DIR } from "../startup/launch-facts.js";
import { secretHandover } from "../protocol/secret-handover.js";
import { formatStem, instanceEnv, mintInstance, pairPaths, type PairPaths } from "./discovery.js";

/** How long a launcher waits for the daemon's socket to appear. */
export const LAUNCH_TIMEOUT_MS = 15_000;

/** Re-check interval while waiting, when the runtime folder can be watched (changes wake it at once). */
const WATCHED_RECHECK_MS = 100;
/** Re-check interval while waiting, when it cannot. */
const POLL_MS = 10;

/**
 * How tau starts its own processes (daemon, first-party extensions): this node and the
 * `bin/tau.cjs` beside the `bin/run.js` (or `bin/tau.cjs`) that started this process — the
 * CommonJS entry, which skips the ES module loader's start-up. Falls back to the starting script
 * itself when there is no such file.
 */
export function selfCommand(): string[] {
  const script = process.argv[1] as string;
  try {
    const fast = join(dirname(realpathSync(script)), "tau.cjs");
    if (existsSync(fast)) return [process.execPath, fast];
  } catch {
    // not a file we can resolve: use it as it is
  }
  return [process.execPath, script];
}

/**
 * Loads `dist/fast/<name>.cjs`, a part of tau bundled on its own (the client of `tau run`, the
 * harness of `tau daemon`), through the code-cached loader the entry used; call `settled()` once its
 * start-up work is done. `import.meta.url` is this module's source file or, bundled, the bundle in
 * dist/fast/: both two folders below the checkout.
 */
export function loadFastBundle<T>(name: string): { exports: T; settled: () => void } {
  const { loadBundle } = createRequire(import.meta.url)("../../bin/bundle-loader.cjs") as {
    loadBundle: (file: string) => { exports: T; settled: () => void };
  };
  return loadBundle(fileURLToPath(new URL(`../../dist/fast/${name}.cjs`, import.meta.url)));
}

export interface LaunchOptions {
  /** `[node, bin/tau.cjs]`: how to run this installation of tau. */
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

/** A daemon process that was started and may not listen yet. */
export interface StartedDaemon {
  readonly options: LaunchOptions;
  /** The process, when this one spawned it; absent for a daemon adopted from the `tau` launcher script. */
  readonly child?: ChildProcess;
  readonly pid: number;
  readonly pair: PairPaths;
  readonly logPath: string;
}

export class LaunchError extends Error {
  override name = "LaunchError";
}

/** The daemon exited before its socket was up (a configuration mistake, most often: see its log). */
export class DaemonExitedError extends LaunchError {
  override name = "DaemonExitedError";
}

/** Starts and waits for the socket. */
export async function launchDaemon(o: LaunchOptions): Promise<LaunchedDaemon> {
  return waitForDaemon(startDaemon(o));
}

/** A session's daemon log, where the `tau` launcher script makes it too (launch facts). */
function daemonLogPath(stateDir: string, sessionId: string): string {
  return join(stateDir, SESSIONS_DIR, sessionId, DAEMON_LOG);
}

/** Starts `tau daemon` in its own process group; returns at once. */
export function startDaemon(o: LaunchOptions): StartedDaemon {
  const instance = mintInstance();
  let log: number | "ignore" = "ignore";
  const logPath = daemonLogPath(o.stateDir, o.sessionId);
  if (!o.ephemeral) {
    mkdirSync(join(o.stateDir, SESSIONS_DIR, o.sessionId), { recursive: true, mode: SESSION_DIR_MODE });
    log = openSync(logPath, "a", 0o600);
  }
  const [cmd, ...pre] = o.tauCommand as [string, ...string[]];
  // The daemon's secrets go over a pipe on its fd 3, never into its environment block.
  const { env, secrets } = secretHandover({ ...(o.env ?? process.env), ...instanceEnv(instance) });
  const child = spawn(cmd, [...pre, DAEMON_COMMAND, ...o.args], {
    detached: true,
    stdio: secrets === undefined ? ["ignore", log, log] : ["ignore", log, log, "pipe"],
    env: forTauProcess(env),
    ...(o.cwd ? { cwd: o.cwd } : {}),
  });
  if (typeof log === "number") closeSync(log);
  if (secrets !== undefined) {
    const pipe = child.stdio[3] as Writable;
    pipe.on("error", () => undefined); // a daemon that died at once: its exit is reported instead
    pipe.end(secrets);
  }
  child.unref();
  const pid = child.pid;
  if (pid === undefined) throw new LaunchError("could not start the tau daemon");
  return { options: o, child, pid, pair: pairPaths(o.runtimeDir, formatStem(pid, instance)), logPath };
}

/**
 * Takes over a daemon that the `tau` launcher script started for this process, in parallel with it
 * (bin/tau.cjs): the script minted `instance` and `o.sessionId` as this launcher would have, and
 * started the daemon in its own session. `undefined` (adopt nothing) unless `pid` is this process's
 * own child, so a pid that did not come from the script can never make this process signal another.
 */
export function adoptDaemon(o: Omit<LaunchOptions, "tauCommand" | "args">, pid: number, instance: string): StartedDaemon | undefined {
  if (parentOf(pid) !== process.pid) return undefined;
  return { options: { ...o, tauCommand: [], args: [] }, pid, pair: pairPaths(o.runtimeDir, formatStem(pid, instance)), logPath: daemonLogPath(o.stateDir, o.sessionId) };
}

/** The fields of `/proc/<pid>/stat` after the command name (state, ppid, …), or undefined once it is gone. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ")"
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** The parent of `pid` (from /proc), or undefined when it cannot be read. */
export function parentOf(pid: number): number | undefined {
  const ppid = Number(statFields(pid)?.[1]);
  return Number.isInteger(ppid) ? ppid : undefined;
}

/**
 * Whether the daemon has exited. An adopted daemon is this process's child, but not one node waits
 * for: once it exits it stays a zombie (state Z) until this process exits too.
 */
function hasExited(d: StartedDaemon): boolean {
  if (d.child) return d.child.exitCode !== null || d.child.signalCode !== null;
  const state = statFields(d.pid)?.[0];
  return state === undefined || state === "Z" || state === "X";
}

/** Re-check interval for an adopted daemon, whose exit raises no event here. */
const ADOPTED_RECHECK_MS = 20;

/**
 * Resolves once the daemon's socket accepts connections. The metadata is written after the socket
 * listens, so its presence means connections are accepted; the runtime folder is watched so the
 * launcher learns of it without a polling delay. A daemon that exits first, or misses the deadline,
 * is stopped (its whole process group) and reported.
 */
export async function waitForDaemon(d: StartedDaemon): Promise<LaunchedDaemon> {
  const { options: o, child, pid, pair } = d;
  const deadline = Date.now() + LAUNCH_TIMEOUT_MS;
  let wake = (): void => {};
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(o.runtimeDir, { persistent: false }, () => wake());
    watcher.on("error", () => {});
  } catch {
    watcher = undefined; // no runtime folder yet (the daemon creates it) or no watching here: poll
  }
  const onExit = (): void => wake();
  child?.once("exit", onExit);
  const recheck = !child ? ADOPTED_RECHECK_MS : watcher ? WATCHED_RECHECK_MS : POLL_MS;
  try {
    while (Date.now() < deadline) {
      if (existsSync(pair.metadata)) return { session_id: o.sessionId, pid, socket: pair.socket };
      if (hasExited(d)) {
        stopGroup(d); // extensions it had started, if any
        throw new DaemonExitedError(`the tau daemon exited before it started${o.ephemeral ? "" : `; see ${d.logPath}`}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, recheck);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    watcher?.close();
    child?.off("exit", onExit);
  }
  // A daemon that missed the deadline must not linger unowned: stop its whole process group.
  stopGroup(d);
  throw new LaunchError(`the tau daemon did not start within ${LAUNCH_TIMEOUT_MS / 1000} s${o.ephemeral ? "" : `; see ${d.logPath}`}`);
}

/**
 * Takes back a started daemon the launcher no longer wants (its own checks failed before it ever
 * connected): stops the process group, waits for the daemon to exit, and removes the session folder
 * the launcher created for its log, so nothing of the session is left behind.
 */
export async function abandonDaemon(d: StartedDaemon): Promise<void> {
  if (!hasExited(d)) {
    const { child } = d;
    const exited = child
      ? new Promise<void>((resolve) => child.once("exit", () => resolve()))
      : (async () => {
          while (!hasExited(d)) await new Promise((resolve) => setTimeout(resolve, ADOPTED_RECHECK_MS));
        })();
    stopGroup(d);
    const timer = setTimeout(() => stopGroup(d, "SIGKILL"), 2_000);
    await exited;
    clearTimeout(timer);
  }
  if (!d.options.ephemeral) rmSync(join(d.options.stateDir, SESSIONS_DIR, d.options.sessionId), { recursive: true, force: true });
}

/**
 * Signals the daemon's process group. An adopted daemon may not lead one yet (between its start and
 * the `setsid` that makes it a leader): it is signalled alone then, which is safe because it is this
 * process's child, so its pid cannot be reused while this process lives (not even as a zombie).
 */
function stopGroup(d: StartedDaemon, signal: NodeJS.Signals = "SIGTERM"): void {
  try {
    process.kill(-d.pid, signal);
    return;
  } catch {
    // no such group: already gone, or an adopted daemon not yet a group leader
  }
  if (d.child) return;
  try {
    process.kill(d.pid, signal);
  } catch {
    // already gone
  }
}
