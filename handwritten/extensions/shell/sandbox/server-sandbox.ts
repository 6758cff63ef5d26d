// One long-lived server inside the sandbox runtime (SPEC-mcp, "The sandbox"; DECISION-mcp-stdio-sandboxed):
// the session's sandbox.yaml policy as for a `shell` command — the project and the usual caches
// writable, tau's configuration, state and secrets and what runs code on the host not — with the
// network limited to the allowlist and the server's own hosts. Nobody is asked about another host: a
// connection no rule allows is refused and reported (a server's connection belongs to no call a
// user could judge). Protected paths of the project that did not exist when it started are checked
// when it ends, as after a command; a record on disk lets the next start do that after a crash.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { SandboxLaunch } from "../../../../generated/index.js";
import type { Roots } from "../../../config/index.js";
import { randomHex } from "../../../startup/random.js";
import { reapIfOrphaned } from "../tools/index.js";
import { SandboxLifecycle, type NetworkVerdict } from "./lifecycle.js";
import { runtimeConfig, watchedPaths } from "./policy.js";
import { createdDuring, quarantine, scanProject, unboundProtected } from "./project-scan.js";
import { CLOSE_INHERITED_FDS } from "./runner.js";
import { RunningRecord, recordsDir } from "./running-record.js";
import { planMounts, removeMountPoints } from "./wrap-cache.js";

export interface ServerSandboxOptions {
  /** Who is confined (an MCP server's extension instance, `mcp-NAME`): names its working folder. */
  readonly owner: string;
  readonly projectRoot: string;
  readonly roots: Roots;
  /** The run's sandbox set-up (`--no-sandbox`, `--sandbox-config`). */
  readonly launch?: SandboxLaunch;
  /** Hosts the server may reach beyond the sandbox's allowlist. */
  readonly allowedHosts: readonly string[];
  /** A connection to `host` was refused: no rule allows it. */
  readonly refused: (host: string, port: number | undefined) => void;
}

/** How the server is to run: confined, with the user's rights (and why), or not at all (why, and the fix). */
export type Confinement = { readonly kind: "sandboxed" } | { readonly kind: "unsandboxed"; readonly reason: string } | { readonly kind: "blocked"; readonly reason: string; readonly fix: string };

/** One start of the server inside the sandbox. */
export interface ConfinedLaunch {
  readonly command: string;
  readonly args: string[];
  /** The process ended: what it left is checked and the wrap's mount points go. Returns notes of what was moved out of the project. */
  ended(): string[];
}

const OPT_OUT = "or set `sandbox: false` in the server's entry to run it with your full rights";

export class ServerSandbox {
  private readonly life: SandboxLifecycle;
  private readonly record: RunningRecord;
  private prepared: Promise<Confinement> | undefined;

  constructor(private readonly o: ServerSandboxOptions) {
    this.life = new SandboxLifecycle(
      // The session's sandbox state is the shell extension's to report: nothing is published from here.
      { host: { emit: () => undefined }, projectRoot: o.projectRoot, roots: o.roots, owner: o.owner, ...(o.launch !== undefined ? { launch: o.launch } : {}) },
      { askNetwork: (host, port) => this.refuse(host, port), configPushed: () => {}, runtimeUp: async () => {} },
    );
    for (const host of o.allowedHosts) this.life.grants.allowDomains.add(host);
    this.record = new RunningRecord(recordsDir(o.roots.state), o.projectRoot);
  }

  /** Sets the runtime up (once) and says how the server is to run. */
  prepare(): Promise<Confinement> {
    this.prepared ??= this.life.start().then((): Confinement => {
      const state = this.life.state;
      if (state === "active" || state === "suspended") return { kind: "sandboxed" };
      if (state === "bypassed") return { kind: "unsandboxed", reason: this.life.reason ?? "the sandbox is off" };
      return { kind: "blocked", reason: `the sandbox cannot start: ${this.life.reason ?? state}`, fix: `${this.life.fix ?? "see :sandbox doctor"}; ${OPT_OUT}` };
    });
    return this.prepared;
  }

  /** The command line that starts `argv` inside the sandbox (after `prepare` said `sandboxed`). */
  async launch(argv: readonly string[]): Promise<ConfinedLaunch> {
    const runtime = this.life.runtime;
    if (runtime === undefined) throw new Error("the sandbox is not set up");
    const root = this.o.projectRoot;
    // tau's own folder in the project exists before the server starts, so it is bound read-only
    // (a missing one would only be watched, and tau writes there during the session: handoffs).
    mkdirSync(join(root, ".tau"), { recursive: true, mode: 0o700 });
    const policy = this.life.policy();
    const before = scanProject(root);
    const wrapped = await runtime.wrapWithSandbox(argv.map(quote).join(" "), "bash", runtimeConfig(policy, root, {}, before));
    const mountPoints = planMounts(wrapped)?.mountPoints ?? [];
    const releases = mountPoints.map((path) => reapIfOrphaned({ kind: "mount", path }));
    const watched = unboundProtected(before, root, watchedPaths(policy));
    this.record.update(watched, mountPoints);
    // bubblewrap becomes the shell (exec): it dies with this process, and the server with it.
    const start = this.life.platform === "linux" && wrapped.startsWith("bwrap ") ? `exec ${wrapped}` : wrapped;
    let done = false;
    return {
      command: "bash",
      // bash reads ~/.bashrc when its input is a socket (as a server's is) at shell level 1, thinking
      // ssh ran it: --norc for this one, and a level past 1 for those inside the wrap.
      args: ["--norc", "-c", `${CLOSE_INHERITED_FDS}\nexport SHLVL=2\n${start}`],
      ended: () => {
        if (done) return [];
        done = true;
        runtime.cleanupAfterCommand();
        removeMountPoints(mountPoints);
        for (const release of releases) release();
        // Credential files are left alone: the user may make one while a long-lived server runs.
        const findings = createdDuring(before, scanProject(root), { credentials: false, watched });
        this.record.clear();
        if (findings.length === 0) return [];
        const into = join(this.o.roots.state, "sandbox-quarantine", `${new Date().toISOString().replace(/[:.]/g, "-")}-${randomHex(4)}`);
        return quarantine(findings, root, into);
      },
    };
  }

  /** Ends the runtime (its proxies and bridges). */
  stop(): Promise<void> {
    return this.life.stop();
  }

  private async refuse(host: string, port: number | undefined): Promise<NetworkVerdict> {
    this.o.refused(host, port);
    return { allow: false, reason: `${host} is not on the sandbox's network allowlist nor in the server's allowed_hosts` };
  }
}

function quote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'"'"'`)}'`;
}
