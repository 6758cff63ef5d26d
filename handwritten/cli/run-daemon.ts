// Starting the owned daemon of a `tau run`. Kept apart from run-prompt.ts, and importing the two
// small files it needs rather than their folders' index.ts, so the fast path can start the daemon
// before the protocol, the validators and the configuration loader are initialised.
import { randomBytes } from "node:crypto";
import { resolveRoots, type Roots } from "../config/paths.js";
import { selfCommand, startDaemon, type StartedDaemon } from "../transport/launch.js";

export interface RunOptions {
  readonly json: boolean;
  readonly ephemeral: boolean;
  readonly model?: string;
  readonly harnessConfig?: readonly string[];
  /** A skill whose body is submitted with the prompt text as the user's own words (SPEC-skills). */
  readonly skill?: string;
}

/**
 * Starts the owned daemon for a `tau run` (it boots while the caller loads and checks the rest);
 * `runPrompt` takes it over, or abandons it when the configuration is wrong.
 */
export function startRunDaemon(o: RunOptions, roots: Roots = resolveRoots()): StartedDaemon {
  const sessionId = `s-${Date.now().toString(36)}-${randomBytes(6).toString("hex")}`;
  return startDaemon({
    tauCommand: selfCommand(),
    runtimeDir: roots.runtime,
    stateDir: roots.state,
    sessionId,
    args: [
      "--session-id",
      sessionId,
      "--exit-when-uis-leave",
      "--project-root",
      process.cwd(),
      ...(o.ephemeral ? ["--ephemeral"] : []),
      ...(o.harnessConfig ?? []).flatMap((kv) => ["--harness-config", kv]),
    ],
    ephemeral: o.ephemeral,
  });
}
