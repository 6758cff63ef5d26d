// `tau daemon` (hidden; the CLI starts it), the part loaded first (dist/fast/daemon.cjs): it reads
// the configuration and starts the session's extensions, then loads the harness itself
// (dist/fast/daemon-harness.cjs, daemon-main.ts), so the extensions' Node start-up overlaps the
// harness's instead of following it. A configuration mistake exits 2 before anything is started.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { ExtensionConfig, HarnessConfig } from "../../generated/index.js";
import { checkProfileSecrets, loadHarnessConfig, loadMcpServers, preloadSecrets, readClientMcpServers, resolveRoots, sessionDefault, type Roots } from "../config/index.js";
import { startEarly } from "../host/spawn.js";
import { mark, markStart } from "../startup/timeline.js";
import { DAEMON_FLAGS } from "../startup/daemon-flags.js";
import { flagHelp, flagProblemText, parseFlags, usageWords } from "../startup/flags.js";
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
  /** MCP servers a client brought for this session (SPEC-acp, "MCP servers"). */
  mcpServersFile?: string;
}

const USAGE = `usage: tau daemon ${usageWords(DAEMON_FLAGS)}`;

/** `tau daemon`'s arguments, read against its table (startup/daemon-flags.ts). */
export function parseDaemonArgs(argv: readonly string[], cwd: string): DaemonArgs {
  const parsed = parseFlags(DAEMON_FLAGS, argv);
  if (!parsed.ok) throw new Error(`${parsed.problem.kind === "unexpected" ? `unknown daemon argument ${JSON.stringify(parsed.problem.arg)}` : flagProblemText(parsed.problem)}\n${USAGE}`);
  const v = parsed.values;
  const args: DaemonArgs = {
    ephemeral: v.ephemeral === true,
    projectRoot: v["project-root"] !== undefined ? resolve(cwd, v["project-root"]) : cwd,
    exitWhenUisLeave: v["exit-when-uis-leave"] === true,
    detach: v.detach === true,
    overrides: [...(v["harness-config"] ?? [])],
    ...(v["session-id"] !== undefined ? { sessionId: v["session-id"] } : {}),
    ...(v.resume !== undefined ? { resume: v.resume } : {}),
    ...(v.print !== undefined ? { print: v.print as NonNullable<DaemonArgs["print"]> } : {}),
    ...(v["print-text"] !== undefined ? { printText: v["print-text"] } : {}),
    ...(v["handoff-seed"] !== undefined ? { handoffSeed: resolve(cwd, v["handoff-seed"]) } : {}),
    ...(v["mcp-servers-file"] !== undefined ? { mcpServersFile: resolve(cwd, v["mcp-servers-file"]) } : {}),
  };
  if (args.handoffSeed && args.ephemeral) throw new Error(`--handoff-seed starts a persisted session\n${USAGE}`);
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
  /** Warnings of the configuration the session shows once it runs (an untrusted project's MCP file). */
  readonly warnings: readonly string[];
}

/**
 * Reads and checks the configuration. The provider key becomes a secret first, before anything reads
 * the environment or spawns a child. Throws with a message naming the file, line and key.
 */
export async function loadDaemonSetup(args: DaemonArgs): Promise<DaemonSetup> {
  captureProviderKey(process.env);
  const roots = resolveRoots();
  const config = await loadHarnessConfig(roots.config, args.overrides);
  const mcp = await loadMcpServers(config, roots.config, args.projectRoot, args.mcpServersFile !== undefined ? readClientMcpServers(args.mcpServersFile) : {});
  const extensions = sessionExtensions(config, process.env, mcp);
  const { model: defaultModel, provider: defaultProvider } = sessionDefault(config, process.env);
  checkProfileSecrets(config, roots.config, process.env);
  // File-backed secrets are read once, here, into memory: never into an environment.
  const fileSecrets = preloadSecrets(extensions.flatMap((e) => e.secrets ?? []), process.env, { config: roots.config, state: roots.state });
  return { roots, config, extensions, fileSecrets, warnings: mcp.warnings, ...(defaultModel ? { defaultModel } : {}), ...(defaultProvider ? { defaultProvider } : {}) };
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

${flagHelp(DAEMON_FLAGS)}
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
