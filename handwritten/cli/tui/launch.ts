// Starting the daemon a `tau` terminal owns. Importing only the small launch module (not the
// transport index), so the UI can start its daemon before its first frame and boot both at once.
import { randomBytes } from "node:crypto";
import type { Roots } from "../../config/paths.js";
import { selfCommand, startDaemon, type StartedDaemon } from "../../transport/launch.js";

/** Starts (or resumes) an owned daemon that exits when its last UI leaves; returns at once. */
export function startOwnedDaemon(roots: Roots, overrides: readonly string[], resume?: string): StartedDaemon {
  const sessionId = resume ?? `s-${Date.now().toString(36)}-${randomBytes(6).toString("hex")}`;
  return startDaemon({
    tauCommand: selfCommand(),
    runtimeDir: roots.runtime,
    stateDir: roots.state,
    sessionId,
    args: [
      ...(resume ? ["--resume", resume] : ["--session-id", sessionId]),
      "--exit-when-uis-leave",
      "--project-root",
      process.cwd(),
      ...overrides.flatMap((kv) => ["--harness-config", kv]),
    ],
    ephemeral: false,
  });
}
