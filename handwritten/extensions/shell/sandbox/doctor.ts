// What `:sandbox show` and `:sandbox doctor` say (SPEC-sandbox, "Commands"; SPEC-sandbox-reviewer,
// "Diagnostics"): the effective policy and where each value came from; the runtime's state, its
// dependencies and configuration files, the automatic reviews counted apart, and the recent
// diagnostics with suggested fixes.
import type { ConnectionAsks } from "./connections.js";
import type { Diagnostic, Diagnostics } from "./diagnostics.js";
import { SANDBOX_DIAGNOSTICS_KEPT } from "./diagnostics.js";
import type { SandboxLifecycle } from "./lifecycle.js";
import { DEFAULT_DENY_WRITE_PATTERNS, originOf } from "./policy.js";
import type { Reviewer } from "./review.js";
import type { SandboxedRunner } from "./runner.js";
import type { SandboxOptions } from "./types.js";

/** What the texts are read from. */
export interface ReportParts {
  readonly life: SandboxLifecycle;
  readonly reviewer: Reviewer;
  readonly runner: SandboxedRunner;
  readonly connections: ConnectionAsks;
  readonly diagnostics: Diagnostics;
}

/** `:sandbox show`: state, mode, reviewer and the effective policy with each value's origin. */
export function showText(o: SandboxOptions, { life, reviewer }: ReportParts): string {
  const p = life.policy();
  const g = life.grants;
  const origins = life.loaded?.origins ?? {};
  const from = (key: string): string => `(${originOf(origins, key)})`;
  const list = (items: readonly string[]): string => (items.length === 0 ? "  (none)" : items.map((i) => `  ${i}`).join("\n"));
  return [
    `sandbox: ${life.state}${life.reason ? ` — ${life.reason}` : ""}`,
    ...(life.fix ? [`fix: ${life.fix}`] : []),
    `mode: ${life.mode} ${life.modeOverride ? "(session)" : o.launch?.approval === "never" ? "(--approval never)" : from("mode")}`,
    reviewer.selectionLine(),
    `network allowed ${from("network.allowed_domains")}${g.allowDomains.size ? " + session" : ""}:`,
    list(p.allowedDomains),
    `network denied ${from("network.denied_domains")}${g.denyDomains.size ? " + session" : ""}:`,
    list(p.deniedDomains),
    `read denied ${from("filesystem.deny_read")}${g.denyRead.size ? " + session" : ""}:`,
    list(p.denyRead),
    `read re-allowed ${from("filesystem.allow_read")}${g.allowRead.size ? " + session" : ""}:`,
    list(p.allowRead),
    `write allowed ${from("filesystem.allow_write")}${g.allowWrite.size ? " + session" : ""} (and the commands' own temporary folder):`,
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
function reviewSummary(all: readonly Diagnostic[], reviewer: Reviewer): string[] {
  const reviews = all.filter((d) => d.outcome.startsWith("review_"));
  const count = (pred: (d: Diagnostic) => boolean, list: readonly Diagnostic[] = reviews): number => list.filter(pred).length;
  const attempted = reviews.filter((d) => d.attempted !== false && d.outcome !== "review_skipped");
  const notAttempted = reviews.filter((d) => !attempted.includes(d));
  const reasons = new Map<string, number>();
  for (const d of notAttempted) reasons.set(d.label ?? "unknown", (reasons.get(d.label ?? "unknown") ?? 0) + 1);
  const granted = all.filter((d) => d.classifier !== undefined && (d.outcome === "allowed" || (d.outcome === "revoked" && d.label === "time_budget")));
  const withdrawn = count((d) => d.outcome === "revoked" && d.classifier !== undefined && d.label === undefined, all);
  return [
    `automatic reviewer: ${reviewer.selectionLine().slice("classifier: ".length)}`,
    `  reviews attempted: ${attempted.length} — approved ${count((d) => d.outcome === "review_approved", attempted)}, escalated by the model ${count((d) => d.outcome === "review_escalated", attempted)}, invalid answers ${count((d) => d.outcome === "review_invalid", attempted)}, provider failures ${count((d) => d.outcome === "review_failed", attempted)} (timeouts ${count((d) => d.outcome === "review_failed" && d.label === "timeout", attempted)})`,
    `  reviews not attempted: ${notAttempted.length}${reasons.size > 0 ? ` — ${[...reasons].map(([r, n]) => `${r} ${n}`).join(", ")}` : ""}`,
    `  reviews withdrawn before an answer (cancelled, a new prompt, a policy change): ${withdrawn}`,
    `  grants after an approved review: applied ${count((d) => d.outcome === "allowed", granted)}, not applied (time budget used up) ${count((d) => d.outcome === "revoked", granted)}`,
  ];
}

/** The suggested fix shown beside a recent diagnostic. */
function fixFor(d: Diagnostic, life: SandboxLifecycle): string {
  switch (d.outcome) {
    case "blocked":
      return life.fix ?? "see the state above";
    case "refused":
      return d.kind === "network" ? "allow the host with :sandbox network allow add HOST, or switch to :sandbox mode interactive" : "allow the path with :sandbox filesystem allow-write add PATH";
    case "replay_failed":
      return "the replay failed for another reason; read the tool result";
    default:
      return "—";
  }
}

function diagnosticLine(d: Diagnostic, life: SandboxLifecycle): string {
  return `  ${new Date(d.at / 1000).toISOString()} ${d.kind} ${d.outcome}${d.callId ? ` call ${d.callId}` : ""}${d.agentId ? ` agent ${d.agentId}` : ""}${d.classifier ? ` by ${d.classifier}` : ""}${d.parentId ? ` for parent ${d.parentId}` : ""}${d.label ? ` (${d.label})` : ""}${d.attempted === false ? " (not attempted)" : ""}${d.restored ? " (restored)" : ""}${d.unstored ? " (not stored)" : ""} — fix: ${fixFor(d, life)}`;
}

function dependencyLine(life: SandboxLifecycle): string {
  const deps = life.dependencyErrors;
  if (deps.length > 0) return `missing ${deps.join(", ")}`;
  if (life.runtime !== undefined) return "bwrap, socat, rg found";
  if (life.onDemand) return "not checked: the runtime did not start (commands ran with the wrap an earlier start kept)";
  return "not checked (the sandbox is not in use)";
}

/** `:sandbox doctor`: the runtime, its dependencies and files, the reviews, the recent diagnostics. */
export function doctorText({ life, reviewer, runner, connections, diagnostics }: ReportParts): string {
  const files = life.loaded?.files ?? [];
  const recent = diagnostics.recent;
  const unstored = recent.filter((d) => d.unstored === true).length;
  const runtimeWarnings = life.runtime?.getLinuxGlobPatternWarnings?.() ?? [];
  const deps = life.dependencyErrors;
  return [
    `state: ${life.state}${life.reason ? ` — ${life.reason}` : ""}`,
    ...(life.fix ? [`fix: ${life.fix}`] : []),
    `platform: ${life.platform}; mode: ${life.mode}`,
    `dependencies: ${dependencyLine(life)}`,
    ...life.dependencyWarnings.map((w) => `warning: ${w}`),
    `sandbox wraps: ${runner.wrapCounts.built} built, ${runner.wrapCounts.reused} reused${runner.wrapCounts.kept > 0 ? " (the first kept from an earlier start)" : ""}`,
    `connections waiting for a decision: ${connections.waiting}`,
    ...life.recovered,
    ...runtimeWarnings.map((w) => `warning: a pattern the sandbox cannot apply on this platform: ${w}`),
    "configuration files:",
    ...(files.length === 0 ? ["  (none read)"] : files.map((f) => `  ${f.path} (${f.layer}): ${f.status}${f.error ? ` — ${f.error}` : ""}`)),
    ...(life.loaded?.warnings ?? []).map((w) => `warning: ${w}`),
    ...reviewSummary(recent, reviewer),
    ...(unstored > 0 ? [`warning: ${unstored} diagnostic(s) could not be stored in the session; they are kept in memory only and will not come back on resume`] : []),
    `recent sandbox events (last ${SANDBOX_DIAGNOSTICS_KEPT}):`,
    ...(recent.length === 0 ? ["  (none)"] : recent.map((d) => diagnosticLine(d, life))),
  ].join("\n");
}
