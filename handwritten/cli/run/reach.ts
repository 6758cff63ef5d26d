// Reaching a `tau run`'s daemon, and what the run says when it cannot: a daemon that exited before
// its socket was up (its last words, or a configuration mistake found here too), and one that went
// away while the run was waiting for its prompt.
import { closeSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import type { Roots } from "../../config/paths.js";
import { RuntimeDirError } from "../../transport/errors.js";
import { DaemonExitedError, abandonDaemon, loadFastBundle, waitForDaemon, type LaunchedDaemon, type StartedDaemon } from "../../transport/launch.js";
import { checkRuntimeDir } from "../../transport/runtime-dir.js";
import { TauError } from "../errors.js";
import { sanitize } from "../ui/index.js";
import type { RunOptions } from "./daemon.js";

type RunConfig = typeof import("./config.js");

/** What makes the runtime folder unusable, if anything (nothing is created or changed). */
function runtimeDirProblem(dir: string): string | undefined {
  try {
    checkRuntimeDir(dir);
    return undefined;
  } catch (err) {
    return err instanceof RuntimeDirError ? err.message : undefined;
  }
}

/** How much of the end of a daemon's log is read for its last word. */
const LOG_TAIL_BYTES = 8_192;

/** The last line the daemon wrote about itself (`tau daemon: …`) near the end of its log, sanitized. */
function lastDaemonMessage(logPath: string): string | undefined {
  try {
    const fd = openSync(logPath, "r");
    try {
      const size = fstatSync(fd).size;
      const buf = Buffer.alloc(Math.min(size, LOG_TAIL_BYTES));
      readSync(fd, buf, 0, buf.length, size - buf.length);
      const line = buf.toString("utf8").split("\n").reverse().find((l) => l.startsWith("tau daemon: "));
      return line === undefined ? undefined : sanitize(line.slice("tau daemon: ".length).slice(0, 500));
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/**
 * Waits for the daemon's socket. A daemon that exited first is reported: the daemon checks the
 * configuration before anything else and exits on a mistake, writing it to its log, so the check
 * is made here too and the mistake reported to this terminal, and the session the daemon was
 * started for is taken back, leaving nothing of it behind. Any other early exit keeps the
 * session's log, which the message points to.
 */
export async function reachDaemon(starting: StartedDaemon, o: RunOptions, roots: Roots): Promise<LaunchedDaemon | TauError> {
  try {
    return await waitForDaemon(starting);
  } catch (err) {
    if (!(err instanceof DaemonExitedError)) throw err;
    const check = loadFastBundle<RunConfig>("run-config");
    const mistake = await check.exports.configMistake(roots, o.harnessConfig ?? []);
    check.settled();
    if (mistake === undefined) {
      // An --ephemeral daemon logs nowhere: the likeliest reason, an unusable runtime folder, is
      // checked here instead (read-only).
      const reason = (starting.options.ephemeral ? undefined : lastDaemonMessage(starting.logPath)) ?? runtimeDirProblem(roots.runtime);
      return new TauError("TAU-E0401", `tau: ${reason ? `${reason} (${err.message})` : err.message}`);
    }
    // A saved session the run continued is the user's, not the run's: it is never taken back.
    if (o.resume === undefined) await abandonDaemon(starting);
    return new TauError("TAU-E0201", `tau: ${mistake}`);
  }
}

/** Whether the process is gone (or a zombie: an adopted daemon is this process's child, never waited for). */
function processGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return /^[ZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
  } catch {
    return true;
  }
}

/** How long a run that lost its daemon's connection looks for the daemon's exit (it closes its socket as it dies). */
const EXIT_SEEN_WITHIN_MS = 1_000;

/**
 * The run lost its daemon before its prompt's outcome was known: what happened, what the daemon
 * said when it closed the connection (if it said anything), and where its log is.
 */
export async function daemonLost(daemon: StartedDaemon, reason: string | undefined): Promise<TauError> {
  for (const until = Date.now() + EXIT_SEEN_WITHIN_MS; !processGone(daemon.pid) && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10));
  const what = processGone(daemon.pid) ? "is gone (it was killed or exited)" : "closed the connection";
  const said = reason !== undefined ? ` (${sanitize(reason.slice(0, 300))})` : "";
  const log = daemon.options.ephemeral ? "" : `; its log: ${daemon.logPath}`;
  return new TauError("TAU-E0409", `tau: the session's daemon (pid ${daemon.pid}) ${what}${said} before the prompt finished; the prompt's outcome is unknown${log}`);
}
