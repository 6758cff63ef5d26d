// The automatic permission reviewer as the sandbox uses it (SPEC-sandbox-reviewer): the session's
// classifier selection (`:sandbox classifier`, restored on resume), the setup offer carried by the
// first manual prompt, and one review asked of the harness (`sandbox.review_request`) whose
// outcome — approved, revoked, or manual — decides whether the manual prompt follows.
import type { SandboxDiagnosticOutcome, SandboxPermissionKind, SandboxReviewResult } from "../../../../generated/index.js";
import { randomHex } from "../../../startup/random.js";
import type { Diagnostics } from "./diagnostics.js";
import type { SandboxLifecycle } from "./lifecycle.js";
import type { CallNotes } from "./notes.js";
import { originOf } from "./policy.js";
import { firstLine, type SandboxHost } from "./types.js";

/**
 * An automatic review the harness has not answered in this long is treated as failed (the manual
 * prompt follows); the harness's own limit (REVIEW_TIMEOUT_MS, 60 s) ends it sooner.
 */
export const SANDBOX_REVIEW_MAX_WAIT_MS = 90_000;
/** What the harness is given beyond the review's own timeout before the sandbox stops waiting for it. */
const SANDBOX_REVIEW_GRACE_MS = 30_000;

/** A classifier id as `sandbox.yaml` accepts it (ClassifierId): `provider/model`. */
export const CLASSIFIER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\/[^\s]{1,255}$/;

/** How an automatic review ended for the sandbox: the harness's result, or revoked here. */
type ReviewEnd = SandboxReviewResult | { readonly outcome: "revoked" };

interface PendingReview {
  readonly agentId: string;
  readonly resolve: (end: ReviewEnd) => void;
}

/** What a review is asked about. */
export interface ReviewRequest {
  kind: SandboxPermissionKind;
  target: string;
  command: string;
  scopes: string[];
  evidence?: string;
  agentId: string;
  callId?: string;
}

/** What a review decided for the sandbox: grant, the request was withdrawn, or ask the user. */
export type ReviewVerdict = "approved" | "revoked" | "manual";

/** Where the reviewer's selection came from, as `:sandbox show` says it. */
export interface Selection {
  value: string | false | undefined;
  from: string;
}

export class Reviewer {
  /** The session's reviewer choice (`:sandbox classifier`): a model, false (manual), or none (the configuration's). */
  private sessionClassifier: string | false | undefined;
  /** Setup offered with the next manual prompt: nothing selected yet, or the selected classifier is gone. */
  private setupOffer: "first" | "unavailable" | undefined;
  private setupOffered = false;
  private readonly reviews = new Map<string, PendingReview>();

  constructor(
    private readonly host: SandboxHost,
    private readonly life: SandboxLifecycle,
    private readonly diagnostics: Diagnostics,
    private readonly notes: CallNotes,
  ) {}

  /** The selected classifier (`provider/model`), or undefined for manual approvals only. */
  classifier(): string | undefined {
    const c = this.selection().value;
    return typeof c === "string" ? c : undefined;
  }

  /** The effective reviewer selection and where it came from: the session's choice wins over the configuration. */
  selection(): Selection {
    if (this.sessionClassifier !== undefined) return { value: this.sessionClassifier, from: "session" };
    const c = this.life.config().classifier;
    if (c !== undefined) return { value: c, from: originOf(this.life.loaded?.origins ?? {}, "classifier") };
    return { value: undefined, from: "default" };
  }

  /** The classifier as a diagnostic names it, when one is selected. */
  classifierFact(): { classifier?: string } {
    const c = this.classifier();
    return c !== undefined ? { classifier: c } : {};
  }

  /** `sandbox.classifier_selected` read back on resume: the session's choice again. */
  restoreSelection(d: { choice: "model" | "manual" | "default"; classifier?: string }): void {
    this.sessionClassifier = d.choice === "manual" ? false : d.choice === "model" && d.classifier !== undefined && CLASSIFIER_ID.test(d.classifier) ? d.classifier : undefined;
  }

  /** The session's choice (undefined withdraws it), saved with the session. */
  selectSession(value: string | false | undefined): void {
    const had = this.sessionClassifier;
    this.sessionClassifier = value;
    if (had === undefined && value === undefined) return;
    this.host.emit("sandbox.classifier_selected", value === undefined ? { choice: "default" } : value === false ? { choice: "manual" } : { choice: "model", classifier: value });
  }

  /** The effective reviewer and where it came from, as `:sandbox show` says it. */
  selectionLine(): string {
    const s = this.selection();
    const what = s.value === undefined ? "none selected (manual approvals; the first permission prompt offers setup)" : s.value === false ? "false (manual approvals)" : s.value;
    return `classifier: ${what} (${s.from})`;
  }

  /** The setup offer the next manual prompt carries (offered once per session, or again when the classifier is gone). */
  takeSetupOffer(): "first" | "unavailable" | undefined {
    const offer = this.setupOffer;
    if (offer !== undefined) this.setupOffered = true;
    this.setupOffer = undefined;
    return offer;
  }

  /**
   * An automatic review before the manual prompt (SPEC-sandbox-reviewer): `approved`, `revoked`, or
   * `manual` (no classifier, not interactive, or any other outcome). Safe diagnostics record it.
   */
  async review(r: ReviewRequest, signal?: AbortSignal): Promise<ReviewVerdict> {
    if (this.life.mode !== "interactive" || this.life.state !== "active") return "manual";
    const selected = this.selection().value;
    // Nothing selected yet: the first manual prompt offers setup (SPEC-sandbox-reviewer, "Selection").
    if (selected === undefined && !this.setupOffered) this.setupOffer = "first";
    if (typeof selected !== "string") return "manual";
    const end = await this.request(r, selected, signal);
    return this.settle(r, selected, end);
  }

  /** Publishes the request and waits for the harness's result, its withdrawal or the deadline. */
  private request(r: ReviewRequest, classifier: string, signal: AbortSignal | undefined): Promise<ReviewEnd> {
    const id = `rv-${randomHex(8)}`;
    return new Promise<ReviewEnd>((resolve) => {
      const finish = (e: ReviewEnd): void => {
        if (!this.reviews.delete(id)) return;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(e);
      };
      const onAbort = (): void => finish({ outcome: "revoked" });
      const timeoutSeconds = this.life.config().classifier_timeout_seconds;
      const wait = timeoutSeconds === undefined ? SANDBOX_REVIEW_MAX_WAIT_MS : timeoutSeconds * 1000 + SANDBOX_REVIEW_GRACE_MS;
      const timer = setTimeout(() => finish({ review_id: id, outcome: "failed", reason: "no answer from the harness" }), wait);
      this.reviews.set(id, { agentId: r.agentId, resolve: finish });
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.host.emit("sandbox.review_request", {
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
  }

  /** Records how a review ended and what it decided. */
  private settle(r: ReviewRequest, classifier: string, end: ReviewEnd): ReviewVerdict {
    if (end.outcome === "revoked") {
      this.diagnostics.record("revoked", r.kind, r.callId, { classifier, agentId: r.agentId });
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
    this.diagnostics.record(diagnostic, r.kind, r.callId, {
      classifier,
      ...(label !== undefined ? { label: firstLine(label, 64) } : {}),
      attempted,
      agentId: r.agentId,
      ...(end.parent_id !== undefined ? { parentId: end.parent_id } : {}),
    });
    if (r.callId !== undefined && end.usage !== undefined) {
      this.notes.push(r.callId, `[sandbox: an automatic review by ${classifier} used ${end.usage.input_tokens} input and ${end.usage.output_tokens} output tokens]`);
    }
    return end.outcome === "approved" ? "approved" : "manual";
  }

  /** `sandbox.review_result` from the harness: settles its review unless it was revoked. */
  answered(result: SandboxReviewResult): void {
    this.reviews.get(result.review_id)?.resolve(result);
  }

  /** A new user prompt to `agentId` withdraws its reviews. */
  revokeAgent(agentId: string): void {
    for (const r of [...this.reviews.values()]) if (r.agentId === agentId) r.resolve({ outcome: "revoked" });
  }

  /** A policy change withdraws every review. */
  revokeAll(): void {
    for (const r of [...this.reviews.values()]) r.resolve({ outcome: "revoked" });
  }
}
