// The harness part of `tau daemon` (dist/fast/daemon-harness.cjs, loaded by daemon-start.ts): runs
// the harness for one session in the foreground, or with --detach re-launches the daemon in its own
// process group with output to the session's log file, or prints a `tau dev print-*` preview.
import { mark } from "../startup/timeline.js";
import { existsSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { DAEMON_LOG, SESSIONS_DIR } from "../startup/launch-facts.js";
import { DAEMON_FLAGS } from "../startup/daemon-flags.js";
import { EXIT_CODES } from "../startup/exit-codes.js";
import { flagArgs } from "../startup/flags.js";
import { watchDaemonLog } from "./daemon-log.js";
import { resolveRoots } from "../config/index.js";
import { cleanupDebugLogs } from "../store/index.js";
import { superviseExtensions } from "./extensions.js";
import type { DaemonArgs, DaemonSetup } from "./daemon-start.js";
import type { EarlyExtension, Supervisor } from "../host/index.js";
import { DAEMON_INSTANCE_ENV, LAUNCH_TIMEOUT_MS, instanceFromEnv, launchDaemon, listSessions, mintInstance, publishDaemonEndpoint, removeOwnPairOnExit, sameUserBoundaryProblem, selfCommand } from "../transport/index.js";
import { Harness, type HarnessOptions } from "./harness.js";
import { HANDOFF_SEED_CLAIMED, HANDOFF_SEED_FILE, type HandoffSeed } from "./handoff-request.js";
import { DaemonFront } from "./daemon.js";
import { mintId } from "./ids.js";
import { compactionSettings } from "./compactor.js";

/** How long after its session runs the daemon loads every schema validator (see below). */
const VALIDATORS_PRELOAD_DELAY_MS = 1_500;
import {
  preloadValidators,
  validateAgentInitializationContextSet,
  validateHarnessAgentContextInitialized,
  validateSessionInitializationStarted,
  validateSessionInitialized,
  type ExtensionConfig,
  type SandboxLaunch,
} from "../../generated/index.js";

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

/** Launches the daemon detached and prints `{session_id, pid, socket}` once its socket is up. */
export async function launchDetached(args: DaemonArgs, argv: readonly string[]): Promise<number> {
  const roots = resolveRoots();
  const sessionId = args.resume ?? args.sessionId ?? mintId("s");
  const childArgs = argv.filter((a) => a !== "--detach");
  if (!args.resume && !args.sessionId) childArgs.push(...flagArgs(DAEMON_FLAGS, { "session-id": sessionId }));
  try {
    const d = await launchDaemon({
      tauCommand: selfCommand(),
      runtimeDir: roots.runtime,
      stateDir: roots.state,
      sessionId,
      args: childArgs,
      ephemeral: args.ephemeral,
    });
    process.stdout.write(`${JSON.stringify(d)}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`tau daemon: ${(err as Error).message}\n`);
    return 1;
  }
}

/**
 * Runs the harness for one session in the foreground until it stops; `early` holds the initial
 * extension processes the first part already started.
 */
export async function runDaemon(args: DaemonArgs, setup: DaemonSetup, early?: Map<string, EarlyExtension>): Promise<void> {
  const { roots, config, extensions, fileSecrets } = setup;
  mark("daemon harness loaded");
  if (!args.ephemeral) cleanupDebugLogs(roots.state, config.debug_log?.retention_days !== undefined ? { windowMs: config.debug_log.retention_days * 86_400_000 } : {});
  const harness = await Promise.resolve().then(() => Harness.open(harnessOptions(args, setup))).catch((err: unknown) => {
    process.stderr.write(`tau daemon: ${(err as Error).message}\n`);
    process.exit(EXIT_CODES.failed);
  });
  mark("daemon harness open");
  for (const text of setup.warnings) void harness.publishHarness("harness.notice", { level: "warning", text: text.slice(0, 1024), mandatory: true });
  // Its log (stdout and stderr, opened by the launcher) stays bounded however long it runs.
  if (!args.ephemeral) watchDaemonLog(join(roots.state, SESSIONS_DIR, harness.sessionId, DAEMON_LOG));
  let stopping = false;
  // Extensions start while the socket is being published: both take a process start's time.
  const supervisor: Supervisor = superviseExtensions(harness, {
    ...(args.ephemeral ? {} : { stateDir: roots.state }),
    tauCommand: selfCommand(),
    fileSecrets,
    ...(early ? { early } : {}),
  });
  const started = supervisor.start(extensions);
  harness.prompts.whileExtensionsStart(started);
  // The session's and its first agents' initialization records follow the extensions' start on the
  // way to the first model request; their validators (about 5 ms) load while the extensions start,
  // by a first validation of nothing.
  setImmediate(() => {
    for (const v of [validateSessionInitializationStarted, validateSessionInitialized, validateAgentInitializationContextSet, validateHarnessAgentContextInitialized]) v(null);
  });
  mark("daemon extensions spawned");
  started.catch(() => {}); // handled where it is awaited below
  const stop = async (reason: "last_ui_left" | "signal" | "requested" | "startup_failed", code = 0) => {
    if (stopping) return;
    stopping = true;
    await endpoint.shutdown().catch(() => {});
    await supervisor.stop().catch(() => {});
    await harness.shutdown(reason).catch(() => {});
    process.exit(code);
  };
  let socketPath: string | undefined;
  const front = new DaemonFront(harness, {
    exitWhenUisLeave: args.exitWhenUisLeave,
    onIdle: () => void stop("last_ui_left"),
    onEndRequested: () => void stop("requested"),
    peerBoundaryProblem: () => (socketPath === undefined ? "the socket is not published yet" : sameUserBoundaryProblem(socketPath)),
  });
  const instance = process.env[DAEMON_INSTANCE_ENV] ? instanceFromEnv() : mintInstance();
  const endpoint = await publishDaemonEndpoint({
    runtimeDir: roots.runtime,
    instance,
    version: version(),
    onConnection: (conn) => front.accept(conn),
  }).catch(async (err: unknown) => {
    // An unusable runtime folder (its mode, its owner) is the user's to fix: one line says how.
    process.stderr.write(`tau daemon: ${(err as Error).message}\n`);
    await supervisor.stop().catch(() => {});
    await harness.shutdown("startup_failed").catch(() => {});
    process.exit(EXIT_CODES.failed);
  });
  socketPath = endpoint.socketPath;
  mark("daemon endpoint published");
  front.expectFirstUi(LAUNCH_TIMEOUT_MS);
  removeOwnPairOnExit(roots.runtime, endpoint.stem);
  process.on("SIGTERM", () => void stop("signal"));
  process.on("SIGINT", () => void stop("signal"));
  process.on("SIGHUP", () => void stop("signal"));
  process.stderr.write(`tau daemon: session ${harness.sessionId} on ${endpoint.socketPath}\n`);
  try {
    await started;
    mark("daemon extensions started");
    // The session begins once its first extensions started: what they declared while starting was
    // queued as they activated, so it committed before `extension.ready`, which `started` awaited.
    // Those that declared a session wait hold it (SPEC-extension-declarations).
    void harness.beginSessionInitialization();
    // Every schema validator is loaded once the session has run a moment, a few at a time, so
    // validating never needs a descriptor later: a daemon out of descriptors refuses work instead of
    // every event. Not at once: loading them all costs tens of milliseconds of CPU, which the
    // session's first turn (its extensions setting up beside it) needs more; a job of a moment
    // validates the few it uses.
    setTimeout(() => void preloadValidators().then(() => mark("daemon validators loaded")), VALIDATORS_PRELOAD_DELAY_MS).unref();
    // A resumed session takes a handoff seed left in its folder too (a replacement killed while it
    // took its seed, resumed by the user rather than by its source): none is left half taken.
    const seed = args.handoffSeed ?? (args.resume !== undefined ? join(roots.state, SESSIONS_DIR, args.resume, HANDOFF_SEED_FILE) : undefined);
    const claimed = seed !== undefined ? claimSeed(seed) : undefined;
    if (claimed !== undefined) {
      await harness.seedFromHandoff(readSeed(claimed));
      rmSync(claimed, { force: true });
    }
  } catch (err) {
    process.stderr.write(`tau daemon: ${(err as Error).message}\n`);
    await stop("startup_failed", 1);
  }
}

/** The harness of `tau daemon`: its session, configuration, and how it starts a handoff's replacement. */
function harnessOptions(args: DaemonArgs, setup: DaemonSetup): HarnessOptions {
  const { roots, config, defaultModel, defaultProvider } = setup;
  return {
    ...(args.ephemeral ? {} : { stateDir: roots.state }),
    projectRoot: args.projectRoot,
    ...(args.resume ? { resume: args.resume } : {}),
    ...(args.sessionId ? { sessionId: args.sessionId } : {}),
    deferSessionInitialization: true,
    warn: (m) => process.stderr.write(`tau daemon: ${m}\n`),
    debugLog: config.debug_log?.enable !== false,
    configRoot: roots.config,
    ...(defaultModel ? { defaultModel } : {}),
    ...(defaultProvider ? { defaultProvider } : {}),
    ...(config.model_info ? { modelInfo: config.model_info } : {}),
    ...(config.title_model ? { titleModel: config.title_model } : {}),
    compaction: compactionSettings(config),
    ...(config.roles ? { roles: config.roles } : {}),
    ...(config.agent_limits ? { agentLimits: config.agent_limits } : {}),
    runtimeDir: roots.runtime,
    // A handoff's replacement runs with this daemon's configuration: its project and overrides.
    launchReplacement: async ({ sessionId, seedPath, resume }) => {
      const d = await launchDaemon({
        tauCommand: selfCommand(),
        runtimeDir: roots.runtime,
        stateDir: roots.state,
        sessionId,
        args: flagArgs(DAEMON_FLAGS, {
          ...(resume ? { resume: sessionId } : { "session-id": sessionId }),
          "project-root": args.projectRoot,
          "exit-when-uis-leave": args.exitWhenUisLeave,
          "harness-config": args.overrides,
          "handoff-seed": seedPath,
        }),
        ephemeral: false,
      });
      return { pid: d.pid };
    },
    replacementPid: async (sessionId) => (await listSessions(roots.runtime)).rows.find((r) => r.session_id === sessionId)?.pid,
  };
}

/**
 * A handoff's replacement takes its seed (SPEC-handoff): claimed by an atomic rename, so a source
 * that gave up on it (renaming it away) and this daemon never both act on it. A seed this daemon
 * claimed before it was killed is taken again. Undefined: no seed to take.
 */
function claimSeed(path: string): string | undefined {
  const claimed = join(dirname(path), HANDOFF_SEED_CLAIMED);
  try {
    renameSync(path, claimed);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  return existsSync(claimed) ? claimed : undefined;
}

/** A handoff seed (SPEC-handoff), checked field by field; at most 16 MiB. */
function readSeed(path: string): HandoffSeed {
  const text = readFileSync(path, "utf8");
  if (text.length > 16 * 1024 * 1024) throw new Error("it is too large");
  const v = JSON.parse(text) as Record<string, unknown>;
  const str = (k: string, optional = false): string | undefined => {
    const x = v[k];
    if (x === undefined && optional) return undefined;
    if (typeof x !== "string" || x === "") throw new Error(`its ${k} is not text`);
    return x;
  };
  const role = str("role", true);
  const model = str("model", true);
  const agentId = str("agent_id", true);
  const promptId = str("prompt_id", true);
  return {
    parent_session_id: str("parent_session_id") as string,
    parent_agent_id: str("parent_agent_id") as string,
    dossier: str("dossier") as string,
    ...(agentId !== undefined ? { agent_id: agentId } : {}),
    ...(promptId !== undefined ? { prompt_id: promptId } : {}),
    ...(role !== undefined ? { role } : {}),
    ...(model !== undefined ? { model } : {}),
  };
}

/**
 * `tau dev print-*`: an in-memory harness with the configured extensions, no socket, no debug log,
 * no cleanup and no session files; prints one preview and exits.
 */
export async function printPreview(args: DaemonArgs, setup: DaemonSetup): Promise<number> {
  const { roots, extensions, fileSecrets } = setup;
  // Warnings (a skipped skill) go to stderr; the preview itself is the only thing on stdout.
  const harness = await Harness.open({ projectRoot: args.projectRoot, debugLog: false, configRoot: roots.config, warn: (m) => process.stderr.write(`tau: ${m}\n`) });
  const supervisor = superviseExtensions(harness, { tauCommand: selfCommand(), fileSecrets });
  try {
    // A preview creates nothing: the shell extension sets its sandbox up only if a command runs.
    await supervisor.start(extensions.map(previewOnly));
    await harness.bus.settled(); // the survivors' tool registrations commit after activation
    process.stdout.write(`${harness.preview(args.print as "system-prompt" | "tools" | "prompt", args.printText ?? "")}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`tau: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await supervisor.stop().catch(() => {});
  }
}

/** The first-party shell extension, told to set its sandbox up on first use only. */
function previewOnly(e: ExtensionConfig): ExtensionConfig {
  if (e.command.join(" ") !== "tau ext shell") return e;
  const sandbox = (e.config?.sandbox ?? {}) as SandboxLaunch;
  return { ...e, config: { ...(e.config ?? {}), sandbox: { ...sandbox, set_up: "on_first_use" } } };
}
