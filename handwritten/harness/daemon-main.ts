// `tau daemon` (hidden; the CLI starts it): runs the harness for one session in the foreground, or
// with --detach re-launches itself in its own process group with output to the session's log file.
import { mark, markStart } from "../protocol/timeline.js";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { checkProfileSecrets, loadHarnessConfig, preloadSecrets, resolveRoots, type Roots } from "../config/index.js";
import type { HarnessConfig } from "../../generated/index.js";
import { cleanupDebugLogs } from "../store/index.js";
import { superviseExtensions } from "./extensions.js";
import { captureProviderKey, sessionDefaultModel, sessionExtensions } from "./defaults.js";
import type { ExtensionConfig } from "../../generated/index.js";
import type { Supervisor } from "../host/index.js";
import { DAEMON_INSTANCE_ENV, instanceFromEnv, launchDaemon, mintInstance, publishDaemonEndpoint, removeOwnPairOnExit, selfCommand } from "../transport/index.js";
import { Harness } from "./harness.js";
import { DaemonFront } from "./daemon.js";
import { mintId } from "./ids.js";

interface DaemonArgs {
  sessionId?: string;
  resume?: string;
  ephemeral: boolean;
  projectRoot: string;
  exitWhenUisLeave: boolean;
  detach: boolean;
  /** `--harness-config KEY=VALUE` overrides, in order. */
  overrides: string[];
  /** Render preview mode (`tau dev print-*`): print and exit, storing nothing. */
  print?: "system-prompt" | "tools" | "prompt";
  printText?: string;
}

const USAGE =
  "usage: tau daemon [--session-id ID | --resume ID] [--ephemeral] [--project-root DIR] [--exit-when-uis-leave] [--detach] [--harness-config KEY=VALUE]…";

export function parseDaemonArgs(argv: readonly string[], cwd: string): DaemonArgs {
  const args: DaemonArgs = { ephemeral: false, projectRoot: cwd, exitWhenUisLeave: false, detach: false, overrides: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith("--")) throw new Error(`${a} needs a value\n${USAGE}`);
      return v;
    };
    if (a === "--session-id") args.sessionId = value();
    else if (a === "--resume") args.resume = value();
    else if (a === "--ephemeral") args.ephemeral = true;
    else if (a === "--project-root") args.projectRoot = resolve(cwd, value());
    else if (a === "--exit-when-uis-leave") args.exitWhenUisLeave = true;
    else if (a === "--detach") args.detach = true;
    else if (a === "--harness-config") args.overrides.push(value());
    else if (a === "--print") {
      const v = value();
      if (v !== "system-prompt" && v !== "tools" && v !== "prompt") throw new Error(`--print takes system-prompt, tools or prompt\n${USAGE}`);
      args.print = v;
    } else if (a === "--print-text") args.printText = value();
    else throw new Error(`unknown daemon argument ${JSON.stringify(a)}\n${USAGE}`);
  }
  if (args.resume && (args.sessionId || args.ephemeral)) throw new Error(`--resume cannot be combined with --session-id or --ephemeral\n${USAGE}`);
  return args;
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

/** Launches the daemon detached and prints `{session_id, pid, socket}` once its socket is up. */
async function launchDetached(args: DaemonArgs, argv: readonly string[]): Promise<number> {
  const roots = resolveRoots();
  const sessionId = args.resume ?? args.sessionId ?? mintId("s");
  const childArgs = argv.filter((a) => a !== "--detach");
  if (!args.resume && !args.sessionId) childArgs.push("--session-id", sessionId);
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

export async function main(argv: readonly string[]): Promise<void> {
  markStart("daemon");
  let args: DaemonArgs;
  try {
    args = parseDaemonArgs(argv, process.cwd());
  } catch (err) {
    process.stderr.write(`tau daemon: ${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  if (args.detach) {
    process.exitCode = await launchDetached(args, argv);
    return;
  }
  // The provider key becomes a secret before anything reads the environment or spawns a child.
  captureProviderKey(process.env);
  const roots = resolveRoots();
  let config: HarnessConfig;
  let extensions: ExtensionConfig[];
  let fileSecrets: Map<string, string>;
  let defaultModel: string | undefined;
  try {
    config = await loadHarnessConfig(roots.config, args.overrides);
    extensions = sessionExtensions(config, process.env);
    defaultModel = sessionDefaultModel(config, process.env);
    checkProfileSecrets(config, roots.config, process.env);
    // File-backed secrets are read once, here, into memory: never into an environment.
    fileSecrets = preloadSecrets(extensions.flatMap((e) => e.secrets ?? []), process.env, { config: roots.config, state: roots.state });
  } catch (err) {
    process.stderr.write(`tau: ${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  mark("daemon config loaded");
  if (args.print) {
    process.exitCode = await printPreview(args, roots, extensions, fileSecrets);
    return;
  }
  if (!args.ephemeral) cleanupDebugLogs(roots.state, config.debug_log?.retention_days !== undefined ? { windowMs: config.debug_log.retention_days * 86_400_000 } : {});
  const harness = await Harness.open({
    ...(args.ephemeral ? {} : { stateDir: roots.state }),
    projectRoot: args.projectRoot,
    ...(args.resume ? { resume: args.resume } : {}),
    ...(args.sessionId ? { sessionId: args.sessionId } : {}),
    warn: (m) => process.stderr.write(`tau daemon: ${m}\n`),
    debugLog: config.debug_log?.enable !== false,
    configRoot: roots.config,
    ...(defaultModel ? { defaultModel } : {}),
  }).catch((err: unknown) => {
    process.stderr.write(`tau daemon: ${(err as Error).message}\n`);
    process.exit(1);
  });
  mark("daemon harness open");
  let stopping = false;
  // Extensions start while the socket is being published: both take a process start's time.
  const supervisor: Supervisor = superviseExtensions(harness, {
    ...(args.ephemeral ? {} : { stateDir: roots.state }),
    tauCommand: selfCommand(),
    fileSecrets,
  });
  const started = supervisor.start(extensions);
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
  const front = new DaemonFront(harness, { exitWhenUisLeave: args.exitWhenUisLeave, onIdle: () => void stop("last_ui_left"), onEndRequested: () => void stop("requested") });
  const instance = process.env[DAEMON_INSTANCE_ENV] ? instanceFromEnv() : mintInstance();
  const endpoint = await publishDaemonEndpoint({
    runtimeDir: roots.runtime,
    instance,
    version: version(),
    onConnection: (conn) => front.accept(conn),
  });
  mark("daemon endpoint published");
  removeOwnPairOnExit(roots.runtime, endpoint.stem);
  process.on("SIGTERM", () => void stop("signal"));
  process.on("SIGINT", () => void stop("signal"));
  process.on("SIGHUP", () => void stop("signal"));
  process.stderr.write(`tau daemon: session ${harness.sessionId} on ${endpoint.socketPath}\n`);
  try {
    await started;
    mark("daemon extensions started");
  } catch (err) {
    process.stderr.write(`tau daemon: ${(err as Error).message}\n`);
    await stop("startup_failed", 1);
  }
}

/**
 * `tau dev print-*`: an in-memory harness with the configured extensions, no socket, no debug log,
 * no cleanup and no session files; prints one preview and exits.
 */
async function printPreview(args: DaemonArgs, roots: Roots, extensions: ExtensionConfig[], fileSecrets: Map<string, string>): Promise<number> {
  // Warnings (a skipped skill) go to stderr; the preview itself is the only thing on stdout.
  const harness = await Harness.open({ projectRoot: args.projectRoot, debugLog: false, configRoot: roots.config, warn: (m) => process.stderr.write(`tau: ${m}\n`) });
  const supervisor = superviseExtensions(harness, { tauCommand: selfCommand(), fileSecrets });
  try {
    await supervisor.start(extensions);
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
