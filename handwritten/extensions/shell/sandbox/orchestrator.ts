// The sequence of one model `shell` call under the sandbox (SPEC-sandbox, "Approvals"): the first
// attempt; at a filesystem denial the refusals no approval can open, then the automatic review,
// then the manual prompt; an approval's one replay within the time the first attempt left. (A
// connection's review and prompt are connections.ts's.)
import { statSync } from "node:fs";
import type { SandboxApprovalOutcome, SandboxPermissionKind } from "../../../../generated/index.js";
import { ToolError, runShell, shellArgs, shellBody, shellResult, type ShellOutcome, type ToolResult } from "../tools/index.js";
import { throwIfCancelled } from "../tools/errors.js";
import type { Approvals } from "./approvals.js";
import { findDenial, type Denial } from "./denials.js";
import type { Diagnostics } from "./diagnostics.js";
import type { SandboxLifecycle } from "./lifecycle.js";
import type { CallNotes } from "./notes.js";
import { within } from "./policy.js";
import type { Reviewer, ReviewVerdict } from "./review.js";
import type { SandboxedRunner } from "./runner.js";
import type { ShellCall } from "./types.js";

/** The parts the orchestrator drives. */
export interface OrchestratorParts {
  readonly life: SandboxLifecycle;
  readonly runner: SandboxedRunner;
  readonly reviewer: Reviewer;
  readonly approvals: Approvals;
  readonly diagnostics: Diagnostics;
  readonly notes: CallNotes;
}

/** A first attempt that failed on a filesystem denial. */
interface DeniedAttempt {
  readonly command: string;
  readonly timeoutSeconds: number;
  readonly timeoutMs: number;
  /** The state note the result starts with. */
  readonly note: string;
  readonly first: ShellOutcome;
  /** How long the first attempt took. */
  readonly elapsed: number;
  readonly denial: Denial;
  readonly kind: SandboxPermissionKind;
}

export class ShellOrchestrator {
  /** The state each agent's context last heard of (the note at the head of a `shell` result). */
  private readonly noted = new Map<string, string>();

  constructor(private readonly p: OrchestratorParts) {}

  /** Runs a model's `shell` call under the sandbox's current state; reviews made for it are noted in its result. */
  async runShellTool(args: unknown, call: ShellCall): Promise<ToolResult> {
    // Cancelling the call (its turn cancelled included) withdraws every request that names it: its
    // connections' reviews and prompts (a filesystem prompt listens to the signal itself); one left
    // when the call ends has nobody left to wait for it, so no prompt outlives its call or turn.
    const revoke = (): void => this.p.approvals.revokeCall(call.callId);
    call.signal.addEventListener("abort", revoke, { once: true });
    try {
      const result = await this.runShellCall(args, call);
      const notes = this.p.notes.take(call.callId);
      return notes.length === 0 ? result : { ...result, output: `${result.output}\n${notes.join("\n")}` };
    } finally {
      call.signal.removeEventListener("abort", revoke);
      this.p.approvals.revokeCall(call.callId);
      this.p.notes.forget(call.callId);
    }
  }

  private async runShellCall(args: unknown, call: ShellCall): Promise<ToolResult> {
    const { life, runner, diagnostics } = this.p;
    const { command, timeoutSeconds } = shellArgs(args);
    throwIfCancelled(call.signal);
    await life.start();
    if (life.state === "blocked") {
      diagnostics.record("blocked", "filesystem_write", call.callId);
      throw new ToolError("failed", `The sandbox is blocked, so the command was not run: ${life.reason ?? "unknown reason"}. Fix: ${life.fix ?? ""}. tau never runs a model command unsandboxed on its own.`);
    }
    checkWorkdir(call.cwd);
    const note = this.stateNote(call.agentId);
    const timeoutMs = timeoutSeconds * 1000;
    if (life.state !== "active") {
      const outcome = await runShell({ command, cwd: call.cwd, timeoutMs, signal: call.signal, ...(call.onProgress ? { onProgress: call.onProgress } : {}) });
      return shellResult(command, outcome, timeoutSeconds, note);
    }
    const started = Date.now();
    const first = await runner.run(command, call, timeoutMs, {});
    if (first.cancelled || first.timedOut || first.signal !== null || succeeded(first)) return shellResult(command, first, timeoutSeconds, note);
    const denial = findDenial(first.output, call.cwd, life.policy());
    if (denial === undefined) return shellResult(command, first, timeoutSeconds, note);
    const kind: SandboxPermissionKind = denial.access === "write" ? "filesystem_write" : "filesystem_read";
    return this.afterDenial({ command, timeoutSeconds, timeoutMs, note, first, elapsed: Date.now() - started, denial, kind }, call);
  }

  /**
   * The one-line note an agent's first `shell` result starts with when tau was started without the
   * sandbox. Later changes of state reach every agent from the harness, as a hidden message at its
   * next round (SPEC-sandbox, "The model's view").
   */
  private stateNote(agentId: string): string {
    const first = !this.noted.has(agentId);
    this.noted.set(agentId, this.p.life.state);
    return first && this.p.life.state === "bypassed" ? "[sandbox: not in use (the user started tau without it) — commands run with the user's full rights]\n" : "";
  }

  /** A filesystem denial: refused outright, or reviewed and asked; then replayed, adapted or refused. */
  private async afterDenial(a: DeniedAttempt, call: ShellCall): Promise<ToolResult> {
    const { command, first, timeoutSeconds, note, denial, kind } = a;
    const refused = this.refusal(a, call.callId);
    if (refused !== undefined) return shellResult(command, first, timeoutSeconds, note, refused);
    const reviewed = await this.p.reviewer.review(
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
          : await this.p.approvals.ask({ kind, target: denial.grant, choices: ["allow_retry", "allow_adapt", "deny"], calls: [{ agentId: call.agentId, callId: call.callId, command }] }, call.signal);
    if (outcome === "allowed") return this.replay(a, call, reviewed);
    if (outcome === "allowed_adapt") {
      const grants = this.p.life.grants;
      if (denial.access === "write") grants.allowWrite.add(denial.grant);
      else grants.allowRead.add(denial.grant);
      return shellResult(command, first, timeoutSeconds, note, `\n[sandbox: the user allowed ${denial.access} access to ${denial.grant} for the rest of this session; the command was not run again]`);
    }
    const why = outcome === "revoked" ? "the request was withdrawn (cancelled, a new prompt, a policy change, or no answer in time)" : "the user refused it";
    return shellResult(command, first, timeoutSeconds, note, `\n[sandbox: ${denial.access} access to ${denial.path} was not granted: ${why}]`);
  }

  /** The note of a denial no approval opens (or that nobody may be asked about), recorded as refused; undefined when it may be asked. */
  private refusal(a: DeniedAttempt, callId: string): string | undefined {
    const { denial } = a;
    let text: string | undefined;
    if (denial.gitFolder === true) {
      text = `\n[sandbox: ${denial.path} is in a git folder whose hooks and config are protected (they can run code outside the sandbox), so a model command cannot create that folder or change them; no approval can open it — the user can run that git command themselves (!cmd, e.g. !git init)]`;
    } else if (denial.protected) {
      text = `\n[sandbox: ${denial.path} is protected (tau's configuration, git hooks and config, shell start-up files); no approval can open it to a model command — the user can change it with a command of their own (!cmd)]`;
    } else if (denial.grant === "/") {
      // Creating a top-level folder needs the whole filesystem writable: never offered as one click.
      text = `\n[sandbox: ${denial.path} would need write access to the whole filesystem (/), which no approval grants — the user can create it with a command of their own (!cmd)]`;
    } else if (this.p.life.mode === "non-interactive") {
      const suggestion = denial.access === "write" ? `:sandbox filesystem allow-write add ${denial.grant}` : `:sandbox filesystem allow-read add ${denial.grant}`;
      text = `\n[sandbox: ${denial.access} access to ${denial.path} was refused by the sandbox; nobody was asked (non-interactive). The user can allow it with \`${suggestion}\` in the interactive UI]`;
    }
    if (text !== undefined) this.p.diagnostics.record("refused", a.kind, callId);
    return text;
  }

  /** An approved exception: the whole command once more, within what the first attempt left of its time. */
  private async replay(a: DeniedAttempt, call: ShellCall, reviewed: ReviewVerdict): Promise<ToolResult> {
    const { command, first, timeoutSeconds, note, denial, kind } = a;
    const { reviewer, diagnostics } = this.p;
    const remaining = a.timeoutMs - a.elapsed;
    if (remaining <= 0) {
      if (reviewed === "approved") diagnostics.record("revoked", kind, call.callId, { ...reviewer.classifierFact(), label: "time_budget", agentId: call.agentId });
      return shellResult(command, first, timeoutSeconds, note, "\n[sandbox: access was approved, but the command's time budget is used up, so it was not run again]");
    }
    // The reviewer's grant applied (a manual one is recorded as its prompt resolves).
    if (reviewed === "approved") diagnostics.record("allowed", kind, call.callId, { ...reviewer.classifierFact(), agentId: call.agentId });
    const replay = await this.p.runner.run(command, call, remaining, denial.access === "write" ? { write: denial.grant } : { read: denial.grant });
    diagnostics.record(succeeded(replay) && replay.signal === null && !replay.timedOut ? "replay_succeeded" : "replay_failed", kind, call.callId);
    const who = reviewed === "approved" ? `the automatic reviewer (${reviewer.classifier() ?? "classifier"}) approved` : "the user approved";
    // The replay has only what the first attempt left of the timeout, and its result says so.
    const left = `${Math.max(0.1, Math.round(remaining / 100) / 10)} s`;
    const head = `${note}[first attempt]\n${shellBody(first, timeoutSeconds)}\n[sandbox: ${who} ${denial.access} access to ${denial.grant} for one run; the whole command was run again within the ${left} its first attempt left of the ${timeoutSeconds} s timeout (side effects of the first attempt may already have happened)]\n`;
    return shellResult(command, replay, `${left} (what the first attempt left of the ${timeoutSeconds} s timeout)`, head);
  }

  /** Every scope a filesystem exception opens, broader ones included, in words for the reviewer. */
  private filesystemScopes(denial: Denial): string[] {
    if (denial.access === "write") {
      return [
        `${denial.grant} and everything below it become writable for one rerun of the whole command and what it starts (deny-write rules and protected paths still apply)`,
        ...(denial.path !== denial.grant ? [`the reported path ${denial.path} is not an existing directory; the exception is its nearest existing directory ${denial.grant}`] : []),
      ];
    }
    const rules = this.p.life.policy().denyRead.filter((rule) => within(denial.grant, rule));
    return [
      `${denial.grant} becomes readable for one rerun of the whole command and what it starts`,
      ...rules.map((rule) => `the deny-read rule ${rule} is lifted as a whole for that rerun: everything under it becomes readable`),
    ];
  }
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
