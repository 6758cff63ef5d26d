// The sandbox's safe diagnostics (SPEC-sandbox, "Diagnostics and persistence"; SPEC-sandbox-reviewer,
// "Diagnostics"): every block, prompt, decision and review is published as
// `sandbox.diagnostic_recorded` — outcome, kind, call, time and review facts, never a command, a
// target or any output — and the last ones are kept for `:sandbox doctor`.
import type { SandboxDiagnosticOutcome, SandboxPermissionKind } from "../../../../generated/index.js";
import type { SandboxHost } from "./types.js";

/** Diagnostics kept for `:sandbox doctor`. */
export const SANDBOX_DIAGNOSTICS_KEPT = 50;

export interface Diagnostic {
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
export interface ReviewFacts {
  classifier?: string;
  label?: string;
  attempted?: boolean;
  agentId?: string;
  parentId?: string;
}

/** A diagnostic as the session journal holds it (read back on resume). */
export interface StoredDiagnostic {
  outcome: SandboxDiagnosticOutcome;
  kind: SandboxPermissionKind;
  call_id?: string;
  at: number;
  classifier?: string;
  label?: string;
  attempted?: boolean;
  agent_id?: string;
  parent_id?: string;
}

export class Diagnostics {
  private readonly kept: Diagnostic[] = [];

  constructor(private readonly host: SandboxHost) {}

  /** The last SANDBOX_DIAGNOSTICS_KEPT, oldest first. */
  get recent(): readonly Diagnostic[] {
    return this.kept;
  }

  record(outcome: SandboxDiagnosticOutcome, kind: SandboxPermissionKind, callId: string | undefined, review: ReviewFacts = {}): void {
    const at = Date.now() * 1000;
    const kept: Diagnostic = { outcome, kind, ...(callId !== undefined ? { callId } : {}), at, restored: false, ...review };
    this.keep(kept);
    const { agentId, parentId, ...facts } = review;
    const sent = this.host.emit("sandbox.diagnostic_recorded", {
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
  restore(d: StoredDiagnostic): void {
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
    this.kept.push(d);
    if (this.kept.length > SANDBOX_DIAGNOSTICS_KEPT) this.kept.splice(0, this.kept.length - SANDBOX_DIAGNOSTICS_KEPT);
  }
}
