// `tau daemon` (hidden; the CLI starts it), the part loaded first (dist/fast/daemon.cjs): it reads
// the configuration and starts the session's extensions, then loads the harness itself
// (dist/fast/daemon-harness.cjs, daemon-main.ts), so the extensions' Node start-up overlaps the
// harness's instead of following it. A configuration mistake exits 2 before anything is started.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { ExtensionConfig, HarnessConfig } from "../../generated/index.js";
import { checkProfileSecrets, loadHarnessConfig, preloadSecrets, resolveRoots, sessionDefault, type Roots } from "../config/index.js";
import { startEarly } from "../host/spawn.js";
import { mark, markStart } from "../startup/timeline.js";
import { journalPath } from "../store/paths.js";
import { loadFastBundle, selfCommand } from "../transport/launch.js";
import { captureProviderKey, sessionExtensions } from "./defaults.js";

export interface DaemonArgs {
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
  /** A handoff's replacement session: the seed its source wrote (SPEC-handoff). */
  handoffSeed?: string;
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
    else if (a === "--handoff-seed") args.handoffSeed = resolve(cwd, value());
    else throw new Error(`unknown daemon argument ${JSON.stringify(a)}\n${USAGE}`);
  }
  if (args.handoffSeed && (args.resume || args.ephemeral)) throw new Error(`--handoff-seed starts a new persisted session\n${USAGE}`);
  if (args.resume && (args.sessionId || args.ephemeral)) throw new Error(`--resume cannot be combined with --session-id or --ephemeral\n${USAGE}`);
  return args;
}

/** What the daemon reads before it starts anything: the configuration, the extensions, their file secrets. */
export interface DaemonSetup {
  readonly roots: Roots;
  readonly config: HarnessConfig;
  readonly extensions: ExtensionConfig[];
  readonly fileSecrets: Map<string, string>;
  /** The configured model of new agents, `provider/model` or a model id. */
  readonly defaultModel?: string;
  /** Else the provider instance whose default model they use. */
  readonly defaultProvider?: string;
}

/**
 * Reads and checks the configuration. The provider key becomes a secret first, before anything reads
 * the environment or spawns a child. Throws with a message naming the file, line and key.
 */
export async function loadDaemonSetup(args: DaemonArgs): Promise<DaemonSetup> {
  captureProviderKey(process.env);
  const roots = resolveRoots();
  const config = await loadHarnessConfig(roots.config, args.overrides);
  const extensions = sessionExtensions(config, process.env);
  const { model: defaultModel, provider: defaultProvider } = sessionDefault(config, process.env);
  checkProfileSecrets(config, roots.config, process.env);
  // File-backed secrets are read once, here, into memory: never into an environment.
  const fileSecrets = preloadSecrets(extensions.flatMap((e) => e.secrets ?? []), process.env, { config: roots.config, state: roots.state });
  return { roots, config, extensions, fileSecrets, ...(defaultModel ? { defaultModel } : {}), ...(defaultProvider ? { defaultProvider } : {}) };
}

type DaemonHarness = typeof import("./daemon-main.js");

/** Whether a --resume (if any) names a session whose journal exists; the harness checks the rest. */
function resumable(stateDir: string, resume: string | undefined): boolean {
  if (resume === undefined) return true;
  try {
    return existsSync(journalPath(stateDir, "session", resume));
  } catch {
    return false; // not an id
  }
}

/** `tau daemon --help`: what the daemon takes, and that a user seldom starts one by hand. */
const HELP = `tau daemon: the session daemon that \`tau\`, \`tau run\` and \`tau resume\` start for you; start one
yourself to keep a session running without a UI (\`tau attach\` joins it).

${USAGE}

  --session-id ID        the new session's id (minted when absent)
  --resume ID            restart the saved session ID from its journals
  --ephemeral            keep no session files
  --project-root DIR     the project the session works in (default: the current folder)
  --exit-when-uis-leave  stop when the last attached UI leaves
  --detach               start in the background; print {"session_id","pid","socket"} and return
  --harness-config K=V   override one harness.yaml key (repeatable)
`;

export async function main(argv: readonly string[]): Promise<void> {
  markStart("daemon");
  if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h")) {
    process.stdout.write(HELP);
    return;
  }
  let args: DaemonArgs;
  try {
    args = parseDaemonArgs(argv, process.cwd());
  } catch (err) {
    process.stderr.write(`tau daemon: ${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  if (args.detach) {
    const harness = loadFastBundle<DaemonHarness>("daemon-harness");
    process.exitCode = await harness.exports.launchDetached(args, argv);
    harness.settled();
    return;
  }
  let setup: DaemonSetup;
  try {
    setup = await loadDaemonSetup(args);
  } catch (err) {
    process.stderr.write(`tau: ${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  // A preview runs its extensions on an in-memory harness of its own, later; a --resume of a session
  // with no journal fails at once, so nothing is started for it.
  const early = args.print || !resumable(setup.roots.state, args.resume) ? undefined : startEarly(setup.extensions, selfCommand(), args.projectRoot, process.env);
  if (early) mark("daemon extensions spawned early");
  const harness = loadFastBundle<DaemonHarness>("daemon-harness");
  try {
    if (args.print) process.exitCode = await harness.exports.printPreview(args, setup);
    else await harness.exports.runDaemon(args, setup, early);
  } finally {
    harness.settled();
  }
}
