// The agent loop (SPEC-agent-lifecycle, SPEC-provider-execution), put together from its owners: the
// turn loop, compaction, the permission reviewer, MCP sampling and titles each start provider rounds, and the
// round router hands every provider report to the one that started its round. The model registry,
// usage accounting, round-start alerts and the conversation fold serve them; per-agent state is
// agent-loop-state.ts. This is the loop's surface to the harness: its port in, its consumers out.
import type { Committed, Event } from "../bus/index.js";
import type { EventName, EventPayloads, McpSamplingConfig, ModelMetadata, ProviderEndpoint } from "../../generated/index.js";
import { agentIdOf } from "../protocol/index.js";
import type { ProviderCall } from "../protocol/provider-request.js";
import type { AgentUsageTotals } from "./agent-fold.js";
import { AgentLoops } from "./agent-loop-state.js";
import { RoundRouter } from "./round-router.js";
import { ModelRegistry } from "./model-registry.js";
import { UsageMeter } from "./usage.js";
import { Alerts } from "./alerts.js";
import { Conversations, foldTranscript, type AgentRecords } from "./conversation.js";
import { TurnLoop } from "./turn-loop.js";
import { PromptIntake } from "./prompt-intake.js";
import { Compactor, type CompactionSettings } from "./compactor.js";
import { PermissionReviewer } from "./permission-reviewer.js";
import { McpSampler } from "./mcp-sampler.js";
import { Titles } from "./titles.js";
import type { PromptSnapshot } from "./prompt-snapshot.js";

export interface PromptPort {
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<boolean>;
  /** A UI's human prompt was admitted for the agent (its navigation becomes `active`). */
  humanPromptAdmitted?(agentId: string): void;
  /** Sends a directed event to the live connection of a provider instance; false if none. */
  directToInstance<N extends EventName>(instance: string, name: N, data: EventPayloads[N]): boolean;
  /**
   * Sends one prompt round to a provider instance's connection of that generation, with
   * backpressure; resolves with why it could not be sent, or undefined once it all is queued.
   */
  sendProviderCall(instance: string, generation: number, call: ProviderCall): Promise<string | undefined>;
  /** Where a provider instance's rounds go, as its configuration says (recorded in `agent.prompt_started`). */
  providerEndpoint?(instance: string): ProviderEndpoint | undefined;
  /** Generation of the live connection of an instance. */
  generationOf(instance: string): number | undefined;
  hasAgent(agentId: string): boolean;
  /**
   * What a prompt's rounds are told and may call (its system prompt, its tools after the role's
   * policy and `only_tools`), captured once at its first round (SPEC-tool-routing).
   */
  snapshot(agentId: string, onlyTools: ReadonlySet<string> | undefined): PromptSnapshot;
  /** Whether a connection generation is an attached UI still connected. */
  isLiveUi(generation: number | undefined): boolean;
  /** Whether an extension instance's connection of that generation is still the live one. */
  isLiveExtension(instance: string, generation: number): boolean;
  compaction: CompactionSettings;
  defaultModel(): string | undefined;
  /** Without a default model: the provider instance whose first declared model is the default. */
  defaultProvider?(): string | undefined;
  /** Model metadata from the configuration (`model_info`), by model id or `provider/model`. */
  modelInfo?(): Readonly<Record<string, ModelMetadata>> | undefined;
  /** The model that writes a new session's title after its first answer (`title_model`), if any. */
  titleModel?(): string | undefined;
  warn(message: string): void;
  /** An agent journal's records (for loading a resumed agent's transcript) and its length. */
  agentRecords: AgentRecords;
  agentRecordCount(agentId: string): number;
  /** The agent has nothing to do (no turn, compaction or prompt waiting): its journal holds no descriptor. */
  agentIdle?(agentId: string): void;
  /** The agent takes up work (a turn, a compaction, its transcript's load): its journal stays open between uses. */
  agentAtWork?(agentId: string): void;
  /** The agent's initialization in this process while it is unfinished (SPEC-extension-declarations): its prompts wait for it. */
  initializing?(agentId: string): Promise<void> | undefined;
  /**
   * The parent of an agent another agent started, while it is a member of the session (a review is
   * delegated to it); `null` for such an agent without that connection; undefined for a top-level agent.
   */
  parentOf?(agentId: string): string | null | undefined;
  /** The `sampling` of the MCP server entry an extension instance runs, if it has one (SPEC-mcp, "Sampling"). */
  samplingOf?(instance: string): McpSamplingConfig | undefined;
}

/** What a resumed agent's journal folds to, as far as the agent loop goes. */
export interface RestoredLoop {
  model?: string;
  owed?: { id: string; watermark: number };
  usage?: AgentUsageTotals;
  transcript_from?: number;
}

/** What a cold restore finds open in an agent's fold. */
export interface OpenAtRestore {
  open: Readonly<Record<string, number>>;
  waiting: Readonly<Record<string, boolean>>;
  compacting?: { id: string; cut_seq: number; summarized_seq?: number };
}

export class PromptEngine {
  private readonly loops = new AgentLoops();
  private readonly router = new RoundRouter();
  private readonly models: ModelRegistry;
  private readonly usage: UsageMeter;
  private readonly alerts: Alerts;
  private readonly conversations: Conversations;
  private readonly intake: PromptIntake;
  private readonly turns: TurnLoop;
  private readonly compactor: Compactor;
  private readonly reviewer: PermissionReviewer;
  private readonly sampler: McpSampler;
  private readonly titles: Titles;

  constructor(private readonly port: PromptPort) {
    const { loops, router } = this;
    const background = (work: Promise<unknown>) => this.background(work);
    this.models = new ModelRegistry(port, () => this.usage.republish());
    this.usage = new UsageMeter(port, this.models, loops);
    this.alerts = new Alerts(port, this.models, loops);
    this.conversations = new Conversations(port);
    const { models, usage, alerts, conversations } = this;
    this.intake = new PromptIntake(port);
    this.titles = new Titles(port, { loops, router, models, usage, background });
    this.compactor = new Compactor(port, { loops, router, models, usage, alerts, dispatch: (agentId) => this.turns.dispatchSoon(agentId) });
    this.turns = new TurnLoop(port, { loops, router, models, usage, alerts, conversations, compaction: this.compactor, titles: this.titles, background });
    this.reviewer = new PermissionReviewer(port, { loops, router, models, usage, conversations });
    this.sampler = new McpSampler(port, { router, models });
  }

  /** Folds a durable agent record committed in this process at `seq` (its transcript only when loaded). */
  fold(e: Event, seq: number): void {
    const agentId = agentIdOf(e);
    if (agentId === undefined) return;
    const l = this.loops.of(agentId);
    if (e.name === "agent.started" && e.data.model !== undefined) l.model = e.data.model;
    if (e.name === "agent.model_set") l.model = e.data.model;
    this.compactor.fold(l, e);
    foldTranscript(l.conversation, e, seq);
  }

  /**
   * A resumed agent: its model and owed compaction from the journal's fold; its transcript stays in
   * the journal until the agent next runs a prompt, so a resume does not read it.
   */
  restore(agentId: string, fold: RestoredLoop): void {
    const l = this.loops.of(agentId);
    l.model = fold.model;
    this.compactor.restore(l, fold.owed);
    this.conversations.restore(l, fold.transcript_from ?? 0);
    this.usage.restore(agentId, l, fold.usage);
  }

  /**
   * Cold restore: a compaction the crash cut is settled; a started prompt with no terminal is
   * dispatch-uncertain and is never resent; a submitted prompt that never started (and was not
   * folded into a turn as a steer) is interrupted: it never reached a provider, and is closed rather
   * than run unasked when the session comes back (possibly much later).
   */
  async settleRestored(agents: ReadonlyMap<string, OpenAtRestore>): Promise<void> {
    for (const [agentId, f] of agents) {
      if (f.compacting) await this.compactor.settleRestored(agentId, f.compacting);
      for (const [promptId, rounds] of Object.entries(f.open)) {
        await this.port.publish("agent.outer_turn_finished", { agent_id: agentId, prompt_id: promptId, outcome: "dispatch_uncertain", rounds });
      }
      for (const promptId of Object.keys(f.waiting)) {
        await this.port.publish("agent.outer_turn_finished", { agent_id: agentId, prompt_id: promptId, outcome: "interrupted", rounds: 0 });
      }
    }
  }

  /** A provider connection ended: its models leave, and the rounds it carried fail. */
  async onProviderGone(instance: string, generation: number): Promise<void> {
    this.models.providerGone(instance, generation);
    this.reviewer.providerGone(instance, generation);
    this.sampler.connectionGone(instance, generation);
    for (const [agentId, l] of this.loops.entries()) {
      const k = this.compactor.carriedBy(l, instance, generation);
      if (k) await this.compactor.fail(agentId, l, k, `the ${instance} provider exited before the summary arrived`);
      if (this.turns.carriedBy(l, instance, generation)) await this.turns.fail(agentId, l, "network", `the ${instance} provider exited`);
    }
  }

  /** The daemon's extensions are starting: prompts submitted meanwhile wait for them. */
  whileExtensionsStart(started: Promise<unknown>): void {
    this.models.whileExtensionsStart(started);
  }

  /** The session's first human prompt: with `title_model` set, its answer is followed by a title request. */
  titleFromAnswerOf(agentId: string, promptId: string, text: string): void {
    this.titles.titleFromAnswerOf(agentId, promptId, text);
  }

  /** What an agent's loop is doing (SPEC-agent-team's roster). */
  activity(agentId: string): "running" | "queued" | undefined {
    return this.turns.activity(agentId);
  }

  /** An agent's current turn: its prompt and when it started (monotonic ms). */
  currentTurn(agentId: string): { promptId: string; startedAt: number } | undefined {
    return this.turns.currentTurn(agentId);
  }

  /** Whether an agent's turn `promptId` still waits for the outcome of call `callId`. */
  callOpen(agentId: string, promptId: string, callId: string): boolean {
    return this.turns.callOpen(agentId, promptId, callId);
  }

  /**
   * Why a model's call of `tool` in prompt `promptId` may not run, from that turn's snapshot
   * (SPEC-tool-routing, "Tool policy by role"), or undefined when it may.
   */
  callRefusal(agentId: string, promptId: string, tool: string): string | undefined {
    const t = this.loops.find(agentId)?.prompts.turn;
    if (!t || t.promptId !== promptId || t.cancelled) return `the prompt that made this call is no longer running; the call was not run`;
    return t.snapshot.refusal(tool);
  }

  /** The agent whose current turn (or compaction) is this prompt, if one is. */
  agentOfPrompt(promptId: string): string | undefined {
    return this.router.agentOf(promptId);
  }

  // The agent loop's consumers (consumers.ts, `prompts`), each handed to the owner of its event.

  onUiPromptSubmit(c: Committed<"ui.prompt_submit">): void {
    this.intake.onUiPromptSubmit(c);
  }

  onInternalPromptRequest(c: Committed<"agent.internal_prompt_request">): void {
    this.intake.onInternalPromptRequest(c);
  }

  onExternalMessageReported(c: Committed<"agent.external_message_reported">): void {
    this.intake.onExternalMessageReported(c);
  }

  onPromptSubmitted(c: Committed<"agent.prompt_submitted">): void {
    this.turns.onPromptSubmitted(c);
  }

  onModelSelect(c: Committed<"ui.model_select">): void {
    this.intake.onModelSelect(c);
  }

  onCompactRequest(c: Committed<"ui.compact_request">): void {
    this.compactor.onCompactRequest(c);
  }

  onModelsDeclared(c: Committed<"provider.models_declared">): void {
    this.models.onModelsDeclared(c);
  }

  onSandboxState(c: Committed<"sandbox.state_reported">): void {
    this.alerts.onSandboxState(c);
  }

  onHandoffState(c: Committed<"handoff.state_reported">): void {
    this.compactor.onHandoffState(c);
  }

  onReviewRequest(c: Committed<"sandbox.review_request">): Promise<void> {
    return this.reviewer.onReviewRequest(c);
  }

  onSamplingRequest(c: Committed<"mcp.sampling_request">): Promise<void> {
    return this.sampler.onSamplingRequest(c);
  }

  onSamplingCancel(c: Committed<"mcp.sampling_cancel">): void {
    this.sampler.onSamplingCancel(c);
  }

  onToolOutcome(c: Committed<"provider.tool_result" | "provider.tool_error">): Promise<void> {
    return this.turns.onToolOutcome(c);
  }

  /** A call's outcome was published but not committed: its turn cannot go on. */
  outcomeLost(agentId: string, promptId: string, callId: string, why: string): Promise<void> {
    return this.turns.outcomeLost(agentId, promptId, callId, why);
  }

  onCancelRequest(c: Committed<"agent.cancel_request">): Promise<void> {
    return this.turns.onCancelRequest(c);
  }

  onDeltaReported(c: Committed<"provider.response_delta_reported">): void {
    this.router.onDelta(c);
  }

  onFinishedReported(c: Committed<"provider.response_finished_reported">): Promise<void> | void {
    return this.router.onFinished(c);
  }

  onFailedReported(c: Committed<"provider.response_failed_reported">): Promise<void> | void {
    return this.router.onFailed(c);
  }

  onRetryReported(c: Committed<"provider.retry_reported">): void {
    this.router.onRetry(c);
  }

  /** Work started from a consumer and not awaited: a failure is reported, never an unhandled rejection. */
  private background(work: Promise<unknown>): void {
    work.catch((err: unknown) => this.port.warn(`the agent loop failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 1024)));
  }
}
