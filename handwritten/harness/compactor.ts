// Compaction transactions (SPEC-compaction): an agent's older conversation replaced by a summary.
// A compaction is asked for (`:compact`, the `compact` and `agent_compact` tools), owed (a failed
// one's successor) or automatic (a context past the threshold); its cut is chosen, its start
// committed, its summary requested in a tool-less round 0, then the summary recorded and committed.
// A handoff's deferral window holds it (SPEC-handoff).
import type { Committed, Event } from "../bus/index.js";
import type { ContextAlert, EventName, EventPayloads, HarnessConfig } from "../../generated/index.js";
import { mintId } from "./ids.js";
import { fitText } from "../protocol/text.js";
import type { ProviderCall } from "../protocol/provider-request.js";
import { SUMMARY_SYSTEM_PROMPT, chooseCut, estimateAfterSummary, estimateTokens, summaryRequestText } from "./compaction.js";
import type { ActiveCompaction, AgentLoop, AgentLoops, CompactionOutcome, CompactionRequest } from "./agent-loop-state.js";
import type { RoundOwner, RoundRouter } from "./round-router.js";
import type { ModelRegistry } from "./model-registry.js";
import type { UsageMeter } from "./usage.js";
import type { Alerts } from "./alerts.js";
import { closeDanglingCalls } from "./conversation.js";
import type { TurnCompaction } from "./turn-loop.js";

/** Compaction and alert settings (SPEC-compaction), with their defaults applied. */
export interface CompactionSettings {
  /** Fraction of the context window at which to compact; 0: never automatically. */
  readonly autoThreshold: number;
  readonly keepRecentTokens: number;
  /** The window of models whose provider declares none. */
  readonly contextWindow?: number;
  readonly alerts: readonly ContextAlert[];
}

export const DEFAULT_COMPACTION: CompactionSettings = { autoThreshold: 0.8, keepRecentTokens: 20_000, alerts: [] };

/** The settings `harness.yaml` gives (`compaction`, `context_alerts`), defaults filled in. */
export function compactionSettings(config: Pick<HarnessConfig, "compaction" | "context_alerts">): CompactionSettings {
  const c = config.compaction ?? {};
  return {
    autoThreshold: c.auto_threshold ?? DEFAULT_COMPACTION.autoThreshold,
    keepRecentTokens: c.keep_recent_tokens ?? DEFAULT_COMPACTION.keepRecentTokens,
    ...(c.context_window !== undefined ? { contextWindow: c.context_window } : {}),
    alerts: [...(config.context_alerts ?? [])].sort((a, b) => a.threshold - b.threshold),
  };
}

export interface CompactorPort {
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<boolean>;
  directToInstance<N extends EventName>(instance: string, name: N, data: EventPayloads[N]): boolean;
  sendProviderCall(instance: string, generation: number, call: ProviderCall): Promise<string | undefined>;
  generationOf(instance: string): number | undefined;
  hasAgent(agentId: string): boolean;
  /** Whether an attached UI of this generation is still connected. */
  isLiveUi(generation: number | undefined): boolean;
  /** Whether an extension instance's connection of that generation is still the live one. */
  isLiveExtension(instance: string, generation: number): boolean;
  agentRecordCount(agentId: string): number;
  readonly compaction: CompactionSettings;
}

/** Compaction's collaborators. */
export interface CompactorDeps {
  readonly loops: AgentLoops;
  readonly router: RoundRouter;
  readonly models: Pick<ModelRegistry, "current" | "contextWindow">;
  readonly usage: Pick<UsageMeter, "account" | "costOf" | "compacted" | "weigh" | "publishStats">;
  readonly alerts: Pick<Alerts, "rearm">;
  /** The agent takes up its next work: a compaction asked for, then its next prompt (turn-loop.ts). */
  dispatch(agentId: string): void;
}

export class Compactor implements RoundOwner<ActiveCompaction>, TurnCompaction {
  /**
   * Agents whose handoff deferral window is open (SPEC-handoff), by the extension connection that
   * reported it: their compaction waits, since the dossier is being written from the conversation.
   */
  private readonly handoffWindows = new Map<string, { instance: string; generation: number }>();

  private readonly loops: AgentLoops;
  private readonly router: RoundRouter;
  private readonly models: CompactorDeps["models"];
  private readonly usage: CompactorDeps["usage"];
  private readonly alerts: CompactorDeps["alerts"];
  private readonly dispatch: (agentId: string) => void;

  constructor(
    private readonly port: CompactorPort,
    deps: CompactorDeps,
  ) {
    this.loops = deps.loops;
    this.router = deps.router;
    this.models = deps.models;
    this.usage = deps.usage;
    this.alerts = deps.alerts;
    this.dispatch = deps.dispatch;
  }

  /** The compaction debt an agent's journal records, as its records commit. */
  fold(l: AgentLoop, e: Event): void {
    if (e.name === "agent.compaction_committed") l.compaction.owed = undefined;
    if (e.name === "agent.compaction_failed") l.compaction.owed ??= { id: e.data.compaction_id, watermark: e.data.watermark };
  }

  /** A resumed agent's owed compaction, from its journal's fold. */
  restore(l: AgentLoop, owed: { id: string; watermark: number } | undefined): void {
    l.compaction.owed = owed ? { ...owed } : undefined;
  }

  /** A compaction the crash cut: a durable summary commits; one still awaited was maybe sent and is never resent, so it fails closed, its cut owed. */
  async settleRestored(agentId: string, c: { id: string; cut_seq: number; summarized_seq?: number }): Promise<void> {
    if (c.summarized_seq !== undefined) {
      await this.port.publish("agent.compaction_committed", { agent_id: agentId, compaction_id: c.id, cut_seq: c.cut_seq });
      return;
    }
    await this.port.publish("agent.compaction_failed", {
      agent_id: agentId,
      compaction_id: c.id,
      watermark: c.cut_seq,
      reason: "interrupted: the session stopped before the summary arrived; it is not requested again",
    });
  }

  /**
   * A handoff's phase for an agent (SPEC-handoff, "Deferral window"): from a live extension,
   * `writing` or `cutover` holds the agent's compaction; any other phase from the same
   * instance ends the hold, as does the end of the reporting connection.
   */
  onHandoffState(c: Committed<"handoff.state_reported">): void {
    const { instance, generation } = c.publisher;
    if (c.publisher.class !== "extension" || instance === undefined || generation === undefined || !this.port.isLiveExtension(instance, generation)) return;
    const agentId = c.data.agent_id;
    if (c.data.phase === "writing" || c.data.phase === "cutover") {
      if (this.port.hasAgent(agentId)) this.handoffWindows.set(agentId, { instance, generation });
    } else if (this.handoffWindows.get(agentId)?.instance === instance) {
      this.handoffWindows.delete(agentId);
    }
  }

  /** Why the agent's compaction must wait now (its handoff window is open), or undefined. */
  private held(agentId: string): string | undefined {
    const w = this.handoffWindows.get(agentId);
    if (w === undefined) return undefined;
    if (!this.port.isLiveExtension(w.instance, w.generation)) {
      this.handoffWindows.delete(agentId);
      return undefined;
    }
    return "a handoff of this agent is under way and its dossier is written from this conversation; compaction waits until the handoff ends";
  }

  /** `ui.compact_request` from the exact live attached UI: compacts the agent now, or after its turn. */
  onCompactRequest(c: Committed<"ui.compact_request">): void {
    const agentId = c.data.agent_id;
    if (c.publisher.class !== "ui_attached" || !this.port.isLiveUi(c.publisher.generation) || !this.port.hasAgent(agentId)) return;
    const l = this.loops.of(agentId);
    l.compaction.requests.push({ trigger: "user", ...(c.data.instructions !== undefined ? { instructions: c.data.instructions } : {}) });
    this.dispatch(agentId);
  }

  askFor(agentId: string, target: string, instructions: string | undefined, done: (o: CompactionOutcome) => void): string | undefined {
    if (target === agentId) return "agent_compact compacts another agent; use compact for your own conversation";
    if (!this.port.hasAgent(target)) return `unknown agent ${JSON.stringify(target.slice(0, 128))}`;
    const held = this.held(target);
    if (held !== undefined) return `agent ${target}: ${held}`;
    const tl = this.loops.of(target);
    // A busy target would make two agents wait on each other's turns: it is refused instead.
    if (tl.prompts.turn || tl.compaction.active || tl.prompts.queue.length > 0) return `agent ${target} is busy; compact it once it is idle`;
    tl.compaction.requests.push({ trigger: "agent", requestedBy: agentId, ...(instructions !== undefined ? { instructions } : {}), done });
    this.dispatch(target);
    return undefined;
  }

  takeRequest(l: AgentLoop): CompactionRequest | undefined {
    return l.compaction.requests.shift();
  }

  async runRequest(agentId: string, l: AgentLoop, asked: CompactionRequest): Promise<void> {
    const outcome = await this.compact(agentId, l, asked, new Set());
    asked.done?.(outcome);
    if (!outcome.recorded) void this.port.publish("harness.notice", { level: "warning", text: fitText(`agent ${agentId}: nothing was compacted: ${outcome.note}`), mandatory: false });
  }

  refuseRequests(l: AgentLoop, why: string): void {
    for (const r of l.compaction.requests.splice(0)) r.done?.({ ok: false, note: why, recorded: false });
  }

  /**
   * Before a provider round: an owed compaction runs as a successor, and a context use past the
   * threshold (weighed once per response) compacts automatically. Returns why the round must not
   * start when the agent still owes a compaction, else undefined.
   */
  async beforeRound(agentId: string, l: AgentLoop): Promise<string | undefined> {
    const s = l.compaction;
    const owing = (o: CompactionOutcome) => (s.owed === undefined ? undefined : `the agent owes a compaction (${o.note.replace(/^compaction failed: /, "")})`);
    const open = l.prompts.turn?.openCalls ?? new Set<string>();
    if (s.owed) return owing(await this.compact(agentId, l, { trigger: "successor" }, open));
    const { autoThreshold } = this.port.compaction;
    const window = this.models.contextWindow(l.prompts.turn?.model ?? this.models.current(l.model)?.model);
    if (!l.usage.contextFresh || autoThreshold <= 0 || window === undefined) return undefined;
    // During a handoff window the use is weighed again at the first round after it.
    if (this.held(agentId) !== undefined) return undefined;
    if (this.usage.weigh(l) < autoThreshold * window) return undefined;
    return owing(await this.compact(agentId, l, { trigger: "auto" }, open));
  }

  /**
   * One compaction transaction: the cut is chosen, the owner commits, the summary request leaves;
   * resolves once the summary committed or the transaction failed. A compaction with nothing to
   * summarize, no provider, or whose start cannot be recorded leaves no record.
   */
  async compact(agentId: string, l: AgentLoop, req: CompactionRequest, open: ReadonlySet<string>): Promise<CompactionOutcome> {
    const refused = (note: string): CompactionOutcome => ({ ok: false, note, recorded: false });
    const s = l.compaction;
    if (s.active) return refused("a compaction of this agent is already under way");
    // A successor still runs: the debt of a failed compaction comes before any round.
    const held = req.trigger === "successor" ? undefined : this.held(agentId);
    if (held !== undefined) return refused(held);
    const tr = l.conversation.transcript;
    if (!tr) return refused("the agent's transcript is not loaded");
    const b = chooseCut(tr, open, this.port.compaction.keepRecentTokens);
    if (b === undefined) return refused("there is nothing to compact yet");
    const cutSeq = b < tr.messages.length ? (tr.seqs[b] as number) : this.port.agentRecordCount(agentId);
    const t = l.prompts.turn;
    const target = t ? { model: t.model, instance: t.instance } : this.models.current(l.model);
    const generation = target ? this.port.generationOf(target.instance) : undefined;
    if (!target || generation === undefined) return refused(l.model ? `no running provider serves model ${l.model}` : "no model is available");
    const id = mintId("c");
    const prefix = closeDanglingCalls(tr.messages.slice(0, b));
    let settle!: (o: CompactionOutcome) => void;
    const done = new Promise<CompactionOutcome>((resolve) => (settle = resolve));
    const k: ActiveCompaction = { promptId: id, round: 0, cutSeq, model: target.model, instance: target.instance, generation, ended: false, settle };
    s.active = k;
    this.router.start(k, this, agentId);
    const owed = s.owed;
    const started = await this.port.publish("agent.compaction_started", {
      agent_id: agentId,
      compaction_id: id,
      cut_seq: cutSeq,
      trigger: req.trigger,
      model: target.model,
      ...(req.instructions !== undefined ? { instructions: req.instructions } : {}),
      ...(owed ? { successor_of: owed.id } : {}),
      ...(req.requestedBy !== undefined ? { requested_by: req.requestedBy } : {}),
    });
    if (!started) {
      this.end(l, k);
      return refused("the start of the compaction could not be recorded; nothing was sent");
    }
    const call: ProviderCall = {
      agent_id: agentId,
      prompt_id: id,
      round: 0,
      model: target.model,
      system: SUMMARY_SYSTEM_PROMPT,
      messages: [...prefix, { role: "user", text: summaryRequestText(req.instructions) }],
      tools: [],
    };
    const problem = await this.port.sendProviderCall(target.instance, generation, call);
    if (problem !== undefined && !k.ended) {
      this.port.directToInstance(target.instance, "provider.cancel_request", { prompt_id: id, round: 0 });
      await this.fail(agentId, l, k, `the summary request could not be sent: ${problem}`);
    }
    const outcome = await done;
    return outcome.ok ? { ...outcome, note: `compacted: ${prefix.length} earlier messages were replaced by a summary` } : outcome;
  }

  /** The compaction a report answers, with its agent, unless a terminal report was taken already. */
  private live(k: ActiveCompaction): { agentId: string; l: AgentLoop } | undefined {
    const agentId = this.router.agentOf(k.promptId);
    const l = agentId === undefined ? undefined : this.loops.find(agentId);
    return !k.ended && agentId !== undefined && l !== undefined ? { agentId, l } : undefined;
  }

  /** The summary arrived: recorded, then committed; the next request is the summary plus the suffix. */
  async finished(k: ActiveCompaction, c: Committed<"provider.response_finished_reported">): Promise<void> {
    const o = this.live(k);
    if (!o) return;
    const { agentId, l } = o;
    const { text, usage } = c.data;
    k.ended = true;
    if (text.trim() === "") return this.fail(agentId, l, k, "the model returned an empty summary");
    this.usage.account(agentId, l, k.model, usage, "summary");
    const cost = this.usage.costOf(k.model, usage);
    const recorded = await this.port.publish("agent.compaction_summarized", { agent_id: agentId, compaction_id: k.promptId, summary: text, ...(usage ? { usage } : {}), ...(cost ? { cost } : {}) });
    if (!recorded) return this.fail(agentId, l, k, "the summary could not be recorded");
    // Once the summary is durable the commit is owed: a crash from here on commits on resume.
    const tr = l.conversation.transcript;
    const context = tr ? { context_tokens: estimateAfterSummary(tr, text, k.cutSeq) } : {};
    const committed = await this.port.publish("agent.compaction_committed", { agent_id: agentId, compaction_id: k.promptId, cut_seq: k.cutSeq, ...context });
    if (!committed) return this.fail(agentId, l, k, "the commit could not be recorded");
    l.compaction.active = undefined;
    this.router.close(k);
    // The context is now the summary and the suffix: alerts above it re-arm, stale queued ones go.
    this.usage.compacted(l, estimateTokens(l.conversation.transcript?.messages ?? []));
    this.alerts.rearm(l, k.model);
    this.usage.publishStats(agentId, l, k.model);
    k.settle({ ok: true, note: "compacted", recorded: true });
  }

  failed(k: ActiveCompaction, c: Committed<"provider.response_failed_reported">): Promise<void> | void {
    const o = this.live(k);
    if (o) return this.fail(o.agentId, o.l, k, `the summary request failed (${c.data.error_class}): ${c.data.diagnostic}`);
  }

  /** The agent's compaction, if its summary round went to this provider connection (which ended). */
  carriedBy(l: AgentLoop, instance: string, generation: number): ActiveCompaction | undefined {
    const k = l.compaction.active;
    return k && !k.ended && k.instance === instance && k.generation === generation ? k : undefined;
  }

  async fail(agentId: string, l: AgentLoop, k: ActiveCompaction, reason: string): Promise<void> {
    k.ended = true;
    this.end(l, k);
    await this.port.publish("agent.compaction_failed", { agent_id: agentId, compaction_id: k.promptId, watermark: k.cutSeq, reason: fitText(reason) });
    k.settle({ ok: false, note: fitText(`compaction failed: ${reason}`), recorded: true });
  }

  /** The compaction is no longer the agent's (if it still was) and its round is closed. */
  private end(l: AgentLoop, k: ActiveCompaction): void {
    if (l.compaction.active !== k) return;
    l.compaction.active = undefined;
    this.router.close(k);
  }
}
