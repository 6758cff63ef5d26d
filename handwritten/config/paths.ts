// Where tau keeps things (DECISION-storage-roots): XDG roots, or one folder when TAU_HOME is set.
// The rules themselves are launch facts (startup/launch-facts.ts), which the `tau` launcher script
// follows too.
import { join } from "node:path";
import { homedir } from "node:os";
import { HOME_FALLBACK, ROOT_RULES, runtimeFallback, type RootName } from "../startup/launch-facts.js";

export interface Roots {
  /** Configuration: harness.yaml, cli.yaml, drop-ins, themes. */
  readonly config: string;
  /** Durable state: sessions, agents, prompt history, secrets, extension state. */
  readonly state: string;
  /** Runtime files: daemon sockets and their discovery metadata (mode 0700). */
  readonly runtime: string;
}

/** The first rule of `root` whose variable is set and not empty, applied; undefined when none is. */
function byRule(root: RootName, env: NodeJS.ProcessEnv): string | undefined {
  for (const rule of ROOT_RULES[root]) {
    const value = env[rule.env];
    if (value) return join(value, ...rule.path);
  }
  return undefined;
}

export function resolveRoots(env: NodeJS.ProcessEnv = process.env): Roots {
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  return {
    config: byRule("config", env) ?? join(homedir(), ...HOME_FALLBACK.config),
    state: byRule("state", env) ?? join(homedir(), ...HOME_FALLBACK.state),
    runtime: byRule("runtime", env) ?? runtimeFallback(uid),
  };
}
