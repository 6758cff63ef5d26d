// Which hosts `web_fetch` may reach (SPEC-web, "Hosts"): the same network policy as a sandboxed
// `shell` command — sandbox.yaml's `network.allowed_domains` (the default allowlist when unset) and
// `network.denied_domains`, matched as the sandbox runtime matches them — and the same question for
// any other host: a `sandbox.approval_requested` (kind `network`) naming the call, answered from
// any attached UI; `deny` refuses the host for the rest of the session. With nobody to ask
// (`--approval never`, `mode: non-interactive`) such a host is refused at once with the fix. With
// the sandbox off (`--no-sandbox`, `enabled: false`) a model's commands reach any host, so a fetch may too.
import { isIP } from "node:net";
import type { SandboxApprovalOutcome, SandboxApprovalRequested, SandboxDecision, SandboxLaunch } from "../../../generated/index.js";
import { loadSandboxConfig, resolveRoots } from "../../config/index.js";
import { ToolFailure, type Extension } from "../../sdk/index.js";
import { randomHex } from "../../startup/random.js";
import { SANDBOX_APPROVAL_MAX_WAIT_MS } from "../shell/sandbox/approvals.js";
import { DEFAULT_ALLOWED_DOMAINS } from "../shell/sandbox/policy.js";

/** A host and port the policy is asked about (hostname lowercased, an IPv6 literal without brackets). */
export interface Target {
  readonly host: string;
  readonly port: number;
}

export function targetOf(url: URL): Target {
  const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return { host, port: Number(url.port || (url.protocol === "https:" ? 443 : 80)) };
}

/** `HOST:PORT`, an IPv6 literal bracketed (as the sandbox's prompts name a target). */
export const targetText = (t: Target): string => `${isIP(t.host) === 6 ? `[${t.host}]` : t.host}:${t.port}`;

/** Whether `t` matches a sandbox domain pattern: `*`, `*.example.com` (sub-domains only), an exact host, each with an optional `:PORT`. */
export function matchesPattern(t: Target, pattern: string): boolean {
  let hostPattern = pattern.trim().toLowerCase();
  const withPort = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(hostPattern);
  if (withPort !== null) {
    if (Number(withPort[2]) !== t.port) return false;
    hostPattern = withPort[1] as string;
  }
  hostPattern = hostPattern.replace(/^\[(.*)\]$/, "$1");
  if (hostPattern === "*") return true;
  if (hostPattern.startsWith("*.")) return isIP(t.host) === 0 && t.host.endsWith(hostPattern.slice(1));
  return t.host === hostPattern;
}

export interface HostPolicyOptions {
  readonly ext: Extension;
  readonly launch?: SandboxLaunch;
  readonly projectRoot: string;
}

/** The call a host is asked about, as a prompt names it. */
export interface AskingCall {
  readonly agentId: string;
  readonly callId: string;
  readonly command: string;
  readonly signal: AbortSignal;
}

type Rules = { readonly kind: "open" } | { readonly kind: "listed"; readonly allowed: readonly string[]; readonly denied: readonly string[]; readonly ask: boolean } | { readonly kind: "broken"; readonly why: string };

export class HostPolicy {
  private rules: Promise<Rules> | undefined;
  /** Hosts the user refused this session (a `deny` answer). */
  private readonly refused = new Set<string>();
  private readonly waiting = new Map<string, (decision: SandboxDecision) => void>();
  /** The session's `:sandbox network allow|deny add HOST` grants and refusals, as the shell extension applied them. */
  private readonly grants = { allow: new Set<string>(), deny: new Set<string>() };
  /** `:sandbox network …` commands waiting for the shell extension's answer, by request id. */
  private readonly networkCommands = new Map<string, readonly string[]>();
  /** The prompts still open, as published: a UI that attaches asks for them (`:sandbox pending`). */
  private readonly open = new Map<string, SandboxApprovalRequested>();

  constructor(private readonly o: HostPolicyOptions) {
    o.ext.subscribe([], ["sandbox.approval_answer", "sandbox.command_request", "sandbox.command_result"]);
    o.ext.on("sandbox.approval_answer", (e) => {
      if (!e.replay) this.waiting.get(e.data.approval_id)?.(e.data.decision);
    });
    // The shell extension answers `:sandbox …`; this one publishes its own prompts again on
    // `pending`, and takes over a network grant once the shell extension says it applied it.
    o.ext.on("sandbox.command_request", (e) => {
      if (e.replay) return;
      const args = e.data.args;
      if (args.length === 1 && args[0] === "pending") for (const p of this.open.values()) void o.ext.emit("sandbox.approval_requested", p);
      if (args.length === 4 && args[0] === "network" && this.networkCommands.size < 64) this.networkCommands.set(e.data.request_id, args.slice(1));
    });
    o.ext.on("sandbox.command_result", (e) => {
      const command = this.networkCommands.get(e.data.request_id);
      if (e.replay || command === undefined) return;
      this.networkCommands.delete(e.data.request_id);
      const [list, op, host] = command as [string, string, string];
      const set = list === "allow" ? this.grants.allow : list === "deny" ? this.grants.deny : undefined;
      if (e.data.ok !== true || set === undefined) return;
      if (op === "add") set.add(host);
      else if (op === "remove") set.delete(host);
    });
  }

  /** Throws a ToolFailure naming the fix unless `url`'s host may be reached for `call`. */
  async check(url: URL, call: AskingCall): Promise<void> {
    const rules = await (this.rules ??= this.load());
    if (rules.kind === "open") return;
    const t = targetOf(url);
    const shown = targetText(t);
    if (rules.kind === "broken") throw new ToolFailure(`${shown} was not fetched: the sandbox's network policy could not be read (${rules.why})`);
    const fix = `add ${t.host} to network.allowed_domains in sandbox.yaml to allow it (or, in a session with a UI, :sandbox network allow add ${t.host})`;
    if (rules.denied.some((p) => matchesPattern(t, p))) throw new ToolFailure(`${shown} was not fetched: network.denied_domains in sandbox.yaml refuses it`);
    if ([...this.grants.deny].some((p) => matchesPattern(t, p))) throw new ToolFailure(`${shown} was not fetched: :sandbox network deny refuses it this session`);
    if (this.refused.has(t.host)) throw new ToolFailure(`${shown} was not fetched: the user refused this host for the rest of the session`);
    if (rules.allowed.some((p) => matchesPattern(t, p)) || [...this.grants.allow].some((p) => matchesPattern(t, p))) return;
    if (!rules.ask) throw new ToolFailure(`${shown} was not fetched: no rule of the sandbox's network policy allows it and this run has nobody to ask; ${fix}`);
    const outcome = await this.ask(shown, call);
    if (outcome === "allowed") return;
    if (outcome === "denied") {
      this.refused.add(t.host);
      throw new ToolFailure(`${shown} was not fetched: the user refused this host (for the rest of the session)`);
    }
    throw new ToolFailure(`${shown} was not fetched: its approval was withdrawn before an answer`);
  }

  private async load(): Promise<Rules> {
    const launch = this.o.launch ?? {};
    if (launch.enabled === false) return { kind: "open" };
    try {
      const roots = resolveRoots();
      const loaded = await loadSandboxConfig({ configRoot: roots.config, projectRoot: this.o.projectRoot, ...(launch.config_file !== undefined ? { overrideFile: launch.config_file } : {}) });
      const c = loaded.config;
      if (c.enabled === false) return { kind: "open" };
      const ask = launch.approval !== "never" && c.mode !== "non-interactive";
      return { kind: "listed", allowed: c.network?.allowed_domains ?? DEFAULT_ALLOWED_DOMAINS, denied: c.network?.denied_domains ?? [], ask };
    } catch (err) {
      return { kind: "broken", why: (err as Error).message.slice(0, 300) };
    }
  }

  /** One prompt for this call and host: its answer, its withdrawal (the call ended) or its deadline. */
  private ask(target: string, call: AskingCall): Promise<SandboxApprovalOutcome> {
    const id = `web-${randomHex(8)}`;
    const { ext } = this.o;
    return new Promise<SandboxApprovalOutcome>((resolve) => {
      if (call.signal.aborted) return resolve("revoked"); // nothing was asked
      const settle = (outcome: SandboxApprovalOutcome): void => {
        if (!this.waiting.delete(id)) return;
        this.open.delete(id);
        clearTimeout(timer);
        call.signal.removeEventListener("abort", onAbort);
        void ext.emit("sandbox.approval_resolved", { approval_id: id, outcome });
        resolve(outcome);
      };
      const onAbort = (): void => settle("revoked");
      const timer = setTimeout(onAbort, SANDBOX_APPROVAL_MAX_WAIT_MS);
      // A choice this prompt did not offer is ignored, as the sandbox's own prompts do.
      this.waiting.set(id, (decision) => (decision === "deny" ? settle("denied") : decision === "allow" ? settle("allowed") : undefined));
      call.signal.addEventListener("abort", onAbort, { once: true });
      const payload: SandboxApprovalRequested = {
        approval_id: id,
        kind: "network",
        target,
        choices: ["allow", "deny"],
        agent_id: call.agentId,
        call_id: call.callId,
        command: call.command.slice(0, 200),
      };
      this.open.set(id, payload);
      void ext.emit("sandbox.approval_requested", payload);
    });
  }
}
