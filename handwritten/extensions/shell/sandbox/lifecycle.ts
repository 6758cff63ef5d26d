// The sandbox's runtime and state (SPEC-sandbox, "States" and "Configuration"): it loads
// sandbox.yaml's layers (after checking what a command cut short by a crash left), checks the
// dependencies, sets up @anthropic-ai/sandbox-runtime (from the extension's start, beside its first
// model request; on demand when a wrap kept from an earlier start serves), reports every state it
// enters, holds the session's grants and mode, and pushes policy changes to the runtime. Nothing
// here asks the user or runs a command.
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import type { SandboxConfig, SandboxMode, SandboxState } from "../../../../generated/index.js";
import { loadSandboxConfig, type LoadedSandboxConfig } from "../../../config/index.js";
import { ensureRuntimeDir } from "../../../transport/runtime-dir.js";
import { mark } from "../../../startup/timeline.js";
import { RuntimeLeftovers, sweepDeadOwners } from "./runtime-leftovers.js";
import { effectivePolicy, emptyGrants, originOf, runtimeConfig, type EffectivePolicy, type SessionGrants } from "./policy.js";
import { recoverAfterCrash } from "./running-record.js";
import { keepBwrapVersion } from "./bwrap-version.js";
import { enterProbeFile } from "./enter-probe.js";
import { SharedNetwork } from "./shared-network.js";
import { socatDyingWithParent } from "./parent-death.js";
import { firstLine, type SandboxOptions } from "./types.js";

export type Runtime = (typeof import("@anthropic-ai/sandbox-runtime"))["SandboxManager"];

/** The runtime's answer to a connection no rule decides: allow, or refuse with a reason. */
export type NetworkVerdict = boolean | { allow: false; reason: string };

export interface LifecycleHooks {
  /** Asks about a connection to a host no rule decides (the runtime's proxy waits on it). */
  readonly askNetwork: (host: string, port: number | undefined) => Promise<NetworkVerdict>;
  /** The runtime's configuration changed: a wrap built before it is stale. */
  readonly configPushed: () => void;
  /** The runtime is up: the wrap for the policy is built ahead of the first command. */
  readonly runtimeUp: () => Promise<void>;
  /** Takes a wrap an earlier start kept for this start's policy and disk; false when there is none. */
  readonly adoptKept?: () => boolean;
}

const INSTALL_HINT: Record<string, string> = {
  linux:
    "install bubblewrap, socat and ripgrep (Debian/Ubuntu: sudo apt-get install bubblewrap socat ripgrep; Fedora: sudo dnf install bubblewrap socat ripgrep; Arch: sudo pacman -S bubblewrap socat ripgrep)",
  darwin: "install ripgrep (brew install ripgrep); sandbox-exec comes with macOS",
};
const BYPASS_HINT = "or start tau with --no-sandbox to run model commands with your full rights";

export class SandboxLifecycle {
  state: SandboxState = "pending";
  reason: string | undefined;
  fix: string | undefined;
  loaded: LoadedSandboxConfig | undefined;
  runtime: Runtime | undefined;
  dependencyErrors: string[] = [];
  dependencyWarnings: string[] = [];
  /** The session's own grants and refusals (`:sandbox` commands, approvals); never persisted. */
  readonly grants: SessionGrants = emptyGrants();
  /** `:sandbox mode` for this session. */
  modeOverride: SandboxMode | undefined;
  /** `:sandbox off` for this session. */
  userSuspended = false;
  readonly platform: NodeJS.Platform;
  readonly env: NodeJS.ProcessEnv;
  /** What the check after a crash moved out of the project (`:sandbox doctor`). */
  readonly recovered: string[] = [];
  private policyLoaded: Promise<boolean> | undefined;
  private started: Promise<void> | undefined;
  private readonly leftovers = new RuntimeLeftovers();
  /** Set up with a kept wrap: the runtime starts on demand (runtimeForWrap). */
  onDemand = false;
  private bringingUp: Promise<void> | undefined;
  private swept = false;
  /** The socat the runtime starts its bridges with (parent-death.ts); undefined: socat from PATH. */
  private socatPath: string | undefined;
  /** The network namespace the session's commands share (Linux), made while the runtime loads. */
  readonly network = new SharedNetwork();

  constructor(
    private readonly o: SandboxOptions,
    private readonly hooks: LifecycleHooks,
  ) {
    this.platform = o.platform ?? process.platform;
    this.env = o.env ?? process.env;
  }

  /** Whether this sandbox confines the model's `shell` commands (not one long-lived server). */
  private get forShell(): boolean {
    return (this.o.owner ?? "shell") === "shell";
  }

  /** Sets the sandbox up (once); `shell` calls wait for it. */
  start(): Promise<void> {
    this.started ??= this.setUp().catch((err: unknown) => this.block(`the sandbox runtime failed to start: ${(err as Error).message}`, `${INSTALL_HINT[this.platform] ?? ""}; ${BYPASS_HINT}`));
    return this.started;
  }

  /**
   * Loads the policy (once): what a command cut short by a crash left is checked first, then
   * sandbox.yaml's layers. The file tools wait for this only, never for the runtime. False when
   * the sandbox is not to be set up (bypassed, or blocked by the configuration).
   */
  loadPolicy(): Promise<boolean> {
    this.policyLoaded ??= this.loadPolicyOnce();
    return this.policyLoaded;
  }

  private async loadPolicyOnce(): Promise<boolean> {
    this.report();
    // Before the configuration is read: a `.tau/sandbox.yaml` a killed command made is moved out first.
    this.recovered.push(...recoverAfterCrash(this.o.roots.state, this.o.projectRoot));
    if (this.o.launch?.enabled === false) {
      this.enter("bypassed", "--no-sandbox: model commands run with your full rights");
      return false;
    }
    if (!(await this.loadConfig())) return false;
    if (this.loaded?.config.enabled === false) {
      this.enter("bypassed", `enabled: false in ${this.originFile("enabled")}: model commands run with your full rights`);
      return false;
    }
    // Still pending, now with the mode: a UI that offers it (tau acp's modes) need not wait for the runtime.
    this.report();
    return true;
  }

  private async setUp(): Promise<void> {
    if (!(await this.loadPolicy())) return;
    mark("sandbox policy loaded");
    if (this.platform !== "linux" && this.platform !== "darwin") {
      return this.block(`the sandbox runs on Linux and macOS only, not on ${this.platform}`, `start tau with --no-sandbox to run model commands with your full rights`);
    }
    const shared = this.platform === "linux" && this.forShell;
    // Made beside the runtime's loading: its processes start while this one loads the library.
    if (shared) this.network.keepProbeIn(enterProbeFile(this.o.roots.state));
    const network = shared ? this.network.start(this.proxySocket()) : Promise.resolve(false);
    if (this.platform === "linux") keepBwrapVersion(this.o.roots.state);
    // The runtime's TMPDIR for commands: a folder of this user's, made writable below.
    process.env.CLAUDE_CODE_TMPDIR = this.commandTmpdir();
    // The runtime protects names it finds in its working directory (shell and editor settings, git
    // hooks) with mount points that bubblewrap makes there when they do not exist: it works from a
    // private empty folder instead, and tau protects the project's names without mount points (runner.ts).
    process.chdir(this.runtimeCwd());
    // A wrap an earlier start kept for exactly this policy, disk and installation: commands run in
    // the shared namespace with it, and the runtime starts when something needs it (kept-wrap.ts).
    if (shared && this.hooks.adoptKept?.() === true) {
      mark("sandbox kept wrap taken");
      if (await network) {
        mark("sandbox network namespace up");
        this.onDemand = true;
        this.network.proxyOnDemand(() => void this.runtimeForWrap().catch(() => {}));
        this.enter(this.userSuspended ? "suspended" : "active");
        this.sweepLater();
        return;
      }
      this.hooks.configPushed();
    }
    this.bringingUp = this.bringUp(network);
    await this.bringingUp;
  }

  /**
   * Loads the runtime and starts it (its proxy, its bridges), checking the dependencies meanwhile.
   * At set-up it also builds the first wrap ahead, waits for the shared namespace and enters
   * `active`; started on demand (a kept wrap served so far) the state stays, and a failure blocks it.
   */
  private async bringUp(network: Promise<boolean>): Promise<void> {
    const loaded = loadRuntime();
    const { SandboxManager } = loaded.runtime;
    mark("sandbox runtime loaded");
    // The runtime's bridges end with this process even when the reaper is killed with it.
    if (this.platform === "linux") this.socatPath = socatDyingWithParent(this.runtimeFolder());
    // Its proxy and bridges start while the dependencies are checked (the checks wait on programs):
    // nothing runs a command before both are done, and a missing one blocks whatever set-up did.
    const initialized = this.leftovers.around(() => SandboxManager.initialize(this.runtimeConfig(), (request) => this.hooks.askNetwork(request.host, request.port), false));
    initialized.catch(() => {});
    const check = SandboxManager.checkDependencies();
    mark("sandbox dependencies checked");
    this.dependencyErrors = check.errors;
    this.dependencyWarnings = check.warnings;
    if (check.errors.length > 0) {
      // What set-up did is undone: a blocked sandbox runs no runtime.
      await initialized.catch(() => {});
      await SandboxManager.reset().catch(() => {});
      this.leftovers.releaseAll();
      this.network.stop();
      return this.block(`missing: ${check.errors.join(", ")}`, `${INSTALL_HINT[this.platform] ?? "install the missing programs"}, then start tau again; ${BYPASS_HINT}`);
    }
    await initialized;
    mark("sandbox runtime initialized");
    this.runtime = SandboxManager;
    const proxyPort = SandboxManager.getProxyPort();
    if (proxyPort !== undefined && this.forShell) this.network.proxyUp(proxyPort);
    if (!this.onDemand) {
      await this.hooks.runtimeUp();
      mark("sandbox wrap built ahead");
      await network;
      mark("sandbox network namespace up");
      this.enter(this.userSuspended ? "suspended" : "active");
    }
    loaded.settled();
    this.sweepLater();
  }

  /**
   * Sockets a killed predecessor left (every tau process killed at once): their names are not this
   * process's, so they go after set-up (once), off the first command's way (the temp folder can be large).
   */
  private sweepLater(): void {
    if (this.swept) return;
    this.swept = true;
    setImmediate(() => sweepDeadOwners({ temp: tmpdir(), runtime: this.runtimeFolder() }));
  }

  /**
   * The runtime, for a wrap to build or a connection to serve: up since set-up, or started now
   * when set-up took a kept wrap. Throws, with the sandbox blocked, when it cannot start.
   */
  async runtimeForWrap(): Promise<Runtime> {
    await this.start();
    if (this.runtime === undefined && this.onDemand) {
      this.bringingUp ??= this.bringUp(Promise.resolve(true)).catch((err: unknown) => {
        this.network.stop();
        this.block(`the sandbox runtime failed to start: ${(err as Error).message}`, `${INSTALL_HINT[this.platform] ?? ""}; ${BYPASS_HINT}`);
      });
      await this.bringingUp;
    }
    if (this.runtime === undefined) throw new Error(`the sandbox runtime is not running: ${this.reason ?? "it did not start"}`);
    return this.runtime;
  }

  /** Loads sandbox.yaml's layers; false (and blocked) on an error. */
  private async loadConfig(): Promise<boolean> {
    try {
      this.loaded = await loadSandboxConfig({
        configRoot: this.o.roots.config,
        projectRoot: this.o.projectRoot,
        // Against the project root, where the extension started: its working directory is the runtime's later.
        ...(this.o.launch?.config_file !== undefined ? { overrideFile: resolve(this.o.projectRoot, this.o.launch.config_file) } : {}),
        env: this.env,
      });
      return true;
    } catch (err) {
      this.block(`invalid sandbox configuration: ${(err as Error).message}`, "correct the file at that line, then start tau again");
      return false;
    }
  }

  private originFile(key: string): string {
    const layer = originOf(this.loaded?.origins ?? {}, key);
    return this.loaded?.files.find((f) => f.layer === layer && f.status === "loaded")?.path ?? layer;
  }

  private commandTmpdir(): string {
    const dir = join(tmpdir(), `tau-sandbox-${process.getuid?.() ?? 0}`);
    ensureRuntimeDir(dir);
    return dir;
  }

  /** Where the shared namespace's relays reach this process: a folder of this user's alone in tau's runtime root. */
  private proxySocket(): string {
    return join(this.runtimeFolder(), `${process.pid}.sock`);
  }

  /** The sandbox's folder in tau's runtime root: this user's alone, which no command can write. */
  private runtimeFolder(): string {
    const dir = join(this.o.roots.runtime, "sandbox");
    ensureRuntimeDir(dir);
    return dir;
  }

  /** The runtime's working directory: an empty folder of this user's in tau's state root, which no command can write. */
  private runtimeCwd(): string {
    const dir = join(this.o.roots.state, this.forShell ? "sandbox-cwd" : `sandbox-cwd-${this.o.owner}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  config(): SandboxConfig {
    return this.loaded?.config ?? {};
  }

  policy(): EffectivePolicy {
    const p = effectivePolicy(this.config(), this.o.projectRoot, this.o.roots, this.grants);
    return { ...p, allowWrite: [...p.allowWrite, ...(process.env.CLAUDE_CODE_TMPDIR ? [process.env.CLAUDE_CODE_TMPDIR] : [])] };
  }

  runtimeConfig(extra: { write?: string; read?: string } = {}): ReturnType<typeof runtimeConfig> {
    const config = runtimeConfig(this.policy(), this.o.projectRoot, extra);
    return this.socatPath === undefined ? config : { ...config, socatPath: this.socatPath };
  }

  get mode(): SandboxMode {
    if (this.modeOverride !== undefined) return this.modeOverride;
    if (this.o.launch?.approval === "never") return "non-interactive";
    return this.config().mode ?? "interactive";
  }

  enter(state: SandboxState, reason?: string, fix?: string): void {
    this.state = state;
    this.reason = [reason, ...(this.loaded?.warnings ?? [])].filter((r): r is string => r !== undefined).join("; ") || undefined;
    this.fix = fix;
    this.report();
  }

  private block(reason: string, fix: string): void {
    this.enter("blocked", reason, fix);
  }

  /** Publishes the state (a snapshot), with the mode once it is known: the policy loaded, or the session chose it. */
  report(): void {
    const modeKnown = this.loaded !== undefined || this.modeOverride !== undefined || this.o.launch?.approval === "never";
    this.o.host.emit("sandbox.state_reported", {
      state: this.state,
      ...(this.reason !== undefined ? { reason: firstLine(this.reason, 1024) } : {}),
      ...(this.fix !== undefined ? { fix: firstLine(this.fix, 1024) } : {}),
      ...(modeKnown ? { mode: this.mode } : {}),
    });
  }

  /** Hands the runtime the policy as it is now (a network grant or refusal, a reload). */
  updateNetwork(): void {
    this.hooks.configPushed();
    if (this.runtime === undefined) return;
    this.runtime.updateConfig(this.runtimeConfig());
  }

  /** Reads sandbox.yaml again (the caller revoked what was pending); false when it does not load. */
  async reload(): Promise<boolean> {
    if (!(await this.loadConfig())) return false;
    // The wrap goes (a kept one too), and a running runtime takes the policy.
    this.updateNetwork();
    if (this.state === "blocked" && (this.runtime !== undefined || (this.onDemand && this.bringingUp === undefined))) this.enter(this.userSuspended ? "suspended" : "active");
    else this.enter(this.state, this.state === "active" ? undefined : this.reason);
    return true;
  }

  /** Ends the runtime (its proxies and bridges). */
  async stop(): Promise<void> {
    this.network.stop();
    if (this.runtime === undefined) return;
    await this.runtime.reset().catch(() => {});
    this.leftovers.releaseAll();
  }
}

type RuntimeModule = typeof import("@anthropic-ai/sandbox-runtime");

/** Whether this code runs from a bundle of dist/fast/ (its `import.meta.url` is the bundle's). */
const BUNDLED = /\/dist\/fast\/[^/]+\.cjs$/.test(import.meta.url);

/**
 * The runtime, loaded when the sandbox is set up, never inlined into the shell extension's bundle
 * (it is large, and most starts with the sandbox off need none of it). Bundled, it is
 * dist/fast/sandbox-runtime.cjs beside this bundle, loaded with a code cache (`settled` writes the
 * cache once set-up is done, so it holds what set-up compiled): build.ts keeps each of its files'
 * own `import.meta.url`, so it finds its helper programs in node_modules. From source it is the
 * package itself, through require (a bundle compiled with a code cache cannot run import(); Node
 * 20.19 loads ES modules with require).
 */
function loadRuntime(): { runtime: RuntimeModule; settled: () => void } {
  const load = createRequire(import.meta.url);
  if (BUNDLED) {
    const { loadBundle } = load("../../bin/bundle-loader.cjs") as { loadBundle: (file: string) => { exports: RuntimeModule; settled: () => void } };
    try {
      const b = loadBundle(fileURLToPath(new URL("./sandbox-runtime.cjs", import.meta.url)));
      return { runtime: b.exports, settled: b.settled };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      // an installation built before the runtime had a bundle of its own: the package, as from source
    }
  }
  return { runtime: load("@anthropic-ai/sandbox-runtime") as RuntimeModule, settled: () => {} };
}
