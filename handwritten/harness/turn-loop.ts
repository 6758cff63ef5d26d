// The turn loop (SPEC-agent-lifecycle, SPEC-provider-execution): prompts are queued per agent,
// dispatched one at a time, sent to the owning provider only after a content-free
// `agent.prompt_started` commits, turned from provider reports into canonical facts, continued
// through tool rounds, and closed by `agent.outer_turn_finished`.
import type { Committed } from "../bus/index.js";
import type { AgentPromptFailed, ErrorClass, EventName, EventPayloads, ProviderEndpoint, ProviderResponseFinished, ToolCall } from "../../generated/index.js";
import { fitText } from "../protocol/text.js";
import type { ProviderCall } from "../protocol/provider-request.js";
import type { AgentLoop, AgentLoops, CompactionOutcome, CompactionRequest, Queued, Turn } from "./agent-loop-state.js";
import type { RoundOwner, RoundRouter } from "./round-router.js";
import { MODEL_LISTING_WAIT_MS, type ModelRegistry, type Refusal, type Target } from "./model-registry.js";
import type { UsageMeter } from "./usage.js";
import type { Alerts } from "./alerts.js";
import { closeDanglingCalls, type Conversations } from "./conversation.js";
import type { Transcript } from "./compaction.js";
import type { Titles } from "./titles.js";
import type { PromptSnapshot } from "./prompt-snapshot.js";

/** The first delta is published at once, then at most one sample per interval, plus a final flush. */
export const DELTA_SAMPLE_INTERVAL_MS = 1000;

export interface TurnLoopPort {
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<boolean>;
  directToInstance<N extends EventName>(instance: string, name: N, data: EventPayloads[N]): boolean;
  sendProviderCall(instance: string, generation: number, call: ProviderCall): Promise<string | undefined>;
  /** Where a provider instance's rounds go, as its configuration says (recorded in `agent.prompt_started`). */
  providerEndpoint?(instance: string): ProviderEndpoint | undefined;
  generationOf(instance: string): number | undefined;
  /** What a prompt's rounds are told and may call, captured at its first round (SPEC-tool-routing). */
  snapshot(agentId: string, onlyTools: ReadonlySet<string> | undefined): PromptSnapshot;
  /** The agent has nothing to do (no turn, compaction or prompt waiting). */
  agentIdle?(agentId: string): void;
  /** The agent takes up work (a turn, a compaction, its transcript's load). */
  agentAtWork?(agentId: string): void;
  /** The agent's unfinished initialization, which its prompts wait for (SPEC-extension-declarations). */
  initializing?(agentId: string): Promise<void> | undefined;
}

/** What the turn loop asks of compaction (compactor.ts). */
export interface TurnCompaction {
  /** The next compaction asked for (`:compact`, `agent_compact`), taken off the agent's list. */
  takeRequest(l: AgentLoop): CompactionRequest | undefined;
  /** Runs a compaction asked for and answers whoever asked. */
  runRequest(agentId: string, l: AgentLoop, asked: CompactionRequest): Promise<void>;
  /** Ends every compaction asked for with why none can run. */
  refuseRequests(l: AgentLoop, why: string): void;
  /** Before a round: an owed or automatic compaction; why the round must not start, if it must not. */
  beforeRound(agentId: string, l: AgentLoop): Promise<string | undefined>;
  compact(agentId: string, l: AgentLoop, req: CompactionRequest, open: ReadonlySet<string>): Promise<CompactionOutcome>;
  /** `agent_compact` of another agent: why it is refused, or undefined once it is asked for. */
  askFor(agentId: string, target: string, instructions: string | undefined, done: (o: CompactionOutcome) => void): string | undefined;
}

/** The turn loop's collaborators. */
export interface TurnLoopDeps {
  readonly loops: AgentLoops;
  readonly router: RoundRouter;
  readonly models: Pick<ModelRegistry, "starting" | "resolve" | "listingsSettled">;
  readonly usage: Pick<UsageMeter, "account" | "costOf">;
  readonly alerts: Pick<Alerts, "weigh" | "deliver" | "offered">;
  readonly conversations: Pick<Conversations, "ensure" | "forgetFailedLoad">;
  readonly compaction: TurnCompaction;
  /** A completed turn: the session's title may be written from its answer. */
  readonly titles: Pick<Titles, "turnCompleted">;
  /** Runs work started from a consumer and not awaited, reporting its failure. */
  background(work: Promise<unknown>): void;
}

export class TurnLoop implements RoundOwner<Turn> {
  private readonly loops: AgentLoops;
  private readonly router: RoundRouter;
  private readonly models: TurnLoopDeps["models"];
  private readonly usage: TurnLoopDeps["usage"];
  private readonly alerts: TurnLoopDeps["alerts"];
  private readonly conversations: TurnLoopDeps["conversations"];
  private readonly compaction: TurnCompaction;
  private readonly titles: TurnLoopDeps["titles"];
  private readonly background: (work: Promise<unknown>) => void;

  constructor(
    private readonly port: TurnLoopPort,
    deps: TurnLoopDeps,
  ) {
    this.loops = deps.loops;
    this.router = deps.router;
    this.models = deps.models;
    this.usage = deps.usage;
    this.alerts = deps.alerts;
    this.conversations = deps.conversations;
    this.compaction = deps.compaction;
    this.titles = deps.titles;
    this.background = deps.background;
  }

  onPromptSubmitted(c: Committed<"agent.prompt_submitted">): void {
    const s = this.loops.of(c.data.agent_id).prompts;
    if (c.data.mode === "steer" && s.turn) {
      s.steering.push(c.data.prompt_id);
      return;
    }
    s.queue.push({ promptId: c.data.prompt_id, ...(c.data.only_tools !== undefined ? { onlyTools: c.data.only_tools } : {}) });
    if (!s.turn) this.background(this.dispatch(c.data.agent_id));
  }

  /** What an agent's loop is doing (SPEC-agent-team's roster): a turn or compaction, prompts waiting, or nothing. */
  activity(agentId: string): "running" | "queued" | undefined {
    const l = this.loops.find(agentId);
    if (!l) return undefined;
    if (l.prompts.turn || l.compaction.active || l.conversation.loading) return "running";
    if (l.prompts.queue.length > 0 || l.prompts.awaitingModels || l.compaction.requests.length > 0) return "queued";
    return undefined;
  }

  /** An agent's current turn: its prompt and when it started (monotonic ms). */
  currentTurn(agentId: string): { promptId: string; startedAt: number } | undefined {
    const t = this.loops.find(agentId)?.prompts.turn;
    return t ? { promptId: t.promptId, startedAt: t.startedAt } : undefined;
  }

  /** Whether an agent's turn `promptId` still waits for the outcome of call `callId`. */
  callOpen(agentId: string, promptId: string, callId: string): boolean {
    const t = this.loops.find(agentId)?.prompts.turn;
    return t !== undefined && t.promptId === promptId && !t.cancelled && t.openCalls.has(callId);
  }

  /** Takes up the agent's next work (a compaction asked for, then its next prompt), in the background. */
  dispatchSoon(agentId: string): void {
    this.background(this.dispatch(agentId));
  }

  /**
   * A compaction inside a turn ended after the turn did (a cancel): the dispatch the turn's end
   * asked for found the compaction under way, so the queue is taken up here.
   */
  resumeQueue(agentId: string, l: AgentLoop): void {
    if (!l.prompts.turn && !l.compaction.active) this.dispatchSoon(agentId);
  }

  private async dispatch(agentId: string, waited = false): Promise<void> {
    const l = this.loops.of(agentId);
    const s = l.prompts;
    if (s.turn || l.compaction.active || s.awaitingModels) return;
    // A resumed agent's first prompt: its transcript is read from the journal first.
    if (!l.conversation.transcript) {
      this.port.agentAtWork?.(agentId);
      return this.loadThenDispatch(agentId, l);
    }
    if (s.turn || l.compaction.active) return;
    // Compactions asked for (`:compact`, `agent_compact`) run before the next prompt.
    const asked = this.compaction.takeRequest(l);
    if (asked) {
      this.port.agentAtWork?.(agentId);
      await this.compaction.runRequest(agentId, l, asked);
      return this.dispatch(agentId);
    }
    if (s.queue.length === 0) return this.port.agentIdle?.(agentId);
    // Prompts wait for the agent's initialization: extensions holding it have no deadline.
    const initializing = this.port.initializing?.(agentId);
    if (initializing !== undefined) {
      s.awaitingModels = true;
      await initializing;
      s.awaitingModels = false;
      return this.dispatch(agentId, waited);
    }
    // Prompts that arrive while the extensions start wait for them: their providers decide the model.
    const starting = this.models.starting;
    if (starting !== undefined) {
      s.awaitingModels = true;
      await starting;
      s.awaitingModels = false;
      return this.dispatch(agentId, waited);
    }
    if (this.models.resolve(l.model, waited) === "wait") {
      s.awaitingModels = true;
      await this.models.listingsSettled(MODEL_LISTING_WAIT_MS);
      s.awaitingModels = false;
      return this.dispatch(agentId, true);
    }
    const next = s.queue.shift() as Queued;
    this.port.agentAtWork?.(agentId);
    // An owed compaction, or a context past the threshold, is compacted before the turn starts.
    const owed = await this.compaction.beforeRound(agentId, l);
    if (owed !== undefined) {
      await this.refuse(agentId, next.promptId, "compaction", `${owed}; nothing was sent to the provider`);
      return this.dispatch(agentId);
    }
    if (s.turn || l.compaction.active) {
      s.queue.unshift(next);
      return;
    }
    return this.startTurn(agentId, l, next);
  }

  private async loadThenDispatch(agentId: string, l: AgentLoop): Promise<void> {
    try {
      await this.conversations.ensure(agentId, l);
    } catch (err) {
      // An unreadable journal: the prompts waiting for it end with why, none waits forever.
      this.conversations.forgetFailedLoad(l);
      const why = fitText(`the agent's transcript could not be read from its journal: ${err instanceof Error ? err.message : String(err)}`);
      for (const q of l.prompts.queue.splice(0)) await this.refuse(agentId, q.promptId, "journal", why);
      this.compaction.refuseRequests(l, why);
      return;
    }
    return this.dispatch(agentId);
  }

  /** The turn of the next prompt, on the provider its model resolves to (called in the step that checked the agent is idle). */
  private async startTurn(agentId: string, l: AgentLoop, next: Queued): Promise<void> {
    const routed = this.models.resolve(l.model, true);
    const target: Target | Refusal = routed === "wait" ? { code: "no_provider", diagnostic: "no model is available; configure a provider" } : routed;
    const generation = "instance" in target ? this.port.generationOf(target.instance) : undefined;
    if (!("instance" in target) || generation === undefined) {
      await this.refuse(agentId, next.promptId, "instance" in target ? "no_provider" : target.code, "instance" in target ? `no running provider serves model ${target.model}` : target.diagnostic);
      return this.dispatch(agentId);
    }
    const turn: Turn = {
      promptId: next.promptId,
      round: 0,
      model: target.model,
      instance: target.instance,
      generation,
      text: "",
      reasoning: "",
      pendingText: "",
      pendingReasoning: "",
      lastSample: 0,
      sampleTimer: undefined,
      openCalls: new Set(),
      cancelled: false,
      answered: false,
      selfCompact: undefined,
      startedAt: performance.now(),
      snapshot: this.port.snapshot(agentId, next.onlyTools !== undefined ? new Set(next.onlyTools) : undefined),
    };
    l.prompts.turn = turn;
    this.alerts.offered(l, turn.snapshot.tools.map((t) => t.name), next.onlyTools !== undefined);
    this.router.start(turn, this, agentId);
    await this.startRound(agentId, l);
  }

  /**
   * A prompt refused before it started: UIs are told why (`agent.prompt_failed`, transient) and its
   * journal closes it `failed` with no round, so a resume finds it ended as the user was told.
   */
  private async refuse(agentId: string, promptId: string, code: AgentPromptFailed["code"], diagnostic: string): Promise<void> {
    await this.port.publish("agent.prompt_failed", { agent_id: agentId, prompt_id: promptId, code, diagnostic: fitText(diagnostic) });
    await this.port.publish("agent.outer_turn_finished", { agent_id: agentId, prompt_id: promptId, outcome: "failed", rounds: 0 });
  }

  /** The owner and a content-free start commit before the full prompt leaves for the provider. */
  private async startRound(agentId: string, l: AgentLoop): Promise<void> {
    const t = l.prompts.turn as Turn;
    t.text = "";
    t.reasoning = "";
    t.lastSample = 0; // each response's first delta is published at once
    t.answered = false;
    await this.alerts.deliver(agentId, l);
    if (l.prompts.turn !== t || t.cancelled) return;
    const provider = this.port.providerEndpoint?.(t.instance);
    const ok = await this.port.publish("agent.prompt_started", { agent_id: agentId, prompt_id: t.promptId, round: t.round, model: t.model, ...(provider ? { provider } : {}) });
    if (l.prompts.turn !== t || t.cancelled) return;
    if (!ok) return this.abandon(agentId, l, "journal", "could not record the start of the prompt in the agent's journal; nothing was sent to the provider");
    const call: ProviderCall = {
      agent_id: agentId,
      prompt_id: t.promptId,
      round: t.round,
      model: t.model,
      system: t.snapshot.system,
      messages: closeDanglingCalls((l.conversation.transcript as Transcript).messages),
      tools: [...t.snapshot.tools],
    };
    const problem = await this.port.sendProviderCall(t.instance, t.generation, call);
    if (problem === undefined || l.prompts.turn !== t || t.cancelled) return;
    // Never wait for an answer to a request that did not go out whole.
    this.port.directToInstance(t.instance, "provider.cancel_request", { prompt_id: t.promptId, round: t.round });
    await this.fail(agentId, l, "network", `the request could not be sent to the provider: ${problem}`);
  }

  /** The turn a report answers, with its agent, unless it was cancelled or this round already answered. */
  private live(t: Turn): { agentId: string; l: AgentLoop } | undefined {
    if (t.cancelled || t.answered) return undefined;
    const agentId = this.router.agentOf(t.promptId);
    const l = agentId === undefined ? undefined : this.loops.find(agentId);
    return agentId !== undefined && l?.prompts.turn === t ? { agentId, l } : undefined;
  }

  delta(t: Turn, c: Committed<"provider.response_delta_reported">): void {
    const o = this.live(t);
    if (!o) return;
    if (c.data.text !== undefined) t.pendingText += c.data.text;
    if (c.data.reasoning !== undefined) t.pendingReasoning += c.data.reasoning;
    const now = Date.now();
    if (now - t.lastSample >= DELTA_SAMPLE_INTERVAL_MS) this.flushDelta(o.agentId, t);
    else t.sampleTimer ??= setTimeout(() => this.flushDelta(o.agentId, t), DELTA_SAMPLE_INTERVAL_MS - (now - t.lastSample));
  }

  private flushDelta(agentId: string, t: Turn): void {
    if (t.sampleTimer) clearTimeout(t.sampleTimer);
    t.sampleTimer = undefined;
    if (t.pendingText === "" && t.pendingReasoning === "") return;
    t.lastSample = Date.now();
    const data = { agent_id: agentId, prompt_id: t.promptId, round: t.round, text_delta: t.pendingText, reasoning_delta: t.pendingReasoning };
    t.text += t.pendingText;
    t.reasoning += t.pendingReasoning;
    t.pendingText = "";
    t.pendingReasoning = "";
    void this.port.publish("provider.response_updated", data);
  }

  async finished(t: Turn, c: Committed<"provider.response_finished_reported">): Promise<void> {
    const o = this.live(t);
    if (!o) return;
    const { agentId, l } = o;
    t.answered = true;
    this.flushDelta(agentId, t);
    const calls = c.data.tool_calls;
    const usage = c.data.usage;
    const finished: ProviderResponseFinished = {
      agent_id: agentId,
      prompt_id: t.promptId,
      round: t.round,
      model: t.model,
      text: c.data.text,
      tool_calls: calls,
      finish_reason: c.data.finish_reason,
    };
    if (c.data.reasoning !== undefined) finished.reasoning = c.data.reasoning;
    if (c.data.reasoning_items !== undefined && c.data.reasoning_items.length > 0) finished.reasoning_items = c.data.reasoning_items;
    if (c.data.server_finish_reason !== undefined) finished.server_finish_reason = c.data.server_finish_reason;
    if (c.data.reasoning_field !== undefined) finished.reasoning_field = c.data.reasoning_field;
    if (usage) finished.usage = usage;
    const cost = this.usage.costOf(t.model, usage);
    if (cost) finished.cost = cost;
    if (!(await this.port.publish("provider.response_finished", finished))) return this.fail(agentId, l, "protocol", "could not record the response");
    this.usage.account(agentId, l, t.model, usage, "response");
    if (l.prompts.turn === t && !t.cancelled) this.alerts.weigh(l, t.model);
    if (calls.length > 0 && c.data.finish_reason === "tool_calls") return this.requestTools(agentId, l, t, calls);
    await this.finish(agentId, l, "completed");
  }

  async failed(t: Turn, c: Committed<"provider.response_failed_reported">): Promise<void> {
    const o = this.live(t);
    if (!o) return;
    await this.fail(o.agentId, o.l, c.data.error_class, c.data.diagnostic);
  }

  retry(t: Turn, c: Committed<"provider.retry_reported">): void {
    const o = this.live(t);
    if (!o) return;
    void this.port.publish("provider.retry_scheduled", {
      agent_id: o.agentId,
      prompt_id: t.promptId,
      round: t.round,
      attempt: c.data.attempt,
      delay_ms: c.data.delay_ms,
      error_class: c.data.error_class,
    });
  }

  /**
   * Routes a response's tool calls. An id that appears twice in one response is answered with an
   * error (its first use runs); a call that cannot be recorded is answered with an error too, so
   * every call of the round gets exactly one outcome and the round always ends.
   */
  private async requestTools(agentId: string, l: AgentLoop, t: Turn, calls: readonly ToolCall[]): Promise<void> {
    const routed: ToolCall[] = [];
    const twice: ToolCall[] = [];
    const seen = new Set<string>();
    for (const call of calls) {
      if (seen.has(call.call_id)) twice.push(call);
      else routed.push(call);
      seen.add(call.call_id);
    }
    const error = (call: ToolCall, text: string) =>
      this.port.publish("provider.tool_error", { agent_id: agentId, prompt_id: t.promptId, call_id: call.call_id, tool: call.tool, error: text });
    const unrecorded = () => this.fail(agentId, l, "protocol", "could not record a tool call's outcome");
    // Answered before any call opens, so these errors cannot close the call that shares their id.
    for (const call of twice) {
      if (!(await error(call, `tool call id ${call.call_id} appears twice in one response; this call was not run`))) return unrecorded();
    }
    for (const call of routed) t.openCalls.add(call.call_id);
    for (const call of routed) {
      // A tool the prompt did not offer (its role's policy, its `only_tools`) is refused, never requested.
      const refusal = t.snapshot.refusal(call.tool);
      if (refusal !== undefined) {
        if (!(await error(call, refusal))) return unrecorded();
        continue;
      }
      if (call.tool === "compact" || call.tool === "agent_compact") {
        // The harness's own tools: answered by the harness, never routed to an extension.
        const refusal = this.harnessCall(agentId, t, call);
        if (refusal !== undefined && !(await error(call, refusal))) return unrecorded();
        continue;
      }
      const recorded = await this.port.publish("tool.request", { agent_id: agentId, prompt_id: t.promptId, call_id: call.call_id, tool: call.tool, arguments_json: call.arguments_json });
      if (recorded || l.prompts.turn !== t) continue;
      if (!(await error(call, "the tool call could not be recorded, so it was not run"))) return this.fail(agentId, l, "protocol", "could not record a tool call");
    }
    if (l.prompts.turn === t) this.background(this.maybeSelfCompact(agentId, l, t));
  }

  /**
   * A call of a harness tool: `compact` waits to be the round's last open call; `agent_compact`
   * asks for another idle agent's compaction and is answered when it ended. Returns why the call
   * is refused, or undefined once it is under way.
   */
  private harnessCall(agentId: string, t: Turn, call: ToolCall): string | undefined {
    let args: { instructions?: unknown; agent_id?: unknown };
    try {
      const parsed: unknown = JSON.parse(call.arguments_json === "" ? "{}" : call.arguments_json);
      args = typeof parsed === "object" && parsed !== null ? (parsed as typeof args) : {};
    } catch {
      return `the arguments of ${call.tool} are not JSON`;
    }
    const instructions = typeof args.instructions === "string" ? args.instructions.slice(0, 4096) : undefined;
    if (call.tool === "compact") {
      if (t.selfCompact) return "compact was already called in this response; this call was not run";
      t.selfCompact = { callId: call.call_id, ...(instructions !== undefined ? { instructions } : {}) };
      return undefined;
    }
    const target = typeof args.agent_id === "string" ? args.agent_id : "";
    return this.compaction.askFor(agentId, target, instructions, (o) => void this.answerHarnessCall(agentId, t, call, o));
  }

  private async answerHarnessCall(agentId: string, t: Turn, call: ToolCall, o: CompactionOutcome): Promise<void> {
    const base = { agent_id: agentId, prompt_id: t.promptId, call_id: call.call_id, tool: call.tool };
    if (o.ok) await this.port.publish("provider.tool_result", { ...base, output: o.note });
    else await this.port.publish("provider.tool_error", { ...base, error: o.note });
  }

  /** Runs the round's `compact` call once every other call of the round has its outcome. */
  private async maybeSelfCompact(agentId: string, l: AgentLoop, t: Turn): Promise<void> {
    const sc = t.selfCompact;
    if (!sc || l.prompts.turn !== t || t.openCalls.size !== 1 || !t.openCalls.has(sc.callId)) return;
    t.selfCompact = undefined;
    const outcome = await this.compaction.compact(agentId, l, { trigger: "tool", ...(sc.instructions !== undefined ? { instructions: sc.instructions } : {}) }, t.openCalls);
    await this.answerHarnessCall(agentId, t, { call_id: sc.callId, tool: "compact", arguments_json: "" }, outcome);
    this.resumeQueue(agentId, l);
  }

  /**
   * A call's outcome could not be committed (its journal refused the append: out of descriptors or
   * space): the turn could never go on, so it is abandoned with why, not left waiting forever.
   */
  async outcomeLost(agentId: string, promptId: string, callId: string, why: string): Promise<void> {
    const l = this.loops.find(agentId);
    const t = l?.prompts.turn;
    if (!l || !t || t.promptId !== promptId || t.cancelled || !t.openCalls.has(callId)) return;
    await this.abandon(agentId, l, "journal", `the outcome of call ${callId} could not be recorded in the agent's journal (${why}); the turn was stopped`);
  }

  /** A tool outcome of the current round: when the last one lands, the next round starts. */
  async onToolOutcome(c: Committed<"provider.tool_result" | "provider.tool_error">): Promise<void> {
    const agentId = c.data.agent_id;
    const l = this.loops.find(agentId);
    const t = l?.prompts.turn;
    if (!l || !t || t.promptId !== c.data.prompt_id || !t.openCalls.delete(c.data.call_id)) return;
    if (t.cancelled) return;
    if (t.openCalls.size > 0) return this.maybeSelfCompact(agentId, l, t);
    // An owed compaction, or a context past the threshold, is compacted before the next round.
    const owed = await this.compaction.beforeRound(agentId, l);
    if (owed !== undefined) {
      if (l.prompts.turn === t && !t.cancelled) await this.fail(agentId, l, "context_window_exceeded", `${owed}; the next round was not sent`);
      return this.resumeQueue(agentId, l);
    }
    if (l.prompts.turn !== t || t.cancelled) return this.resumeQueue(agentId, l);
    l.prompts.steering.length = 0; // the next round's start folds them into the transcript
    t.round++;
    await this.startRound(agentId, l);
  }

  /**
   * Cancelling releases only the exact current owner; late reports are ignored. The harness's own
   * cancel (an agent's `agent_cancel`, or its parent's cancel reaching it, SPEC-agent-team) ends
   * the agent's waiting prompts too, so a cancelled child takes up no further work.
   */
  async onCancelRequest(c: Committed<"agent.cancel_request">): Promise<void> {
    const agentId = c.data.agent_id;
    const l = this.loops.find(agentId);
    if (l && c.publisher.class === "harness" && c.data.prompt_id === undefined) {
      for (const q of l.prompts.queue.splice(0)) await this.port.publish("agent.outer_turn_finished", { agent_id: agentId, prompt_id: q.promptId, outcome: "cancelled", rounds: 0 });
    }
    const t = l?.prompts.turn;
    if (!l || !t || (c.data.prompt_id !== undefined && c.data.prompt_id !== t.promptId)) return;
    t.cancelled = true;
    this.port.directToInstance(t.instance, "provider.cancel_request", { prompt_id: t.promptId, round: t.round });
    // What UIs were shown of the round's answer is kept with the cancel (the deltas are not), so a
    // replay shows the same partial answer; text still unsent to them stays unshown.
    const shown = t.answered ? {} : { ...(t.text !== "" ? { shown_text: t.text } : {}), ...(t.reasoning !== "" ? { shown_reasoning: t.reasoning } : {}) };
    await this.port.publish("agent.prompt_cancelled", { agent_id: agentId, prompt_id: t.promptId, ...(Object.keys(shown).length > 0 ? { round: t.round, ...shown } : {}) });
    await this.finish(agentId, l, "cancelled");
  }

  /** The agent's turn, if its round went to this provider connection (which ended). */
  carriedBy(l: AgentLoop, instance: string, generation: number): Turn | undefined {
    const t = l.prompts.turn;
    return t && t.instance === instance && t.generation === generation ? t : undefined;
  }

  async fail(agentId: string, l: AgentLoop, errorClass: ErrorClass, diagnostic: string): Promise<void> {
    const t = l.prompts.turn;
    if (!t) return;
    this.flushDelta(agentId, t);
    // What UIs were shown of the answer is kept with the failure, as with a cancel (the deltas are not).
    await this.port.publish("provider.response_failed", {
      agent_id: agentId,
      prompt_id: t.promptId,
      round: t.round,
      error_class: errorClass,
      diagnostic: fitText(diagnostic),
      ...(t.answered ? {} : { ...(t.text !== "" ? { shown_text: t.text } : {}), ...(t.reasoning !== "" ? { shown_reasoning: t.reasoning } : {}) }),
    });
    await this.finish(agentId, l, "failed");
  }

  /**
   * A round that could not start (its start was not recorded): the prompt ends with the transient
   * `agent.prompt_failed`, then the turn closes as failed if that can still be recorded, and the
   * agent takes its next prompt either way.
   */
  private async abandon(agentId: string, l: AgentLoop, code: AgentPromptFailed["code"], diagnostic: string): Promise<void> {
    const t = l.prompts.turn;
    if (!t) return;
    await this.port.publish("agent.prompt_failed", { agent_id: agentId, prompt_id: t.promptId, code, diagnostic: fitText(diagnostic) });
    await this.finish(agentId, l, "failed", true);
  }

  /**
   * Ends the turn. Its end is recorded (`agent.outer_turn_finished`); when the journal refuses it,
   * UIs are still told the turn is over by the transient `agent.prompt_failed` (unless the turn
   * ended with one already), so no client waits forever for an end it will never see.
   */
  private async finish(agentId: string, l: AgentLoop, outcome: "completed" | "cancelled" | "failed", told = false): Promise<void> {
    const s = l.prompts;
    const t = s.turn;
    if (!t) return;
    if (t.sampleTimer) clearTimeout(t.sampleTimer);
    s.turn = undefined;
    this.router.close(t);
    // Steered prompts that found no later round of this turn run as turns of their own.
    for (const id of s.steering.splice(0)) if (l.conversation.unsent.has(id)) s.queue.push({ promptId: id });
    const recorded = await this.port.publish("agent.outer_turn_finished", { agent_id: agentId, prompt_id: t.promptId, outcome, rounds: t.round + 1 });
    if (!recorded && !told) {
      const diagnostic = `the turn ended (${outcome}) but its end could not be recorded in the agent's journal`;
      await this.port.publish("agent.prompt_failed", { agent_id: agentId, prompt_id: t.promptId, code: "journal", diagnostic });
    }
    if (outcome === "completed") this.titles.turnCompleted(t.promptId, l);
    this.dispatchSoon(agentId);
  }
}
