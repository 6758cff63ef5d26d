// What the agent loop keeps per agent, in one record of slices. Each slice is written by the one
// owner named beside it; the others read it, and ask that owner for any change.
import type { CompactionTrigger, ContextAlert } from "../../generated/index.js";
import { emptyUsageTotals, type AgentUsageTotals } from "./agent-fold.js";
import { emptyTranscript, type Transcript } from "./compaction.js";
import type { Round } from "./round-router.js";
import type { PromptSnapshot } from "./prompt-snapshot.js";

/** A submitted prompt not yet in the transcript: it enters it when a round starts. */
export interface Unsent {
  readonly text: string;
  readonly steer: boolean;
}

/** What folds from an agent's journal into what its next provider request needs (conversation.ts). */
export interface TranscriptFold {
  /** Undefined while not loaded (a resumed agent's, until it next runs a prompt). */
  transcript: Transcript | undefined;
  /** Submitted prompts not yet in the transcript, by prompt id. */
  unsent: Map<string, Unsent>;
  /** Summaries recorded and not yet committed, by compaction id. */
  summaries: Map<string, string>;
}

/** The conversation slice (conversation.ts). */
export interface ConversationState extends TranscriptFold {
  /** A load of the transcript from the journal under way. */
  loading: Promise<void> | undefined;
  /** Where loading the transcript starts (a resumed agent's fold says; 0 reads the whole journal). */
  from: number;
}

export interface Queued {
  readonly promptId: string;
  /** The only tools this prompt's turn offers and runs (SPEC-handoff); all of the agent's when absent. */
  readonly onlyTools?: readonly string[];
}

/** A turn under way: the round of it the provider is answering is a round of the round router. */
export interface Turn extends Round {
  round: number;
  readonly model: string;
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
  /** What every round of the turn is told and may call, fixed at its first round (prompt-snapshot.ts). */
  readonly snapshot: PromptSnapshot;
}

/** The prompt slice (turn-loop.ts): prompts waiting, steering, and the turn under way. */
export interface PromptState {
  /** A dispatch is waiting for model listings under way, or for the agent's initialization; it goes on by itself. */
  awaitingModels: boolean;
  readonly queue: Queued[];
  readonly steering: string[];
  turn: Turn | undefined;
}

/** A compaction under way (SPEC-compaction): its summary request is a round 0 whose prompt id is the compaction's id. */
export interface ActiveCompaction extends Round {
  readonly round: 0;
  readonly cutSeq: number;
  readonly model: string;
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
export interface CompactionRequest {
  readonly trigger: CompactionTrigger;
  readonly instructions?: string;
  readonly requestedBy?: string;
  readonly done?: (outcome: CompactionOutcome) => void;
}

/** The compaction slice (compactor.ts). */
export interface CompactionState {
  active: ActiveCompaction | undefined;
  readonly requests: CompactionRequest[];
  /** A failed compaction whose watermark a successor owes (from the journal). */
  owed: { id: string; watermark: number } | undefined;
}

/** The usage slice (usage.ts). */
export interface UsageState {
  /** Token usage so far (from the journal's fold on a resume), from which the stats are made. */
  totals: AgentUsageTotals;
  /** The stats last published, so an unchanged one is not published again. */
  lastStats: string;
  /** The context use the last response reported (or a compaction's estimate of what is left). */
  contextTokens: number;
  /** A response's context use not yet weighed for automatic compaction. */
  contextFresh: boolean;
}

/** The alert slice (alerts.ts): what the agent is told at its next round's start. */
export interface AlertState {
  /** Context-size alerts crossed (daemon-local). */
  readonly crossed: Set<string>;
  /** Alerts waiting for the next round start. */
  queued: ContextAlert[];
  /** The sandbox's newest state change, not yet in this agent's context. */
  sandbox?: string;
  /** The tools the agent's last unrestricted prompt offered (daemon-local: a resumed agent starts afresh). */
  offered?: ReadonlySet<string>;
  /** What changed in them, not yet in this agent's context. */
  tools?: string;
}

/**
 * The ordinary user messages of an agent's whole journal, folded as far as `at` (SPEC-sandbox-reviewer):
 * required review input that a compaction never shortens, read from the journal, not the transcript.
 */
export interface UserIntent {
  at: number;
  readonly unsent: Map<string, Unsent>;
  readonly messages: string[];
}

/** The intent slice (permission-reviewer.ts): the user's messages read for reviews, and a read under way. */
export interface IntentState {
  read?: UserIntent;
  reading?: Promise<void>;
}

export interface AgentLoop {
  /** The model the agent chose (`agent.started`, `agent.model_set`), folded by the agent loop. */
  model: string | undefined;
  readonly conversation: ConversationState;
  readonly prompts: PromptState;
  readonly compaction: CompactionState;
  readonly usage: UsageState;
  readonly alerts: AlertState;
  readonly intent: IntentState;
}

/** Every agent's loop state, by agent id. */
export class AgentLoops {
  private readonly loops = new Map<string, AgentLoop>();

  /** The agent's state, made on first use. */
  of(agentId: string): AgentLoop {
    let l = this.loops.get(agentId);
    if (!l) {
      l = {
        model: undefined,
        conversation: { transcript: emptyTranscript(), unsent: new Map(), summaries: new Map(), loading: undefined, from: 0 },
        prompts: { awaitingModels: false, queue: [], steering: [], turn: undefined },
        compaction: { active: undefined, requests: [], owed: undefined },
        usage: { totals: emptyUsageTotals(), lastStats: "", contextTokens: 0, contextFresh: false },
        alerts: { crossed: new Set(), queued: [] },
        intent: {},
      };
      this.loops.set(agentId, l);
    }
    return l;
  }

  /** The agent's state if it has any yet. */
  find(agentId: string): AgentLoop | undefined {
    return this.loops.get(agentId);
  }

  entries(): IterableIterator<[string, AgentLoop]> {
    return this.loops.entries();
  }

  values(): IterableIterator<AgentLoop> {
    return this.loops.values();
  }
}
