// The sandbox of the `shell` tool (SPEC-sandbox), as the shell extension sees it: one object that
// composes the parts, each with one job —
//   lifecycle.ts     the runtime, its state and the session's policy (runtime-leftovers.ts lists
//                    the runtime's processes and sockets with the reaper)
//   runner.ts        one command inside the runtime (wraps, mount points, created files; the record
//                    of running commands is running-record.ts's; a wrap kept between starts, kept-wrap.ts)
//   shared-network.ts  the network namespace the session's commands share
//   orchestrator.ts  a `shell` call: attempt → review / ask → replay
//   connections.ts   a connection to a host no rule decides: one review / ask per host, shared
//   review.ts        the automatic reviewer (selection, one review asked of the harness)
//   approvals.ts     the manual prompts, their bound per call and their revocation
//   commands.ts      the `:sandbox` commands; doctor.ts: what `show` and `doctor` say
//   file-access.ts   the file tools under the same policy (file-policy.ts judges a path)
//   diagnostics.ts   the safe diagnostics
// The policy files (policy.ts, denials.ts, project-scan.ts, wrap-cache.ts) are pure.
import type { SandboxDecision, SandboxMode, SandboxReviewResult, SandboxState } from "../../../../generated/index.js";
import type { FileAccess, ToolResult } from "../tools/index.js";
import { Approvals } from "./approvals.js";
import { SandboxCommands, type CommandAnswer } from "./commands.js";
import { ConnectionAsks } from "./connections.js";
import { Diagnostics, type StoredDiagnostic } from "./diagnostics.js";
import { doctorText, showText, type ReportParts } from "./doctor.js";
import { SandboxLifecycle } from "./lifecycle.js";
import { CallNotes } from "./notes.js";
import { ShellOrchestrator } from "./orchestrator.js";
import { FileToolAccess, type FileCall } from "./file-access.js";
import type { EffectivePolicy } from "./policy.js";
import { Reviewer } from "./review.js";
import { SandboxedRunner } from "./runner.js";
import type { SandboxOptions, ShellCall } from "./types.js";

export class Sandbox {
  private readonly life: SandboxLifecycle;
  private readonly runner: SandboxedRunner;
  private readonly diagnostics: Diagnostics;
  private readonly reviewer: Reviewer;
  private readonly approvals: Approvals;
  private readonly connections: ConnectionAsks;
  private readonly orchestrator: ShellOrchestrator;
  private readonly commands: SandboxCommands;
  private readonly files: FileToolAccess;

  constructor(private readonly o: SandboxOptions) {
    const notes = new CallNotes();
    this.life = new SandboxLifecycle(o, {
      askNetwork: (host, port) => this.connections.ask(host, port),
      configPushed: () => this.runner.dropWrap(),
      runtimeUp: () => this.runner.buildAhead(),
      adoptKept: () => this.runner.adoptKept(),
    });
    this.runner = new SandboxedRunner(this.life, { projectRoot: o.projectRoot, stateRoot: o.roots.state }, notes);
    this.diagnostics = new Diagnostics(o.host);
    this.reviewer = new Reviewer(o.host, this.life, this.diagnostics, notes);
    this.approvals = new Approvals(o.host, this.diagnostics, this.reviewer);
    this.connections = new ConnectionAsks({ life: this.life, runner: this.runner, reviewer: this.reviewer, approvals: this.approvals, diagnostics: this.diagnostics, notes });
    const parts = { life: this.life, runner: this.runner, reviewer: this.reviewer, approvals: this.approvals, connections: this.connections, diagnostics: this.diagnostics, notes };
    this.orchestrator = new ShellOrchestrator(parts);
    this.commands = new SandboxCommands(o, parts);
    this.files = new FileToolAccess(parts, o.projectRoot);
  }

  get state(): SandboxState {
    return this.life.state;
  }

  get reason(): string | undefined {
    return this.life.reason;
  }

  get fix(): string | undefined {
    return this.life.fix;
  }

  get mode(): SandboxMode {
    return this.life.mode;
  }

  /** Sets the sandbox up (once): the policy, then the runtime; `shell` calls wait for it. */
  start(): Promise<void> {
    return this.life.start();
  }

  /** Resolves once the policy is loaded (the file tools need no more; the runtime may still be setting up). */
  async policyReady(): Promise<void> {
    await this.life.loadPolicy();
  }

  policy(): EffectivePolicy {
    return this.life.policy();
  }

  /** Runs a model's `shell` call under the sandbox's current state; reviews made for it are noted in its result. */
  runShellTool(args: unknown, call: ShellCall): Promise<ToolResult> {
    return this.orchestrator.runShellTool(args, call);
  }

  /**
   * The filesystem policy for one call of a file tool (`read`, `write`, `edit`, `grep`, `find`,
   * `ls`): the sandbox's own, so a grant counts for commands and tools alike; a write outside the
   * writable set is asked like a command's; the protected paths stay refused even while the user
   * has the sandbox off. Call once the policy is loaded (`policyReady`).
   */
  fileAccess(call: FileCall): FileAccess {
    return this.files.access(call);
  }

  /** The selected classifier (`provider/model`), or undefined for manual approvals only. */
  classifier(): string | undefined {
    return this.reviewer.classifier();
  }

  /** The effective reviewer selection and where it came from. */
  selection(): { value: string | false | undefined; from: string } {
    return this.reviewer.selection();
  }

  /** `sandbox.classifier_selected` read back on resume: the session's choice again. */
  restoreSelection(d: { choice: "model" | "manual" | "default"; classifier?: string }): void {
    this.reviewer.restoreSelection(d);
  }

  /** `sandbox.review_result` from the harness: settles its review unless it was revoked. */
  reviewAnswered(result: SandboxReviewResult): void {
    this.reviewer.answered(result);
  }

  /** `sandbox.approval_answer` from a UI: the first answer wins; one not offered is ignored. */
  answer(id: string, decision: SandboxDecision): void {
    this.approvals.answer(id, decision);
  }

  /** A new user prompt to `agentId` withdraws the decisions pending for it. */
  userPrompted(agentId: string): void {
    this.approvals.userPrompted(agentId);
  }

  /** Publishes the prompts still waiting again (a UI attached). */
  republishPending(): number {
    return this.approvals.republish();
  }

  /** A diagnostic read back from the session's journal on resume: shown, never acted on. */
  restoreDiagnostic(d: StoredDiagnostic): void {
    this.diagnostics.restore(d);
  }

  /** Runs `:sandbox ARGS`; the text answers the UI. */
  command(args: readonly string[]): Promise<CommandAnswer> {
    return this.commands.run(args);
  }

  show(): string {
    return showText(this.o, this.parts());
  }

  doctor(): string {
    return doctorText(this.parts());
  }

  private parts(): ReportParts {
    return { life: this.life, reviewer: this.reviewer, runner: this.runner, connections: this.connections, diagnostics: this.diagnostics };
  }

  /** Ends the runtime (its proxies) when the extension leaves. */
  async stop(): Promise<void> {
    this.approvals.revokeAll();
    this.runner.dropWrap();
    await this.life.stop();
  }
}
