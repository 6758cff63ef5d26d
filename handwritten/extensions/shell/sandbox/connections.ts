// Connections from sandboxed commands to hosts no rule decides (SPEC-sandbox, "Approvals";
// SPEC-sandbox-reviewer, "Approval scope"): the runtime's proxy holds each one and asks here. A
// connection is refused at once when its host was refused, nobody may be asked, or the calls it is
// attributed to already have SANDBOX_PROMPTS_PER_CALL requests open; otherwise it joins the ask in
// flight for the same target and the same running commands, or starts one — one automatic review,
// then one manual prompt — whose decision every connection waiting on it shares.
import { SANDBOX_PROMPTS_PER_CALL, namesSome, type Approvals, type NamedCalls } from "./approvals.js";
import type { Diagnostics } from "./diagnostics.js";
import type { NetworkVerdict, SandboxLifecycle } from "./lifecycle.js";
import type { CallNotes } from "./notes.js";
import type { Reviewer } from "./review.js";
import type { CallRef, SandboxedRunner } from "./runner.js";

/**
 * The most running commands a connection is attributed to. The runtime tells a connection's host,
 * not which command made it, so a prompt names every command running when it was made; beyond
 * this many, it is refused at once rather than shown naming only some.
 */
export const SANDBOX_CALLS_NAMED_MAX = 16;

/** How an ask ended for every connection waiting on it. */
type AskEnd = "allowed" | "approved" | "denied" | "revoked";

interface HostAsk {
  readonly end: Promise<AskEnd>;
  /** Connections waiting on it now. */
  waiting: number;
}

export interface ConnectionParts {
  readonly life: SandboxLifecycle;
  readonly runner: SandboxedRunner;
  readonly reviewer: Reviewer;
  readonly approvals: Approvals;
  readonly diagnostics: Diagnostics;
  readonly notes: CallNotes;
}

export class ConnectionAsks {
  /** Asks in flight, by target and the calls they name. */
  private readonly asks = new Map<string, HostAsk>();

  constructor(private readonly p: ConnectionParts) {}

  /** Connections waiting for a decision now (`:sandbox doctor`). */
  get waiting(): number {
    let n = 0;
    for (const a of this.asks.values()) n += a.waiting;
    return n;
  }

  /** The runtime's question about one connection to `host` (and `port`). */
  async ask(host: string, port: number | undefined): Promise<NetworkVerdict> {
    const { life, runner, approvals, diagnostics } = this.p;
    // An IPv6 literal is shown bracketed, as a URL and `:sandbox network` write it.
    const shown = host.includes(":") ? `[${host}]` : host;
    const target = port === undefined ? shown : `${shown}:${port}`;
    const calls = runner.runningCalls();
    const deny = (reason: string) => ({ allow: false as const, reason });
    // The proxy's refusal of a plain HTTP request carries no reason: each refusal below names its
    // own in the results of the calls the connection is attributed to (SPEC-sandbox, "Approvals").
    const note = (text: string): void => this.note(calls, text);
    if (life.grants.denyDomains.has(host)) {
      note(`a connection to ${target} was refused: the user refused ${shown} for this session`);
      return deny(`the user refused ${shown} for this session`);
    }
    if (life.state !== "active" || life.mode === "non-interactive") {
      diagnostics.record("refused", "network", calls[0]?.callId);
      const why = life.mode === "non-interactive" ? "non-interactive" : `the sandbox is ${life.state}`;
      note(`a connection to ${target} was refused: ${shown} is not on the network allowlist and nobody was asked (${why}); the user can allow it with \`:sandbox network allow add ${shown}\` in the interactive UI`);
      return deny(`${shown} is not on the sandbox's network allowlist; the user can allow it with :sandbox network allow add ${shown}`);
    }
    if (!namesSome(calls) || calls.length > SANDBOX_CALLS_NAMED_MAX) {
      // No prompt that names nobody, or only some of those who may have asked.
      diagnostics.record("refused", "network", calls[0]?.callId);
      note(`a connection to ${target} was refused at once: more than ${SANDBOX_CALLS_NAMED_MAX} sandboxed commands were running, so it could not be told which one asked`);
      return deny(`no prompt can name the command that asked for ${shown}`);
    }
    const key = `${target}\n${calls.map((c) => c.callId).join("\n")}`;
    let pending = this.asks.get(key);
    if (pending === undefined) {
      if (calls.some((c) => approvals.openFor(c.callId) >= SANDBOX_PROMPTS_PER_CALL)) {
        diagnostics.record("refused", "network", calls[0]?.callId);
        note(`a connection to ${target} was refused at once: the command already has ${SANDBOX_PROMPTS_PER_CALL} approval requests open, the most one call may have`);
        return deny(`too many approval requests open for this command; ${shown} was not asked about`);
      }
      pending = this.start(key, target, host, calls);
    }
    pending.waiting++;
    let end: AskEnd;
    try {
      end = await pending.end;
    } finally {
      pending.waiting--;
    }
    if (end === "allowed" || end === "approved") return true;
    if (end === "denied") {
      note(`a connection to ${target} was refused: the user refused ${shown} for this session`);
      return deny(`the user refused ${shown} for this session`);
    }
    note(`the connection to ${target} was refused: its approval was withdrawn (the call was cancelled, a new prompt, a policy change, or no answer in time)`);
    return deny(`the request for ${shown} was withdrawn`);
  }

  /**
   * One ask for `target` on behalf of `calls`: the automatic review (only when one command runs,
   * the only case a connection can be tied to one agent's intent), then the manual prompt.
   */
  private start(key: string, target: string, host: string, calls: NamedCalls): HostAsk {
    const { life, reviewer, approvals, diagnostics } = this.p;
    const guard = approvals.guard(calls);
    const signal = guard.controller.signal;
    const decide = async (): Promise<AskEnd> => {
      const sole = calls.length === 1 ? calls[0] : undefined;
      if (sole !== undefined) {
        const reviewed = await reviewer.review(
          {
            kind: "network",
            target,
            command: sole.command,
            scopes: [`one connection to ${target}, now; the host is not added to the allowlist, and the connection is not limited to any request method (it may upload data)`],
            agentId: sole.agentId,
            callId: sole.callId,
          },
          signal,
        );
        if (reviewed === "approved") {
          diagnostics.record("allowed", "network", sole.callId, { ...reviewer.classifierFact(), agentId: sole.agentId });
          return "approved";
        }
        if (reviewed === "revoked") return "revoked";
      }
      const outcome = await approvals.ask({ kind: "network", target, choices: ["allow", "deny"], calls }, signal);
      if (outcome === "allowed") return "allowed";
      if (outcome !== "denied") return "revoked";
      life.grants.denyDomains.add(host);
      life.updateNetwork();
      return "denied";
    };
    const ask: HostAsk = {
      end: decide().finally(() => {
        approvals.release(guard);
        this.asks.delete(key);
      }),
      waiting: 0,
    };
    this.asks.set(key, ask);
    return ask;
  }

  /** A note (`[sandbox: text]`) for the results of the calls a connection is attributed to, still running. */
  private note(calls: readonly CallRef[], text: string): void {
    const running = calls.filter((c) => this.p.runner.isRunning(c.callId));
    const shared = calls.length > 1 ? ` (made by this command or another one running at the same time: it cannot be told which)` : "";
    for (const c of running) this.p.notes.once(c.callId, `[sandbox: ${text}${shared}]`);
  }
}
