// Connects extension supervision to this harness: state folders, secrets, the extension log,
// notices, and liveness for tool routing.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { Supervisor, type EarlyExtension, type SupervisorHost } from "../host/index.js";
import { RESERVED_TOOL_NAMES } from "./tools.js";
import { RotatingLog } from "./extensions-log.js";
import type { Harness } from "./harness.js";

export interface ExtensionRuntimeOptions {
  readonly stateDir?: string;
  readonly tauCommand: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  /** File-backed secrets read once at daemon start (config/secrets.ts preloadSecrets). */
  readonly fileSecrets?: ReadonlyMap<string, string>;
  /** Initial extension processes the daemon started before it loaded the harness (host `startEarly`). */
  readonly early?: Map<string, EarlyExtension>;
}

/**
 * Secret `name` from TAU_SECRET_<NAME> in the daemon's environment, else the file-backed value read
 * at daemon start (`<config>/secrets/<name>`, then `<state>/secrets/<name>`, mode at most 0600). The
 * value goes only into that extension's `configure`.
 */
export function resolveSecret(name: string, env: NodeJS.ProcessEnv, fileSecrets: ReadonlyMap<string, string> | undefined): string | undefined {
  const fromEnv = env[`TAU_SECRET_${name.toUpperCase().replace(/-/g, "_")}`];
  if (fromEnv !== undefined) return fromEnv;
  return fileSecrets?.get(name);
}

/** Creates the supervisor for this harness; `supervisor.start(configs)` then runs the extensions. */
export function superviseExtensions(harness: Harness, opts: ExtensionRuntimeOptions): Supervisor {
  const env = opts.env ?? process.env;
  let log: RotatingLog | undefined;
  if (opts.stateDir) {
    const dir = join(opts.stateDir, "sessions", harness.sessionId);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    log = new RotatingLog(join(dir, "extensions.log"));
  }
  const host: SupervisorHost = {
    bus: harness.bus,
    sessionId: harness.sessionId,
    projectRoot: harness.projectRoot,
    reservedToolNames: RESERVED_TOOL_NAMES,
    commands: harness.extensionCommands,
    stateDirFor: (instance) => {
      // An ephemeral session owns no storage: the folder is named but never created for it.
      if (!opts.stateDir) return join(tmpdir(), `tau-ext-${process.pid}`, instance);
      const dir = join(opts.stateDir, "ext", instance);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      return dir;
    },
    attach: (generation, publisher, conn) => harness.addPeer({ generation, publisher, send: (m) => conn.send(m), sendAsync: (m) => conn.sendAsync(m) }),
    detach: (instance, generation) => harness.extensionGone(instance, generation),
    notice: (level, text, mandatory, instance) =>
      void harness.publishHarness("harness.notice", { level, text: text.slice(0, 1024), mandatory, ...(instance ? { instance } : {}) }),
    resolveSecret: (name) => resolveSecret(name, env, opts.fileSecrets),
    stderr: (instance, chunk) => {
      if (!log) return;
      const lines = chunk.toString("utf8").split("\n").filter((line) => line !== "");
      log.append(lines.map((line) => `[${instance}] ${line}\n`));
    },
  };
  const supervisor = new Supervisor(host, { tauCommand: opts.tauCommand, env, ...(opts.early ? { early: opts.early } : {}) });
  harness.extensions = supervisor;
  return supervisor;
}
