// Where tau keeps things (DECISION-storage-roots): XDG roots, or one folder when TAU_HOME is set.
import { join } from "node:path";
import { homedir } from "node:os";

export interface Roots {
  /** Configuration: harness.yaml, cli.yaml, drop-ins, themes. */
  readonly config: string;
  /** Durable state: sessions, agents, prompt history, secrets, extension state. */
  readonly state: string;
  /** Runtime files: daemon sockets and their discovery metadata (mode 0700). */
  readonly runtime: string;
}

export function resolveRoots(env: NodeJS.ProcessEnv = process.env): Roots {
  const tauHome = env.TAU_HOME;
  if (tauHome) {
    return { config: join(tauHome, "config"), state: join(tauHome, "state"), runtime: join(tauHome, "runtime") };
  }
  const home = env.HOME || homedir();
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  return {
    config: join(env.XDG_CONFIG_HOME || join(home, ".config"), "tau"),
    state: join(env.XDG_STATE_HOME || join(home, ".local", "state"), "tau"),
    runtime: env.XDG_RUNTIME_DIR ? join(env.XDG_RUNTIME_DIR, "tau") : join("/tmp", `tau-${uid}`),
  };
}
