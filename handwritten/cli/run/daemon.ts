// Starting the owned daemon of a `tau run`, or adopting the one the `tau` launcher script started for
// it. Kept apart from prompt.ts, and importing the small files it needs rather than their
// folders' index.ts, so the fast path can start the daemon before the protocol, the validators and
// the client are initialised.
import { resolveRoots, type Roots } from "../../config/paths.js";
import { readFileSync } from "node:fs";
import { RUN_DAEMON_ENV } from "../../startup/launch-facts.js";
import { adoptDaemon, parentOf, type StartedDaemon } from "../../transport/launch.js";
import { parseEarlyLaunch } from "./args.js";
import { startOwnedDaemon } from "../owned-daemon.js";

export interface RunOptions {
  readonly json: boolean;
  readonly ephemeral: boolean;
  readonly model?: string;
  readonly harnessConfig?: readonly string[];
  /** A skill whose body is submitted with the prompt text as the user's own words (SPEC-skills). */
  readonly skill?: string;
  /**
   * Continue a saved session: this project's most recent (`--continue`), or the one an id or prefix
   * names (`--resume`); with `fork`, a fork of it (SPEC-session-lifecycle, "Forks").
   */
  readonly resume?: ({ readonly last: true } | { readonly session: string }) & { readonly fork?: true };
  /** Resolved from `resume`: the saved session's agent the prompt goes to (none: a new agent). */
  readonly agentId?: string;
}

/**
 * Starts the owned daemon for a `tau run` (it boots while the caller loads and checks the rest);
 * `runPrompt` takes it over, or abandons it when the run cannot go ahead.
 */
export function startRunDaemon(o: RunOptions, roots: Roots = resolveRoots()): StartedDaemon {
  return startOwnedDaemon(roots, { overrides: o.harnessConfig ?? [], ephemeral: o.ephemeral });
}

/**
 * How long the script's child may take to become the daemon (it makes the session folder first).
 * Generous: a child stopped before it became the daemon may leave the folder it made, whose name
 * only it knew, so it is given all the time a daemon start may take on a loaded machine.
 */
const EARLY_EXEC_WAIT_MS = 15_000;

/**
 * The daemon the launcher script started for this run, when it did and the pid is this process's own
 * child: its session id and instance are read from the child's command line once it has become
 * `tau daemon --for-run` (the script's child could not have told this process otherwise). The value
 * is removed from the environment either way, so nothing started later inherits it. A child that
 * never gets there is stopped, and the caller starts a daemon itself.
 */
export async function takeEarlyDaemon(o: RunOptions, roots: Roots = resolveRoots(), env: NodeJS.ProcessEnv = process.env): Promise<StartedDaemon | undefined> {
  const value = env[RUN_DAEMON_ENV];
  if (value === undefined) return undefined;
  delete env[RUN_DAEMON_ENV];
  if (!/^[1-9][0-9]{0,9}$/.test(value)) return undefined;
  const pid = Number(value);
  if (parentOf(pid) !== process.pid) return undefined;
  const deadline = Date.now() + EARLY_EXEC_WAIT_MS;
  for (;;) {
    const cmdline = commandLineOf(pid);
    if (cmdline === undefined) return undefined; // it exited (the script could not set up): nothing to adopt
    const launch = parseEarlyLaunch(cmdline, 2) ?? parseEarlyLaunch(cmdline, 3);
    if (launch) return adoptDaemon({ runtimeDir: roots.runtime, stateDir: roots.state, sessionId: launch.sessionId, ephemeral: o.ephemeral }, pid, launch.instance);
    if (Date.now() > deadline) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
      return undefined;
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** A live process's command line (NUL-separated in /proc), or undefined once it has exited. */
function commandLineOf(pid: number): string[] | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    if (raw === "") return undefined; // a zombie's is empty
    return raw.split("\0");
  } catch {
    return undefined;
  }
}
