// The manual prompts of the sandbox (SPEC-sandbox, "Approvals"): each is published to every
// attached UI as `sandbox.approval_requested`, answered by the first `sandbox.approval_answer`,
// closed everywhere with `sandbox.approval_resolved`, and withdrawn (revoked) by a cancel, a new
// user prompt, a policy change or its deadline. Concurrent asks for one host share one prompt.
import type { SandboxApprovalOutcome, SandboxDecision, SandboxPermissionKind } from "../../../../generated/index.js";
import { randomHex } from "../../../startup/random.js";
import type { Diagnostics } from "./diagnostics.js";
import type { Reviewer } from "./review.js";
import { firstLine, type SandboxHost } from "./types.js";

/** A decision not answered in this long is withdrawn (revoked): a run with nobody to answer never hangs. */
export const SANDBOX_APPROVAL_MAX_WAIT_MS = 10 * 60_000;

/** What a prompt asks. */
export interface AskRequest {
  kind: SandboxPermissionKind;
  target: string;
  choices: SandboxDecision[];
  agentId?: string;
  callId?: string;
  command?: string;
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

export class Approvals {
  private readonly pending = new Map<string, PendingApproval>();
  private readonly hostPrompts = new Map<string, Promise<SandboxApprovalOutcome>>();

  constructor(
    private readonly host: SandboxHost,
    private readonly diagnostics: Diagnostics,
    private readonly reviewer: Reviewer,
  ) {}

  /** Publishes a prompt and waits for its answer, its withdrawal or its deadline. */
  ask(r: AskRequest, signal?: AbortSignal): Promise<SandboxApprovalOutcome> {
    const id = `sbx-${randomHex(8)}`;
    const setup = this.reviewer.takeSetupOffer();
    const payload = {
      approval_id: id,
      kind: r.kind,
      target: firstLine(r.target, 1024),
      choices: r.choices,
      ...(r.agentId !== undefined ? { agent_id: r.agentId } : {}),
      ...(r.callId !== undefined ? { call_id: r.callId } : {}),
      ...(r.command !== undefined ? { command: firstLine(r.command) } : {}),
      ...(setup !== undefined ? { classifier_setup: setup } : {}),
    };
    return new Promise<SandboxApprovalOutcome>((resolve) => {
      const onAbort = (): void => this.resolve(id, "revoked");
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
      this.diagnostics.record("prompted", r.kind, r.callId);
      this.host.emit("sandbox.approval_requested", payload);
    });
  }

  /** The prompt about a connection to `target`: one shared by every connection waiting on that host. */
  askHost(target: string, r: () => AskRequest): Promise<SandboxApprovalOutcome> {
    let prompt = this.hostPrompts.get(target);
    if (prompt === undefined) {
      prompt = this.ask(r());
      this.hostPrompts.set(target, prompt);
      void prompt.finally(() => this.hostPrompts.delete(target));
    }
    return prompt;
  }

  private resolve(id: string, outcome: SandboxApprovalOutcome): void {
    const p = this.pending.get(id);
    if (p === undefined) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    this.diagnostics.record(outcome, p.kind, p.callId);
    this.host.emit("sandbox.approval_resolved", { approval_id: id, outcome });
    p.resolve(outcome);
  }

  /** `sandbox.approval_answer` from a UI: the first answer wins; one not offered is ignored. */
  answer(id: string, decision: SandboxDecision): void {
    const p = this.pending.get(id);
    if (p === undefined || !p.choices.includes(decision)) return;
    this.resolve(id, decision === "deny" ? "denied" : decision === "allow_adapt" ? "allowed_adapt" : "allowed");
  }

  /** A new user prompt to `agentId` withdraws the decisions pending for it (its reviews first). */
  userPrompted(agentId: string): void {
    this.reviewer.revokeAgent(agentId);
    for (const p of [...this.pending.values()]) if (p.agentId === agentId) this.resolve(p.id, "revoked");
  }

  /** A call cancelled or ended withdraws the prompts still pending for it. */
  revokeCall(callId: string): void {
    for (const p of [...this.pending.values()]) if (p.callId === callId) this.resolve(p.id, "revoked");
  }

  /** A policy change withdraws every pending decision (reviews first). */
  revokeAll(): void {
    this.reviewer.revokeAll();
    for (const id of [...this.pending.keys()]) this.resolve(id, "revoked");
  }

  /** Publishes the prompts still waiting again (a UI attached); how many there are. */
  republish(): number {
    for (const p of this.pending.values()) this.host.emit("sandbox.approval_requested", p.payload);
    return this.pending.size;
  }
}
