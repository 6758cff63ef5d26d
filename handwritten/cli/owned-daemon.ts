// Starting a daemon this CLI process owns (`tau run`, `tau`): it exits when its last UI leaves.
// Imports only the small launch and paths modules, so a caller can start the daemon before it
// loads anything heavy and let both boot at once.
import { randomHex } from "../protocol/random.js";
import type { Roots } from "../config/paths.js";
import { selfCommand, startDaemon, type StartedDaemon } from "../transport/launch.js";

export interface OwnedDaemonOptions {
  /** `--harness-config KEY=VALUE` overrides, in order. */
  readonly overrides?: readonly string[];
  readonly ephemeral?: boolean;
  /** Restart this saved session instead of minting a new one. */
  readonly resume?: string;
}

/** Starts (or resumes) an owned daemon; returns at once (see `waitForDaemon`). */
export function startOwnedDaemon(roots: Roots, o: OwnedDaemonOptions = {}): StartedDaemon {
  const sessionId = o.resume ?? `s-${Date.now().toString(36)}-${randomHex(6)}`;
  return startDaemon({
    tauCommand: selfCommand(),
    runtimeDir: roots.runtime,
    stateDir: roots.state,
    sessionId,
    args: [
      ...(o.resume ? ["--resume", o.resume] : ["--session-id", sessionId]),
      "--exit-when-uis-leave",
      "--project-root",
      process.cwd(),
      ...(o.ephemeral ? ["--ephemeral"] : []),
      ...(o.overrides ?? []).flatMap((kv) => ["--harness-config", kv]),
    ],
    ephemeral: o.ephemeral === true,
  });
}
