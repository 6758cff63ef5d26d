// The manual prompts of the sandbox (SPEC-sandbox, "Approvals"): each names the calls it is about
// (agent, call, command), is published to every attached UI as `sandbox.approval_requested`,
// answered by the first `sandbox.approval_answer`, closed everywhere with
// `sandbox.approval_resolved`, and withdrawn (revoked) by a cancel or the end of any call it names,
// a new user prompt to its agent, a policy change or its deadline. A call has at most
// SANDBOX_PROMPTS_PER_CALL open at once; connection asks in flight (a review, then a prompt) are
// guarded here too, so one revocation reaches every stage.
import type { SandboxApprovalOutcome, SandboxApprovalRequested, SandboxDecision, SandboxPermissionKind } from "../../../../generated/index.js";
import { randomHex } from "../../../startup/random.js";
import type { Diagnostics } from "./diagnostics.js";
import type { Reviewer } from "./review.js";
import type { CallRef } from "./runner.js";
import { firstLine, type SandboxHost } from "./types.js";

/** A decision not answered in this long is withdrawn (revoked): a run with nobody to answer never hangs. */
export const SANDBOX_APPROVAL_MAX_WAIT_MS = 10 * 60_000;
/** The most approval requests one call may have open at once; more are refused at once. */
export const SANDBOX_PROMPTS_PER_CALL = 16;

/** The calls a prompt is about: never none (the first is the one shown first). */
export type NamedCalls = readonly [CallRef, ...CallRef[]];

/** Whether `calls` names at least one call. */
export function namesSome(calls: readonly CallRef[]): calls is NamedCalls {
  return calls.length > 0;
}

/** What a prompt asks, and about which calls. */
export interface AskRequest {
  kind: SandboxPermissionKind;
  target: string;
  choices: SandboxDecision[];
  calls: NamedCalls;
}

interface PendingApproval {
  readonly id: string;
  readonly kind: SandboxPermissionKind;
  readonly choices: readonly SandboxDecision[];
  readonly calls: readonly CallRef[];
  readonly payload: SandboxApprovalRequested;
  readonly resolve: (outcome: SandboxApprovalOutcome) => void;
  readonly timer: NodeJS.Timeout;
}

/** An ask in flight for some calls (a connection's review, then its prompt): aborted when any of them is revoked. */
export interface AskGuard {
  readonly calls: readonly CallRef[];
  readonly controller: AbortController;
}

const names = (calls: readonly CallRef[], pred: (c: CallRef) => boolean): boolean => calls.some(pred);

export class Approvals {
  private readonly pending = new Map<string, PendingApproval>();
  private readonly guards = new Set<AskGuard>();

  constructor(
    private readonly host: SandboxHost,
    private readonly diagnostics: Diagnostics,
    private readonly reviewer: Reviewer,
  ) {}

  /** Publishes a prompt and waits for its answer, its withdrawal or its deadline. */
  ask(r: AskRequest, signal?: AbortSignal): Promise<SandboxApprovalOutcome> {
    const id = `sbx-${randomHex(8)}`;
    const setup = this.reviewer.takeSetupOffer();
    const [first, ...others] = r.calls;
    const payload: SandboxApprovalRequested = {
      approval_id: id,
      kind: r.kind,
      target: firstLine(r.target, 1024),
      choices: r.choices,
      agent_id: first.agentId,
      call_id: first.callId,
      command: firstLine(first.command),
      ...(others.length > 0 ? { other_calls: others.map((c) => ({ agent_id: c.agentId, call_id: c.callId, command: firstLine(c.command) })) } : {}),
      ...(setup !== undefined ? { classifier_setup: setup } : {}),
    };
    return new Promise<SandboxApprovalOutcome>((resolve) => {
      const onAbort = (): void => this.resolve(id, "revoked");
      const timer = setTimeout(onAbort, SANDBOX_APPROVAL_MAX_WAIT_MS);
      this.pending.set(id, {
        id,
        kind: r.kind,
        choices: r.choices,
        calls: r.calls,
        payload,
        timer,
        resolve: (outcome) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(outcome);
        },
      });
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.diagnostics.record("prompted", r.kind, first?.callId);
      this.host.emit("sandbox.approval_requested", payload);
    });
  }

  /** Guards an ask in flight for `calls` until `release`: revoking any of them aborts it. */
  guard(calls: readonly CallRef[]): AskGuard {
    const g: AskGuard = { calls, controller: new AbortController() };
    this.guards.add(g);
    return g;
  }

  release(g: AskGuard): void {
    this.guards.delete(g);
  }

  /** How many approval requests the call has open: connection asks in flight and its own prompt. */
  openFor(callId: string): number {
    const mine = (c: CallRef): boolean => c.callId === callId;
    let n = 0;
    for (const g of this.guards) if (names(g.calls, mine)) n++;
    // A connection's prompt is counted by its guard.
    for (const p of this.pending.values()) if (p.kind !== "network" && names(p.calls, mine)) n++;
    return n;
  }

  private resolve(id: string, outcome: SandboxApprovalOutcome): void {
    const p = this.pending.get(id);
    if (p === undefined) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    this.diagnostics.record(outcome, p.kind, p.calls[0]?.callId);
    this.host.emit("sandbox.approval_resolved", { approval_id: id, outcome });
    p.resolve(outcome);
  }

  /** `sandbox.approval_answer` from a UI: the first answer wins; one not offered is ignored. */
  answer(id: string, decision: SandboxDecision): void {
    const p = this.pending.get(id);
    if (p === undefined || !p.choices.includes(decision)) return;
    this.resolve(id, decision === "deny" ? "denied" : decision === "allow_adapt" ? "allowed_adapt" : "allowed");
  }

  /** Withdraws every ask and prompt that names a call matching `pred`. */
  private revokeWhere(pred: (c: CallRef) => boolean): void {
    for (const g of [...this.guards]) if (names(g.calls, pred)) g.controller.abort();
    for (const p of [...this.pending.values()]) if (names(p.calls, pred)) this.resolve(p.id, "revoked");
  }

  /** A new user prompt to `agentId` withdraws the decisions pending for it (its reviews first). */
  userPrompted(agentId: string): void {
    this.reviewer.revokeAgent(agentId);
    this.revokeWhere((c) => c.agentId === agentId);
  }

  /** A call cancelled or ended withdraws every request that names it. */
  revokeCall(callId: string): void {
    this.revokeWhere((c) => c.callId === callId);
  }

  /** A policy change withdraws every pending decision (reviews first). */
  revokeAll(): void {
    this.reviewer.revokeAll();
    for (const g of [...this.guards]) g.controller.abort();
    for (const id of [...this.pending.keys()]) this.resolve(id, "revoked");
  }

  /** Publishes the prompts still waiting again (a UI attached); how many there are. */
  republish(): number {
    for (const p of this.pending.values()) this.host.emit("sandbox.approval_requested", p.payload);
    return this.pending.size;
  }
}
