// Starting a daemon this CLI process owns (`tau run`, `tau`): it exits when its last UI leaves.
// Imports only the small launch and paths modules, so a caller can start the daemon before it
// loads anything heavy and let both boot at once.
import { ID_RANDOM_BYTES, formatId } from "../startup/launch-facts.js";
import { DAEMON_FLAGS } from "../startup/daemon-flags.js";
import { flagArgs } from "../startup/flags.js";
import { randomHex } from "../startup/random.js";
import type { Roots } from "../config/paths.js";
import { selfCommand, startDaemon, type StartedDaemon } from "../transport/launch.js";

export interface OwnedDaemonOptions {
  /** `--harness-config KEY=VALUE` overrides, in order. */
  readonly overrides?: readonly string[];
  readonly ephemeral?: boolean;
  /** Restart this saved session instead of minting a new one. */
  readonly resume?: string;
  /** The session's project folder (default: the working folder). */
  readonly projectRoot?: string;
  /** MCP servers a client brought for this session: a 0600 JSON file the daemon reads and removes. */
  readonly mcpServersFile?: string;
}

/** Starts (or resumes) an owned daemon; returns at once (see `waitForDaemon`). */
export function startOwnedDaemon(roots: Roots, o: OwnedDaemonOptions = {}): StartedDaemon {
  const sessionId = o.resume ?? formatId("s", Date.now(), randomHex(ID_RANDOM_BYTES));
  return startDaemon({
    tauCommand: selfCommand(),
    runtimeDir: roots.runtime,
    stateDir: roots.state,
    sessionId,
    args: ownedDaemonArgs(sessionId, o),
    ephemeral: o.ephemeral === true,
    ...(o.projectRoot !== undefined ? { cwd: o.projectRoot } : {}),
  });
}

/**
 * The `tau daemon` arguments of an owned daemon for `sessionId` (a new session's, or the one
 * `o.resume` names), in the working folder: also what a daemon started by the `tau` launcher script
 * for a `tau run` gives itself (entries/run-early-daemon.ts).
 */
export function ownedDaemonArgs(sessionId: string, o: OwnedDaemonOptions = {}): string[] {
  return flagArgs(DAEMON_FLAGS, {
    ...(o.resume ? { resume: o.resume } : { "session-id": sessionId }),
    "exit-when-uis-leave": true,
    "project-root": o.projectRoot ?? process.cwd(),
    ephemeral: o.ephemeral === true,
    "harness-config": o.overrides ?? [],
    ...(o.mcpServersFile !== undefined ? { "mcp-servers-file": o.mcpServersFile } : {}),
  });
}
