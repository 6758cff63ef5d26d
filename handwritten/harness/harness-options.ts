// What a harness is opened with (its options) and what it needs from whoever supervises the
// extensions (the daemon's supervisor fills it in once extensions run).
import type { AgentLimits, ExtensionConfig, ModelMetadata, RolePolicy } from "../../generated/index.js";
import type { ExtensionCounters } from "../host/index.js";
import type { CompactionSettings } from "./compactor.js";
import type { PeerBudget } from "./peer-messaging.js";

export interface HarnessOptions {
  /** State root; omitted for an ephemeral session, which keeps no session-owned files. */
  readonly stateDir?: string;
  readonly projectRoot: string;
  /** Resume this session instead of creating one. */
  readonly resume?: string;
  /** The id for a new session (a launcher mints it so it can name the log file); minted when absent. */
  readonly sessionId?: string;
  /**
   * The session's initialization (session readiness) waits for `beginSessionInitialization`, which
   * the daemon calls once its first extensions started; otherwise it begins as the session opens.
   */
  readonly deferSessionInitialization?: boolean;
  readonly warn?: (message: string) => void;
  /** Mirror committed events to the session's debug events.jsonl (never for ephemeral sessions). */
  readonly debugLog?: boolean;
  /** Where the user's AGENTS.md lives (the config root). */
  readonly configRoot?: string;
  /** The model for agents that did not choose one, `provider/model` or a model id. */
  readonly defaultModel?: string;
  /** Without one: the provider instance whose default model (the first it declares) they use. */
  readonly defaultProvider?: string;
  /** Model metadata from the configuration (`model_info`), by model id or `provider/model`. */
  readonly modelInfo?: Readonly<Record<string, ModelMetadata>>;
  /** `title_model` (harness.yaml): the model that writes each new session's title after its first answer. */
  readonly titleModel?: string;
  readonly systemTemplate?: string;
  /** Compaction and context-size alert settings (SPEC-compaction); defaults when absent. */
  readonly compaction?: Partial<CompactionSettings>;
  /** Tool policy by role (`roles` in harness.yaml). */
  readonly roles?: Readonly<Record<string, RolePolicy>>;
  /** Long-wait thresholds in seconds (tests; LONG_WAIT_THRESHOLDS_S otherwise). */
  readonly longWaitThresholdsS?: readonly number[];
  /** Bounds on agents that start agents (`agent_limits` in harness.yaml; SPEC-agent-team, "Bounds"). */
  readonly agentLimits?: AgentLimits;
  /**
   * Starts the replacement daemon of a handoff (SPEC-handoff) with this daemon's own configuration,
   * for session `sessionId` seeded from `seedPath`; resolves once it is up. Absent: no handoff.
   */
  readonly launchReplacement?: (o: { sessionId: string; seedPath: string; resume: boolean }) => Promise<{ pid: number }>;
  /** The pid of a daemon running session `sessionId`, if one is (a handoff's replacement already started). */
  readonly replacementPid?: (sessionId: string) => Promise<number | undefined>;
  /** The runtime folder where other sessions' daemons are found (peer messaging, SPEC-peer-messaging). */
  readonly runtimeDir?: string;
  /** The peer-message admission budget and its monotonic clock in ms (tests; DEFAULT_PEER_BUDGET and performance.now otherwise). */
  readonly peerBudget?: PeerBudget;
  readonly peerClock?: () => number;
}

/** What tool routing needs from whoever supervises extensions. */
export interface ExtensionLiveness {
  isLive(instance: string, generation: number): boolean;
  toolPrefix(instance: string): string;
  /** The generation of an instance's live connection, if it has one. */
  generationOf(instance: string): number | undefined;
  /** Whether an instance's configuration lets it call `tool` through its own `tool.request`. */
  mayCall(instance: string, tool: string): boolean;
  /** Whether an instance may still come back (running, starting or respawning): its tool names wait for it. */
  mayReturn(instance: string): boolean;
  /** Protocol counters per configured extension (`ui_debug_event_stats_request`). */
  counters(): readonly ExtensionCounters[];
  /** The configuration an instance runs with (where a provider's rounds go: `providerEndpoint`). */
  configOf?(instance: string): ExtensionConfig | undefined;
}
