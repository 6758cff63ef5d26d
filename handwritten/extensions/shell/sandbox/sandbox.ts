// The sandbox of the `shell` tool (SPEC-sandbox): its states, the runtime it drives
// (@anthropic-ai/sandbox-runtime, loaded after the extension is ready), approvals asked of every
// attached UI, the `:sandbox` commands and the safe diagnostics.
import { builtin } from "../../../startup/builtin.js";
import { statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { tmpdir } from "node:os";
import type {
  SandboxApprovalOutcome,
  SandboxConfig,
  SandboxDecision,
  SandboxDiagnosticOutcome,
  SandboxLaunch,
  SandboxMode,
  SandboxPermissionKind,
  SandboxReviewResult,
  SandboxState,
} from "../../../../generated/index.js";
import { loadSandboxConfig, rememberClassifier, trustProject, type LoadedSandboxConfig, type Roots } from "../../../config/index.js";
import { randomHex } from "../../../startup/random.js";
import { ensureRuntimeDir } from "../../../transport/runtime-dir.js";
import { ToolError, runShell, shellArgs, shellBody, shellResult, type ShellOutcome, type ToolResult } from "../tools/index.js";
import { throwIfCancelled } from "../tools/errors.js";
import { findDenial, realTarget, type Denial } from "./denials.js";
import { createdDuring, isGitControlPath, quarantine, scanProject, type ProjectScan } from "./project-scan.js";
import { SANDBOX_COMMAND_ENV, WRAPPED_COMMAND, diskKey, ensureEmptyDir, planMounts, removeMountPoints, type WrapPlan } from "./wrap-cache.js";
import { DEFAULT_DENY_WRITE_PATTERNS, effectivePolicy, emptyGrants, originOf, runtimeConfig, within, type EffectivePolicy, type SessionGrants } from "./policy.js";

// node:crypto is loaded on the first wrap, not at start-up (a bundle start-up test guards it).
const createHash = (algorithm: string): import("node:crypto").Hash => builtin<typeof import("node:crypto")>("crypto").createHash(algorithm);

/** A decision not answered in this long is withdrawn (revoked): a run with nobody to answer never hangs. */
export const SANDBOX_APPROVAL_MAX_WAIT_MS = 10 * 60_000;
/** Diagnostics kept for `:sandbox doctor`. */
export const SANDBOX_DIAGNOSTICS_KEPT = 50;
/**
 * An automatic review the harness has not answered in this long is treated as failed (the manual
 * prompt follows); the harness's own limit (REVIEW_TIMEOUT_MS, 60 s) ends it sooner.
 */
export const SANDBOX_REVIEW_MAX_WAIT_MS = 90_000;
/** What the harness is given beyond the review's own timeout before the sandbox stops waiting for it. */
const SANDBOX_REVIEW_GRACE_MS = 30_000;

/** How an automatic review ended for the sandbox: the harness's result, or revoked here. */
type ReviewEnd = SandboxReviewResult | { readonly outcome: "revoked" };

interface PendingReview {
  readonly agentId: string;
  readonly resolve: (end: ReviewEnd) => void;
}

type Runtime = (typeof import("@anthropic-ai/sandbox-runtime"))["SandboxManager"];

/** What the sandbox needs of its extension: publishing, and nothing else. */
export interface SandboxHost {
  /** Publishes; may say whether the event was handed to the harness (`queued`) or not. */
  emit(name: string, data: Record<string, unknown>): unknown;
}

/** A classifier id as `sandbox.yaml` accepts it (ClassifierId): `provider/model`. */
const CLASSIFIER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\/[^\s]{1,255}$/;

export interface SandboxOptions {
  readonly host: SandboxHost;
  readonly projectRoot: string;
  readonly roots: Roots;
  readonly launch?: SandboxLaunch;
  readonly env?: NodeJS.ProcessEnv;
  /** The platform checked (tests of the refusal on other platforms). */
  readonly platform?: NodeJS.Platform;
}

export interface ShellCall {
  readonly callId: string;
  readonly agentId: string;
  readonly cwd: string;
  readonly signal: AbortSignal;
  readonly onProgress?: (text: string) => void;
}

interface PendingApproval {
  readonly id: string;
  readonly kind: SandboxPermissionKind;
  readonly choices: readonly SandboxDecision[];
  readonly agentId?: string;
  readonly callId?: string;
  readonly payload: Record<string, unknown>;
  readonly resolve: (outcome: SandboxApprovalOutcome) => void;
  readonly timer: NodeJS.Timeout;
}

interface Diagnostic {
  readonly outcome: SandboxDiagnosticOutcome;
  readonly kind: SandboxPermissionKind;
  readonly callId?: string;
  readonly at: number;
  readonly restored: boolean;
  readonly classifier?: string;
  readonly label?: string;
  /** An automatic review's outcome: whether a request reached the classifier. */
  readonly attempted?: boolean;
  readonly agentId?: string;
  /** A child's review made by its parent. */
  readonly parentId?: string;
  /** The session journal did not take it: kept in memory only. */
  unstored?: boolean;
}

/** Safe review facts a diagnostic carries (SPEC-sandbox-reviewer, "Diagnostics"). */
interface ReviewFacts {
  classifier?: string;
  label?: string;
  attempted?: boolean;
  agentId?: string;
  parentId?: string;
}

interface RunningCommand {
  readonly agentId: string;
  readonly command: string;
  /** The call's cancellation: it withdraws a pending review of the command's connections. */
  readonly signal: AbortSignal;
}

const INSTALL_HINT: Record<string, string> = {
  linux:
    "install bubblewrap, socat and ripgrep (Debian/Ubuntu: sudo apt-get install bubblewrap socat ripgrep; Fedora: sudo dnf install bubblewrap socat ripgrep; Arch: sudo pacman -S bubblewrap socat ripgrep)",
  darwin: "install ripgrep (brew install ripgrep); sandbox-exec comes with macOS",
};
const BYPASS_HINT = "or start tau with --no-sandbox to run model commands with your full rights";

function firstLine(text: string, max = 200): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export class Sandbox {
  state: SandboxState = "pending";
  reason: string | undefined;
  fix: string | undefined;
  private loaded: LoadedSandboxConfig | undefined;
  private runtime: Runtime | undefined;
  private dependencyErrors: string[] = [];
  private dependencyWarnings: string[] = [];
  private readonly grants: SessionGrants = emptyGrants();
  private modeOverride: SandboxMode | undefined;
  private userSuspended = false;
  private started: Promise<void> | undefined;
  private readonly running = new Map<string, RunningCommand>();
  private sandboxedRunning = 0;
  private readonly pending = new Map<string, PendingApproval>();
  private readonly hostPrompts = new Map<string, Promise<SandboxApprovalOutcome>>();
  private readonly diagnostics: Diagnostic[] = [];
  private readonly reviews = new Map<string, PendingReview>();
  /** Notes for a call's result from what happened while it ran (its connections' reviews and refusals, quarantined files), by call id. */
  private readonly reviewNotes = new Map<string, string[]>();
  /** The session's reviewer choice (`:sandbox classifier`): a model, false (manual), or none (the configuration's). */
  private sessionClassifier: string | false | undefined;
  /** Setup offered with the next manual prompt: nothing selected yet, or the selected classifier is gone. */
  private setupOffer: "first" | "unavailable" | undefined;
  private setupOffered = false;
  /** The state each agent's context last heard of (the note at the head of a `shell` result). */
  private readonly noted = new Map<string, string>();
  private readonly platform: NodeJS.Platform;
  private readonly env: NodeJS.ProcessEnv;
  /** The last wrap the runtime built, while it may be reused. */
  private lastWrap: WrapPlan | undefined;
  /** Wraps the runtime built whose cleanup is still owed to it. */
  private runtimeWraps = 0;
  /** How many wraps the runtime built and how many were reused, for `:sandbox doctor`. */
  private readonly wrapCounts = { built: 0, reused: 0 };
  private exitHandled = false;
  /** Mount points of the commands run since no sandboxed command last ran. */
  private readonly usedMountPoints: string[] = [];

  constructor(private readonly o: SandboxOptions) {
    this.platform = o.platform ?? process.platform;
    this.env = o.env ?? process.env;
  }

  /** Sets the sandbox up (once); `shell` calls wait for it. */
  start(): Promise<void> {
    this.started ??= this.setUp().catch((err: unknown) => this.block(`the sandbox runtime failed to start: ${(err as Error).message}`, `${INSTALL_HINT[this.platform] ?? ""}; ${BYPASS_HINT}`));
    return this.started;
  }

  private async setUp(): Promise<void> {
    this.report();
    if (this.o.launch?.enabled === false) return this.enter("bypassed", "--no-sandbox: model commands run with your full rights");
    if (!(await this.loadConfig())) return;
    if (this.loaded?.config.enabled === false) return this.enter("bypassed", `enabled: false in ${this.originFile("enabled")}: model commands run with your full rights`);
    if (this.platform !== "linux" && this.platform !== "darwin") {
      return this.block(`the sandbox runs on Linux and macOS only, not on ${this.platform}`, `start tau with --no-sandbox to run model commands with your full rights`);
    }
    const { SandboxManager } = loadRuntime();
    const check = SandboxManager.checkDependencies();
    this.dependencyErrors = check.errors;
    this.dependencyWarnings = check.warnings;
    if (check.errors.length > 0) {
      return this.block(`missing: ${check.errors.join(", ")}`, `${INSTALL_HINT[this.platform] ?? "install the missing programs"}, then start tau again; ${BYPASS_HINT}`);
    }
    // The runtime's TMPDIR for commands: a folder of this user's, made writable below.
    process.env.CLAUDE_CODE_TMPDIR = this.commandTmpdir();
    await SandboxManager.initialize(this.runtimeConfig() as never, (request) => this.askNetwork(request.host, request.port), false);
    this.runtime = SandboxManager;
    this.enter(this.userSuspended ? "suspended" : "active");
  }

  /** Loads sandbox.yaml's layers; false (and blocked) on an error. */
  private async loadConfig(): Promise<boolean> {
    try {
      this.loaded = await loadSandboxConfig({
        configRoot: this.o.roots.config,
        projectRoot: this.o.projectRoot,
        ...(this.o.launch?.config_file !== undefined ? { overrideFile: this.o.launch.config_file } : {}),
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

  private config(): SandboxConfig {
    return this.loaded?.config ?? {};
  }

  policy(): EffectivePolicy {
    const p = effectivePolicy(this.config(), this.o.projectRoot, this.o.roots, this.grants);
    return { ...p, allowWrite: [...p.allowWrite, ...(process.env.CLAUDE_CODE_TMPDIR ? [process.env.CLAUDE_CODE_TMPDIR] : [])] };
  }

  private runtimeConfig(extra: { write?: string; read?: string } = {}): ReturnType<typeof runtimeConfig> {
    return runtimeConfig(this.policy(), this.o.projectRoot, extra);
  }

  get mode(): SandboxMode {
    if (this.modeOverride !== undefined) return this.modeOverride;
    if (this.o.launch?.approval === "never") return "non-interactive";
    return this.config().mode ?? "interactive";
  }

  // ---- states ----------------------------------------------------------------------------------

  private enter(state: SandboxState, reason?: string, fix?: string): void {
    this.state = state;
    this.reason = [reason, ...(this.loaded?.warnings ?? [])].filter((r): r is string => r !== undefined).join("; ") || undefined;
    this.fix = fix;
    this.report();
  }

  private block(reason: string, fix: string): void {
    this.enter("blocked", reason, fix);
  }

  private report(): void {
    this.o.host.emit("sandbox.state_reported", {
      state: this.state,
      ...(this.reason !== undefined ? { reason: firstLine(this.reason, 1024) } : {}),
      ...(this.fix !== undefined ? { fix: firstLine(this.fix, 1024) } : {}),
    });
  }

  /**
   * The one-line note an agent's first `shell` result starts with when tau was started without the
   * sandbox. Later changes of state reach every agent from the harness, as a hidden message at its
   * next round (SPEC-sandbox, "The model's view").
   */
  private stateNote(agentId: string): string {
    const first = !this.noted.has(agentId);
    this.noted.set(agentId, this.state);
    return first && this.state === "bypassed" ? "[sandbox: not in use (the user started tau without it) — commands run with the user's full rights]\n" : "";
  }

  // ---- the shell tool --------------------------------------------------------------------------

  /** Runs a model's `shell` call under the sandbox's current state; reviews made for it are noted in its result. */
  async runShellTool(args: unknown, call: ShellCall): Promise<ToolResult> {
    // Cancelling the call withdraws the prompts its connections wait on (a filesystem prompt
    // listens to the signal itself); one left when the call ends has nobody left to wait for it.
    const revoke = (): void => this.revokeCall(call.callId);
    call.signal.addEventListener("abort", revoke, { once: true });
    try {
      const result = await this.runShellCall(args, call);
      const notes = this.reviewNotes.get(call.callId) ?? [];
      return notes.length === 0 ? result : { ...result, output: `${result.output}\n${notes.join("\n")}` };
    } finally {
      call.signal.removeEventListener("abort", revoke);
      this.revokeCall(call.callId);
      this.reviewNotes.delete(call.callId);
    }
  }

  private async runShellCall(args: unknown, call: ShellCall): Promise<ToolResult> {
    const { command, timeoutSeconds } = shellArgs(args);
    throwIfCancelled(call.signal);
    await this.start();
    if (this.state === "blocked") {
      this.diagnose("blocked", "filesystem_write", call.callId);
      throw new ToolError("failed", `The sandbox is blocked, so the command was not run: ${this.reason ?? "unknown reason"}. Fix: ${this.fix ?? ""}. tau never runs a model command unsandboxed on its own.`);
    }
    checkWorkdir(call.cwd);
    const note = this.stateNote(call.agentId);
    const timeoutMs = timeoutSeconds * 1000;
    if (this.state !== "active") {
      const outcome = await runShell({ command, cwd: call.cwd, timeoutMs, signal: call.signal, ...(call.onProgress ? { onProgress: call.onProgress } : {}) });
      return shellResult(command, outcome, timeoutSeconds, note);
    }
    const started = Date.now();
    const first = await this.runSandboxed(command, call, timeoutMs, {});
    if (first.cancelled || first.timedOut || first.signal !== null || succeeded(first)) return shellResult(command, first, timeoutSeconds, note);
    const denial = findDenial(first.output, call.cwd, this.policy());
    if (denial === undefined) return shellResult(command, first, timeoutSeconds, note);
    const elapsed = Date.now() - started;
    const kind: SandboxPermissionKind = denial.access === "write" ? "filesystem_write" : "filesystem_read";
    if (denial.gitFolder === true) {
      this.diagnose("refused", kind, call.callId);
      return shellResult(command, first, timeoutSeconds, note, `\n[sandbox: ${denial.path} is in a git folder whose hooks and config are protected (they can run code outside the sandbox), so a model command cannot create that folder or change them; no approval can open it — the user can run that git command themselves (!cmd, e.g. !git init)]`);
    }
    if (denial.protected) {
      this.diagnose("refused", kind, call.callId);
      return shellResult(command, first, timeoutSeconds, note, `\n[sandbox: ${denial.path} is protected (tau's configuration, git hooks and config, shell start-up files); no approval can open it to a model command — the user can change it with a command of their own (!cmd)]`);
    }
    if (denial.grant === "/") {
      // Creating a top-level folder needs the whole filesystem writable: never offered as one click.
      this.diagnose("refused", kind, call.callId);
      return shellResult(command, first, timeoutSeconds, note, `\n[sandbox: ${denial.path} would need write access to the whole filesystem (/), which no approval grants — the user can create it with a command of their own (!cmd)]`);
    }
    const suggestion = denial.access === "write" ? `:sandbox filesystem allow-write add ${denial.grant}` : `:sandbox filesystem allow-read add ${denial.grant}`;
    if (this.mode === "non-interactive") {
      this.diagnose("refused", kind, call.callId);
      return shellResult(command, first, timeoutSeconds, note, `\n[sandbox: ${denial.access} access to ${denial.path} was refused by the sandbox; nobody was asked (non-interactive). The user can allow it with \`${suggestion}\` in the interactive UI]`);
    }
    const reviewed = await this.review(
      {
        kind,
        target: denial.grant,
        command,
        scopes: this.filesystemScopes(denial),
        ...(denial.line !== undefined ? { evidence: denial.line } : {}),
        agentId: call.agentId,
        callId: call.callId,
      },
      call.signal,
    );
    const outcome: SandboxApprovalOutcome =
      reviewed === "approved"
        ? "allowed"
        : reviewed === "revoked"
          ? "revoked"
          : await this.ask({ kind, target: denial.grant, choices: ["allow_retry", "allow_adapt", "deny"], agentId: call.agentId, callId: call.callId, command }, call.signal);
    if (outcome === "allowed") {
      const remaining = timeoutMs - elapsed;
      if (remaining <= 0) {
        if (reviewed === "approved") this.diagnose("revoked", kind, call.callId, { ...this.classifierFact(), label: "time_budget", agentId: call.agentId });
        return shellResult(command, first, timeoutSeconds, note, "\n[sandbox: access was approved, but the command's time budget is used up, so it was not run again]");
      }
      // The reviewer's grant applied (a manual one is recorded as its prompt resolves).
      if (reviewed === "approved") this.diagnose("allowed", kind, call.callId, { ...this.classifierFact(), agentId: call.agentId });
      const replay = await this.runSandboxed(command, call, remaining, denial.access === "write" ? { write: denial.grant } : { read: denial.grant });
      this.diagnose(succeeded(replay) && replay.signal === null && !replay.timedOut ? "replay_succeeded" : "replay_failed", kind, call.callId);
      const who = reviewed === "approved" ? `the automatic reviewer (${this.classifier() ?? "classifier"}) approved` : "the user approved";
      // The replay has only what the first attempt left of the timeout, and its result says so.
      const left = `${Math.max(0.1, Math.round(remaining / 100) / 10)} s`;
      const head = `${note}[first attempt]\n${shellBody(first, timeoutSeconds)}\n[sandbox: ${who} ${denial.access} access to ${denial.grant} for one run; the whole command was run again within the ${left} its first attempt left of the ${timeoutSeconds} s timeout (side effects of the first attempt may already have happened)]\n`;
      return shellResult(command, replay, `${left} (what the first attempt left of the ${timeoutSeconds} s timeout)`, head);
    }
    if (outcome === "allowed_adapt") {
      if (denial.access === "write") this.grants.allowWrite.add(denial.grant);
      else this.grants.allowRead.add(denial.grant);
      return shellResult(command, first, timeoutSeconds, note, `\n[sandbox: the user allowed ${denial.access} access to ${denial.grant} for the rest of this session; the command was not run again]`);
    }
    const why = outcome === "revoked" ? "the request was withdrawn (cancelled, a new prompt, a policy change, or no answer in time)" : "the user refused it";
    return shellResult(command, first, timeoutSeconds, note, `\n[sandbox: ${denial.access} access to ${denial.path} was not granted: ${why}]`);
  }

  /**
   * Why the `write` or `edit` tool may not change `absolute`, or undefined: the protected paths
   * (tau's configuration and state, the project's `.tau/`, git hooks and config, shell start-up
   * files) stay out of the model's file tools too, or a model could switch the sandbox off, trust
   * its own project or plant a hook that runs outside it. Where a symbolic link leads is what is
   * judged. Only while the sandbox is in force: `--no-sandbox` and `:sandbox off` give the model's
   * tools the user's full rights, as they do its commands.
   */
  protectedWrite(absolute: string): string | undefined {
    if (this.state === "bypassed" || this.state === "suspended") return undefined;
    const target = realTarget(absolute);
    const hit = this.policy().protected.find((p) => within(target, p) || within(absolute, p)) ?? [target, absolute].find(isGitControlPath);
    if (hit === undefined) return undefined;
    return `${absolute} is protected (tau's configuration, the project's .tau/, git hooks and config, shell start-up files): the model's tools cannot change it. The user can, with a command of their own (!cmd) or an editor.`;
  }

  private async runSandboxed(command: string, call: ShellCall, timeoutMs: number, extra: { write?: string; read?: string }): Promise<ShellOutcome> {
    const runtime = this.runtime as Runtime;
    const policy = this.policy();
    const before = scanProject(this.o.projectRoot);
    const config = runtimeConfig(policy, this.o.projectRoot, extra, before);
    const plan = await this.wrap(runtime, config, before);
    this.running.set(call.callId, { agentId: call.agentId, command, signal: call.signal });
    this.sandboxedRunning++;
    this.usedMountPoints.push(...plan.mountPoints);
    // Should the extension exit while a reused wrap's command runs (the runtime knows only its own).
    if (!this.exitHandled) {
      this.exitHandled = true;
      process.once("exit", () => removeMountPoints(this.usedMountPoints));
    }
    try {
      // The command reaches the wrap in the environment (WRAPPED_COMMAND takes it out again).
      const env = { ...process.env, [SANDBOX_COMMAND_ENV]: command };
      return await runShell({ command, wrapped: plan.wrapped, env, cwd: call.cwd, timeoutMs, signal: call.signal, ...(call.onProgress ? { onProgress: call.onProgress } : {}) });
    } finally {
      this.running.delete(call.callId);
      if (--this.sandboxedRunning === 0) this.afterAll(runtime);
      this.checkCreated(before, policy, call.callId);
    }
  }

  /**
   * The wrap for a command: the last one again when it was built for the same runtime
   * configuration and the same disk (SPEC-sandbox, "Reusing the wrap"), else a new one.
   */
  private async wrap(runtime: Runtime, config: ReturnType<typeof runtimeConfig>, scan: ProjectScan): Promise<WrapPlan> {
    const fs = config.filesystem;
    // The last wrap's own paths count too (the runtime adds some): one that went makes it rebuild.
    const paths = [...fs.denyRead, ...fs.allowRead, ...fs.allowWrite, ...fs.denyWrite, process.cwd()].map((e) => (typeof e === "string" ? e : e.path)).concat(this.lastWrap?.paths ?? []);
    // Only bubblewrap's wrap is read here (its mount points); elsewhere each command is wrapped anew.
    const disk = this.platform === "linux" ? diskKey(scan, paths) : undefined;
    const key = disk === undefined ? undefined : createHash("sha256").update(JSON.stringify(config)).update(disk).digest("hex");
    const last = this.lastWrap;
    if (key !== undefined && last !== undefined && last.key === key && this.sandboxedRunning === 0 && ensureEmptyDir(last.emptyDir)) {
      this.wrapCounts.reused++;
      return last;
    }
    this.wrapCounts.built++;
    const wrapped = await runtime.wrapWithSandbox(WRAPPED_COMMAND, "bash", config as never, undefined, { commandId: randomHex(16) });
    this.runtimeWraps++;
    const mounts = planMounts(wrapped);
    const plan: WrapPlan = { wrapped, key: key ?? "", mountPoints: mounts?.mountPoints ?? [], emptyDir: mounts?.emptyDir, paths: mounts?.paths ?? [] };
    this.lastWrap = key !== undefined && mounts !== undefined ? plan : undefined;
    return plan;
  }

  /** Once no sandboxed command runs: the mount points bubblewrap made for missing protected paths go, the runtime's with them. */
  private afterAll(runtime: Runtime): void {
    removeMountPoints(this.usedMountPoints.splice(0));
    for (; this.runtimeWraps > 0; this.runtimeWraps--) runtime.cleanupAfterCommand();
    // The empty folder a reused wrap made again is this extension's to remove (rmdir: only while empty).
    const emptyDir = this.lastWrap?.emptyDir;
    if (emptyDir !== undefined) removeMountPoints([emptyDir]);
  }

  /**
   * What bubblewrap could not bind because it did not exist when the command started: credential
   * files and git control files the command created are moved out of the project (SPEC-sandbox,
   * "Created during a command"); the call's result says where.
   */
  private checkCreated(before: ProjectScan, policy: EffectivePolicy, callId: string): void {
    const findings = createdDuring(before, scanProject(this.o.projectRoot), { credentials: policy.defaultDenyWrite });
    if (findings.length === 0) return;
    const into = join(this.o.roots.state, "sandbox-quarantine", `${new Date().toISOString().replace(/[:.]/g, "-")}-${randomHex(4)}`);
    const notes = this.reviewNotes.get(callId) ?? [];
    notes.push(...quarantine(findings, this.o.projectRoot, into));
    this.reviewNotes.set(callId, notes);
  }

  // ---- approvals -------------------------------------------------------------------------------

  private async askNetwork(host: string, port: number | undefined): Promise<boolean | { allow: false; reason: string }> {
    const target = port === undefined ? host : `${host}:${port}`;
    const deny = (reason: string) => ({ allow: false as const, reason });
    // The proxy's refusal of a plain HTTP request carries no reason: each refusal below names its
    // own in the call's result (SPEC-sandbox, "Approvals").
    const refusedByUser = (callId: string | undefined) => {
      if (callId !== undefined && this.running.has(callId)) this.addNote(callId, `[sandbox: a connection to ${target} was refused: the user refused ${host} for this session]`);
      return deny(`the user refused ${host} for this session`);
    };
    if (this.grants.denyDomains.has(host)) return refusedByUser(this.soleCall()?.[0]);
    if (this.state !== "active" || this.mode === "non-interactive") {
      const sole = this.soleCall();
      this.diagnose("refused", "network", sole?.[0]);
      const why = this.mode === "non-interactive" ? "non-interactive" : `the sandbox is ${this.state}`;
      if (sole !== undefined) this.addNote(sole[0], `[sandbox: a connection to ${target} was refused: ${host} is not on the network allowlist and nobody was asked (${why}); the user can allow it with \`:sandbox network allow add ${host}\` in the interactive UI]`);
      return deny(`${host} is not on the sandbox's network allowlist; the user can allow it with :sandbox network allow add ${host}`);
    }
    const running = this.soleCall();
    if (running !== undefined) {
      const reviewed = await this.review(
        {
          kind: "network",
          target,
          command: running[1].command,
          scopes: [`one connection to ${target}, now; the host is not added to the allowlist, and the connection is not limited to any request method (it may upload data)`],
          agentId: running[1].agentId,
          callId: running[0],
        },
        running[1].signal,
      );
      if (reviewed === "approved") {
        this.diagnose("allowed", "network", running[0], { ...this.classifierFact(), agentId: running[1].agentId });
        return true;
      }
      if (reviewed === "revoked") return deny(`the request for ${host} was withdrawn`);
    }
    let prompt = this.hostPrompts.get(target);
    if (prompt === undefined) {
      const sole = this.soleCall();
      prompt = this.ask({ kind: "network", target, choices: ["allow", "deny"], ...(sole ? { agentId: sole[1].agentId, callId: sole[0], command: sole[1].command } : {}) });
      this.hostPrompts.set(target, prompt);
      void prompt.finally(() => this.hostPrompts.delete(target));
    }
    const outcome = await prompt;
    if (outcome === "allowed") return true;
    if (outcome === "denied") {
      this.grants.denyDomains.add(host);
      this.updateNetwork();
      return refusedByUser(running?.[0]);
    }
    const callId = running?.[0];
    if (callId !== undefined && this.running.has(callId)) {
      this.addNote(callId, `[sandbox: the connection to ${target} was refused: its approval was withdrawn (the call was cancelled, a new prompt, a policy change, or no answer in time)]`);
    }
    return deny(`the request for ${host} was withdrawn`);
  }

  /** A note for a call's result (once per text). */
  private addNote(callId: string, text: string): void {
    const notes = this.reviewNotes.get(callId) ?? [];
    if (!notes.includes(text)) notes.push(text);
    this.reviewNotes.set(callId, notes);
  }

  /** The one sandboxed command running, if exactly one is: the best attribution a connection gets. */
  private soleCall(): [string, RunningCommand] | undefined {
    return this.running.size === 1 ? [...this.running.entries()][0] : undefined;
  }

  /** The selected classifier (`provider/model`), or undefined for manual approvals only. */
  classifier(): string | undefined {
    const c = this.selection().value;
    return typeof c === "string" ? c : undefined;
  }

  /** The effective reviewer selection and where it came from: the session's choice wins over the configuration. */
  selection(): { value: string | false | undefined; from: string } {
    if (this.sessionClassifier !== undefined) return { value: this.sessionClassifier, from: "session" };
    const c = this.config().classifier;
    if (c !== undefined) return { value: c, from: originOf(this.loaded?.origins ?? {}, "classifier") };
    return { value: undefined, from: "default" };
  }

  private classifierFact(): { classifier?: string } {
    const c = this.classifier();
    return c !== undefined ? { classifier: c } : {};
  }

  /** `sandbox.classifier_selected` read back on resume: the session's choice again. */
  restoreSelection(d: { choice: "model" | "manual" | "default"; classifier?: string }): void {
    this.sessionClassifier = d.choice === "manual" ? false : d.choice === "model" && d.classifier !== undefined && CLASSIFIER_ID.test(d.classifier) ? d.classifier : undefined;
  }

  /** Every scope a filesystem exception opens, broader ones included, in words for the reviewer. */
  private filesystemScopes(denial: Denial): string[] {
    if (denial.access === "write") {
      return [
        `${denial.grant} and everything below it become writable for one rerun of the whole command and what it starts (deny-write rules and protected paths still apply)`,
        ...(denial.path !== denial.grant ? [`the reported path ${denial.path} is not an existing directory; the exception is its nearest existing directory ${denial.grant}`] : []),
      ];
    }
    const rules = this.policy().denyRead.filter((rule) => within(denial.grant, rule));
    return [
      `${denial.grant} becomes readable for one rerun of the whole command and what it starts`,
      ...rules.map((rule) => `the deny-read rule ${rule} is lifted as a whole for that rerun: everything under it becomes readable`),
    ];
  }

  /**
   * An automatic review before the manual prompt (SPEC-sandbox-reviewer): `approved`, `revoked`, or
   * `manual` (no classifier, not interactive, or any other outcome). Safe diagnostics record it.
   */
  private async review(
    r: { kind: SandboxPermissionKind; target: string; command: string; scopes: string[]; evidence?: string; agentId: string; callId?: string },
    signal?: AbortSignal,
  ): Promise<"approved" | "revoked" | "manual"> {
    if (this.mode !== "interactive" || this.state !== "active") return "manual";
    const selected = this.selection().value;
    // Nothing selected yet: the first manual prompt offers setup (SPEC-sandbox-reviewer, "Selection").
    if (selected === undefined && !this.setupOffered) this.setupOffer = "first";
    if (typeof selected !== "string") return "manual";
    const classifier = selected;
    const id = `rv-${randomHex(8)}`;
    const end = await new Promise<ReviewEnd>((resolve) => {
      const finish = (e: ReviewEnd): void => {
        if (!this.reviews.delete(id)) return;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(e);
      };
      const onAbort = (): void => finish({ outcome: "revoked" });
      const timeoutSeconds = this.config().classifier_timeout_seconds;
      const wait = timeoutSeconds === undefined ? SANDBOX_REVIEW_MAX_WAIT_MS : timeoutSeconds * 1000 + SANDBOX_REVIEW_GRACE_MS;
      const timer = setTimeout(() => finish({ review_id: id, outcome: "failed", reason: "no answer from the harness" }), wait);
      this.reviews.set(id, { agentId: r.agentId, resolve: finish });
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.o.host.emit("sandbox.review_request", {
        review_id: id,
        agent_id: r.agentId,
        ...(r.callId !== undefined ? { call_id: r.callId } : {}),
        classifier,
        kind: r.kind,
        target: firstLine(r.target, 1024),
        command: r.command.slice(0, 65536),
        scopes: r.scopes.slice(0, 8).map((x) => firstLine(x, 1024)),
        ...(r.evidence !== undefined ? { evidence: firstLine(r.evidence, 1024), evidence_provenance: "the failed command's own output, which the command controls (it may be forged)" } : {}),
        ...(timeoutSeconds !== undefined ? { timeout_ms: timeoutSeconds * 1000 } : {}),
      });
    });
    if (end.outcome === "revoked") {
      this.diagnose("revoked", r.kind, r.callId, { classifier, agentId: r.agentId });
      return "revoked";
    }
    const diagnostic: SandboxDiagnosticOutcome =
      end.outcome === "approved" ? "review_approved" : end.outcome === "escalated" ? "review_escalated" : end.outcome === "invalid" ? "review_invalid" : end.outcome === "skipped" ? "review_skipped" : "review_failed";
    const label =
      end.label ??
      (end.outcome === "unavailable" ? "unavailable" : end.outcome === "skipped" ? end.reason : end.outcome === "failed" ? (end.reason === "timeout" ? "timeout" : "provider_failure") : undefined);
    // A removed or credential-unavailable classifier is offered for setup again; it is never replaced silently.
    if (end.outcome === "unavailable") this.setupOffer = "unavailable";
    const attempted = end.outcome === "approved" || end.outcome === "escalated" || end.outcome === "invalid" || (end.outcome === "failed" && end.reason !== "the review request could not be sent");
    this.diagnose(diagnostic, r.kind, r.callId, {
      classifier,
      ...(label !== undefined ? { label: firstLine(label, 64) } : {}),
      attempted,
      agentId: r.agentId,
      ...(end.parent_id !== undefined ? { parentId: end.parent_id } : {}),
    });
    if (r.callId !== undefined && end.usage !== undefined) {
      const notes = this.reviewNotes.get(r.callId) ?? [];
      notes.push(`[sandbox: an automatic review by ${classifier} used ${end.usage.input_tokens} input and ${end.usage.output_tokens} output tokens]`);
      this.reviewNotes.set(r.callId, notes);
    }
    return end.outcome === "approved" ? "approved" : "manual";
  }

  /** `sandbox.review_result` from the harness: settles its review unless it was revoked. */
  reviewAnswered(result: SandboxReviewResult): void {
    this.reviews.get(result.review_id)?.resolve(result);
  }

  /** Publishes a prompt and waits for its answer, its withdrawal or its deadline. */
  private ask(
    r: { kind: SandboxPermissionKind; target: string; choices: SandboxDecision[]; agentId?: string; callId?: string; command?: string },
    signal?: AbortSignal,
  ): Promise<SandboxApprovalOutcome> {
    const id = `sbx-${randomHex(8)}`;
    const payload = {
      approval_id: id,
      kind: r.kind,
      target: firstLine(r.target, 1024),
      choices: r.choices,
      ...(r.agentId !== undefined ? { agent_id: r.agentId } : {}),
      ...(r.callId !== undefined ? { call_id: r.callId } : {}),
      ...(r.command !== undefined ? { command: firstLine(r.command) } : {}),
      ...(this.setupOffer !== undefined ? { classifier_setup: this.setupOffer } : {}),
    };
    if (this.setupOffer !== undefined) this.setupOffered = true;
    this.setupOffer = undefined;
    return new Promise<SandboxApprovalOutcome>((resolve) => {
      const onAbort = (): void => this.resolveApproval(id, "revoked");
      const timer = setTimeout(onAbort, SANDBOX_APPROVAL_MAX_WAIT_MS);
      this.pending.set(id, {
        id,
        kind: r.kind,
        choices: r.choices,
        ...(r.agentId !== undefined ? { agentId: r.agentId } : {}),
        ...(r.callId !== undefined ? { callId: r.callId } : {}),
        payload,
        timer,
        resolve: (outcome) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(outcome);
        },
      });
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.diagnose("prompted", r.kind, r.callId);
      this.o.host.emit("sandbox.approval_requested", payload);
    });
  }

  private resolveApproval(id: string, outcome: SandboxApprovalOutcome): void {
    const p = this.pending.get(id);
    if (p === undefined) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    this.diagnose(outcome, p.kind, p.callId);
    this.o.host.emit("sandbox.approval_resolved", { approval_id: id, outcome });
    p.resolve(outcome);
  }

  /** `sandbox.approval_answer` from a UI: the first answer wins; one not offered is ignored. */
  answer(id: string, decision: SandboxDecision): void {
    const p = this.pending.get(id);
    if (p === undefined || !p.choices.includes(decision)) return;
    this.resolveApproval(id, decision === "deny" ? "denied" : decision === "allow_adapt" ? "allowed_adapt" : "allowed");
  }

  /** A new user prompt to `agentId` withdraws the decisions pending for it. */
  userPrompted(agentId: string): void {
    for (const r of [...this.reviews.values()]) if (r.agentId === agentId) r.resolve({ outcome: "revoked" });
    for (const p of [...this.pending.values()]) if (p.agentId === agentId) this.resolveApproval(p.id, "revoked");
  }

  /** A call cancelled or ended withdraws the prompts still pending for it. */
  private revokeCall(callId: string): void {
    for (const p of [...this.pending.values()]) if (p.callId === callId) this.resolveApproval(p.id, "revoked");
  }

  /** A policy change withdraws every pending decision. */
  private revokeAll(): void {
    for (const r of [...this.reviews.values()]) r.resolve({ outcome: "revoked" });
    for (const id of [...this.pending.keys()]) this.resolveApproval(id, "revoked");
  }

  /** Publishes the prompts still waiting again (a UI attached). */
  republishPending(): number {
    for (const p of this.pending.values()) this.o.host.emit("sandbox.approval_requested", p.payload);
    return this.pending.size;
  }

  private updateNetwork(): void {
    if (this.runtime === undefined) return;
    this.lastWrap = undefined;
    this.runtime.updateConfig(this.runtimeConfig() as never);
  }

  // ---- diagnostics -----------------------------------------------------------------------------

  private diagnose(outcome: SandboxDiagnosticOutcome, kind: SandboxPermissionKind, callId: string | undefined, review: ReviewFacts = {}): void {
    const at = Date.now() * 1000;
    const kept: Diagnostic = { outcome, kind, ...(callId !== undefined ? { callId } : {}), at, restored: false, ...review };
    this.keep(kept);
    const { agentId, parentId, ...facts } = review;
    const sent = this.o.host.emit("sandbox.diagnostic_recorded", {
      outcome,
      kind,
      ...(callId !== undefined ? { call_id: callId } : {}),
      at,
      ...facts,
      ...(agentId !== undefined ? { agent_id: agentId } : {}),
      ...(parentId !== undefined ? { parent_id: parentId } : {}),
    });
    // Not handed to the session journal: permission handling goes on; the doctor keeps it and warns.
    void Promise.resolve(sent).then(
      (r) => {
        if (r !== undefined && r !== "queued") kept.unstored = true;
      },
      () => {
        kept.unstored = true;
      },
    );
  }

  /** A diagnostic read back from the session's journal on resume: shown, never acted on. */
  restoreDiagnostic(d: {
    outcome: SandboxDiagnosticOutcome;
    kind: SandboxPermissionKind;
    call_id?: string;
    at: number;
    classifier?: string;
    label?: string;
    attempted?: boolean;
    agent_id?: string;
    parent_id?: string;
  }): void {
    this.keep({
      outcome: d.outcome,
      kind: d.kind,
      ...(d.call_id !== undefined ? { callId: d.call_id } : {}),
      at: d.at,
      restored: true,
      ...(d.classifier !== undefined ? { classifier: d.classifier } : {}),
      ...(d.label !== undefined ? { label: d.label } : {}),
      ...(d.attempted !== undefined ? { attempted: d.attempted } : {}),
      ...(d.agent_id !== undefined ? { agentId: d.agent_id } : {}),
      ...(d.parent_id !== undefined ? { parentId: d.parent_id } : {}),
    });
  }

  private keep(d: Diagnostic): void {
    this.diagnostics.push(d);
    if (this.diagnostics.length > SANDBOX_DIAGNOSTICS_KEPT) this.diagnostics.splice(0, this.diagnostics.length - SANDBOX_DIAGNOSTICS_KEPT);
  }

  // ---- :sandbox commands -----------------------------------------------------------------------

  /** Runs `:sandbox ARGS`; the text answers the UI. */
  async command(args: readonly string[]): Promise<{ ok: boolean; text: string }> {
    await this.start();
    const [verb, ...rest] = args;
    const usage =
      "usage: :sandbox show | doctor | on | off | mode interactive|non-interactive | network allow|deny add|remove HOST | filesystem allow-write|allow-read|deny-read add|remove PATH | classifier provider/model|false|default [--global] | trust | pending";
    switch (verb) {
      case undefined:
      case "show":
        return { ok: true, text: this.show() };
      case "doctor":
        return { ok: true, text: this.doctor() };
      case "pending":
        return { ok: true, text: `${this.republishPending()} pending approval(s)` };
      case "on":
      case "off":
        return this.turn(verb === "on");
      case "mode": {
        const m = rest[0];
        if (m !== "interactive" && m !== "non-interactive") return { ok: false, text: usage };
        this.modeOverride = m;
        this.revokeAll();
        return { ok: true, text: `sandbox mode: ${m} (for this session)` };
      }
      case "network":
        return this.networkCommand(rest, usage);
      case "filesystem":
        return this.filesystemCommand(rest, usage);
      case "classifier":
        return this.classifierCommand(rest);
      case "trust": {
        const project = trustProject(this.o.roots.config, this.o.projectRoot);
        const reloaded = await this.reload();
        return { ok: reloaded, text: reloaded ? `trusted ${project}; its .tau/sandbox.yaml now applies` : `trusted ${project}, but its configuration does not load: ${this.reason ?? ""}` };
      }
      default:
        return { ok: false, text: usage };
    }
  }

  private turn(on: boolean): { ok: boolean; text: string } {
    this.userSuspended = !on;
    if (this.state === "active" && !on) {
      this.revokeAll();
      this.enter("suspended", ":sandbox off — model commands run with your full rights until :sandbox on");
      return { ok: true, text: "sandbox suspended for this session: model commands run with your full rights" };
    }
    if (this.state === "suspended" && on) {
      this.revokeAll();
      this.enter("active");
      return { ok: true, text: "sandbox active again" };
    }
    return { ok: this.state !== "blocked", text: `the sandbox is ${this.state}${this.reason ? ` (${this.reason})` : ""}` };
  }

  private networkCommand(rest: readonly string[], usage: string): { ok: boolean; text: string } {
    const [list, op, host] = rest;
    if ((list !== "allow" && list !== "deny") || (op !== "add" && op !== "remove") || host === undefined || !/^[A-Za-z0-9*.[\]:_-]{1,253}$/.test(host)) return { ok: false, text: usage };
    const set = list === "allow" ? this.grants.allowDomains : this.grants.denyDomains;
    if (op === "add") set.add(host);
    else set.delete(host);
    this.revokeAll();
    try {
      this.updateNetwork();
    } catch (err) {
      set.delete(host);
      return { ok: false, text: `not applied: ${(err as Error).message}` };
    }
    return { ok: true, text: `network ${list}: ${op === "add" ? "added" : "removed"} ${host} (this session only)` };
  }

  private filesystemCommand(rest: readonly string[], usage: string): { ok: boolean; text: string } {
    const [list, op, path] = rest;
    if ((list !== "allow-write" && list !== "deny-read" && list !== "allow-read") || (op !== "add" && op !== "remove") || path === undefined || !path.startsWith("/")) {
      return { ok: false, text: `${usage} (PATH absolute)` };
    }
    const set = list === "allow-write" ? this.grants.allowWrite : list === "allow-read" ? this.grants.allowRead : this.grants.denyRead;
    if (op === "add") set.add(path);
    else if (!set.delete(path) && list === "deny-read") return { ok: false, text: `${path} is not a session deny-read entry; the configured ones change in sandbox.yaml` };
    this.revokeAll();
    return { ok: true, text: `filesystem ${list}: ${op === "add" ? "added" : "removed"} ${path} (this session only)` };
  }

  /**
   * `:sandbox classifier provider/model|false|default [--global]` (SPEC-sandbox-reviewer, "Selection"):
   * saved with the session (it wins over the configuration and comes back on resume), or remembered
   * in the global sandbox.yaml with `--global` (the session's own choice is then withdrawn).
   */
  private async classifierCommand(rest: readonly string[]): Promise<{ ok: boolean; text: string }> {
    const global = rest.includes("--global");
    const values = rest.filter((r) => r !== "--global");
    const usage = "usage: :sandbox classifier provider/model|false|default [--global] — a configured provider model reviews permission requests before the manual prompt; false keeps manual approvals; default withdraws the session's choice";
    if (values.length === 0 && !global) return { ok: true, text: `${this.selectionLine()}\n${usage}` };
    const [raw] = values;
    if (values.length !== 1 || raw === undefined) return { ok: false, text: usage };
    const value: string | false | undefined = raw === "false" ? false : raw === "default" ? undefined : raw;
    if (typeof value === "string" && !CLASSIFIER_ID.test(value)) return { ok: false, text: `${raw} is not a provider/model id; ${usage}` };
    if (global) {
      let path: string;
      try {
        path = await rememberClassifier(this.o.roots.config, value);
      } catch (err) {
        return { ok: false, text: `not remembered: ${(err as Error).message}` };
      }
      this.selectSession(undefined);
      const reloaded = await this.reload();
      const overridden = this.o.launch?.config_file !== undefined ? ` (this run reads --sandbox-config instead, so it applies from the next run without it)` : "";
      return { ok: reloaded, text: reloaded ? `remembered in ${path}${overridden}\n${this.selectionLine()}` : `remembered in ${path}, but the configuration does not load: ${this.reason ?? ""}` };
    }
    this.selectSession(value);
    return { ok: true, text: `${this.selectionLine()}${value === undefined ? "" : " — saved with this session"}` };
  }

  private selectSession(value: string | false | undefined): void {
    const had = this.sessionClassifier;
    this.sessionClassifier = value;
    if (had === undefined && value === undefined) return;
    this.o.host.emit("sandbox.classifier_selected", value === undefined ? { choice: "default" } : value === false ? { choice: "manual" } : { choice: "model", classifier: value });
  }

  /** The effective reviewer and where it came from, as `:sandbox show` says it. */
  private selectionLine(): string {
    const s = this.selection();
    const what = s.value === undefined ? "none selected (manual approvals; the first permission prompt offers setup)" : s.value === false ? "false (manual approvals)" : s.value;
    return `classifier: ${what} (${s.from})`;
  }

  private async reload(): Promise<boolean> {
    this.revokeAll();
    if (!(await this.loadConfig())) return false;
    if (this.runtime !== undefined) this.updateNetwork();
    if (this.state === "blocked" && this.runtime !== undefined) this.enter(this.userSuspended ? "suspended" : "active");
    else this.enter(this.state, this.state === "active" ? undefined : this.reason);
    return true;
  }

  show(): string {
    const p = this.policy();
    const o = this.loaded?.origins ?? {};
    const from = (key: string): string => `(${originOf(o, key)})`;
    const list = (items: readonly string[]): string => (items.length === 0 ? "  (none)" : items.map((i) => `  ${i}`).join("\n"));
    return [
      `sandbox: ${this.state}${this.reason ? ` — ${this.reason}` : ""}`,
      ...(this.fix ? [`fix: ${this.fix}`] : []),
      `mode: ${this.mode} ${this.modeOverride ? "(session)" : this.o.launch?.approval === "never" ? "(--approval never)" : from("mode")}`,
      this.selectionLine(),
      `network allowed ${from("network.allowed_domains")}${this.grants.allowDomains.size ? " + session" : ""}:`,
      list(p.allowedDomains),
      `network denied ${from("network.denied_domains")}${this.grants.denyDomains.size ? " + session" : ""}:`,
      list(p.deniedDomains),
      `read denied ${from("filesystem.deny_read")}${this.grants.denyRead.size ? " + session" : ""}:`,
      list(p.denyRead),
      `read re-allowed ${from("filesystem.allow_read")}${this.grants.allowRead.size ? " + session" : ""}:`,
      list(p.allowRead),
      `write allowed ${from("filesystem.allow_write")}${this.grants.allowWrite.size ? " + session" : ""} (and the commands' own temporary folder):`,
      list(p.allowWrite.filter((w) => w !== process.env.CLAUDE_CODE_TMPDIR)),
      `write denied ${from("filesystem.deny_write")}:`,
      list(p.defaultDenyWrite ? DEFAULT_DENY_WRITE_PATTERNS.map((d) => `${d} (in the project: read-only as found when a command starts; one the command creates is moved out after it)`) : p.denyWrite),
      "protected (always read-only, existing or not):",
      list(p.protected),
      "  and every git folder's hooks, config and commondir in the project (nested repositories, submodules, bare ones; one a command creates is checked after it)",
    ].join("\n");
  }

  /**
   * The automatic reviews among the recent diagnostics, counted apart (SPEC-sandbox-reviewer,
   * "Diagnostics"): attempted reviews and skips, escalations, invalid answers and provider failures,
   * and what the reviewer's approvals came to (a grant applied, or withdrawn before it was).
   */
  private reviewSummary(): string[] {
    const reviews = this.diagnostics.filter((d) => d.outcome.startsWith("review_"));
    const count = (pred: (d: Diagnostic) => boolean, list: readonly Diagnostic[] = reviews): number => list.filter(pred).length;
    const attempted = reviews.filter((d) => d.attempted !== false && d.outcome !== "review_skipped");
    const notAttempted = reviews.filter((d) => !attempted.includes(d));
    const reasons = new Map<string, number>();
    for (const d of notAttempted) reasons.set(d.label ?? "unknown", (reasons.get(d.label ?? "unknown") ?? 0) + 1);
    const granted = this.diagnostics.filter((d) => d.classifier !== undefined && (d.outcome === "allowed" || (d.outcome === "revoked" && d.label === "time_budget")));
    const withdrawn = count((d) => d.outcome === "revoked" && d.classifier !== undefined && d.label === undefined, this.diagnostics);
    return [
      `automatic reviewer: ${this.selectionLine().slice("classifier: ".length)}`,
      `  reviews attempted: ${attempted.length} — approved ${count((d) => d.outcome === "review_approved", attempted)}, escalated by the model ${count((d) => d.outcome === "review_escalated", attempted)}, invalid answers ${count((d) => d.outcome === "review_invalid", attempted)}, provider failures ${count((d) => d.outcome === "review_failed", attempted)} (timeouts ${count((d) => d.outcome === "review_failed" && d.label === "timeout", attempted)})`,
      `  reviews not attempted: ${notAttempted.length}${reasons.size > 0 ? ` — ${[...reasons].map(([r, n]) => `${r} ${n}`).join(", ")}` : ""}`,
      `  reviews withdrawn before an answer (cancelled, a new prompt, a policy change): ${withdrawn}`,
      `  grants after an approved review: applied ${count((d) => d.outcome === "allowed", granted)}, not applied (time budget used up) ${count((d) => d.outcome === "revoked", granted)}`,
    ];
  }

  doctor(): string {
    const files = this.loaded?.files ?? [];
    const unstored = this.diagnostics.filter((d) => d.unstored === true).length;
    const runtimeWarnings = this.runtime?.getLinuxGlobPatternWarnings?.() ?? [];
    const fixFor = (d: Diagnostic): string => {
      switch (d.outcome) {
        case "blocked":
          return this.fix ?? "see the state above";
        case "refused":
          return d.kind === "network" ? "allow the host with :sandbox network allow add HOST, or switch to :sandbox mode interactive" : "allow the path with :sandbox filesystem allow-write add PATH";
        case "replay_failed":
          return "the replay failed for another reason; read the tool result";
        default:
          return "—";
      }
    };
    return [
      `state: ${this.state}${this.reason ? ` — ${this.reason}` : ""}`,
      ...(this.fix ? [`fix: ${this.fix}`] : []),
      `platform: ${this.platform}; mode: ${this.mode}`,
      `dependencies: ${this.runtime === undefined && this.dependencyErrors.length === 0 ? "not checked (the sandbox is not in use)" : this.dependencyErrors.length === 0 ? "bwrap, socat, rg found" : `missing ${this.dependencyErrors.join(", ")}`}`,
      ...this.dependencyWarnings.map((w) => `warning: ${w}`),
      `sandbox wraps: ${this.wrapCounts.built} built, ${this.wrapCounts.reused} reused`,
      ...runtimeWarnings.map((w) => `warning: a pattern the sandbox cannot apply on this platform: ${w}`),
      "configuration files:",
      ...(files.length === 0 ? ["  (none read)"] : files.map((f) => `  ${f.path} (${f.layer}): ${f.status}${f.error ? ` — ${f.error}` : ""}`)),
      ...(this.loaded?.warnings ?? []).map((w) => `warning: ${w}`),
      ...this.reviewSummary(),
      ...(unstored > 0 ? [`warning: ${unstored} diagnostic(s) could not be stored in the session; they are kept in memory only and will not come back on resume`] : []),
      `recent sandbox events (last ${SANDBOX_DIAGNOSTICS_KEPT}):`,
      ...(this.diagnostics.length === 0
        ? ["  (none)"]
        : this.diagnostics.map(
            (d) =>
              `  ${new Date(d.at / 1000).toISOString()} ${d.kind} ${d.outcome}${d.callId ? ` call ${d.callId}` : ""}${d.agentId ? ` agent ${d.agentId}` : ""}${d.classifier ? ` by ${d.classifier}` : ""}${d.parentId ? ` for parent ${d.parentId}` : ""}${d.label ? ` (${d.label})` : ""}${d.attempted === false ? " (not attempted)" : ""}${d.restored ? " (restored)" : ""}${d.unstored ? " (not stored)" : ""} — fix: ${fixFor(d)}`,
          )),
    ].join("\n");
  }

  /** Ends the runtime (its proxies) when the extension leaves. */
  async stop(): Promise<void> {
    this.revokeAll();
    this.lastWrap = undefined;
    await this.runtime?.reset().catch(() => {});
  }
}

/**
 * The runtime, loaded from node_modules when the sandbox is set up: never inlined into the shell
 * extension's bundle (it is large, and finds its own helper programs next to its files), and not
 * through import(), which a bundle compiled with a code cache cannot run (Node 20.19 loads ES
 * modules with require).
 */
function loadRuntime(): typeof import("@anthropic-ai/sandbox-runtime") {
  return createRequire(import.meta.url)("@anthropic-ai/sandbox-runtime") as typeof import("@anthropic-ai/sandbox-runtime");
}

/** The command exited with status zero (a sandbox only reviews failures). */
function succeeded(outcome: ShellOutcome): boolean {
  return outcome.exitCode !== null && !outcome.exitCode;
}

function checkWorkdir(cwd: string): void {
  let info;
  try {
    info = statSync(cwd);
  } catch {
    info = undefined;
  }
  if (info === undefined || !info.isDirectory()) throw new ToolError("failed", `The working directory ${cwd} does not exist or is not a directory.`);
}

export type { Denial };
