// Runs one command inside the sandbox runtime (SPEC-sandbox, "Reusing the wrap" and "Created during
// a command"): the project walk before it, a wrap built or reused, the command run, the mount points
// bubblewrap made (never in the project) removed once no sandboxed command runs, and what the command
// created that the rules cover moved out of the project; while commands run, a record on disk lets
// a start after a crash do that check. It keeps which sandboxed commands are running, the only
// attribution a connection gets.
import { builtin } from "../../../startup/builtin.js";
import { homedir } from "node:os";
import { join } from "node:path";
import { randomHex } from "../../../startup/random.js";
import { mark } from "../../../startup/timeline.js";
import { reapIfOrphaned, runShell, type ShellOutcome } from "../tools/index.js";
import type { SandboxLifecycle, Runtime } from "./lifecycle.js";
import type { CallNotes } from "./notes.js";
import { runtimeConfig, watchedPaths, type EffectivePolicy } from "./policy.js";
import { createdDuring, quarantine, scanProject, unboundProtected, type ProjectScan, type Watched } from "./project-scan.js";
import { RunningRecord, recordsDir } from "./running-record.js";
import { enterSharedNetwork, sharedNetworkWrap } from "./shared-network.js";
import type { ShellCall } from "./types.js";
import { SANDBOX_COMMAND_ENV, WRAPPED_COMMAND, diskKey, ensureEmptyDir, planMounts, removeMountPoints, type WrapPlan } from "./wrap-cache.js";
import { keepWrap, keptIdentity, keptWrapFile, readKeptWrap, wrapPrograms, type KeptWrap } from "./kept-wrap.js";

// node:crypto is loaded on the first wrap, not at start-up (a bundle start-up test guards it).
const createHash = (algorithm: string): import("node:crypto").Hash => builtin<typeof import("node:crypto")>("crypto").createHash(algorithm);

/** A sandboxed command while it runs: the call, its agent and the command, as a prompt names them. */
export interface CallRef {
  readonly agentId: string;
  readonly callId: string;
  readonly command: string;
}

/**
 * Run first, before the sandbox starts: closes every descriptor above 2 the shell inherited, so
 * neither bubblewrap, its init (what `/proc/1/fd` shows inside), the runtime's bridges nor the
 * command holds one. Node's own descriptors are close-on-exec; what is left came to tau from its
 * parent (a socket, a pipe), and tau hands none to a command on purpose.
 */
export const CLOSE_INHERITED_FDS =
  'for __tau_fd in /dev/fd/*; do __tau_fd=${__tau_fd##*/}; case $__tau_fd in 0|1|2|*[!0-9]*) ;; *) exec {__tau_fd}>&- ;; esac; done; unset __tau_fd';
/** The longest command line that carries the command itself (one argument of bash's: the kernel takes 128 KiB). */
const COMMAND_LINE_MAX_BYTES = 120_000;

/**
 * Paths the runtime's wrap names on its own, whatever the configuration: the root and the devices it
 * mounts, its temp folders, the npm log folder it makes writable, ssh's drop-in folder it hides.
 * Part of every key from the first wrap on; a path it names beyond these (and the configuration's)
 * makes the next command build once more, as it joins the key. Its bridge's socket is not: it is
 * the runtime's own for as long as it runs, and the shared namespace does not use it.
 */
function runtimeOwnPaths(): string[] {
  const tmp = process.env.CLAUDE_CODE_TMPDIR;
  return ["/", "/dev", "/proc", "/tmp/claude", join(homedir(), ".npm", "_logs"), "/etc/ssh/ssh_config.d", ...(tmp !== undefined ? [tmp] : [])];
}

/** Every path of a runtime configuration's filesystem rules. */
function configPaths(config: ReturnType<typeof runtimeConfig>): string[] {
  const fs = config.filesystem;
  return [...fs.denyRead, ...fs.allowRead, ...fs.allowWrite, ...fs.denyWrite].map((e) => (typeof e === "string" ? e : e.path));
}

/** A wrap's key: the runtime configuration it was built for and the disk's state (diskKey). */
function wrapKey(config: ReturnType<typeof runtimeConfig>, disk: string): string {
  return createHash("sha256").update(JSON.stringify(config)).update(disk).digest("hex");
}

/** A replay's one-off grant. */
export interface OneOffGrant {
  write?: string;
  read?: string;
}

export class SandboxedRunner {
  private readonly running = new Map<string, CallRef>();
  private sandboxedRunning = 0;
  /** The last wrap the runtime built, while it may be reused. */
  private lastWrap: WrapPlan | undefined;
  /** Wraps the runtime built whose cleanup is still owed to it. */
  private runtimeWraps = 0;
  /** How many wraps the runtime built, how many were reused, and whether one was kept from an earlier start, for `:sandbox doctor`. */
  readonly wrapCounts = { built: 0, reused: 0, kept: 0 };
  private exitHandled = false;
  /** Mount points (outside the project) of the commands run since no sandboxed command last ran, each listed with the reaper. */
  private readonly usedMountPoints = new Map<string, () => void>();
  /** The protected paths each running command's check watches (they did not exist when it started). */
  private readonly watching = new Map<string, readonly Watched[]>();
  private readonly record: RunningRecord;

  constructor(
    private readonly life: SandboxLifecycle,
    private readonly o: { readonly projectRoot: string; readonly stateRoot: string },
    private readonly notes: CallNotes,
  ) {
    this.record = new RunningRecord(recordsDir(o.stateRoot), o.projectRoot);
  }

  /** Runs `command` sandboxed for `call`, within `timeoutMs`, with a replay's one-off grant. */
  async run(command: string, call: ShellCall, timeoutMs: number, extra: OneOffGrant): Promise<ShellOutcome> {
    const policy = this.life.policy();
    const before = scanProject(this.o.projectRoot);
    const config = runtimeConfig(policy, this.o.projectRoot, extra, before);
    mark("sandbox command scanned");
    const plan = this.reusable(config, before) ?? (await this.build(await this.life.runtimeForWrap(), config, before, extra.write !== undefined || extra.read !== undefined));
    mark("sandbox command wrapped");
    const watched = unboundProtected(before, this.o.projectRoot, watchedPaths(policy));
    this.running.set(call.callId, { agentId: call.agentId, callId: call.callId, command });
    this.watching.set(call.callId, watched);
    this.sandboxedRunning++;
    for (const m of [...plan.mountPoints, ...(plan.emptyDir !== undefined ? [plan.emptyDir] : [])]) {
      if (!this.usedMountPoints.has(m)) this.usedMountPoints.set(m, reapIfOrphaned({ kind: "mount", path: m }));
    }
    // On disk before the command starts: a start after a crash checks what it leaves.
    this.updateRecord();
    // Should the extension exit while a reused wrap's command runs (the runtime knows only its own).
    if (!this.exitHandled) {
      this.exitHandled = true;
      process.once("exit", () => removeMountPoints([...this.usedMountPoints.keys()]));
    }
    try {
      const line = this.commandLine(plan, command);
      // A wrap that does not carry the command takes it from the environment (WRAPPED_COMMAND takes it out again).
      const env = line.carriesCommand ? process.env : { ...process.env, [SANDBOX_COMMAND_ENV]: command };
      const outcome = await runShell({ command, wrapped: `${CLOSE_INHERITED_FDS}\n${line.text}`, env, cwd: call.cwd, timeoutMs, signal: call.signal, ...(call.onProgress ? { onProgress: call.onProgress } : {}) });
      if (line.shared && outcome.exitCode !== 0) this.life.network.suspect(outcome.output);
      return outcome;
    } finally {
      mark("sandbox command ended");
      this.running.delete(call.callId);
      this.checkCreated(before, policy, call.callId, watched);
      this.watching.delete(call.callId);
      if (--this.sandboxedRunning === 0) this.afterAll();
      else this.updateRecord();
    }
  }

  /**
   * What starts the sandbox for `command`: in the session's network namespace when it is up and
   * the wrap fits it, the seccomp helper running `bash -c COMMAND` itself (the command in its
   * arguments, quoted; one that would make the line too long keeps the environment's way); else
   * the runtime's wrap as built, which takes the command from the environment.
   */
  private commandLine(plan: WrapPlan, command: string): { text: string; carriesCommand: boolean; shared: boolean } {
    const network = this.life.network;
    const fds = plan.shared !== undefined ? network.descriptors() : undefined;
    // A kept wrap names another start's bridge: never run as built (reusable() takes it only while the namespace is up).
    if (plan.sharedOnly === true && (fds === undefined || plan.shared === undefined)) throw new Error("the session's network namespace ended before the command started; run it again");
    if (fds === undefined || plan.shared === undefined) return { text: plan.wrapped, carriesCommand: false, shared: false };
    // `bash -c COMMAND bash`: $0 is "bash", as for a command run without the sandbox.
    const direct = enterSharedNetwork([...plan.shared.slice(0, -1), command, "bash"], fds);
    if (Buffer.byteLength(direct) <= COMMAND_LINE_MAX_BYTES) return { text: direct, carriesCommand: true, shared: true };
    return { text: enterSharedNetwork(plan.shared, fds), carriesCommand: false, shared: true };
  }

  private updateRecord(): void {
    this.record.update([...this.watching.values()].flat(), [...this.usedMountPoints.keys()]);
  }

  /**
   * The sandboxed commands running now, oldest first: all a connection can be attributed to (the
   * runtime tells which host it is for, not which command made it).
   */
  runningCalls(): CallRef[] {
    return [...this.running.values()];
  }

  /** Whether the call's sandboxed command is running now. */
  isRunning(callId: string): boolean {
    return this.running.has(callId);
  }

  /**
   * Builds the wrap for the policy as it is now before any command asks for one, so that the first
   * command finds it ready. A failure here is the first command's to meet.
   */
  async buildAhead(): Promise<void> {
    const runtime = this.life.runtime;
    if (runtime === undefined || this.life.platform !== "linux") return;
    try {
      const scan = scanProject(this.o.projectRoot);
      await this.build(runtime, runtimeConfig(this.life.policy(), this.o.projectRoot, {}, scan), scan);
    } catch {
      this.lastWrap = undefined;
    }
    if (this.sandboxedRunning === 0) for (; this.runtimeWraps > 0; this.runtimeWraps--) runtime.cleanupAfterCommand();
  }

  /** The policy changed: the last wrap is not reused. */
  dropWrap(): void {
    this.lastWrap = undefined;
  }

  /**
   * Takes the wrap an earlier start kept (kept-wrap.ts) when it was built for exactly this start's
   * policy, disk and installation; it then serves the shared namespace's commands without the
   * runtime. False when there is none to take.
   */
  adoptKept(): boolean {
    if (this.life.platform !== "linux") return false;
    const scan = scanProject(this.o.projectRoot);
    const config = runtimeConfig(this.life.policy(), this.o.projectRoot, {}, scan);
    const identity = keptIdentity(config);
    const kept = identity === undefined ? undefined : readKeptWrap(keptWrapFile(this.o.stateRoot, this.o.projectRoot), identity);
    const mounts = kept === undefined ? undefined : planMounts(kept.wrapped);
    const shared = kept === undefined ? undefined : sharedNetworkWrap(kept.wrapped, kept.bridge);
    if (kept === undefined || mounts === undefined || shared === undefined || JSON.stringify(wrapPrograms(shared)) !== JSON.stringify(kept.programs)) return false;
    this.lastWrap = { wrapped: kept.wrapped, key: kept.key, keyPaths: kept.keyPaths, mountPoints: mounts.mountPoints, emptyDir: mounts.emptyDir, paths: mounts.paths.filter((p) => p !== kept.bridge), shared, sharedOnly: true };
    if (this.reusable(config, scan, false) === undefined) {
      this.lastWrap = undefined;
      return false;
    }
    this.wrapCounts.kept++;
    return true;
  }

  /**
   * The last wrap again when it was built for the same runtime configuration and the same disk
   * (SPEC-sandbox, "Reusing the wrap"), while no sandboxed command runs; a kept one only where the
   * shared namespace is up. Undefined: a wrap is to be built.
   */
  private reusable(config: ReturnType<typeof runtimeConfig>, scan: ProjectScan, count = true): WrapPlan | undefined {
    const last = this.lastWrap;
    if (last?.keyPaths === undefined || this.sandboxedRunning > 0 || this.life.platform !== "linux") return undefined;
    if (last.sharedOnly === true && count && this.life.network.descriptors() === undefined) return undefined;
    const disk = diskKey(scan, last.keyPaths);
    if (disk === undefined || wrapKey(config, disk) !== last.key || !ensureEmptyDir(last.emptyDir)) return undefined;
    if (count) this.wrapCounts.reused++;
    return last;
  }

  /**
   * A new wrap from the runtime. Its key is taken before the build, over the configuration's paths,
   * the runtime's own and every path the last wrap named: when they cover every path the new wrap
   * names, the key answers for it as built, and later commands reuse it (and it is kept for later
   * starts); else the next build's key covers them.
   */
  private async build(runtime: Runtime, config: ReturnType<typeof runtimeConfig>, scan: ProjectScan, oneOff = false): Promise<WrapPlan> {
    const linux = this.life.platform === "linux";
    const keyPaths = [...new Set([...configPaths(config), process.cwd(), ...(this.lastWrap?.paths ?? []), ...runtimeOwnPaths()])];
    // Only bubblewrap's wrap is read here (its mount points); elsewhere each command is wrapped anew.
    const disk = linux ? diskKey(scan, keyPaths) : undefined;
    this.wrapCounts.built++;
    const wrapped = await runtime.wrapWithSandbox(WRAPPED_COMMAND, "bash", config, undefined, { commandId: randomHex(16) });
    this.runtimeWraps++;
    const mounts = planMounts(wrapped);
    const bridge = linux ? runtime.getLinuxHttpSocketPath() : undefined;
    const shared = bridge !== undefined ? sharedNetworkWrap(wrapped, bridge) : undefined;
    const paths = (mounts?.paths ?? []).filter((p) => p !== bridge);
    const covered = disk !== undefined && mounts !== undefined && paths.every((p) => keyPaths.includes(p));
    const key = covered ? wrapKey(config, disk) : "";
    const plan: WrapPlan = { wrapped, key, ...(covered ? { keyPaths } : {}), mountPoints: mounts?.mountPoints ?? [], emptyDir: mounts?.emptyDir, paths: [...new Set([...(this.lastWrap?.paths ?? []), ...runtimeOwnPaths(), ...paths])], shared };
    this.lastWrap = plan;
    if (covered && shared !== undefined && bridge !== undefined) this.keep({ wrapped, bridge, key, keyPaths }, shared, oneOff ? undefined : config);
    return plan;
  }

  /**
   * Keeps a wrap for later starts: only one built for the policy as a start loads it (no grant of
   * this session's, no approval's one-off), which a later start can take.
   */
  private keep(wrap: KeptWrap, shared: readonly string[], config: ReturnType<typeof runtimeConfig> | undefined): void {
    if (config === undefined || Object.values(this.life.grants).some((g: Set<string>) => g.size > 0)) return;
    const identity = keptIdentity(config);
    if (identity !== undefined) keepWrap(keptWrapFile(this.o.stateRoot, this.o.projectRoot), identity, wrap, shared);
  }

  /** Once no sandboxed command runs: the mount points bubblewrap made for missing protected paths go, the runtime's with them. */
  private afterAll(): void {
    removeMountPoints([...this.usedMountPoints.keys()]);
    const runtime = this.life.runtime;
    if (runtime !== undefined) for (; this.runtimeWraps > 0; this.runtimeWraps--) runtime.cleanupAfterCommand();
    // The empty folder a reused wrap made again is this extension's to remove (rmdir: only while empty).
    const emptyDir = this.lastWrap?.emptyDir;
    if (emptyDir !== undefined) removeMountPoints([emptyDir]);
    for (const release of this.usedMountPoints.values()) release();
    this.usedMountPoints.clear();
    this.record.clear();
  }

  /**
   * What bubblewrap could not bind because it did not exist when the command started: credential
   * files and git control files the command created are moved out of the project (SPEC-sandbox,
   * "Created during a command"); the call's result says where.
   */
  private checkCreated(before: ProjectScan, policy: EffectivePolicy, callId: string, watched: readonly Watched[]): void {
    const findings = createdDuring(before, scanProject(this.o.projectRoot), { credentials: policy.defaultDenyWrite, watched });
    if (findings.length === 0) return;
    const into = join(this.o.stateRoot, "sandbox-quarantine", `${new Date().toISOString().replace(/[:.]/g, "-")}-${randomHex(4)}`);
    this.notes.push(callId, ...quarantine(findings, this.o.projectRoot, into));
  }
}
