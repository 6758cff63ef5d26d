// The agent loop (SPEC-agent-lifecycle, SPEC-provider-execution): prompts are queued per agent,
// dispatched one at a time, sent to the owning provider only after a content-free
// `agent.prompt_started` commits, turned from provider reports into canonical facts, continued
// through tool rounds, and closed by `agent.outer_turn_finished`.
import type { Committed, Event } from "../bus/index.js";
import type {
  AgentPromptFailed,
  AgentStatsUpdated,
  CompactionTrigger,
  ContextAlert,
  ErrorClass,
  EventName,
  EventPayloads,
  HarnessConfig,
  ModelInfo,
  ModelListing,
  ModelMetadata,
  ProviderEndpoint,
  ProviderMessage,
  ProviderResponseFinished,
  ToolCall,
  Usage,
} from "../../generated/index.js";
import { checkModelChoice, closeMatches, mergedModelInfo } from "../config/models.js";
import { mintId } from "./ids.js";
import { addUsage, emptyUsageTotals, type AgentUsageTotals } from "./agent-fold.js";
import { userEnvelope } from "./context.js";
import { agentEnvelope } from "./agent-tools.js";
import { peerEnvelope } from "./peer-messaging.js";
import { agentIdOf } from "../protocol/index.js";
import { fitText } from "../protocol/text.js";
import type { ProviderCall } from "../protocol/provider-request.js";
import { REVIEW_TIMEOUT_MS, adapterOf, buildReviewInput, childRecords, decideReview, reviewRequest, transcriptRecords, type ReviewAdapter, type ReviewRecord } from "./permission-review.js";
import { titleFromPrompt } from "../sessions/index.js";
import { SUMMARY_SYSTEM_PROMPT, applySummary, chooseCut, emptyTranscript, estimateAfterSummary, estimateTokens, summaryRequestText, type Transcript } from "./compaction.js";

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

/** What a provider reports about its current round. */
type ProviderReport = "provider.response_delta_reported" | "provider.response_finished_reported" | "provider.response_failed_reported" | "provider.retry_reported";

/** The first delta is published at once, then at most one sample per interval, plus a final flush. */
export const DELTA_SAMPLE_INTERVAL_MS = 1000;
/**
 * Longest a prompt whose model is not declared waits for providers' model listings under way
 * (`listing: pending`) before its model is resolved without them (a listing itself gives up sooner).
 */
export const MODEL_LISTING_WAIT_MS = 10_000;

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
  systemPrompt(agentId: string): string;
  /** The tools an agent's provider requests list: extension tools and the harness tools its policy allows. */
  tools(agentId: string): Array<{ name: string; description: string; parameters: Record<string, unknown> }>;
  /** Whether an agent's role policy lets it call harness tool `name` (SPEC-compaction). */
  harnessToolAllowed(agentId: string, name: string): boolean;
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
  /**
   * The parent of an agent another agent started, while it is a member of the session (a review is
   * delegated to it); `null` for such an agent without that connection; undefined for a top-level agent.
   */
  parentOf?(agentId: string): string | null | undefined;
}

interface Queued {
  readonly promptId: string;
  /** The only tools this prompt's turn offers and runs (SPEC-handoff); all of the agent's when absent. */
  readonly onlyTools?: readonly string[];
}

interface Turn {
  readonly promptId: string;
  round: number;
  readonly model: string;
  readonly instance: string;
  readonly generation: number;
  text: string;
  reasoning: string;
  pendingText: string;
  pendingReasoning: string;
  lastSample: number;
  sampleTimer: NodeJS.Timeout | undefined;
  openCalls: Set<string>;
  cancelled: boolean;
  /** The current round's response was accepted: a second report for it is a duplicate. */
  answered: boolean;
  /** A `compact` call of this round, run once it is the round's last open call. */
  selfCompact: { callId: string; instructions?: string } | undefined;
  /** When the turn started, on the monotonic clock (long-wait notifications, SPEC-agent-team). */
  readonly startedAt: number;
  /** The only tools this turn offers and runs (its prompt's `only_tools`). */
  readonly onlyTools: ReadonlySet<string> | undefined;
}

/** An automatic permission review under way (SPEC-sandbox-reviewer): one tool-less round 0. */
interface ActiveReview {
  readonly id: string;
  readonly agentId: string;
  /** The extension instance that asked: the result is directed to it. */
  readonly requester: string;
  readonly model: string;
  readonly instance: string;
  readonly generation: number;
  readonly adapter: ReviewAdapter;
  readonly timer: NodeJS.Timeout;
  /** A child's review delegated to its parent: the parent, and its journal's length when the review began. */
  readonly delegated?: { readonly parent: string; readonly at: number };
}

/**
 * The ordinary user messages of an agent's whole journal, folded as far as `at` (SPEC-sandbox-reviewer):
 * required review input that a compaction never shortens, read from the journal, not the transcript.
 */
interface UserIntent {
  at: number;
  readonly unsent: Map<string, { text: string; steer: boolean }>;
  readonly messages: string[];
}

type ReviewAnswer = Omit<EventPayloads["sandbox.review_result"], "review_id">;

/** The title request of a session (`title_model`): one tool-less round after the first answer. */
interface ActiveTitle {
  readonly id: string;
  readonly agentId: string;
  /** `title_model` as configured (what a notice names). */
  readonly wanted: string;
  readonly model: string;
  readonly instance: string;
  readonly generation: number;
  readonly timer: NodeJS.Timeout;
}

/** How long a title may take before the first-prompt title simply stays. */
export const TITLE_TIMEOUT_MS = 30_000;

const TITLE_SYSTEM_PROMPT =
  "You name conversations. Reply with a title for the conversation below: at most eight words, plain text on one line, " +
  "no quotes, no punctuation at the end, in the language of the user's request. Reply with the title only.";

/** A compaction under way (SPEC-compaction): its summary request is the owner's round 0. */
interface ActiveCompaction {
  readonly id: string;
  readonly cutSeq: number;
  readonly model: string;
  readonly instance: string;
  readonly generation: number;
  /** Set once a terminal report was taken: later ones are duplicates. */
  ended: boolean;
  readonly settle: (outcome: CompactionOutcome) => void;
}

export interface CompactionOutcome {
  readonly ok: boolean;
  /** What happened, for a tool result or a diagnostic. */
  readonly note: string;
  /** Whether a transaction was recorded (a compaction refused before its start leaves none). */
  readonly recorded: boolean;
}

/** A compaction asked for and not yet run (`:compact`, `agent_compact`). */
interface CompactionRequest {
  readonly trigger: CompactionTrigger;
  readonly instructions?: string;
  readonly requestedBy?: string;
  readonly done?: (outcome: CompactionOutcome) => void;
}

/** What folds from an agent's journal into what its next provider request needs. */
interface TranscriptFold {
  /** Undefined while not loaded (a resumed agent's, until it next runs a prompt). */
  transcript: Transcript | undefined;
  /** Submitted prompts not yet in the transcript: they enter it when a round starts. */
  unsent: Map<string, { text: string; steer: boolean }>;
  /** Summaries recorded and not yet committed, by compaction id. */
  summaries: Map<string, string>;
}

interface AgentLoop extends TranscriptFold {
  model: string | undefined;
  /** A dispatch is waiting for model listings under way; it goes on by itself. */
  awaitingModels: boolean;
  readonly queue: Queued[];
  readonly steering: string[];
  turn: Turn | undefined;
  /** A load of the transcript from the journal under way. */
  loading: Promise<void> | undefined;
  /** Token usage so far (from the journal's fold on a resume), from which the stats are made. */
  totals: AgentUsageTotals;
  /** The stats last published, so an unchanged one is not published again. */
  lastStats: string;
  /** The context use the last response reported (or a compaction's estimate of what is left). */
  contextTokens: number;
  /** Where loading the transcript starts (a resumed agent's fold says; 0 reads the whole journal). */
  transcriptFrom: number;
  /** A response's context use not yet weighed for automatic compaction. */
  contextFresh: boolean;
  compaction: ActiveCompaction | undefined;
  readonly compactRequests: CompactionRequest[];
  /** A failed compaction whose watermark a successor owes (from the journal). */
  owed: { id: string; watermark: number } | undefined;
  /** Context-size alerts crossed (daemon-local) and those waiting for the next round start. */
  readonly alerted: Set<string>;
  pendingAlerts: ContextAlert[];
  /** The sandbox's newest state change, not yet in this agent's context. */
  pendingSandbox?: string;
  /** The user's messages read from the whole journal for reviews, and a read under way. */
  intent?: UserIntent;
  intentReading?: Promise<void>;
}

/**
 * Events of an agent's journal, read for a lazy transcript load: [from, to), at most about
 * `maxBytes` (each checked against its schema: a record that fails throws).
 */
export type AgentRecords = (agentId: string, from: number, to: number, maxBytes: number) => readonly Event[];

/** Journal bytes read per step of a transcript load, between which other work runs. */
const TRANSCRIPT_LOAD_STEP_BYTES = 4 * 1024 * 1024;

export class PromptEngine {
  private readonly agents = new Map<string, AgentLoop>();
  /** The first human prompt whose answer the session's title is written from (`title_model`). */
  private titleFor: { agentId: string; promptId: string; text: string } | undefined;
  private title: ActiveTitle | undefined;
  /** The last sandbox state reported (SPEC-sandbox), once one was. */
  private sandboxState: string | undefined;
  /**
   * Agents whose handoff deferral window is open (SPEC-handoff), by the extension connection that
   * reported it: their compaction waits, since the dossier is being written from the conversation.
   */
  private readonly handoffWindows = new Map<string, { instance: string; generation: number }>();
  /** model id → provider instance and model info, from provider.models_updated. */
  private readonly models = new Map<string, { instance: string; info: ModelInfo }>();
  private readonly modelsByInstance = new Map<string, ModelInfo[]>();
  /** The connection generation whose declaration `modelsByInstance` holds, per instance. */
  private readonly modelsGeneration = new Map<string, number>();
  /** Every model's info as last declared, kept when its provider leaves: usage so far stays priced. */
  private readonly priced = new Map<string, ModelInfo>();
  /** What each declaring instance's list is (SPEC-provider-chat-completions, "Model listing"). */
  private readonly listings = new Map<string, ModelListing>();
  /** `instance/id` of unlisted configured models already warned about. */
  private readonly warnedUnlisted = new Set<string>();
  /** Dispatches waiting for the listings under way. */
  private listingWaiters: Array<() => void> = [];
  /** Settles once the daemon's extensions have started (or failed to); absent when none are starting. */
  private extensionsStarting: Promise<void> | undefined;
  /** Automatic permission reviews under way, by review id (their prompt id). */
  private readonly reviews = new Map<string, ActiveReview>();

  constructor(private readonly port: PromptPort) {}

  private loop(agentId: string): AgentLoop {
    let l = this.agents.get(agentId);
    if (!l) {
      l = {
        model: undefined,
        awaitingModels: false,
        queue: [],
        steering: [],
        turn: undefined,
        transcript: emptyTranscript(),
        unsent: new Map(),
        summaries: new Map(),
        loading: undefined,
        totals: emptyUsageTotals(),
        lastStats: "",
        contextTokens: 0,
        transcriptFrom: 0,
        contextFresh: false,
        compaction: undefined,
        compactRequests: [],
        owed: undefined,
        alerted: new Set(),
        pendingAlerts: [],
      };
      this.agents.set(agentId, l);
    }
    return l;
  }

  /** Folds a durable agent record committed in this process at `seq` (its transcript only when loaded). */
  fold(e: Event, seq: number): void {
    const agentId = agentIdOf(e);
    if (agentId === undefined) return;
    const l = this.loop(agentId);
    if (e.name === "agent.started" && e.data.model !== undefined) l.model = e.data.model;
    if (e.name === "agent.model_set") l.model = e.data.model;
    if (e.name === "agent.compaction_committed") l.owed = undefined;
    if (e.name === "agent.compaction_failed") l.owed ??= { id: e.data.compaction_id, watermark: e.data.watermark };
    foldTranscript(l, e, seq);
  }

  /**
   * A resumed agent: its model and owed compaction from the journal's fold; its transcript stays in
   * the journal until the agent next runs a prompt (`ensureTranscript`), so a resume does not read it.
   */
  restore(agentId: string, fold: { model?: string; owed?: { id: string; watermark: number }; usage?: AgentUsageTotals; transcript_from?: number }): void {
    const l = this.loop(agentId);
    l.model = fold.model;
    l.owed = fold.owed ? { ...fold.owed } : undefined;
    l.transcript = undefined;
    l.transcriptFrom = fold.transcript_from ?? 0;
    // Its stats go on from where they were (a snapshot, so an attaching UI shows them).
    if (fold.usage) {
      l.totals = structuredClone(fold.usage);
      l.contextTokens = fold.usage.context_tokens;
    }
    this.publishStats(agentId, l);
  }

  /**
   * Cold restore: a started prompt with no terminal is dispatch-uncertain and is never resent; a
   * submitted prompt that never started (and was not folded into a turn as a steer) is interrupted.
   */
  async settleRestored(
    agents: ReadonlyMap<string, { open: Readonly<Record<string, number>>; waiting: Readonly<Record<string, boolean>>; compacting?: { id: string; cut_seq: number; summarized_seq?: number } }>,
  ): Promise<void> {
    for (const [agentId, f] of agents) {
      // A compaction cut by the crash: a durable summary commits; one still awaited was maybe sent
      // and is never resent, so the transaction fails closed, its cut owed (SPEC-compaction).
      const c = f.compacting;
      if (c?.summarized_seq !== undefined) {
        await this.port.publish("agent.compaction_committed", { agent_id: agentId, compaction_id: c.id, cut_seq: c.cut_seq });
      } else if (c) {
        await this.port.publish("agent.compaction_failed", {
          agent_id: agentId,
          compaction_id: c.id,
          watermark: c.cut_seq,
          reason: "interrupted: the session stopped before the summary arrived; it is not requested again",
        });
      }
      for (const [promptId, rounds] of Object.entries(f.open)) {
        await this.port.publish("agent.outer_turn_finished", { agent_id: agentId, prompt_id: promptId, outcome: "dispatch_uncertain", rounds });
      }
      // Submitted, never started: they never reached a provider, and are closed rather than run
      // unasked when the session comes back (possibly much later).
      for (const promptId of Object.keys(f.waiting)) {
        await this.port.publish("agent.outer_turn_finished", { agent_id: agentId, prompt_id: promptId, outcome: "interrupted", rounds: 0 });
      }
    }
  }

  /**
   * Loads a resumed agent's transcript from its journal, step by step (other work runs between
   * steps), then folds what was appended meanwhile, in the same step as it takes the result.
   */
  private ensureTranscript(agentId: string, l: AgentLoop): Promise<void> {
    if (l.transcript) return Promise.resolve();
    l.loading ??= (async () => {
      const fold: TranscriptFold = { transcript: emptyTranscript(), unsent: new Map(), summaries: new Map() };
      // A compacted journal is read from its last cut (or an earlier waiting prompt's submission):
      // every message before it is in the summary, which is recorded after the cut.
      let at = l.transcriptFrom;
      for (;;) {
        const end = this.port.agentRecordCount(agentId);
        if (at >= end) break;
        const records = this.port.agentRecords(agentId, at, end, TRANSCRIPT_LOAD_STEP_BYTES);
        records.forEach((e, i) => foldTranscript(fold, e, at + i));
        at += records.length;
        if (at < this.port.agentRecordCount(agentId)) await new Promise((resolve) => setImmediate(resolve));
      }
      l.transcript = fold.transcript;
      l.unsent = fold.unsent;
      l.summaries = fold.summaries;
      l.loading = undefined;
    })();
    return l.loading;
  }

  onModelsDeclared(c: Committed<"provider.models_declared">): void {
    const instance = c.publisher.instance;
    if (instance === undefined || c.publisher.generation === undefined || this.port.generationOf(instance) !== c.publisher.generation) return;
    this.modelsGeneration.set(instance, c.publisher.generation);
    this.setModels(instance, c.data.models.slice(0, 1024), c.data.listing ?? "configured");
    // Prices and context windows may have come with them (a resumed agent's stats were unpriced).
    for (const [agentId, l] of this.agents) this.publishStats(agentId, l);
  }

  /**
   * Replaces one instance's models (`listing` undefined: it left), with what is known of each
   * merged in, and republishes what is available.
   */
  private setModels(instance: string, declared: ModelInfo[], listing: ModelListing | undefined): void {
    const configured = this.port.modelInfo?.();
    const models = declared.map((m) => mergedModelInfo(instance, m, configured));
    if (listing === undefined) this.listings.delete(instance);
    else this.listings.set(instance, listing);
    if (models.length > 0) this.modelsByInstance.set(instance, models);
    else this.modelsByInstance.delete(instance);
    for (const [id, m] of [...this.models]) if (m.instance === instance) this.models.delete(id);
    for (const info of models) this.models.set(info.id, { instance, info });
    for (const info of models) this.priced.set(info.id, info);
    if (listing === "listed") this.warnUnlisted(instance, models);
    void this.port.publish("provider.models_updated", { instance, models, ...(listing !== undefined && listing !== "configured" ? { listing } : {}) });
    const all = [...this.modelsByInstance.entries()].flatMap(([provider, list]) => list.map((m) => ({ provider, ...m })));
    const listed = [...this.listings].filter(([, s]) => s === "listed").map(([i]) => i);
    // The model an agent without its own goes to (as `resolveModel` picks it), for UIs to show before a prompt.
    const fallback = this.port.defaultProvider?.();
    const defaultModel = this.port.defaultModel() ?? (fallback !== undefined ? this.modelsByInstance.get(fallback)?.[0]?.id : undefined) ?? [...this.models.keys()].sort()[0];
    void this.port.publish("harness.models_available", {
      models: all.slice(0, 4096),
      ...(listed.length > 0 ? { listed_providers: listed.slice(0, 256) } : {}),
      ...(defaultModel !== undefined ? { default_model: defaultModel } : {}),
    });
    if (![...this.listings.values()].includes("pending")) for (const wake of this.listingWaiters.splice(0)) wake();
  }

  /**
   * One warning per configured model the server's listing does not name (a model the provider
   * was configured with, or the configuration's `model` when it names this provider), with the
   * close matches among the listed ones. It is mandatory, so a UI attaching later sees it too.
   */
  private warnUnlisted(instance: string, models: readonly ModelInfo[]): void {
    const listed = models.filter((m) => m.listed !== false).map((m) => m.id);
    const unlisted = models.filter((m) => m.listed === false).map((m) => m.id);
    const configured = this.port.defaultModel();
    if (configured !== undefined) {
      const slash = configured.indexOf("/");
      // `other/model` may name another provider whose listing is not in yet: only a bare id is taken
      // to be this provider's when it is the only one so far.
      const id = slash > 0 && configured.slice(0, slash) === instance ? configured.slice(slash + 1) : slash < 0 && this.modelsByInstance.size === 1 ? configured : undefined;
      if (id !== undefined && !listed.includes(id) && !unlisted.includes(id)) unlisted.push(id);
    }
    const lines: string[] = [];
    for (const id of unlisted) {
      if (this.warnedUnlisted.has(`${instance}/${id}`)) continue;
      this.warnedUnlisted.add(`${instance}/${id}`);
      const close = closeMatches(id, listed);
      lines.push(`${JSON.stringify(id.slice(0, 200))}${close.length > 0 ? ` (close matches: ${close.join(", ")})` : ""}`);
    }
    if (lines.length === 0) return;
    const text = `provider ${instance}: the server does not list the configured model${lines.length > 1 ? "s" : ""} ${lines.join(", ")}; requests for ${lines.length > 1 ? "them" : "it"} are still sent`;
    void this.port.publish("harness.notice", { level: "warning", text: fitText(text), mandatory: true, instance });
  }

  /** Resolves once no model listing is under way, or after `ms`. */
  private listingsSettled(ms: number): Promise<void> {
    if (![...this.listings.values()].includes("pending")) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.listingWaiters.push(done);
    });
  }

  /**
   * The daemon's extensions are starting (their `extension.ready` is not published yet): prompts
   * submitted meanwhile wait for the start to settle instead of finding no provider.
   */
  whileExtensionsStart(started: Promise<unknown>): void {
    const settled: Promise<void> = started.then(
      () => undefined,
      () => undefined,
    );
    this.extensionsStarting = settled;
    void settled.then(() => {
      if (this.extensionsStarting === settled) this.extensionsStarting = undefined;
    });
  }

  /** A human prompt from an attached UI becomes the durable submission fact. */
  onUiPromptSubmit(c: Committed<"ui.prompt_submit">): void {
    const agentId = c.data.agent_id;
    if (!this.port.hasAgent(agentId)) return;
    void this.port
      .publish("agent.prompt_submitted", { agent_id: agentId, prompt_id: mintId("p"), source: "human_ui", mode: c.data.mode, text: c.data.text, ...(c.data.literal === true ? { literal: true } : {}) })
      // Admitted from a UI's intake: its agent is the one the user follows (SPEC-agent-navigation).
      .then((admitted) => {
        if (admitted && c.publisher.class === "ui_attached") this.port.humanPromptAdmitted?.(agentId);
      });
  }

  onInternalPromptRequest(c: Committed<"agent.internal_prompt_request">): void {
    const agentId = c.data.agent_id;
    const p = c.publisher;
    if (!this.port.hasAgent(agentId) || p.instance === undefined || this.port.generationOf(p.instance) !== p.generation) return;
    // A restricted prompt is a turn of its own: steering it into another turn would restrict that one.
    const only = c.data.only_tools;
    void this.port.publish("agent.prompt_submitted", {
      agent_id: agentId,
      prompt_id: mintId("p"),
      source: "extension",
      mode: only !== undefined ? "queue" : c.data.mode,
      text: c.data.text,
      submitter: p.instance,
      ...(only !== undefined ? { only_tools: only } : {}),
    });
  }

  onPromptSubmitted(c: Committed<"agent.prompt_submitted">): void {
    const l = this.loop(c.data.agent_id);
    if (c.data.mode === "steer" && l.turn) {
      l.steering.push(c.data.prompt_id);
      return;
    }
    l.queue.push({ promptId: c.data.prompt_id, ...(c.data.only_tools !== undefined ? { onlyTools: c.data.only_tools } : {}) });
    if (!l.turn) this.background(this.dispatch(c.data.agent_id));
  }

  /**
   * The sandbox of the shell commands changed state: every agent learns it at its next round's start,
   * as a steered harness prompt (SPEC-sandbox, "The model's view"). The first state a daemon hears
   * is its starting point, not a change; only the newest change is delivered.
   */
  onSandboxState(c: Committed<"sandbox.state_reported">): void {
    const previous = this.sandboxState;
    if (c.data.state === "pending") return;
    this.sandboxState = c.data.state;
    if (previous === undefined || previous === c.data.state) return;
    const text = sandboxStateText(c.data.state, c.data.reason, c.data.fix);
    for (const l of this.agents.values()) l.pendingSandbox = text;
  }

  /**
   * A handoff's phase for an agent (SPEC-handoff, "Deferral window"): from a live extension,
   * `deferring`, `writing` or `cutover` holds the agent's compaction; any other phase from the same
   * instance ends the hold, as does the end of the reporting connection.
   */
  onHandoffState(c: Committed<"handoff.state_reported">): void {
    const { instance, generation } = c.publisher;
    if (c.publisher.class !== "extension" || instance === undefined || generation === undefined || !this.port.isLiveExtension(instance, generation)) return;
    const agentId = c.data.agent_id;
    if (c.data.phase === "deferring" || c.data.phase === "writing" || c.data.phase === "cutover") {
      if (this.port.hasAgent(agentId)) this.handoffWindows.set(agentId, { instance, generation });
    } else if (this.handoffWindows.get(agentId)?.instance === instance) {
      this.handoffWindows.delete(agentId);
    }
  }

  /** Why the agent's compaction must wait now (its handoff window is open), or undefined. */
  private compactionHeld(agentId: string): string | undefined {
    const w = this.handoffWindows.get(agentId);
    if (w === undefined) return undefined;
    if (!this.port.isLiveExtension(w.instance, w.generation)) {
      this.handoffWindows.delete(agentId);
      return undefined;
    }
    return "a handoff of this agent is under way and its dossier is written from this conversation; compaction waits until the handoff ends";
  }

  onModelSelect(c: Committed<"ui.model_select">): void {
    const agentId = c.data.agent_id;
    if (!this.port.hasAgent(agentId)) return;
    void this.port.publish("agent.model_set", { agent_id: agentId, model: c.data.model });
  }

  /**
   * The model and provider instance of an agent's next prompt (SPEC-provider-chat-completions,
   * "Choosing a model"), `wait` while a listing under way could decide it (never once `waited`), or
   * why none can serve it.
   */
  private resolveModel(l: AgentLoop, waited: boolean): Target | "wait" | Refusal {
    const wanted = l.model ?? this.port.defaultModel();
    if (wanted !== undefined) return this.route(wanted, waited);
    const provider = this.port.defaultProvider?.();
    if (provider !== undefined) {
      const own = this.modelsByInstance.get(provider)?.[0];
      if (own !== undefined) return { model: own.id, instance: provider };
      // Its models are not in yet: its listing is under way.
      if (!waited && this.listings.get(provider) === "pending") return "wait";
    }
    const first = [...this.models.entries()].sort(([a], [b]) => (a < b ? -1 : 1))[0];
    if (first) return { model: first[0], instance: first[1].instance };
    if (!waited && [...this.listings.values()].includes("pending")) return "wait";
    return { code: "no_provider", diagnostic: "no model is available; configure a provider" };
  }

  /** Routes a model name: a declared id, `provider/model`, or an id a provider with an open list may serve. */
  private route(wanted: string, waited: boolean): Target | "wait" | Refusal {
    // Ids may hold a `/` themselves (`meta-llama/Llama-3.3-70B-Instruct`): a declared one is taken whole.
    const whole = this.models.get(wanted);
    if (whole) return { model: wanted, instance: whole.instance };
    const slash = wanted.indexOf("/");
    const inst = slash > 0 ? wanted.slice(0, slash) : undefined;
    if (inst !== undefined && this.port.generationOf(inst) !== undefined) {
      const id = wanted.slice(slash + 1);
      const listing = this.listings.get(inst);
      if (listing !== "listed" || this.modelsByInstance.get(inst)?.some((m) => m.id === id)) {
        if (listing === "pending" && !waited) return "wait";
        return { model: id, instance: inst };
      }
      return { code: "unknown_model", diagnostic: this.unknown(wanted) };
    }
    // An id no provider declares.
    if (!waited && [...this.listings.values()].includes("pending")) return "wait";
    const open = [...this.listings].filter(([i, s]) => s !== "listed" && this.port.generationOf(i) !== undefined).map(([i]) => i);
    const preferred = this.port.defaultProvider?.();
    if (preferred !== undefined && open.includes(preferred)) return { model: wanted, instance: preferred };
    if (open.length === 1) return { model: wanted, instance: open[0] as string };
    if (open.length > 1) return { code: "no_provider", diagnostic: `several providers may serve model ${wanted}; choose one: ${open.map((i) => `${i}/${wanted}`).join(", ")}` };
    if (this.models.size === 0) return { code: "no_provider", diagnostic: `no running provider serves model ${wanted}` };
    return { code: "unknown_model", diagnostic: this.unknown(wanted) };
  }

  /** Why a model no listing names is refused, with its close matches. */
  private unknown(wanted: string): string {
    const models = [...this.modelsByInstance.entries()].flatMap(([provider, list]) => list.map((m) => ({ provider, id: m.id })));
    const listed = [...this.listings].filter(([, s]) => s === "listed").map(([i]) => i);
    const choice = checkModelChoice(wanted, { models, listed_providers: listed });
    return choice.ok ? `no running provider serves model ${wanted}` : choice.message;
  }

  private async dispatch(agentId: string, waited = false): Promise<void> {
    const l = this.loop(agentId);
    if (l.turn || l.compaction || l.awaitingModels) return;
    if (!l.transcript) {
      // A resumed agent's first prompt: its transcript is read from the journal first.
      try {
        await this.ensureTranscript(agentId, l);
      } catch (err) {
        // An unreadable journal: the prompts waiting for it end with why, none waits forever.
        l.loading = undefined;
        const why = fitText(`the agent's transcript could not be read from its journal: ${err instanceof Error ? err.message : String(err)}`);
        for (const q of l.queue.splice(0)) await this.port.publish("agent.prompt_failed", { agent_id: agentId, prompt_id: q.promptId, code: "journal", diagnostic: why });
        for (const r of l.compactRequests.splice(0)) r.done?.({ ok: false, note: why, recorded: false });
        return;
      }
      return this.dispatch(agentId);
    }
    if (l.turn || l.compaction) return;
    // Compactions asked for (`:compact`, `agent_compact`) run before the next prompt.
    const asked = l.compactRequests.shift();
    if (asked) {
      const outcome = await this.compact(agentId, l, asked, new Set());
      asked.done?.(outcome);
      if (!outcome.recorded) void this.port.publish("harness.notice", { level: "warning", text: fitText(`agent ${agentId}: nothing was compacted: ${outcome.note}`), mandatory: false });
      return this.dispatch(agentId);
    }
    if (l.queue.length === 0) return;
    // Prompts that arrive while the extensions start wait for them: their providers decide the model.
    if (this.extensionsStarting !== undefined) {
      l.awaitingModels = true;
      await this.extensionsStarting;
      l.awaitingModels = false;
      return this.dispatch(agentId, waited);
    }
    if (this.resolveModel(l, waited) === "wait") {
      l.awaitingModels = true;
      await this.listingsSettled(MODEL_LISTING_WAIT_MS);
      l.awaitingModels = false;
      return this.dispatch(agentId, true);
    }
    const next = l.queue.shift() as Queued;
    // An owed compaction, or a context past the threshold, is compacted before the turn starts.
    const owed = await this.compactBeforeRound(agentId, l);
    if (owed !== undefined) {
      await this.port.publish("agent.prompt_failed", {
        agent_id: agentId,
        prompt_id: next.promptId,
        code: "compaction",
        diagnostic: fitText(`${owed}; nothing was sent to the provider`),
      });
      await this.port.publish("agent.outer_turn_finished", { agent_id: agentId, prompt_id: next.promptId, outcome: "failed", rounds: 0 });
      return this.dispatch(agentId);
    }
    if (l.turn || l.compaction) {
      l.queue.unshift(next);
      return;
    }
    const routed = this.resolveModel(l, true);
    const target: Target | Refusal = routed === "wait" ? { code: "no_provider", diagnostic: "no model is available; configure a provider" } : routed;
    const generation = "instance" in target ? this.port.generationOf(target.instance) : undefined;
    if (!("instance" in target) || generation === undefined) {
      await this.port.publish("agent.prompt_failed", {
        agent_id: agentId,
        prompt_id: next.promptId,
        code: "instance" in target ? "no_provider" : target.code,
        diagnostic: fitText("instance" in target ? `no running provider serves model ${target.model}` : target.diagnostic),
      });
      return this.dispatch(agentId);
    }
    l.turn = {
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
      onlyTools: next.onlyTools !== undefined ? new Set(next.onlyTools) : undefined,
    };
    await this.startRound(agentId, l);
  }

  /** The owner and a content-free start commit before the full prompt leaves for the provider. */
  private async startRound(agentId: string, l: AgentLoop): Promise<void> {
    const t = l.turn as Turn;
    t.text = "";
    t.reasoning = "";
    t.lastSample = 0; // each response's first delta is published at once
    t.answered = false;
    await this.deliverAlerts(agentId, l);
    if (l.turn !== t || t.cancelled) return;
    const provider = this.port.providerEndpoint?.(t.instance);
    const ok = await this.port.publish("agent.prompt_started", { agent_id: agentId, prompt_id: t.promptId, round: t.round, model: t.model, ...(provider ? { provider } : {}) });
    if (l.turn !== t || t.cancelled) return;
    if (!ok) return this.abandon(agentId, l, "journal", "could not record the start of the prompt in the agent's journal; nothing was sent to the provider");
    const call: ProviderCall = {
      agent_id: agentId,
      prompt_id: t.promptId,
      round: t.round,
      model: t.model,
      system: this.port.systemPrompt(agentId),
      messages: closeDanglingCalls((l.transcript as Transcript).messages),
      tools: this.port.tools(agentId).filter((tool) => t.onlyTools === undefined || t.onlyTools.has(tool.name)),
    };
    const problem = await this.port.sendProviderCall(t.instance, t.generation, call);
    if (problem === undefined || l.turn !== t || t.cancelled) return;
    // Never wait for an answer to a request that did not go out whole.
    this.port.directToInstance(t.instance, "provider.cancel_request", { prompt_id: t.promptId, round: t.round });
    await this.fail(agentId, l, "network", `the request could not be sent to the provider: ${problem}`);
  }

  /** What an agent's loop is doing (SPEC-agent-team's roster): a turn or compaction, prompts waiting, or nothing. */
  activity(agentId: string): "running" | "queued" | undefined {
    const l = this.agents.get(agentId);
    if (!l) return undefined;
    if (l.turn || l.compaction || l.loading) return "running";
    if (l.queue.length > 0 || l.awaitingModels || l.compactRequests.length > 0) return "queued";
    return undefined;
  }

  /** An agent's current turn: its prompt and when it started (monotonic ms). */
  currentTurn(agentId: string): { promptId: string; startedAt: number } | undefined {
    const t = this.agents.get(agentId)?.turn;
    return t ? { promptId: t.promptId, startedAt: t.startedAt } : undefined;
  }

  /** Whether an agent's turn `promptId` still waits for the outcome of call `callId`. */
  callOpen(agentId: string, promptId: string, callId: string): boolean {
    const t = this.agents.get(agentId)?.turn;
    return t !== undefined && t.promptId === promptId && !t.cancelled && t.openCalls.has(callId);
  }

  /** The agent whose current turn (or compaction) is this prompt, if one is. */
  agentOfPrompt(promptId: string): string | undefined {
    for (const [agentId, l] of this.agents) if (l.turn?.promptId === promptId || l.compaction?.id === promptId) return agentId;
    return undefined;
  }

  /** The exact owner of a report: its prompt, round, instance and connection generation, not cancelled nor answered. */
  private ownerTurn(c: Committed<ProviderReport>): { agentId: string; l: AgentLoop; t: Turn } | undefined {
    const p = c.publisher;
    for (const [agentId, l] of this.agents) {
      const t = l.turn;
      if (t && t.promptId === c.data.prompt_id && t.round === c.data.round && p.instance === t.instance && p.generation === t.generation && !t.cancelled && !t.answered) {
        return { agentId, l, t };
      }
    }
    return undefined;
  }

  /** The review a report answers, by the same exact ownership. */
  private ownerReview(c: Committed<ProviderReport>): ActiveReview | undefined {
    const rv = this.reviews.get(c.data.prompt_id);
    const p = c.publisher;
    return rv && c.data.round === 0 && p.instance === rv.instance && p.generation === rv.generation ? rv : undefined;
  }

  /**
   * `sandbox.review_request` (SPEC-sandbox-reviewer): the review input from the agent's transcript,
   * one tool-less round to the classifier's provider, the decision rule's outcome directed back.
   */
  async onReviewRequest(c: Committed<"sandbox.review_request">): Promise<void> {
    const d = c.data;
    const requester = c.publisher.instance;
    if (requester === undefined || this.reviews.has(d.review_id)) return;
    const answer = (a: ReviewAnswer): void => void this.port.directToInstance(requester, "sandbox.review_result", { review_id: d.review_id, ...a });
    // A child agent's review is its parent's: the parent's user intent and context (SPEC-sandbox-reviewer,
    // "Subagents"); a child without that connection stays manual.
    const parent = this.port.parentOf?.(d.agent_id);
    if (parent === null) return answer({ outcome: "skipped", reason: "no_parent" });
    const owner = parent ?? d.agent_id;
    const ol = this.agents.get(owner);
    const cl = this.agents.get(d.agent_id);
    if (ol === undefined || cl === undefined || !this.port.hasAgent(owner)) return answer({ outcome: "skipped", reason: "incomplete" });
    let users: readonly string[];
    let child: { agentId: string; task: string; records: ReviewRecord[] } | undefined;
    let records: ReviewRecord[];
    try {
      await this.ensureTranscript(owner, ol);
      if (parent !== undefined) await this.ensureTranscript(d.agent_id, cl);
      // The user's messages come from the whole journal: a compaction's cut never shortens them.
      users = await this.userIntent(owner, ol);
      // A user direction submitted but not yet in the conversation may change what the user wants:
      // no inference until it enters (the manual prompt follows).
      if ((ol.intent?.unsent.size ?? 0) > 0) return answer({ outcome: "skipped", reason: "queued_direction" });
      records = transcriptRecords(ol.transcript?.messages ?? []).filter((r) => r.role !== "user");
      if (parent !== undefined) child = { agentId: d.agent_id, ...childRecords(cl.transcript?.messages ?? []) };
    } catch {
      return answer({ outcome: "skipped", reason: "incomplete" });
    }
    const delegatedAt = parent !== undefined ? this.port.agentRecordCount(parent) : undefined;
    const input = buildReviewInput({
      permission: {
        kind: d.kind,
        target: d.target,
        command: d.command,
        scopes: d.scopes,
        ...(d.evidence !== undefined ? { evidence: { text: d.evidence, provenance: d.evidence_provenance ?? "unknown" } } : {}),
      },
      records: [...users.map((text): ReviewRecord => ({ role: "user", text })), ...records],
      ...(child !== undefined ? { child } : {}),
    });
    if (!input.ok) return answer({ outcome: "skipped", reason: input.skip });
    // The classifier must name its provider (or be a model one declares): an id no provider declares
    // is never handed to another provider, which would switch the reviewer silently.
    const slash = d.classifier.indexOf("/");
    if (!this.models.has(d.classifier) && (slash <= 0 || this.port.generationOf(d.classifier.slice(0, slash)) === undefined)) {
      return answer({ outcome: "unavailable", reason: `no running provider serves ${d.classifier}` });
    }
    const target = this.route(d.classifier, true);
    const generation = typeof target === "object" && "instance" in target ? this.port.generationOf(target.instance) : undefined;
    if (typeof target !== "object" || !("instance" in target) || generation === undefined) return answer({ outcome: "unavailable", reason: `no running provider serves ${d.classifier}` });
    const adapter = adapterOf(d.classifier);
    const request = reviewRequest(input.text, adapter);
    const timer = setTimeout(() => {
      const rv = this.reviews.get(d.review_id);
      if (rv === undefined) return;
      this.port.directToInstance(rv.instance, "provider.cancel_request", { prompt_id: rv.id, round: 0 });
      this.endReview(rv, { outcome: "failed", reason: "timeout" });
    }, d.timeout_ms ?? REVIEW_TIMEOUT_MS);
    const rv: ActiveReview = {
      id: d.review_id,
      agentId: owner,
      requester,
      model: target.model,
      instance: target.instance,
      generation,
      adapter,
      timer,
      ...(parent !== undefined && delegatedAt !== undefined ? { delegated: { parent, at: delegatedAt } } : {}),
    };
    this.reviews.set(rv.id, rv);
    const problem = await this.port.sendProviderCall(target.instance, generation, {
      agent_id: owner,
      prompt_id: rv.id,
      round: 0,
      model: target.model,
      system: request.system,
      messages: request.messages,
      tools: [],
    });
    if (problem !== undefined && this.reviews.get(rv.id) === rv) {
      this.port.directToInstance(rv.instance, "provider.cancel_request", { prompt_id: rv.id, round: 0 });
      this.endReview(rv, { outcome: "failed", reason: "the review request could not be sent" });
    }
  }

  private endReview(rv: ActiveReview, a: ReviewAnswer): void {
    if (this.reviews.get(rv.id) !== rv) return;
    this.reviews.delete(rv.id);
    clearTimeout(rv.timer);
    // A delegated approval stands only while the parent's user directions are unchanged.
    if (a.outcome === "approved" && rv.delegated !== undefined && this.userDirected(rv.delegated.parent, rv.delegated.at)) {
      a = { outcome: "skipped", reason: "intent_changed", ...(a.usage !== undefined ? { usage: a.usage } : {}) };
    }
    const by = rv.delegated !== undefined ? { parent_id: rv.delegated.parent } : {};
    this.port.directToInstance(rv.requester, "sandbox.review_result", { review_id: rv.id, ...a, ...by, ...(a.reason !== undefined ? { reason: fitText(a.reason) } : {}) });
  }

  /** Whether a user prompt reached `agentId`'s journal at or after `from`. */
  private userDirected(agentId: string, from: number): boolean {
    const end = this.port.agentRecordCount(agentId);
    try {
      return this.port.agentRecords(agentId, from, end, TRANSCRIPT_LOAD_STEP_BYTES).some((e) => e.name === "agent.prompt_submitted" && e.data.source === "human_ui");
    } catch {
      return true;
    }
  }

  /**
   * The ordinary user messages of an agent's whole journal, in order, never shortened: read on from
   * where the last review stopped, step by step (other work runs between steps).
   */
  private async userIntent(agentId: string, l: AgentLoop): Promise<readonly string[]> {
    const s = (l.intent ??= { at: 0, unsent: new Map(), messages: [] });
    // One read at a time: a later review waits for the one under way, then reads what came after it.
    while (l.intentReading !== undefined) await l.intentReading.catch(() => {});
    const reading = (async () => {
      for (;;) {
        const end = this.port.agentRecordCount(agentId);
        if (s.at >= end) break;
        const records = this.port.agentRecords(agentId, s.at, end, TRANSCRIPT_LOAD_STEP_BYTES);
        if (records.length === 0) break;
        for (const e of records) foldUserIntent(s, e);
        s.at += records.length;
        if (s.at < this.port.agentRecordCount(agentId)) await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    l.intentReading = reading;
    try {
      await reading;
    } finally {
      if (l.intentReading === reading) l.intentReading = undefined;
    }
    return [...s.messages];
  }

  /** The compaction a report answers, by the same exact ownership. */
  private ownerCompaction(c: Committed<ProviderReport>): { agentId: string; l: AgentLoop; k: ActiveCompaction } | undefined {
    const p = c.publisher;
    for (const [agentId, l] of this.agents) {
      const k = l.compaction;
      if (k && !k.ended && k.id === c.data.prompt_id && c.data.round === 0 && p.instance === k.instance && p.generation === k.generation) return { agentId, l, k };
    }
    return undefined;
  }

  onDeltaReported(c: Committed<"provider.response_delta_reported">): void {
    const o = this.ownerTurn(c);
    if (!o) return;
    const { t, agentId } = o;
    if (c.data.text !== undefined) t.pendingText += c.data.text;
    if (c.data.reasoning !== undefined) t.pendingReasoning += c.data.reasoning;
    const now = Date.now();
    if (now - t.lastSample >= DELTA_SAMPLE_INTERVAL_MS) this.flushDelta(agentId, t);
    else t.sampleTimer ??= setTimeout(() => this.flushDelta(agentId, t), DELTA_SAMPLE_INTERVAL_MS - (now - t.lastSample));
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

  async onFinishedReported(c: Committed<"provider.response_finished_reported">): Promise<void> {
    const ti = this.ownerTitle(c);
    if (ti) {
      this.endTitle();
      const l = this.agents.get(ti.agentId);
      if (l && c.data.usage) this.account(ti.agentId, l, ti.model, c.data.usage, "summary");
      // Cleaned like a prompt's title; quotes a model adds anyway are dropped. Nothing usable: the first-prompt title stays.
      const title = titleFromPrompt(c.data.text.replace(/^[\s"'“”‘’`*#]+|[\s"'“”‘’`*.]+$/g, ""));
      if (title === undefined) return this.titleFailed(ti.wanted, "an empty answer");
      await this.port.publish("session.title_set", { title, origin: "model" });
      return;
    }
    const rv = this.ownerReview(c);
    if (rv) {
      const verdict = decideReview(c.data.text, rv.adapter);
      const usage = c.data.usage;
      const l = this.agents.get(rv.agentId);
      if (l && usage) this.account(rv.agentId, l, rv.model, usage, "summary");
      return this.endReview(rv, {
        ...(verdict.outcome === "invalid" ? { outcome: "invalid", reason: verdict.note } : { outcome: verdict.outcome, label: verdict.label }),
        ...(usage ? { usage } : {}),
      });
    }
    const k = this.ownerCompaction(c);
    if (k) return this.summarized(k.agentId, k.l, k.k, c.data.text, c.data.usage);
    const o = this.ownerTurn(c);
    if (!o) return;
    const { agentId, l, t } = o;
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
    if (usage) finished.usage = usage;
    const cost = this.costOf(t.model, usage);
    if (cost) finished.cost = cost;
    if (!(await this.port.publish("provider.response_finished", finished))) return this.fail(agentId, l, "protocol", "could not record the response");
    this.account(agentId, l, t.model, usage, "response");
    if (l.turn === t && !t.cancelled) this.weighAlerts(l, t.model);
    if (calls.length > 0 && c.data.finish_reason === "tool_calls") return this.requestTools(agentId, l, t, calls);
    await this.finish(agentId, l, "completed");
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
    // Answered before any call opens, so these errors cannot close the call that shares their id.
    for (const call of twice) {
      if (!(await error(call, `tool call id ${call.call_id} appears twice in one response; this call was not run`))) {
        return this.fail(agentId, l, "protocol", "could not record a tool call's outcome");
      }
    }
    for (const call of routed) t.openCalls.add(call.call_id);
    for (const call of routed) {
      if (t.onlyTools !== undefined && !t.onlyTools.has(call.tool)) {
        // A restricted turn (SPEC-handoff) runs nothing it did not offer.
        if (!(await error(call, `tool ${call.tool} is not available in this turn; only ${[...t.onlyTools].join(", ")} may be called`))) return this.fail(agentId, l, "protocol", "could not record a tool call's outcome");
        continue;
      }
      if (call.tool === "compact" || call.tool === "agent_compact") {
        // The harness's own tools: answered by the harness, never routed to an extension.
        const refusal = this.harnessCall(agentId, t, call);
        if (refusal !== undefined && !(await error(call, refusal))) return this.fail(agentId, l, "protocol", "could not record a tool call's outcome");
        continue;
      }
      const recorded = await this.port.publish("tool.request", { agent_id: agentId, prompt_id: t.promptId, call_id: call.call_id, tool: call.tool, arguments_json: call.arguments_json });
      if (recorded || l.turn !== t) continue;
      if (!(await error(call, "the tool call could not be recorded, so it was not run"))) return this.fail(agentId, l, "protocol", "could not record a tool call");
    }
    if (l.turn === t) this.background(this.maybeSelfCompact(agentId, l, t));
  }

  /**
   * A call of a harness tool: `compact` waits to be the round's last open call; `agent_compact`
   * asks for another idle agent's compaction and is answered when it ended. Returns why the call
   * is refused, or undefined once it is under way.
   */
  private harnessCall(agentId: string, t: Turn, call: ToolCall): string | undefined {
    if (!this.port.harnessToolAllowed(agentId, call.tool)) return `tool ${call.tool} is not available to this agent (its role policy does not allow it)`;
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
    if (target === agentId) return "agent_compact compacts another agent; use compact for your own conversation";
    if (!this.port.hasAgent(target)) return `unknown agent ${JSON.stringify(target.slice(0, 128))}`;
    const held = this.compactionHeld(target);
    if (held !== undefined) return `agent ${target}: ${held}`;
    const tl = this.loop(target);
    // A busy target would make two agents wait on each other's turns: it is refused instead.
    if (tl.turn || tl.compaction || tl.queue.length > 0) return `agent ${target} is busy; compact it once it is idle`;
    tl.compactRequests.push({
      trigger: "agent",
      requestedBy: agentId,
      ...(instructions !== undefined ? { instructions } : {}),
      done: (o) => void this.answerHarnessCall(agentId, t, call, o),
    });
    this.background(this.dispatch(target));
    return undefined;
  }

  private async answerHarnessCall(agentId: string, t: Turn, call: ToolCall, o: CompactionOutcome): Promise<void> {
    const base = { agent_id: agentId, prompt_id: t.promptId, call_id: call.call_id, tool: call.tool };
    if (o.ok) await this.port.publish("provider.tool_result", { ...base, output: o.note });
    else await this.port.publish("provider.tool_error", { ...base, error: o.note });
  }

  /** Runs the round's `compact` call once every other call of the round has its outcome. */
  private async maybeSelfCompact(agentId: string, l: AgentLoop, t: Turn): Promise<void> {
    const sc = t.selfCompact;
    if (!sc || l.turn !== t || t.openCalls.size !== 1 || !t.openCalls.has(sc.callId)) return;
    t.selfCompact = undefined;
    const outcome = await this.compact(agentId, l, { trigger: "tool", ...(sc.instructions !== undefined ? { instructions: sc.instructions } : {}) }, t.openCalls);
    await this.answerHarnessCall(agentId, t, { call_id: sc.callId, tool: "compact", arguments_json: "" }, outcome);
    this.resumeQueue(agentId, l);
  }

  /**
   * A compaction inside a turn ended after the turn did (a cancel): the dispatch the turn's end
   * asked for found the compaction under way, so the queue is taken up here.
   */
  private resumeQueue(agentId: string, l: AgentLoop): void {
    if (!l.turn && !l.compaction) this.background(this.dispatch(agentId));
  }

  /** A tool outcome of the current round: when the last one lands, the next round starts. */
  async onToolOutcome(c: Committed<"provider.tool_result" | "provider.tool_error">): Promise<void> {
    const l = this.agents.get(c.data.agent_id);
    const t = l?.turn;
    if (!l || !t || t.promptId !== c.data.prompt_id || !t.openCalls.delete(c.data.call_id)) return;
    if (t.cancelled) return;
    if (t.openCalls.size > 0) return this.maybeSelfCompact(c.data.agent_id, l, t);
    // An owed compaction, or a context past the threshold, is compacted before the next round.
    const owed = await this.compactBeforeRound(c.data.agent_id, l);
    if (owed !== undefined) {
      if (l.turn === t && !t.cancelled) await this.fail(c.data.agent_id, l, "context_window_exceeded", `${owed}; the next round was not sent`);
      return this.resumeQueue(c.data.agent_id, l);
    }
    if (l.turn !== t || t.cancelled) return this.resumeQueue(c.data.agent_id, l);
    l.steering.length = 0; // the next round's start folds them into the transcript
    t.round++;
    await this.startRound(c.data.agent_id, l);
  }

  async onFailedReported(c: Committed<"provider.response_failed_reported">): Promise<void> {
    const ti = this.ownerTitle(c);
    if (ti) return this.titleFailed(ti.wanted, `provider error (${c.data.error_class})`);
    const rv = this.ownerReview(c);
    // A provider whose server refuses its credentials cannot serve the classifier (SPEC-sandbox-reviewer,
    // "Selection"): unavailable, offered for setup again; any other error is transient.
    if (rv) return this.endReview(rv, c.data.error_class === "authentication" ? { outcome: "unavailable", reason: `the ${rv.instance} provider's credentials were refused` } : { outcome: "failed", reason: `provider error (${c.data.error_class})` });
    const k = this.ownerCompaction(c);
    if (k) return this.compactionFailed(k.agentId, k.l, k.k, `the summary request failed (${c.data.error_class}): ${c.data.diagnostic}`);
    const o = this.ownerTurn(c);
    if (!o) return;
    await this.fail(o.agentId, o.l, c.data.error_class, c.data.diagnostic);
  }

  onRetryReported(c: Committed<"provider.retry_reported">): void {
    const o = this.ownerTurn(c);
    if (!o) return;
    void this.port.publish("provider.retry_scheduled", {
      agent_id: o.agentId,
      prompt_id: o.t.promptId,
      round: o.t.round,
      attempt: c.data.attempt,
      delay_ms: c.data.delay_ms,
      error_class: c.data.error_class,
    });
  }

  /**
   * Cancelling releases only the exact current owner; late reports are ignored. The harness's own
   * cancel (an agent's `agent_cancel`, or its parent's cancel reaching it, SPEC-agent-team) ends
   * the agent's waiting prompts too, so a cancelled child takes up no further work.
   */
  async onCancelRequest(c: Committed<"agent.cancel_request">): Promise<void> {
    const agentId = c.data.agent_id;
    const l = this.agents.get(agentId);
    if (l && c.publisher.class === "harness" && c.data.prompt_id === undefined) {
      for (const q of l.queue.splice(0)) await this.port.publish("agent.outer_turn_finished", { agent_id: agentId, prompt_id: q.promptId, outcome: "cancelled", rounds: 0 });
    }
    const t = l?.turn;
    if (!l || !t || (c.data.prompt_id !== undefined && c.data.prompt_id !== t.promptId)) return;
    t.cancelled = true;
    this.port.directToInstance(t.instance, "provider.cancel_request", { prompt_id: t.promptId, round: t.round });
    // What UIs were shown of the round's answer is kept with the cancel (the deltas are not), so a
    // replay shows the same partial answer; text still unsent to them stays unshown.
    const shown = t.answered ? {} : { ...(t.text !== "" ? { shown_text: t.text } : {}), ...(t.reasoning !== "" ? { shown_reasoning: t.reasoning } : {}) };
    await this.port.publish("agent.prompt_cancelled", { agent_id: agentId, prompt_id: t.promptId, ...(Object.keys(shown).length > 0 ? { round: t.round, ...shown } : {}) });
    await this.finish(agentId, l, "cancelled");
  }

  /** A provider connection ended: the prompts it owned fail. */
  async onProviderGone(instance: string, generation: number): Promise<void> {
    // Its models leave with it (a respawned process declares them again).
    if (this.modelsGeneration.get(instance) === generation) {
      this.modelsGeneration.delete(instance);
      this.setModels(instance, [], undefined);
    }
    for (const rv of [...this.reviews.values()]) {
      if (rv.instance === instance && rv.generation === generation) this.endReview(rv, { outcome: "failed", reason: `the ${instance} provider exited` });
    }
    for (const [agentId, l] of this.agents) {
      const k = l.compaction;
      if (k && !k.ended && k.instance === instance && k.generation === generation) await this.compactionFailed(agentId, l, k, `the ${instance} provider exited before the summary arrived`);
      const t = l.turn;
      if (t && t.instance === instance && t.generation === generation) await this.fail(agentId, l, "network", `the ${instance} provider exited`);
    }
  }

  private async fail(agentId: string, l: AgentLoop, errorClass: ErrorClass, diagnostic: string): Promise<void> {
    const t = l.turn;
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
    const t = l.turn;
    if (!t) return;
    await this.port.publish("agent.prompt_failed", { agent_id: agentId, prompt_id: t.promptId, code, diagnostic: fitText(diagnostic) });
    await this.finish(agentId, l, "failed");
  }

  private async finish(agentId: string, l: AgentLoop, outcome: "completed" | "cancelled" | "failed"): Promise<void> {
    const t = l.turn;
    if (!t) return;
    if (t.sampleTimer) clearTimeout(t.sampleTimer);
    l.turn = undefined;
    // Steered prompts that found no later round of this turn run as turns of their own.
    for (const id of l.steering.splice(0)) if (l.unsent.has(id)) l.queue.push({ promptId: id });
    await this.port.publish("agent.outer_turn_finished", { agent_id: agentId, prompt_id: t.promptId, outcome, rounds: t.round + 1 });
    if (outcome === "completed" && this.titleFor?.promptId === t.promptId) this.background(this.requestTitle(l));
    this.background(this.dispatch(agentId));
  }

  /**
   * The session's first human prompt (the harness titled the session from it): with `title_model`
   * set, its answer is followed by a title request (SPEC-session-lifecycle, "Titles").
   */
  titleFromAnswerOf(agentId: string, promptId: string, text: string): void {
    if (this.port.titleModel?.() === undefined || this.titleFor !== undefined) return;
    this.titleFor = { agentId, promptId, text };
  }

  /** One tool-less round to the title model: the first prompt and its answer in, a title out. */
  private async requestTitle(l: AgentLoop): Promise<void> {
    const ask = this.titleFor;
    const wanted = this.port.titleModel?.();
    if (ask === undefined || wanted === undefined || this.title !== undefined) return;
    const answer = [...(l.transcript?.messages ?? [])].reverse().find((m) => m.role === "assistant" && (m.text ?? "") !== "")?.text ?? "";
    const target = this.route(wanted, true);
    const generation = typeof target === "object" && "instance" in target ? this.port.generationOf(target.instance) : undefined;
    if (typeof target !== "object" || !("instance" in target) || generation === undefined) return this.titleFailed(wanted, "no running provider serves it");
    const id = mintId("c");
    const timer = setTimeout(() => {
      if (this.title?.id !== id) return;
      this.port.directToInstance(target.instance, "provider.cancel_request", { prompt_id: id, round: 0 });
      this.titleFailed(wanted, `no answer within ${TITLE_TIMEOUT_MS / 1000} s`);
    }, TITLE_TIMEOUT_MS);
    timer.unref?.();
    this.title = { id, agentId: ask.agentId, wanted, model: target.model, instance: target.instance, generation, timer };
    const clip = (s: string) => (s.length > 4000 ? `${s.slice(0, 4000)}…` : s);
    const problem = await this.port.sendProviderCall(target.instance, generation, {
      agent_id: ask.agentId,
      prompt_id: id,
      round: 0,
      model: target.model,
      system: TITLE_SYSTEM_PROMPT,
      messages: [{ role: "user", text: `The user asked:\n${clip(ask.text)}\n\nThe answer began:\n${clip(answer)}` }],
      tools: [],
    });
    if (problem !== undefined && this.title?.id === id) this.titleFailed(wanted, "the request could not be sent");
  }

  /** The first-prompt title stays; the user is told once why the configured model wrote none. */
  private titleFailed(wanted: string, why: string): void {
    this.endTitle();
    void this.port.publish("harness.notice", { level: "info", text: fitText(`title_model ${wanted} wrote no session title (${why}); the first prompt's line stays the title`), mandatory: false });
  }

  private endTitle(): void {
    if (this.title) clearTimeout(this.title.timer);
    this.title = undefined;
  }

  /** The title round a report answers, by exact ownership (prompt, round, instance, generation). */
  private ownerTitle(c: Committed<ProviderReport>): ActiveTitle | undefined {
    const t = this.title;
    const p = c.publisher;
    return t && t.id === c.data.prompt_id && c.data.round === 0 && p.instance === t.instance && p.generation === t.generation ? t : undefined;
  }

  /** Work started from a consumer and not awaited: a failure is reported, never an unhandled rejection. */
  private background(work: Promise<unknown>): void {
    work.catch((err: unknown) => this.port.warn(`the agent loop failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 1024)));
  }

  /** `ui.compact_request` from the exact live attached UI: compacts the agent now, or after its turn. */
  onCompactRequest(c: Committed<"ui.compact_request">): void {
    const agentId = c.data.agent_id;
    if (c.publisher.class !== "ui_attached" || !this.port.isLiveUi(c.publisher.generation) || !this.port.hasAgent(agentId)) return;
    const l = this.loop(agentId);
    l.compactRequests.push({ trigger: "user", ...(c.data.instructions !== undefined ? { instructions: c.data.instructions } : {}) });
    this.background(this.dispatch(agentId));
  }

  /** The model's context window: what its provider declares, else the configured one. */
  /** Where the agent's next request would go now, if anywhere (no waiting for listings). */
  private currentTarget(l: AgentLoop): Target | undefined {
    const r = this.resolveModel(l, true);
    return r !== "wait" && "instance" in r ? r : undefined;
  }

  private contextWindow(model: string | undefined): number | undefined {
    const declared = model === undefined ? undefined : this.priced.get(model)?.context_window;
    return declared ?? this.port.compaction.contextWindow;
  }

  /**
   * Before a provider round: an owed compaction runs as a successor, and a context use past the
   * threshold (weighed once per response) compacts automatically. Returns why the round must not
   * start when the agent still owes a compaction, else undefined.
   */
  private async compactBeforeRound(agentId: string, l: AgentLoop): Promise<string | undefined> {
    const owing = (o: CompactionOutcome) => (l.owed === undefined ? undefined : `the agent owes a compaction (${o.note.replace(/^compaction failed: /, "")})`);
    if (l.owed) return owing(await this.compact(agentId, l, { trigger: "successor" }, l.turn?.openCalls ?? new Set()));
    const { autoThreshold } = this.port.compaction;
    const window = this.contextWindow(l.turn?.model ?? this.currentTarget(l)?.model);
    if (!l.contextFresh || autoThreshold <= 0 || window === undefined) return undefined;
    // During a handoff window the use is weighed again at the first round after it.
    if (this.compactionHeld(agentId) !== undefined) return undefined;
    l.contextFresh = false;
    if (l.contextTokens < autoThreshold * window) return undefined;
    return owing(await this.compact(agentId, l, { trigger: "auto" }, l.turn?.openCalls ?? new Set()));
  }

  /**
   * One compaction transaction (SPEC-compaction): the cut is chosen, the owner commits, the summary
   * request leaves; resolves once the summary committed or the transaction failed. A compaction
   * with nothing to summarize, no provider, or whose start cannot be recorded leaves no record.
   */
  private async compact(agentId: string, l: AgentLoop, req: CompactionRequest, open: ReadonlySet<string>): Promise<CompactionOutcome> {
    const refused = (note: string): CompactionOutcome => ({ ok: false, note, recorded: false });
    if (l.compaction) return refused("a compaction of this agent is already under way");
    // A successor still runs: the debt of a failed compaction comes before any round.
    const held = req.trigger === "successor" ? undefined : this.compactionHeld(agentId);
    if (held !== undefined) return refused(held);
    const tr = l.transcript;
    if (!tr) return refused("the agent's transcript is not loaded");
    const b = chooseCut(tr, open, this.port.compaction.keepRecentTokens);
    if (b === undefined) return refused("there is nothing to compact yet");
    const cutSeq = b < tr.messages.length ? (tr.seqs[b] as number) : this.port.agentRecordCount(agentId);
    const target = l.turn ? { model: l.turn.model, instance: l.turn.instance } : this.currentTarget(l);
    const generation = target ? this.port.generationOf(target.instance) : undefined;
    if (!target || generation === undefined) return refused(l.model ? `no running provider serves model ${l.model}` : "no model is available");
    const id = mintId("c");
    const prefix = closeDanglingCalls(tr.messages.slice(0, b));
    const summarizedCount = prefix.length;
    let settle!: (o: CompactionOutcome) => void;
    const done = new Promise<CompactionOutcome>((resolve) => (settle = resolve));
    const k: ActiveCompaction = { id, cutSeq, model: target.model, instance: target.instance, generation, ended: false, settle };
    l.compaction = k;
    const owed = l.owed;
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
      l.compaction = undefined;
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
      await this.compactionFailed(agentId, l, k, `the summary request could not be sent: ${problem}`);
    }
    const outcome = await done;
    return outcome.ok ? { ...outcome, note: `compacted: ${summarizedCount} earlier messages were replaced by a summary` } : outcome;
  }

  /** The summary arrived: recorded, then committed; the next request is the summary plus the suffix. */
  private async summarized(agentId: string, l: AgentLoop, k: ActiveCompaction, text: string, usage: Usage | undefined): Promise<void> {
    k.ended = true;
    if (text.trim() === "") return this.compactionFailed(agentId, l, k, "the model returned an empty summary");
    this.account(agentId, l, k.model, usage, "summary");
    const cost = this.costOf(k.model, usage);
    const recorded = await this.port.publish("agent.compaction_summarized", { agent_id: agentId, compaction_id: k.id, summary: text, ...(usage ? { usage } : {}), ...(cost ? { cost } : {}) });
    if (!recorded) return this.compactionFailed(agentId, l, k, "the summary could not be recorded");
    // Once the summary is durable the commit is owed: a crash from here on commits on resume.
    const context = l.transcript ? { context_tokens: estimateAfterSummary(l.transcript, text, k.cutSeq) } : {};
    const committed = await this.port.publish("agent.compaction_committed", { agent_id: agentId, compaction_id: k.id, cut_seq: k.cutSeq, ...context });
    if (!committed) return this.compactionFailed(agentId, l, k, "the commit could not be recorded");
    l.compaction = undefined;
    // The context is now the summary and the suffix: alerts above it re-arm, stale queued ones go.
    l.contextTokens = estimateTokens(l.transcript?.messages ?? []);
    l.contextFresh = false;
    this.rearmAlerts(l, k.model);
    this.publishStats(agentId, l, k.model);
    k.settle({ ok: true, note: "compacted", recorded: true });
  }

  private async compactionFailed(agentId: string, l: AgentLoop, k: ActiveCompaction, reason: string): Promise<void> {
    k.ended = true;
    if (l.compaction === k) l.compaction = undefined;
    await this.port.publish("agent.compaction_failed", { agent_id: agentId, compaction_id: k.id, watermark: k.cutSeq, reason: fitText(reason) });
    k.settle({ ok: false, note: fitText(`compaction failed: ${reason}`), recorded: true });
  }

  /** The cost of a response at the rates its model has now, when it has any. */
  private costOf(model: string, usage: Usage | undefined): ProviderResponseFinished["cost"] {
    const info = this.models.get(model)?.info;
    if (!usage || !info || (info.input_cost === undefined && info.output_cost === undefined)) return undefined;
    const input_rate = info.input_cost ?? 0;
    const output_rate = info.output_cost ?? 0;
    return { input_rate, output_rate, usd: (input_rate * usage.input_tokens + output_rate * usage.output_tokens) / 1_000_000 };
  }

  /** Response-local usage into the agent's totals; only an ordinary response sets the context use. */
  private account(agentId: string, l: AgentLoop, model: string, usage: Usage | undefined, kind: "response" | "summary"): void {
    if (!usage) return;
    addUsage(l.totals, model, usage.input_tokens, usage.output_tokens, usage.cache_read_tokens ?? 0, kind === "response");
    if (kind === "response") {
      l.contextTokens = usage.input_tokens + usage.output_tokens;
      l.contextFresh = true;
    }
    this.publishStats(agentId, l, model);
  }

  /**
   * The agent's stats from its totals, priced with each model's last declared prices (a price or
   * context window that arrives later, as models are declared, republishes them); nothing when
   * unchanged or unused.
   */
  private publishStats(agentId: string, l: AgentLoop, model = l.totals.context_model ?? l.model): void {
    const u = l.totals;
    if (u.input_tokens === 0 && u.output_tokens === 0) return;
    let cost = 0;
    for (const [id, [input, output, cachedTokens]] of Object.entries(u.by_model)) {
      const info = this.priced.get(id);
      // Prices are per million tokens; cached input tokens are part of the input tokens, at their own price.
      const cached = Math.min(cachedTokens, input);
      const price = info?.input_cost ?? 0;
      cost += (price * (input - cached) + (info?.cached_input_cost ?? price) * cached + (info?.output_cost ?? 0) * output) / 1_000_000;
    }
    const stats: AgentStatsUpdated = { agent_id: agentId, usage: { input_tokens: u.input_tokens, output_tokens: u.output_tokens }, cost_usd: cost, context_tokens: l.contextTokens };
    const window = model !== undefined ? this.contextWindow(model) : undefined;
    if (window !== undefined) stats.context_window = window;
    const key = JSON.stringify(stats);
    if (key === l.lastStats) return;
    l.lastStats = key;
    void this.port.publish("agent.stats_updated", stats);
  }

  /** Alerts whose threshold this response's context use reached for the first time since they armed. */
  private weighAlerts(l: AgentLoop, model: string): void {
    const window = this.contextWindow(model);
    if (window === undefined) return;
    for (const a of this.port.compaction.alerts) {
      if (l.contextTokens >= a.threshold * window && !l.alerted.has(a.name)) {
        l.alerted.add(a.name);
        l.pendingAlerts.push(a);
      }
    }
  }

  /** After a compaction: alerts the context use is now below re-arm, and are no longer queued. */
  private rearmAlerts(l: AgentLoop, model: string): void {
    const window = this.contextWindow(model);
    if (window === undefined) return;
    for (const a of this.port.compaction.alerts) if (l.contextTokens < a.threshold * window) l.alerted.delete(a.name);
    l.pendingAlerts = l.pendingAlerts.filter((a) => l.alerted.has(a.name));
  }

  /** Queued alerts enter at this round's start, as steered harness prompts (SPEC-compaction). */
  private async deliverAlerts(agentId: string, l: AgentLoop): Promise<void> {
    const sandbox = l.pendingSandbox;
    l.pendingSandbox = undefined;
    if (sandbox !== undefined) {
      await this.port.publish("agent.prompt_submitted", { agent_id: agentId, prompt_id: mintId("p"), source: "harness_internal", mode: "steer", text: sandbox, internal_kind: "sandbox_state" });
    }
    for (const a of l.pendingAlerts.splice(0)) {
      const pct = Math.round(a.threshold * 100);
      await this.port.publish("agent.prompt_submitted", {
        agent_id: agentId,
        prompt_id: mintId("p"),
        source: "harness_internal",
        mode: "steer",
        text: a.text ?? `Context-size alert ${a.name}: this conversation uses ${pct}% or more of the model's context window. Consider finishing the current step and calling compact.`,
        internal_kind: "context_size_alert",
        alert: a.name,
      });
    }
  }
}

/** What an agent is told when the sandbox of its shell commands changes state. */
export function sandboxStateText(state: string, reason?: string, fix?: string): string {
  const why = reason ? ` (${reason})` : "";
  switch (state) {
    case "active":
      return "[sandbox] Your shell commands run in the sandbox again: writes outside the workspace, reads of protected files and connections to hosts not on the allowlist are blocked or need the user's approval.";
    case "suspended":
      return `[sandbox] The user suspended the sandbox${why}: your shell commands now run with the user's full rights until it is switched back on. Take the same care as before.`;
    case "bypassed":
      return `[sandbox] The sandbox is bypassed${why}: your shell commands run with the user's full rights.`;
    default:
      return `[sandbox] The sandbox is blocked${why}: your shell commands are refused until the user fixes it${fix ? ` (${fix})` : ""}. Do not try to work around it.`;
  }
}

/** Where a prompt goes: the model id sent and the provider instance that serves it. */
type Target = { readonly model: string; readonly instance: string };
/** Why no provider can take a prompt. */
type Refusal = { readonly code: "no_provider" | "unknown_model"; readonly diagnostic: string };

/** A tool call without a result (an interrupted round) gets a synthetic error so the transcript stays closed. */
function closeDanglingCalls(messages: readonly ProviderMessage[]): ProviderMessage[] {
  const answered = new Set(messages.filter((m) => m.role === "tool").map((m) => m.call_id));
  const out: ProviderMessage[] = [];
  for (const m of messages) {
    out.push(m);
    for (const call of m.tool_calls ?? []) {
      if (!answered.has(call.call_id)) out.push({ role: "tool", call_id: call.call_id, text: "interrupted: this call has no result", is_error: true });
    }
  }
  return out;
}

/** Folds one record into the user's messages: a user prompt counts once it entered the conversation (as the transcript's fold). */
function foldUserIntent(s: UserIntent, e: Event): void {
  switch (e.name) {
    case "agent.prompt_submitted":
      if (e.data.source === "human_ui") s.unsent.set(e.data.prompt_id, { text: e.data.text, steer: e.data.mode === "steer" });
      break;
    case "agent.prompt_started": {
      const own = e.data.prompt_id;
      for (const [id, p] of [...s.unsent]) {
        if (p.steer && id !== own) {
          s.messages.push(p.text);
          s.unsent.delete(id);
        }
      }
      const mine = s.unsent.get(own);
      if (e.data.round === 0 && mine) {
        s.messages.push(mine.text);
        s.unsent.delete(own);
      }
      break;
    }
    case "agent.outer_turn_finished":
    case "agent.prompt_cancelled":
      s.unsent.delete(e.data.prompt_id);
      break;
    case "agent.prompt_failed":
      if (e.data.prompt_id !== undefined) s.unsent.delete(e.data.prompt_id);
      break;
  }
}

/** Folds one record (at journal position `seq`) into a transcript and its prompts not yet sent, in journal order. */
function foldTranscript(f: TranscriptFold, e: Event, seq: number): void {
  const t = f.transcript;
  const push = (m: ProviderMessage) => {
    t?.messages.push(m);
    t?.seqs.push(seq);
  };
  switch (e.name) {
    case "agent.prompt_submitted":
      f.unsent.set(e.data.prompt_id, {
        // Only the user's prompts get the `<user>` envelope; another agent's words are framed as its (SPEC-agent-team).
        text:
          e.data.source === "human_ui"
            ? userEnvelope(e.data.text)
            : e.data.source === "agent"
              ? agentEnvelope(e.data.sender ?? "unknown", e.data.text)
              : e.data.source === "peer"
                ? peerEnvelope(e.data.peer ?? { session_id: "unknown", agent_id: "unknown", message_id: "unknown" }, e.data.text)
                : e.data.text,
        steer: e.data.mode === "steer",
      });
      break;
    case "agent.prompt_started": {
      // Steered prompts join at the next round boundary; a turn's own prompt at its first round.
      const own = e.data.prompt_id;
      for (const [id, p] of [...f.unsent]) {
        if (p.steer && id !== own) {
          push({ role: "user", text: p.text });
          f.unsent.delete(id);
        }
      }
      const mine = f.unsent.get(own);
      if (e.data.round === 0 && mine) {
        push({ role: "user", text: mine.text });
        f.unsent.delete(own);
      }
      break;
    }
    case "agent.outer_turn_finished":
      f.unsent.delete(e.data.prompt_id); // closed before it started (cancelled, interrupted)
      break;
    case "provider.response_finished": {
      const calls = e.data.tool_calls;
      // The reasoning is kept: some servers need it back (SPEC-provider-chat-completions).
      push({
        role: "assistant",
        text: e.data.text,
        tool_calls: calls,
        ...(e.data.reasoning !== undefined ? { reasoning: e.data.reasoning } : {}),
        ...(e.data.reasoning_items !== undefined ? { reasoning_items: e.data.reasoning_items } : {}),
      });
      for (const call of calls) t?.calls.add(call.call_id);
      break;
    }
    // A tool message only ever answers a call an assistant message made (defence in depth: only
    // the router publishes these, and only for the agent loop's own requests).
    case "provider.tool_result":
      if (t?.calls.has(e.data.call_id)) push({ role: "tool", call_id: e.data.call_id, text: e.data.output });
      break;
    case "provider.tool_error":
      if (t?.calls.has(e.data.call_id)) push({ role: "tool", call_id: e.data.call_id, text: e.data.error, is_error: true });
      break;
    case "agent.compaction_summarized":
      f.summaries.set(e.data.compaction_id, e.data.summary);
      break;
    case "agent.compaction_committed": {
      // Only a recorded summary commits, once: a duplicate commit finds none.
      const summary = f.summaries.get(e.data.compaction_id);
      f.summaries.delete(e.data.compaction_id);
      if (summary !== undefined && t) applySummary(t, summary, e.data.cut_seq);
      break;
    }
    case "agent.compaction_failed":
      f.summaries.delete(e.data.compaction_id);
      break;
    case "shell.command_finished":
      if (e.data.include_in_context === true) push({ role: "user", text: `$ ${e.data.command}\n${e.data.output}` });
      break;
  }
}
