// `tau daemon --for-run SESSION_ID INSTANCE RUN-ARGUMENTS…`: the daemon the `tau` launcher script
// starts for a `tau run` at the same moment as the run's own client (bin/tau.cjs), so the two boot in
// parallel. The script minted the session id and the runtime instance as the client's launcher would,
// made the session's folder (0700) and log unless the run is --ephemeral, and started this process in a
// session of its own with its output to that log. Here the run's arguments are parsed as the client
// parses them: when the run goes ahead this process becomes its owned daemon, with the arguments and
// the instance the client's launcher would have given it; when it does not (the client reports why),
// what the script made is removed and this process exits.
import { chmodSync, rmdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { resolveRoots } from "../config/paths.js";
import { main as daemonMain } from "../harness/daemon-start.js";
import { DAEMON_COMMAND, DAEMON_LOG, FOR_RUN_FLAG, SESSIONS_DIR } from "../startup/launch-facts.js";
import { EXIT_CODES, TauError, exitWithError } from "../cli/errors.js";
import { ownedDaemonArgs } from "../cli/owned-daemon.js";
import { DAEMON_INSTANCE_ENV } from "../transport/limits.js";
// The small files it needs, not cli/run/index.ts: that would bring the run's client (protocol,
// session client) into this start-up bundle.
import { parseEarlyLaunch, parseRunArgs } from "../cli/run/args.js";

export async function main(argv: readonly string[]): Promise<void> {
  const launch = parseEarlyLaunch([DAEMON_COMMAND, FOR_RUN_FLAG, ...argv], 0);
  if (!launch) {
    exitWithError(new TauError("TAU-E0106", `usage: tau ${DAEMON_COMMAND} ${FOR_RUN_FLAG} SESSION_ID INSTANCE RUN-ARGUMENTS…`));
    return;
  }
  const parsed = parseRunArgs(argv.slice(2));
  // A run that continues a saved session starts that session's daemon itself: this one stands down.
  const resumes = parsed.ok && parsed.args.options.resume !== undefined;
  if (!parsed.ok || parsed.args.options.ephemeral || resumes) removeLaunchFolder(launch.sessionId);
  if (!parsed.ok || resumes) return;
  const o = parsed.args.options;
  // The script made the log with the user's umask, inside a folder only they can enter: 0600 now.
  if (!o.ephemeral) chmodLog(launch.sessionId);
  // The instance reaches the daemon as it does from the client's launcher (and every process it starts).
  process.env[DAEMON_INSTANCE_ENV] = launch.instance;
  await daemonMain(ownedDaemonArgs(launch.sessionId, { overrides: o.harnessConfig ?? [], ephemeral: o.ephemeral }));
  // A configuration mistake (the daemon's usage or configuration exit status) stops it before it
  // starts. The client reports the mistake and takes back a daemon it adopted, but one that exited
  // before the client got to it was never adopted: the folder made for it goes here, so no run that
  // never started leaves a session behind.
  if (process.exitCode === EXIT_CODES.config) removeLaunchFolder(launch.sessionId);
}

function chmodLog(sessionId: string): void {
  try {
    chmodSync(join(resolveRoots().state, SESSIONS_DIR, sessionId, DAEMON_LOG), 0o600);
  } catch {
    // not there: the daemon makes the session's files as usual
  }
}

/** The session folder and log the script made, removed only while that is all the folder holds. */
function removeLaunchFolder(sessionId: string): void {
  const dir = join(resolveRoots().state, SESSIONS_DIR, sessionId);
  try {
    rmSync(join(dir, DAEMON_LOG), { force: true });
    rmdirSync(dir);
  } catch {
    // not made (an --ephemeral run), or not empty: not the script's alone
  }
}
