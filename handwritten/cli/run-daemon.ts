// Starting the owned daemon of a `tau run`. Kept apart from run-prompt.ts, and importing the two
// small files it needs rather than their folders' index.ts, so the fast path can start the daemon
// before the protocol, the validators and the configuration loader are initialised.
import { resolveRoots, type Roots } from "../config/paths.js";
import type { StartedDaemon } from "../transport/launch.js";
import { startOwnedDaemon } from "./owned-daemon.js";

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
  return startOwnedDaemon(roots, { overrides: o.harnessConfig ?? [], ephemeral: o.ephemeral });
}
