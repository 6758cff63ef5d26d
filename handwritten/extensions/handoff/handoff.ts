// One session's handoff (SPEC-handoff) as it runs: requested of the agent, the template retrieved
// (the dossier file reserved, a Finish id minted), the user's prompts deferred while the model writes
// the dossier with its usual tools, Finish, the cutover to the replacement session once the agent is
// idle, or its end without one. The recovery file holds each step, so a crash loses no deferred prompt.
import { closeSync, existsSync, mkdirSync, openSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { RequestError, ToolFailure, type Extension } from "../../sdk/index.js";
import type { HandoffSettings } from "../../../generated/index.js";
import type { Roots } from "../../config/index.js";
import { ID_RANDOM_BYTES, formatId } from "../../startup/launch-facts.js";
import { randomHex } from "../../startup/random.js";
import { fillTemplate, resolveTemplate } from "./templates.js";
import { firstTurn, formatRecovery, readRecovery, writeAtomic, type RecoveryPhase, type RecoveryState } from "./recovery.js";
import { DeferredRelease } from "./release.js";

/** At most this many prompts are deferred in one window; later ones are refused with a notice. */
export const DEFERRED_MAX = 256;

export interface Settings {
  /** `request`: prompts are deferred from the start; `writing`: from the template's retrieval. Fixed for a handoff once started. */
  deferFrom: "request" | "writing";
  /** The new session is told to delete the dossier file once read (default true). */
  deleteAfterReading: boolean;
  autoPercent: number;
  criticalPercent: number;
  reminderMs: number;
}

/** The settings spec/ declares (HandoffSettings, checked before this), each with its default. */
export function settingsOf(s: HandoffSettings): Settings {
  return {
    deferFrom: s.defer_prompts_from === "request" ? "request" : "writing",
    deleteAfterReading: s.delete_handoff_after_reading ?? true,
    autoPercent: s.auto_percent ?? 0,
    criticalPercent: s.critical_percent ?? 90,
    reminderMs: s.reminder_ms ?? 120_000,
  };
}

type Phase = Exclude<RecoveryPhase, "releasing" | "handed_off">;

/**
 * Fault injection for the crash tests (GATE-handoff, handoff.crash.*): with TAU_HANDOFF_HOLD_AT set
 * to a step's name, the extension announces the step with a notice and stops there for good, so a
 * test can SIGKILL the daemon at exactly that point. Unset (always, outside those tests): no effect.
 */
const HOLD_AT = process.env.TAU_HANDOFF_HOLD_AT;
export type PromptKind = "call" | "reminder" | "emergency";

export interface Active {
  readonly agentId: string;
  readonly manual: boolean;
  /** The deferral's start, fixed when the handoff started (Settings.deferFrom). */
  readonly deferFrom: "request" | "writing";
  phase: Phase;
  deferred: string[];
  /** Minted with the template's first successful retrieval, shared by repeated retrievals. */
  newSession?: string;
  /** The current Finish id (minted with the retrieval); cleared when the handoff ends. */
  finishId?: string;
  /** What a retrieval answers: the same for every retrieval of this handoff. */
  retrieval?: string;
  /** The dossier file this handoff reserved (created exclusively), to remove if it ends without a cutover. */
  reserved?: string;
  /** Finish accepted: the cutover begins once the agent's turn that called it ended. */
  finished: boolean;
  callPromptId?: string;
  reminded: boolean;
  /** The emergency steering was sent (at most once per handoff). */
  emergency: boolean;
  /** The agent's prompts submitted since the handoff started: only their turns count for the emergency. */
  readonly promptsSince: Set<string>;
  reminder?: NodeJS.Timeout;
}

/** What a handoff runs in: the extension, its settings and where this session's files are. */
export interface HandoffContext {
  readonly ext: Extension;
  readonly settings: Settings;
  readonly roots: Roots;
  readonly project: string;
  readonly sessionId: string;
  readonly recoveryPath: string;
}

/** Whether the handoff holds the user's prompts now: from the template's retrieval (or from its start with `request`) to the end of its cutover. */
export function deferring(a: Active): boolean {
  return a.phase !== "requested" || a.deferFrom === "request";
}

export class Handoff {
  /** The handoff under way (one at a time per session). */
  active: Active | undefined;
  private intercepting = false;
  /** Kinds of the prompts this extension asked for, in order; each `agent.prompt_submitted` of ours takes the first. */
  readonly expected: Array<{ kind: PromptKind; agentId: string }> = [];
  /** Successors recorded in this session's journal (`session.handed_off`). */
  readonly handedOff = new Set<string>();
  /** Context usage per agent (`agent.stats_updated`), and automatic attempts since the last compaction. */
  readonly usage = new Map<string, { tokens: number; window?: number }>();
  readonly autoAttempts = new Map<string, number>();
  /** Agents whose turn is under way (`agent.prompt_started` to `agent.outer_turn_finished`). */
  readonly busyAgents = new Set<string>();
  /** What waits for an agent's turn to end (a cancelled handoff's reserved file, once its writes settled). */
  private readonly afterTurn: Array<{ agentId: string; run: () => void }> = [];
  readonly releases: DeferredRelease;

  constructor(readonly c: HandoffContext) {
    this.releases = new DeferredRelease({
      ext: c.ext,
      sessionId: c.sessionId,
      recoveryPath: c.recoveryPath,
      asked: (agentId) => this.expected.filter((x) => x.agentId === agentId).length,
      hold: (step) => this.hold(step),
      warn: (text) => this.warn(text),
    });
  }

  tool(name: string): string {
    return `${this.c.ext.configuration.tool_prefix}${name}`;
  }

  warn(text: string): void {
    this.c.ext.notice("warning", text.slice(0, 1024));
  }

  async hold(step: string): Promise<void> {
    if (HOLD_AT !== step) return;
    this.c.ext.notice("info", `handoff held at ${step} (TAU_HANDOFF_HOLD_AT)`);
    await new Promise<never>(() => {});
  }

  private report(): void {
    const a = this.active;
    if (!a) return;
    void this.c.ext.emit("handoff.state_reported", { agent_id: a.agentId, phase: a.phase, deferred: a.deferred.length, text: this.statusLine(a.agentId).slice(0, 1024) });
  }

  private reportIdle(agentId: string): void {
    void this.c.ext.emit("handoff.state_reported", { agent_id: agentId, phase: "idle", deferred: 0, text: "no handoff" });
  }

  private save(a: Active): void {
    const state: RecoveryState = { session: this.c.sessionId, agent: a.agentId, phase: a.phase, deferred: a.deferred, ...(a.newSession ? { newSession: a.newSession } : {}) };
    writeAtomic(this.c.recoveryPath, formatRecovery(state));
  }

  setPhase(a: Active, phase: Phase): void {
    a.phase = phase;
    this.save(a);
    this.report();
  }

  private prompt(agentId: string, kind: PromptKind, text: string): void {
    this.expected.push({ kind, agentId });
    const mode = kind === "emergency" ? "steer" : "queue";
    void this.c.ext.emit("agent.internal_prompt_request", { agent_id: agentId, mode, text });
  }

  private usageText(agentId: string): string {
    const u = this.usage.get(agentId);
    if (!u) return "context usage unknown";
    if (!u.window) return `context ${u.tokens} tokens (window unknown)`;
    return `context ${u.tokens} of ${u.window} tokens (${Math.round((u.tokens / u.window) * 100)}%)`;
  }

  statusLine(agentId: string): string {
    const { settings } = this.c;
    const auto = settings.autoPercent > 0 ? `automatic at ${settings.autoPercent}% then ${settings.criticalPercent}% (attempts ${this.autoAttempts.get(agentId) ?? 0} of 2)` : "automatic start off";
    const state = this.active ? `handoff ${this.active.phase}, ${this.active.deferred.length} deferred prompt(s)` : "no handoff";
    return `${state}; ${this.usageText(agentId)}; ${auto}`;
  }

  /** Holds the user's prompts of the deferral window by intercepting them before they commit. */
  private ensureIntercepting(): void {
    if (this.intercepting) return;
    this.intercepting = true;
    this.c.ext.intercept(["ui.prompt_submit", "ui.compact_request"], -100, (e) => {
      const a = this.active;
      const agentId = typeof e.data.agent_id === "string" ? e.data.agent_id : undefined;
      if (!a || agentId !== a.agentId || !deferring(a)) return { action: "pass" };
      if (e.name === "ui.compact_request") {
        this.warn("compaction is refused while a handoff is under way; :handoff cancel ends it");
        return { action: "drop" };
      }
      const text = e.data.text;
      if (typeof text !== "string") return { action: "pass" };
      // The dossier, deferred prompts included, was assembled when the cutover began: a prompt typed
      // from then on stays with this session's agent rather than be held where nothing delivers it.
      if (a.phase === "cutover") {
        this.warn("the handoff is cutting over and its dossier is written; this prompt goes to this session's agent");
        return { action: "pass" };
      }
      if (a.deferred.length >= DEFERRED_MAX) {
        this.warn(`this handoff already holds ${DEFERRED_MAX} deferred prompts; this one was not taken`);
        return { action: "drop" };
      }
      // Captured and on disk before the drop is answered: a crash from here on loses nothing.
      a.deferred.push(text);
      try {
        this.save(a);
      } catch (err) {
        a.deferred.pop();
        this.warn(`the prompt could not be deferred (${(err as Error).message}); it was sent as usual`);
        return { action: "pass" };
      }
      this.report();
      return { action: "drop" };
    });
  }

  start(agentId: string, manual: boolean): string {
    const { roots, sessionId, recoveryPath } = this.c;
    if (this.active) throw new ToolFailure(`a handoff is already under way (${this.active.phase}); one at a time per session`);
    // An ephemeral session keeps no journal to link the replacement to.
    if (!existsSync(join(roots.state, "sessions", sessionId, "events.cbor"))) throw new ToolFailure("an ephemeral session cannot be handed off");
    if (this.releases.busy) throw new ToolFailure("the last handoff's deferred prompts are still being handed to the agent; start again once it has taken them");
    if (readRecovery(recoveryPath) !== undefined) throw new ToolFailure("a handoff of this session left a recovery file; :handoff recover shows it, then resume or abandon it");
    const a: Active = { agentId, manual, deferFrom: this.c.settings.deferFrom, phase: "requested", deferred: [], finished: false, reminded: false, emergency: false, promptsSince: new Set() };
    this.active = a;
    this.ensureIntercepting();
    this.save(a);
    this.report();
    this.sendCall(a, "call");
    return `handoff requested for agent ${agentId}: the agent is asked to write its dossier and finish once it is at a safe point`;
  }

  sendCall(a: Active, kind: PromptKind, percent = 0): void {
    const call = resolveTemplate("call.md", { project: this.c.project, config: this.c.roots.config }, (t) => this.warn(t));
    const getTool = this.tool("session_handoff_get_template");
    const finishTool = this.tool("session_handoff_finish");
    const text = fillTemplate(call.text, { get_template_tool: getTool, finish_tool: finishTool });
    const head =
      kind === "reminder"
        ? `Reminder: a handoff of this session is waiting for you to write its dossier and call \`${finishTool}\`.`
        : kind === "emergency"
          ? `EMERGENCY: the context window is ${percent}% full and a handoff is waiting. Stop your current work and any further context gathering now, and do not wait for other work. ${a.retrieval === undefined ? `Call \`${getTool}\` with \`{}\` at once, then write` : `Finish writing`} the dossier into its reserved file and call \`${finishTool}\` with its Finish id.`
          : undefined;
    this.prompt(a.agentId, kind, head !== undefined ? `${head}\n\n${text}` : text);
  }

  /**
   * Emergency steering (SPEC-handoff "Emergency steering"): a turn of the agent completed with its
   * context at `critical_percent` or more while the handoff is requested and not finished: one
   * steering prompt, never a second, and no reminder after it.
   */
  emergencyAfterTurn(a: Active, promptId: string): void {
    const u = this.usage.get(a.agentId);
    if (a.emergency || a.finished || a.phase === "cutover" || !a.promptsSince.has(promptId) || !u?.window) return;
    const percent = Math.floor((u.tokens / u.window) * 100);
    if (percent < this.c.settings.criticalPercent) return;
    a.emergency = true;
    a.reminded = true;
    if (a.reminder) clearTimeout(a.reminder);
    this.sendCall(a, "emergency", percent);
  }

  /**
   * `session_handoff_get_template`: the template, the reserved dossier file, the transcript and the
   * Finish id. The first success reserves the file exclusively (an existing one is refused, never
   * overwritten) and starts the Writing deferral; a repeated call answers the same.
   */
  retrieve(a: Active): string {
    if (a.retrieval !== undefined) return a.retrieval;
    const { roots, project, sessionId } = this.c;
    const path = this.dossierPath();
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    try {
      closeSync(openSync(path, "wx", 0o600));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EEXIST") throw new ToolFailure(`the dossier file ${path} exists already and is never overwritten; nothing was reserved. Ask the user to move or delete it, then call again.`);
      throw new ToolFailure(`the dossier file ${path} could not be reserved (${(err as Error).message})`);
    }
    a.reserved = path;
    a.newSession = formatId("s", Date.now(), randomHex(ID_RANDOM_BYTES));
    a.finishId = randomHex(16);
    const t = resolveTemplate("dossier.md", { project, config: roots.config }, (w) => this.warn(w));
    const finishTool = this.tool("session_handoff_finish");
    a.retrieval = [
      fillTemplate(t.text, { source_session: sessionId, finish_tool: finishTool }),
      "",
      `Reserved dossier file (empty now; write the whole dossier into exactly this file with your usual file tools): ${path}`,
      `Transcript of this session's agent (its journal, for exact facts): ${join(roots.state, "agents", a.agentId, "events.cbor")}`,
      `Finish id: ${a.finishId}`,
      `When the file is complete, call \`${finishTool}\` with {"id": "${a.finishId}"} and end your turn.`,
    ].join("\n");
    if (a.reminder) clearTimeout(a.reminder);
    this.setPhase(a, "writing");
    return a.retrieval;
  }

  /**
   * `session_handoff_finish({id})`: the current id, once, with the dossier file a non-empty regular
   * file (its metadata only: it is never read). The cutover begins once the agent's turn ended.
   */
  finish(a: Active, id: unknown): string {
    if (a.finishId === undefined) throw new ToolFailure(`no template was retrieved for this handoff: call ${this.tool("session_handoff_get_template")} first`);
    if (id !== a.finishId) throw new ToolFailure("that is not this handoff's Finish id (stale or unknown); nothing changed");
    if (a.finished) throw new ToolFailure("this handoff's Finish was already accepted; nothing changed");
    const path = a.reserved as string;
    let problem: string | undefined;
    try {
      const st = statSync(path);
      problem = !st.isFile() ? "is not a regular file" : st.size === 0 ? "is empty" : undefined;
    } catch {
      problem = "does not exist";
    }
    if (problem !== undefined) throw new ToolFailure(`the dossier file ${path} ${problem}: write the dossier into it, then call again with the same id`);
    a.finished = true;
    return `Finish accepted. End your turn now: the work continues in session ${a.newSession} once you are idle.`;
  }

  /** The agent's turn ended: a finished handoff cuts over now (its deferred prompts go with it). */
  idle(a: Active): void {
    if (!a.finished || a.phase !== "writing") return;
    void this.cutover(a).catch((err: unknown) => this.warn(`the handoff's cutover: ${(err as Error).message}`));
  }

  /** Ends the handoff without a cutover: the deferred prompts go to the agent, in order, once; its reserved file goes. */
  end(a: Active, why: string): void {
    if (a.reminder) clearTimeout(a.reminder);
    this.active = undefined;
    a.finishId = undefined;
    if (a.reserved !== undefined) this.removeReservation(a.agentId, a.reserved);
    void this.releases.release(a.agentId, a.deferred).catch((err: unknown) => this.warn(`the handoff's deferred prompts: ${(err as Error).message}`));
    this.reportIdle(a.agentId);
    if (why !== "") this.c.ext.notice("info", `handoff ended: ${why}`.slice(0, 1024));
  }

  /** Removes exactly the reserved file, once the agent's turn under way (whose writes it may hold) ended. */
  private removeReservation(agentId: string, path: string): void {
    const remove = () => {
      try {
        rmSync(path, { force: true });
      } catch (err) {
        this.warn(`the handoff's dossier file ${path} could not be deleted: ${(err as Error).message}`);
      }
    };
    if (this.busyAgents.has(agentId)) this.afterTurn.push({ agentId, run: remove });
    else remove();
  }

  /** The agent's turn ended: what waited for its writes to settle runs now. */
  turnEnded(agentId: string): void {
    this.busyAgents.delete(agentId);
    const due = this.afterTurn.filter((x) => x.agentId === agentId);
    this.afterTurn.splice(0, this.afterTurn.length, ...this.afterTurn.filter((x) => x.agentId !== agentId));
    for (const x of due) x.run();
  }

  /** The project's dossier file of this session: `.tau/handoff_<session-id>.md` (DECISION-handoff-files). */
  dossierPath(): string {
    return join(this.c.project, ".tau", `handoff_${this.c.sessionId}.md`);
  }

  /** The replacement's first turn for `target`: the dossier file's path, its instructions, the deferred prompts. */
  firstTurnFor(target: string, deferred: readonly string[]): string {
    return firstTurn({ source: this.c.sessionId, target, path: this.dossierPath(), deleteAfterReading: this.c.settings.deleteAfterReading, deferred });
  }

  private async cutover(a: Active): Promise<void> {
    const target = a.newSession as string;
    this.setPhase(a, "cutover");
    const turn = this.firstTurnFor(target, a.deferred);
    await this.hold("dossier");
    const result = await this.requestCutover(a.agentId, target, turn);
    if (!result.ok) return this.end(a, `the replacement session was not created (${result.error ?? "refused"})`);
    this.active = undefined;
    await this.hold("cutover");
    // The recovery file stays until the replacement's first turn completed: marked recorded here,
    // the replacement's handoff extension deletes it then (receiving.ts); :handoff recover can too.
    try {
      writeAtomic(this.c.recoveryPath, formatRecovery({ session: this.c.sessionId, agent: a.agentId, phase: "handed_off", deferred: a.deferred, newSession: target }));
    } catch (err) {
      this.warn(`the handoff's recovery file ${this.c.recoveryPath} could not be marked recorded: ${(err as Error).message}`);
    }
    this.reportIdle(a.agentId);
    this.c.ext.notice("info", `handoff complete: the work continues in session ${target} (dossier: ${this.dossierPath()})`);
  }

  /**
   * Asks the harness for the replacement session (SPEC-handoff); a refusal carries the harness's
   * reason. When the harness goes away first there is no answer: this process is leaving, and the
   * recovery file must stay as it is for `:handoff recover`, so nothing settles.
   */
  requestCutover(agentId: string, target: string, dossier: string): Promise<{ ok: boolean; error?: string }> {
    return this.c.ext.request("session.handoff_request", { agent_id: agentId, session_id: target, dossier }).then(
      () => ({ ok: true }),
      (err: unknown) => (err instanceof RequestError && err.failure === "refused" ? { ok: false, error: err.message } : new Promise<never>(() => {})),
    );
  }
}
