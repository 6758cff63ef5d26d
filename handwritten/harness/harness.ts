// The harness: one session's state, built from committed events. It owns the bus, the journals and
// the consumers that turn requests into canonical facts (SPEC-session-lifecycle,
// SPEC-agent-lifecycle, SPEC-agent-metadata, SPEC-ui-commands).
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Bus, type Committed, type Event, type PublishOutcome, type PublisherEnvelope } from "../bus/index.js";
import {
  WritebackWorker,
  mirrorDebugEvent,
  openFileStateStore,
  openMemoryStateStore,
  journalPath,
  replayJournal,
  validateJournalRecord,
  type EventLog,
  type JournalRecord,
  type StateStore,
} from "../store/index.js";
import { ToolRouter } from "./tools.js";
import { DEFAULT_COMPACTION, PromptEngine, type CompactionSettings } from "./prompts.js";
import { HARNESS_TOOLS, harnessToolAllowed, policyOf } from "./tool-policy.js";
import { ShellCommandRouter } from "./shell-commands.js";
import { ConsumerRegistry } from "./consumers.js";
import { AgentContext, type ContextHolder, type ToolListing } from "./agent-context.js";
import { ResumeError, publisherToSource, recordEvent, reopenAgent, sessionMembers } from "./session-restore.js";
import { agentIdOf, eventProblem, fitText, splitProviderCall, type ProviderCall } from "../protocol/index.js";
import { type AgentStarted, type EventName, type EventPayloads, type ExtensionConfig, type ModelMetadata, type Publisher, type RolePolicy, type UiSkillLoadResult } from "../../generated/index.js";
import { providerEndpoint } from "../config/index.js";
import { mintId } from "./ids.js";
import { DAEMON_LOG } from "../startup/launch-facts.js";
import { PeerInbox, PeerOutbox, type PeerBudget } from "./peer-messaging.js";
import type { Peer } from "./peers.js";
import { emptyAgentFold, foldAgentRecord, type AgentFold } from "./agent-fold.js";
import { openJournalHistory } from "./history.js";
import { CHECKPOINT_EVERY_BYTES, HISTORY_PAGE_BYTES, HISTORY_PAGE_MAX_EVENTS } from "./limits.js";
import type { ExtensionCounters } from "../host/index.js";
import { AgentTeam, lastAnswerOf } from "./agent-team.js";
import { Navigation } from "./navigation.js";
import { SessionSummaryFold, titleFromPrompt } from "../sessions/index.js";

export const HARNESS: PublisherEnvelope = Object.freeze({ class: "harness" });

export interface HarnessOptions {
  /** State root; omitted for an ephemeral session, which keeps no session-owned files. */
  readonly stateDir?: string;
  readonly projectRoot: string;
  /** Resume this session instead of creating one. */
  readonly resume?: string;
  /** The id for a new session (a launcher mints it so it can name the log file); minted when absent. */
  readonly sessionId?: string;
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
  /**
   * Starts the replacement daemon of a handoff (SPEC-handoff) with this daemon's own configuration,
   * for session `sessionId` seeded from `seedPath`; resolves once it is up. Absent: no handoff.
   */
  readonly launchReplacement?: (o: { sessionId: string; seedPath: string }) => Promise<void>;
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

export interface AgentState extends ContextHolder {
  readonly id: string;
  /** Identity, model, metadata and open prompts, folded from the journal (stored with its checkpoints). */
  readonly fold: AgentFold;
  log: EventLog;
}

export class Harness {
  readonly bus: Bus;
  readonly agents = new Map<string, AgentState>();
  private readonly peers = new Map<number, Peer>();
  private sessionLog!: EventLog;
  private restoreLog!: EventLog;
  /** The session journal folded for listings; kept in its checkpoint after every append. */
  private readonly summary: SessionSummaryFold;
  /** A session-journal append is not in the checkpoint's summary yet. */
  private sessionCheckpointDue = false;
  /** A title was asked for (set once, from the first human prompt). */
  private titleRequested = false;
  private closed = false;
  readonly tools: ToolRouter;
  /** Set by the daemon once extensions are supervised; until then no extension is live. */
  extensions: ExtensionLiveness = {
    isLive: () => false,
    toolPrefix: () => "",
    generationOf: () => undefined,
    mayCall: () => false,
    mayReturn: () => false,
    counters: () => [],
  };
  readonly prompts: PromptEngine;
  private shellCommands!: ShellCommandRouter;
  private readonly writeback: WritebackWorker | undefined;
  private readonly context: AgentContext;
  /** Agents that start agents: the agent tools, watches, waits and the roster (SPEC-agent-team). */
  readonly team: AgentTeam;
  /** Agents that left the session, from its journal (the roster's unloaded history). */
  private readonly unloaded = new Set<string>();
  /** Peer messaging (SPEC-peer-messaging): messages from other sessions in, the model's out. */
  readonly peerInbox: PeerInbox;
  private readonly peerOutbox: PeerOutbox;
  /** How the UIs present each agent: in memory only, never journaled (SPEC-agent-navigation). */
  readonly navigation = new Navigation((agentId) => {
    const agent = this.agents.get(agentId);
    return agent === undefined ? null : agent.fold.creator;
  });

  private constructor(
    readonly sessionId: string,
    readonly projectRoot: string,
    readonly store: StateStore,
    private readonly options: HarnessOptions,
    writeback: WritebackWorker | undefined,
  ) {
    this.bus = new Bus({
      append: (c) => this.append(c),
      warn: options.warn,
      snapshotKey,
      ephemeral: (e) => this.concernsEphemeral(e),
      history: { open: (recent) => openJournalHistory(this.historyLogs(), recent) },
    });
    this.writeback = writeback;
    this.summary = new SessionSummaryFold(projectRoot);
    this.context = new AgentContext({
      projectRoot,
      ...(options.configRoot !== undefined ? { configRoot: options.configRoot } : {}),
      ...(options.systemTemplate !== undefined ? { systemTemplate: options.systemTemplate } : {}),
      skillSkipped: (p) => void this.publishHarness("harness.notice", { level: "warning", text: `skill skipped: ${p}`.slice(0, 1024), mandatory: false }),
    });
    // Post-commit consumers register by their declaration (consumers.ts); all of it, checked below.
    const consumers = new ConsumerRegistry(this.bus);
    consumers.consume("session", "ui.create_agent", (c) => this.onCreateAgent(c));
    consumers.consume("session", "ui.skill_load", (c) => this.onSkillLoad(c));
    consumers.consume("session", "agent.metadata_request", (c) => this.onMetadataRequest(c));
    consumers.consume("session", "agent.prompt_submitted", (c) => this.onPromptSubmitted(c));
    consumers.consume("session", "session.handoff_request", (c) => this.onHandoffRequest(c));
    this.tools = new ToolRouter({
      publish: (name, data) => void this.publishHarness(name, data),
      direct: (generation, name, data) => void this.sendDirected(generation, name, data),
      isLive: (instance, generation) => this.extensions.isLive(instance, generation),
      toolPrefix: (instance) => this.extensions.toolPrefix(instance),
      mayCall: (instance, tool) => this.extensions.mayCall(instance, tool),
      mayReturn: (instance) => this.extensions.mayReturn(instance),
      hasAgent: (agentId) => this.agents.has(agentId),
      warn: (m) => options.warn?.(m),
    });
    consumers.consume("tools", "tool.registration_declared", (c) => this.tools.onRegistrationDeclared(c));
    consumers.consume("tools", "tool.unregistration_declared", (c) => this.tools.onUnregistrationDeclared(c));
    consumers.consume("session", "tool.unregister", (c) => this.bus.forgetSnapshot(`tool:${c.data.name}`));
    consumers.consume("tools", "tool.request", (c) => this.tools.onRequest(c));
    consumers.consume("tools", "tool.progress_reported", (c) => this.tools.onProgressReported(c));
    for (const name of ["tool.result_reported", "tool.error_reported", "tool.cancelled_reported"] as const) {
      consumers.consume("tools", name, (c) => this.tools.onTerminalReported(c));
    }
    this.prompts = new PromptEngine({
      publish: async (name, data) => (await this.publishHarness(name, data)).status === "committed",
      humanPromptAdmitted: (agentId) => this.navigation.humanPromptAdmitted(agentId),
      directToInstance: (instance, name, data) => {
        const generation = this.extensions.generationOf(instance);
        return generation !== undefined && this.sendDirected(generation, name, data);
      },
      sendProviderCall: (instance, generation, call) => this.sendProviderCall(instance, generation, call),
      providerEndpoint: (instance) => {
        const config = this.extensions.configOf?.(instance);
        return config ? providerEndpoint(config) : undefined;
      },
      generationOf: (instance) => this.extensions.generationOf(instance),
      hasAgent: (agentId) => this.agents.has(agentId),
      systemPrompt: (agentId) => this.systemPromptFor(agentId),
      tools: (agentId) => this.toolListing(agentId),
      harnessToolAllowed: (agentId, name) => this.harnessToolAllowed(agentId, name),
      isLiveUi: (generation) => generation !== undefined && this.peers.get(generation)?.publisher.class === "ui_attached",
      isLiveExtension: (instance, generation) => this.extensions.isLive(instance, generation),
      compaction: { ...DEFAULT_COMPACTION, ...options.compaction },
      defaultModel: () => options.defaultModel,
      defaultProvider: () => options.defaultProvider,
      modelInfo: () => options.modelInfo,
      titleModel: () => options.titleModel,
      warn: (m) => options.warn?.(m),
      agentRecords: (agentId, from, to, maxBytes) => {
        const log = this.agents.get(agentId)?.log;
        return (log?.readRange(from, to, maxBytes) ?? []).map((r) => recordEvent(r, log?.path ?? null));
      },
      agentRecordCount: (agentId) => this.agents.get(agentId)?.log.nextSeq ?? 0,
      parentOf: (agentId) => {
        const fold = this.agents.get(agentId)?.fold;
        if (fold?.parent_id !== undefined && this.agents.has(fold.parent_id) && !this.unloaded.has(fold.parent_id)) return fold.parent_id;
        return fold?.creator === "agent" ? null : undefined;
      },
    });
    const shell = new ShellCommandRouter({
      publish: (name, data) => void this.publishHarness(name, data),
      shellTool: () => this.tools.tools.get("shell"),
      hasAgent: (agentId) => this.agents.has(agentId),
      isLive: (instance, generation) => this.extensions.isLive(instance, generation),
    });
    this.shellCommands = shell;
    consumers.consume("shell", "shell.command_request", (c) => shell.onRequest(c));
    consumers.consume("shell", "shell.command_progress_reported", (c) => shell.onProgressReported(c));
    consumers.consume("shell", "shell.command_finished_reported", (c) => shell.onFinishedReported(c));
    const p = this.prompts;
    consumers.consume("prompts", "ui.prompt_submit", (c) => p.onUiPromptSubmit(c));
    consumers.consume("prompts", "agent.internal_prompt_request", (c) => p.onInternalPromptRequest(c));
    consumers.consume("prompts", "agent.prompt_submitted", (c) => p.onPromptSubmitted(c));
    consumers.consume("prompts", "ui.model_select", (c) => p.onModelSelect(c));
    consumers.consume("prompts", "ui.compact_request", (c) => p.onCompactRequest(c));
    consumers.consume("prompts", "provider.models_declared", (c) => p.onModelsDeclared(c));
    consumers.consume("prompts", "provider.response_delta_reported", (c) => p.onDeltaReported(c));
    consumers.consume("prompts", "provider.response_finished_reported", (c) => p.onFinishedReported(c));
    consumers.consume("prompts", "provider.response_failed_reported", (c) => p.onFailedReported(c));
    consumers.consume("prompts", "provider.retry_reported", (c) => p.onRetryReported(c));
    consumers.consume("prompts", "sandbox.state_reported", (c) => p.onSandboxState(c));
    consumers.consume("prompts", "handoff.state_reported", (c) => p.onHandoffState(c));
    consumers.consume("prompts", "sandbox.review_request", (c) => p.onReviewRequest(c));
    consumers.consume("prompts", "provider.tool_result", (c) => p.onToolOutcome(c));
    consumers.consume("prompts", "provider.tool_error", (c) => p.onToolOutcome(c));
    // A cancel reaches the agent's tool calls first, then its turn (consumers run in registration order).
    consumers.consume("tools", "agent.cancel_request", (c) => this.tools.cancelAgent(c.data.agent_id));
    consumers.consume("prompts", "agent.cancel_request", (c) => p.onCancelRequest(c));
    this.team = new AgentTeam({
      publish: async (name, data) => (await this.publishHarness(name, data)).status === "committed",
      fold: (agentId) => this.agents.get(agentId)?.fold,
      agentIds: () => [...this.agents.keys()],
      startChild: (o) => this.startChild(o),
      busy: (agentId) => p.activity(agentId) !== undefined,
      callOpen: (agentId, promptId, callId) => p.callOpen(agentId, promptId, callId),
      toolAllowed: (agentId, name) => this.harnessToolAllowed(agentId, name),
      roles: () => options.roles,
      lastAnswer: (agentId) => this.lastAnswer(agentId),
      unloadedIds: () => [...this.unloaded],
      currentTurn: (agentId) => p.currentTurn(agentId),
      peerSend: (from, to, text) => this.peerOutbox.send(from, to, text),
      peerList: () => this.peerOutbox.list(),
      warn: (m) => options.warn?.(m),
    }, options.longWaitThresholdsS !== undefined ? { longWaitThresholdsS: options.longWaitThresholdsS } : {});
    const team = this.team;
    this.peerInbox = new PeerInbox(
      {
        sessionId,
        addressable: (agentId) => this.agents.get(agentId)?.fold.ephemeral === false,
        publish: async (name, data) => (await this.publishHarness(name, data)).status === "committed",
        agents: () =>
          [...this.agents.values()]
            .filter((a) => !a.fold.ephemeral)
            .sort((a, b) => (a.id < b.id ? -1 : 1))
            .map((a) => ({ agent_id: a.id, busy: p.activity(a.id) !== undefined, ...(a.fold.metadata.display_name !== undefined ? { display_name: a.fold.metadata.display_name } : {}) })),
      },
      options.peerBudget,
      options.peerClock,
    );
    this.peerOutbox = new PeerOutbox({ runtimeDir: options.runtimeDir, sessionId });
    consumers.consume("agents", "tool.request", (c) => team.onToolRequest(c));
    consumers.consume("agents", "agent.outer_turn_finished", (c) => team.onTurnFinished(c));
    consumers.consume("agents", "agent.prompt_failed", () => team.settle());
    // After the cancelled agent's own consumers: its children are cancelled next.
    consumers.consume("agents", "agent.cancel_request", (c) => team.onCancelRequest(c));
    consumers.assertComplete();
    const stateDir = options.stateDir;
    if (stateDir && options.debugLog !== false) {
      this.bus.onCommitted("*", (c) => {
        if (c.ephemeral) return; // ephemeral agents and `!!` commands leave no debug-log rows
        mirrorDebugEvent(stateDir, this.sessionId, { seq: c.seq, recorded_at: c.recordedAt, name: c.name, publisher: c.publisher, data: c.data });
      });
    }
  }

  get ephemeral(): boolean {
    return this.store.memoryOnly;
  }

  /** Opens a new or resumed session; a corrupt journal fails closed with a clear message. */
  static async open(options: HarnessOptions): Promise<Harness> {
    // Appends are foreground writes; the writeback worker syncs them (and their folders) in the background.
    const writeback = options.stateDir ? new WritebackWorker({ root: options.stateDir }) : undefined;
    const store = options.stateDir ? openFileStateStore({ stateDir: options.stateDir, onAppend: writeback?.onAppend }) : openMemoryStateStore();
    const sessionId = options.resume ?? options.sessionId ?? mintId("s");
    const h = new Harness(sessionId, options.projectRoot, store, options, writeback);
    try {
      const sessionRecords: JournalRecord[] = [];
      h.sessionLog = store.openSession(sessionId, { onRecord: (r) => sessionRecords.push(r) });
      h.restoreLog = store.openRestore(sessionId, { resume: true });
      for (const r of sessionRecords) h.summary.fold(r.event.name, r.event.data, r.recorded_at);
      h.titleRequested = h.summary.hasTitle;
      if (options.resume) h.restoreFromJournals(sessionRecords);
      else if (options.stateDir) h.writeManifest(options.stateDir);
    } catch (err) {
      store.close();
      const msg = err instanceof Error ? err.message : String(err);
      throw new ResumeError(`cannot open session ${sessionId}: ${msg}`);
    }
    await h.publishHarness("session.started", {
      session_id: sessionId,
      project_root: options.projectRoot,
      resumed: options.resume !== undefined,
      ephemeral: store.memoryOnly,
    });
    if (options.resume) await h.prompts.settleRestored(new Map([...h.agents].map(([id, a]) => [id, a.fold])));
    return h;
  }

  /**
   * A handoff's replacement session (SPEC-handoff): the lineage fact, one agent with the source
   * agent's role and model, and the dossier as its first user turn. The daemon calls it once its
   * extensions started, so the turn finds its provider.
   */
  async seedFromHandoff(seed: HandoffSeed): Promise<void> {
    await this.publishHarness("session.lineage_set", { parent_session_id: seed.parent_session_id, parent_agent_id: seed.parent_agent_id });
    const agentId = mintId("a");
    const problem = await this.createAgent({ agentId, creator: "harness", role: seed.role, model: seed.model });
    if (problem !== undefined) throw new Error(`the handoff's agent could not be created: ${problem}`);
    await this.publishHarness("agent.prompt_submitted", { agent_id: agentId, prompt_id: mintId("p"), source: "human_ui", mode: "queue", text: seed.dossier });
  }

  /** One handoff request is handled at a time. */
  private handoffBusy = false;

  /**
   * `session.handoff_request` (SPEC-handoff): a live extension asks for the replacement session of
   * this one. Checked, then the replacement's seed is written, its daemon started with this
   * daemon's configuration, and `session.handed_off` committed; the requester is always answered.
   */
  private async onHandoffRequest(c: Committed<"session.handoff_request">): Promise<void> {
    const req = c.data;
    const gen = c.publisher.generation;
    const instance = c.publisher.instance;
    if (c.publisher.class !== "extension" || gen === undefined || instance === undefined || !this.extensions.isLive(instance, gen)) return;
    const answer = (ok: boolean, error?: string) =>
      this.sendDirected(gen, "session.handoff_result", { request_id: req.request_id, ok, ...(ok ? { session_id: req.session_id } : { error: sanitizeLine(error ?? "refused").slice(0, 1024) }) });
    const stateDir = this.options.stateDir;
    const launch = this.options.launchReplacement;
    if (this.ephemeral || stateDir === undefined) return void answer(false, "an ephemeral session cannot be handed off");
    if (launch === undefined) return void answer(false, "this daemon cannot start a replacement session");
    const agent = this.agents.get(req.agent_id);
    if (!agent || agent.fold.ephemeral) return void answer(false, `unknown agent ${req.agent_id}`);
    if (req.session_id === this.sessionId || !/^s-[A-Za-z0-9_-]{1,100}$/.test(req.session_id)) return void answer(false, "the new session id is not a fresh session id");
    const problem = dossierProblem(req.dossier, req.session_id);
    if (problem !== undefined) return void answer(false, problem);
    if (this.handoffBusy) return void answer(false, "a handoff of this session is already being created");
    this.handoffBusy = true;
    try {
      const dir = join(stateDir, "sessions", req.session_id);
      if (existsSync(dir)) {
        // A request repeated after a crash (`:handoff recover resume`): a replacement this session
        // already created is found by its lineage and only recorded, never created a second time.
        const parent = lineageParentOf(stateDir, req.session_id);
        if (parent !== this.sessionId) {
          return void answer(false, parent === undefined ? `session ${req.session_id} exists already and continues no session` : `session ${req.session_id} exists already and continues session ${parent}`);
        }
        const o = await this.publishHarness("session.handed_off", { successor_session_id: req.session_id, agent_id: agent.id });
        return void answer(o.status === "committed", o.status === "committed" ? undefined : "the replacement exists, but the handoff could not be recorded");
      }
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const seed: HandoffSeed = {
        parent_session_id: this.sessionId,
        parent_agent_id: agent.id,
        dossier: req.dossier,
        ...(agent.fold.role !== undefined ? { role: agent.fold.role } : {}),
        ...(agent.fold.model !== undefined ? { model: agent.fold.model } : {}),
      };
      const seedPath = join(dir, HANDOFF_SEED_FILE);
      const tmp = `${seedPath}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(seed), { mode: 0o600 });
      renameSync(tmp, seedPath);
      await launch({ sessionId: req.session_id, seedPath });
      // The replacement deletes its seed once its lineage, agent and dossier turn are committed: only
      // then is the handoff recorded, so a UI that follows it finds the agent and its first turn.
      if (!(await fileGone(seedPath, REPLACEMENT_SEEDED_MS))) {
        return void answer(false, `the replacement session ${req.session_id} started but did not take its dossier within ${REPLACEMENT_SEEDED_MS / 1000} s (its log: ${join(dir, DAEMON_LOG)})`);
      }
      // Fault injection for the crash tests (GATE-handoff, handoff.crash.*): stop for good between the
      // replacement's start and the record of the handoff, so a test can SIGKILL exactly there.
      if (process.env.TAU_HANDOFF_HOLD_AT === "launched") await new Promise<never>(() => {});
      const o = await this.publishHarness("session.handed_off", { successor_session_id: req.session_id, agent_id: agent.id });
      if (o.status !== "committed") return void answer(false, "the replacement started, but the handoff could not be recorded");
      answer(true);
    } catch (err) {
      answer(false, `the replacement session could not be started: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      this.handoffBusy = false;
    }
  }

  /** Every journal of the session, for replay: the session's, the restore stream, each agent's. */
  private historyLogs(): EventLog[] {
    return [this.sessionLog, this.restoreLog, ...[...this.agents.values()].map((a) => a.log)];
  }

  private writeManifest(stateDir: string): void {
    const dir = join(stateDir, "sessions", this.sessionId);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = join(dir, `.manifest.json.${process.pid}.tmp`);
    writeFileSync(tmp, `${JSON.stringify({ session_id: this.sessionId, project_root: this.projectRoot }, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, join(dir, "manifest.json"));
  }

  /**
   * Cold resume, reading each journal once: the session journal in full (it is small: membership),
   * the restore stream from its checkpoint, and each member agent's journal from its checkpoint —
   * the fold stored with it stands for the records before it, and only the records after it are
   * validated and folded (a journal with no usable checkpoint is folded whole). Transcripts stay in
   * the journals until an agent next runs a prompt; replay reads the journals on demand.
   */
  private restoreFromJournals(sessionRecords: readonly JournalRecord[]): void {
    if (sessionRecords.length === 0) throw new ResumeError(`session ${this.sessionId} has no journal records`);
    const members = sessionMembers(sessionRecords, this.sessionLog.path);
    for (const id of members) {
      const { fold, log } = reopenAgent(this.store, id);
      this.agents.set(id, { id, fold, log });
      this.prompts.restore(id, fold);
    }
    // A parent edge stands only on a valid creation record naming a member of this session.
    for (const a of this.agents.values()) {
      const by = a.fold.created_by;
      if (a.fold.parent_id !== undefined && (by === undefined || by.agent_id !== a.fold.parent_id || !this.agents.has(by.agent_id)) && a.fold.creator === "agent") {
        delete a.fold.parent_id;
      }
    }
    const events = sessionRecords.map((r) => recordEvent(r, this.sessionLog.path));
    for (const e of events) if (e.name === "session.agent_loaded" || e.name === "session.agent_unloaded") this.unloaded.add(e.data.agent_id);
    for (const id of members) this.unloaded.delete(id);
    this.team.restoreWatches(events);
  }

  /** A child an agent started (`agent_start`): its creation record names the parent and the call; it inherits the parent's model and ephemerality. */
  private startChild(o: { agentId: string; parentId: string; callId: string; role?: string; displayName?: string }): Promise<string | undefined> {
    const parent = this.agents.get(o.parentId)?.fold;
    return this.createAgent({
      agentId: o.agentId,
      parentId: o.parentId,
      creator: "agent",
      createdBy: { agent_id: o.parentId, call_id: o.callId },
      role: o.role,
      model: parent?.model,
      ephemeral: parent?.ephemeral === true,
      displayName: o.displayName,
    });
  }

  /** An agent's last answer, from the last records of its journal (bounded: a result, not a transcript). */
  private lastAnswer(agentId: string): string | undefined {
    const log = this.agents.get(agentId)?.log;
    if (!log) return undefined;
    const end = log.nextSeq;
    return lastAnswerOf(log.readRange(log.windowStart(end, 256, 4 * 1024 * 1024), end));
  }

  /**
   * Writes the session journal's checkpoint with its summary soon: appends made in one turn of the
   * event loop (a session's start, an agent and its membership) share one write. It is derived, so
   * one lost to a crash only leaves a listing without the newest title.
   */
  private checkpointSessionSoon(): void {
    if (this.sessionCheckpointDue) return;
    this.sessionCheckpointDue = true;
    setImmediate(() => this.checkpointSession());
  }

  /** The session journal's checkpoint with its summary (listings read it instead of the journal), when one is due. */
  private checkpointSession(): void {
    if (!this.sessionCheckpointDue) return;
    this.sessionCheckpointDue = false;
    try {
      this.sessionLog.checkpoint({ ...this.summary.value(Date.now() * 1000) });
    } catch (err) {
      this.options.warn?.(`could not write the session's summary: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** The session's title, from the first line of its first human prompt. */
  private async onPromptSubmitted(c: Committed<"agent.prompt_submitted">): Promise<void> {
    if (this.titleRequested || c.data.source !== "human_ui" || this.agents.get(c.data.agent_id)?.fold.ephemeral === true) return;
    const title = titleFromPrompt(c.data.text);
    if (title === undefined) return;
    this.titleRequested = true;
    this.prompts.titleFromAnswerOf(c.data.agent_id, c.data.prompt_id, c.data.text);
    await this.publishHarness("session.title_set", { title, origin: "first_prompt" });
  }

  /**
   * Writes an agent's checkpoint (its fold at the journal's end) when at least `due` bytes were
   * appended since the last one: a resume after a crash folds a short tail, and a trace of a running
   * session reads up to it. Always with `due` 0 when anything was appended (shutdown, a turn's end).
   */
  private checkpointAgent(agent: AgentState, due = 1): void {
    if (agent.fold.ephemeral || agent.log.bytesSinceCheckpoint < due) return;
    try {
      agent.log.checkpoint({ ...agent.fold });
    } catch (err) {
      this.options.warn?.(`could not write the checkpoint of agent ${agent.id}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /**
   * A page of one agent's history for `ui_history_request`: the records before `before` (its
   * journal's end when absent), at most `limit` and about HISTORY_PAGE_BYTES of them, oldest first.
   */
  historyPage(agentId: string, before: number | undefined, limit: number): { first: number; total: number; records: JournalRecord[] } | undefined {
    const agent = this.agents.get(agentId);
    if (!agent) return undefined;
    const total = agent.log.nextSeq;
    const end = Math.min(before ?? total, total);
    const first = agent.log.windowStart(end, Math.min(limit, HISTORY_PAGE_MAX_EVENTS), HISTORY_PAGE_BYTES);
    return { first, total, records: agent.log.readRange(first, end) };
  }

  /**
   * Whether an event concerns ephemeral state: an ephemeral agent (by its id, or a call, prompt or
   * command of its), the request creating one, or a `!!` user command and everything of its route.
   */
  private concernsEphemeral(e: Event): boolean {
    const { name, data } = e;
    const agentId = agentIdOf(e);
    if (agentId !== undefined && this.agents.get(agentId)?.fold.ephemeral === true) return true;
    if (e.name === "ui.create_agent") return e.data.ephemeral === true;
    if (e.name === "shell.command_request") return e.data.include_in_context === false;
    if ("request_id" in data && data.request_id !== undefined && name.startsWith("shell.command_")) return this.shellCommands.isEphemeralRoute(data.request_id);
    let owner: string | undefined;
    if ("call_id" in data && data.call_id !== undefined && name.startsWith("tool.")) owner = this.tools.agentOfCall(data.call_id);
    else if ("prompt_id" in data && data.prompt_id !== undefined && name.startsWith("provider.")) owner = this.prompts.agentOfPrompt(data.prompt_id);
    return owner !== undefined && this.agents.get(owner)?.fold.ephemeral === true;
  }

  /** Durable appends by persistence class; throwing aborts the commit. */
  private append(c: Committed): void {
    const source = publisherToSource(c.publisher);
    const input = { event: { name: c.name, data: c.data }, source, recorded_at: c.recordedAt };
    const agentId = agentIdOf(c);
    // An ephemeral agent's facts stay in memory: its own journal is memory-only, and the session's
    // journals never name it, so nothing of it is left to resume.
    if (c.persistence !== "agent" && agentId !== undefined && this.agents.get(agentId)?.fold.ephemeral === true) return;
    if (c.persistence === "session") {
      this.sessionLog.append(input);
      this.summary.fold(c.name, c.data, c.recordedAt);
      this.checkpointSessionSoon();
    } else if (c.persistence === "restore") {
      this.restoreLog.append(input);
    } else if (c.persistence === "agent") {
      const agent = agentId !== undefined ? this.agents.get(agentId) : undefined;
      if (!agent) throw new Error(`no loaded agent ${agentId ?? "(none named)"} for ${c.name}`);
      const parent = agent.log.nextSeq === 0 ? null : agent.log.nextSeq - 1;
      const seq = agent.log.nextSeq;
      agent.log.append({ ...input, parent });
      foldAgentRecord(agent.fold, c, c.recordedAt);
      this.prompts.fold(c, seq);
      // The creation record and the end of each turn get a checkpoint (the fold is simple and the
      // journal quiet then), and so does a round's end past CHECKPOINT_EVERY_BYTES in a long turn.
      if (seq === 0 || c.name === "agent.outer_turn_finished") this.checkpointAgent(agent);
      else if (c.name === "provider.response_finished") this.checkpointAgent(agent, CHECKPOINT_EVERY_BYTES);
    }
  }

  publishHarness<N extends EventName>(name: N, data: EventPayloads[N]): Promise<PublishOutcome> {
    return this.bus.publish({ name, data }, HARNESS);
  }

  /** A peer joined: it may receive directed results. */
  addPeer(peer: Peer): void {
    this.peers.set(peer.generation, peer);
  }

  removePeer(generation: number): void {
    this.peers.delete(generation);
    this.bus.removeOwner(generation);
  }

  /** An extension connection ended: its open calls end with one error each and its tools go. */
  extensionGone(instance: string, generation: number): void {
    this.removePeer(generation);
    this.tools.onOwnerGone(instance, generation);
    this.shellCommands.onOwnerGone(instance, generation);
    void this.prompts.onProviderGone(instance, generation);
  }

  /** Render previews for `tau dev print-*` (AgentContext.preview): reads render inputs only. */
  preview(kind: "system-prompt" | "tools" | "prompt", text = ""): string {
    return this.context.preview(kind, text, this.toolListing(), (m) => this.options.warn?.(m));
  }

  /** The tools a provider request lists, by name: the extensions' and the harness's the agent may use. */
  private toolListing(agentId?: string): ToolListing[] {
    const own = [...HARNESS_TOOLS.values()].filter((t) => agentId === undefined ? t.onByDefault : this.harnessToolAllowed(agentId, t.name));
    return [...this.tools.tools.values(), ...own].sort((a, b) => (a.name < b.name ? -1 : 1)).map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
  }

  /** Whether an agent's role policy lets it use harness tool `name` (SPEC-compaction). */
  private harnessToolAllowed(agentId: string, name: string): boolean {
    return harnessToolAllowed(policyOf(this.options.roles, this.agents.get(agentId)?.fold.role), name);
  }

  /** The system prompt of an agent, its context frozen on first use (AgentContext), then its role's addendum (SPEC-agent-team). */
  systemPromptFor(agentId: string): string {
    const agent = this.agents.get(agentId);
    return this.context.systemPrompt(agent) + this.team.promptAddendum(agent ? agentId : undefined, agent?.fold.role);
  }

  /** A page of the roster for `ui_roster_request` (SPEC-agent-team, "Roster"). */
  rosterPage(o: { includeUnloaded: boolean; cursor?: string; limit?: number }): ReturnType<AgentTeam["roster"]> {
    const page = this.team.roster(o, (agentId) => this.prompts.activity(agentId));
    for (const row of page.rows) {
      const mode = row.loaded ? this.navigation.modeOf(row.agent_id) : undefined;
      if (mode !== undefined) row.navigation = mode;
    }
    return page;
  }

  /**
   * `ui.skill_load` (SPEC-skills): the exact live UI asked to load a skill of one agent's frozen
   * snapshot. The body (plus the user's text) becomes a human prompt; anything else is a directed
   * refusal and nothing is submitted.
   */
  private async onSkillLoad(c: Committed<"ui.skill_load">): Promise<void> {
    const req = c.data;
    const requester = c.publisher.generation;
    if (c.publisher.class !== "ui_attached" || requester === undefined || !this.peers.has(requester)) return;
    const answer = (fields: Omit<UiSkillLoadResult, "request_id">) => this.sendDirected(requester, "ui.skill_load_result", { request_id: req.request_id, ...fields });
    const refuse = (error: string) => answer({ ok: false, error: sanitizeLine(error).slice(0, 1024) });
    const agent = this.agents.get(req.agent_id);
    if (!agent) return void refuse(`unknown agent ${req.agent_id}`);
    const prompt = this.context.skillPrompt(agent, req.name, req.text);
    if ("refusal" in prompt) return void refuse(prompt.refusal);
    const promptId = mintId("p");
    const o = await this.publishHarness("agent.prompt_submitted", {
      agent_id: agent.id,
      prompt_id: promptId,
      source: "human_ui",
      mode: req.mode ?? "queue",
      text: prompt.text,
    });
    if (o.status !== "committed") return void refuse("could not record the prompt");
    answer({ ok: true, prompt_id: promptId });
  }

  /** Sends a directed event to one connection: never committed, broadcast or replayed. */
  sendDirected<N extends EventName>(generation: number | undefined, name: N, data: EventPayloads[N]): boolean {
    const peer = generation === undefined ? undefined : this.peers.get(generation);
    if (!peer) return false;
    const problem = eventProblem({ name, data });
    if (problem) throw new Error(`harness built an invalid ${name}: ${problem.message}`);
    return peer.send({ message: "direct", payload: { event: { name, data } } }) === "queued";
  }

  /**
   * One prompt round to a provider's live connection: its head, then its parts, each waiting for
   * room on the connection (SPEC-provider-execution). Resolves with why it stopped, or undefined.
   */
  private async sendProviderCall(instance: string, generation: number, call: ProviderCall): Promise<string | undefined> {
    const { head, parts } = splitProviderCall(call);
    const pieces: Array<[EventName, Record<string, unknown>]> = [["provider.request", { ...head }], ...parts.map((p): [EventName, Record<string, unknown>] => ["provider.request_part", { ...p }])];
    for (const [name, data] of pieces) {
      const peer = this.peers.get(generation);
      if (!peer || !this.extensions.isLive(instance, generation)) return `the ${instance} provider is not connected`;
      const problem = eventProblem({ name, data });
      if (problem) return `the harness built an invalid ${name} (${problem.message})`;
      const sent = await peer.sendAsync({ message: "direct", payload: { event: { name, data } } });
      if (sent === "queued") continue;
      if (sent === "oversize") return `a part of the request is larger than one frame`;
      if (sent === "full") return `the ${instance} provider is not reading its connection`;
      return `the ${instance} provider's connection closed`;
    }
    return undefined;
  }

  /**
   * `ui.create_agent` from the exact live UI: the agent's journal (in memory for an ephemeral
   * agent), its start and its membership. The requester is always answered.
   */
  private async onCreateAgent(c: Committed<"ui.create_agent">): Promise<void> {
    const req = c.data;
    const requester = c.publisher.generation;
    const refuse = (error: string) =>
      this.sendDirected(requester, "ui.create_agent_result", { request_id: req.request_id, ok: false, error });
    if (c.publisher.class !== "ui_attached" || requester === undefined || !this.peers.has(requester)) return;
    if (req.parent_id !== undefined && !this.agents.has(req.parent_id)) return void refuse("unknown parent agent");
    const agentId = mintId("a");
    const problem = await this.createAgent({
      agentId,
      creator: "ui",
      createdAt: c.recordedAt,
      ephemeral: req.ephemeral === true,
      parentId: req.parent_id,
      role: req.role,
      model: req.model,
      displayName: req.display_name,
      by: { class: "ui_attached" },
    });
    if (problem !== undefined) return void refuse(problem);
    this.sendDirected(requester, "ui.create_agent_result", { request_id: req.request_id, ok: true, agent_id: agentId });
  }

  /**
   * Creates an agent: its journal (in memory for an ephemeral agent), `agent.started` at seq 0,
   * its membership and display name. The agent is in `agents` before the first await (a child's
   * parent can wait for it at once). An agent whose start or membership could not be recorded is
   * let go, its journal closed; returns why, or undefined.
   */
  private async createAgent(o: {
    agentId: string;
    creator: AgentStarted["creator"];
    createdBy?: AgentStarted["created_by"];
    createdAt?: number;
    ephemeral?: boolean;
    parentId?: string | undefined;
    role?: string | undefined;
    model?: string | undefined;
    displayName?: string | undefined;
    by?: Publisher;
  }): Promise<string | undefined> {
    const { agentId } = o;
    const ephemeral = o.ephemeral === true;
    let log: EventLog;
    try {
      log = ephemeral ? this.store.openEphemeralAgent(agentId) : this.store.openAgent(agentId);
    } catch {
      return "could not create the agent journal";
    }
    // The fold knows at once what `agent.started` will say, so everything about an ephemeral agent
    // is classified as such from its first event.
    const fold: AgentFold = { ...emptyAgentFold(), created_at: o.createdAt ?? Date.now() * 1000, ephemeral };
    if (o.parentId !== undefined) fold.parent_id = o.parentId;
    const agent: AgentState = { id: agentId, fold, log };
    this.agents.set(agentId, agent);
    const letGo = (error: string) => {
      this.agents.delete(agentId);
      log.close();
      return error;
    };
    try {
      this.context.initialize(agent); // AGENTS.md and skills are frozen as the agent initializes
      const started: AgentStarted = { agent_id: agentId, session_id: this.sessionId, creator: o.creator, cwd: this.projectRoot, ephemeral };
      if (o.parentId !== undefined) started.parent_id = o.parentId;
      if (o.createdBy !== undefined) started.created_by = o.createdBy;
      if (o.role !== undefined) started.role = o.role;
      if (o.model !== undefined) started.model = o.model;
      if ((await this.publishHarness("agent.started", started)).status !== "committed") return letGo("could not record the agent");
      if ((await this.publishHarness("session.agent_loaded", { agent_id: agentId })).status !== "committed") {
        return letGo("could not record the agent in the session");
      }
      if (o.displayName !== undefined) {
        await this.publishHarness("agent.metadata_set", { agent_id: agentId, key: "display_name", value: o.displayName, by: o.by ?? { class: "harness" } });
      }
      return undefined;
    } catch (err) {
      return letGo(fitText(`could not create the agent: ${err instanceof Error ? err.message : String(err)}`));
    }
  }

  /** Requests commit first; the exact live requester is revalidated before the canonical fact. */
  private onMetadataRequest(c: Committed<"agent.metadata_request">): void {
    const gen = c.publisher.generation;
    if (gen === undefined || !this.peers.has(gen)) return; // stale generation: observation only
    const agentId = c.data.agent_id;
    if (!this.agents.has(agentId)) return;
    const by: Publisher = { class: c.publisher.class, generation: gen };
    if (c.publisher.instance !== undefined) by.instance = c.publisher.instance;
    if (c.publisher.kind !== undefined) by.kind = c.publisher.kind;
    void this.publishHarness("agent.metadata_set", { agent_id: agentId, key: c.data.key, value: c.data.value, by });
  }

  /** A comparable projection of durable state: used to prove a resume restores the same session. */
  foldedState(): { sessionId: string; agents: Array<{ id: string; metadata: Record<string, string>; events: Array<{ name: string; data: unknown }> }> } {
    return {
      sessionId: this.sessionId,
      agents: [...this.agents.values()]
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .map((a) => ({
          id: a.id,
          metadata: Object.fromEntries(Object.entries(a.fold.metadata).sort()),
          events: a.log.readAll().map((r) => ({ name: r.event.name, data: r.event.data })),
        })),
    };
  }

  async shutdown(reason: "last_ui_left" | "requested" | "signal" | "startup_failed"): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.team.close();
    await this.publishHarness("session.shutdown", { session_id: this.sessionId, reason });
    // Checkpoints with the folds, so the next resume reads only what follows them.
    for (const agent of this.agents.values()) this.checkpointAgent(agent);
    this.checkpointSession(); // before closing, which would bind the end without the summary
    this.store.close();
    // Give background syncs a short chance at an orderly exit; nothing depends on their finishing.
    await this.writeback?.flush(500);
    this.writeback?.close();
  }
}

/** What a handoff's source harness hands its replacement (SPEC-handoff), as JSON in HANDOFF_SEED_FILE. */
export interface HandoffSeed {
  readonly parent_session_id: string;
  readonly parent_agent_id: string;
  readonly dossier: string;
  readonly role?: string;
  readonly model?: string;
}

/** The seed's file in the replacement session's folder; removed once the replacement started from it. */
export const HANDOFF_SEED_FILE = "handoff-seed.json";

/** Why a dossier cannot be a replacement's first turn: empty, a NUL, or a first line that does not name the new session. */
export function dossierProblem(dossier: string, sessionId: string): string | undefined {
  if (dossier.trim() === "") return "the dossier is empty";
  if (dossier.includes("\u0000")) return "the dossier holds a NUL character";
  const first = dossier.split("\n", 1)[0] ?? "";
  if (!first.includes(sessionId)) return `the dossier's first line does not name the new session ${sessionId}`;
  return undefined;
}

/**
 * The session `sessionId` continues (its `session.lineage_set`), read from its journal without
 * writing or locking it; undefined when it has none or cannot be read.
 */
export function lineageParentOf(stateDir: string, sessionId: string): string | undefined {
  let parent: string | undefined;
  try {
    replayJournal<JournalRecord>(journalPath(stateDir, "session", sessionId), {
      validate: validateJournalRecord,
      collect: false,
      onRecord: (r) => {
        const p = (r.event.data as { parent_session_id?: unknown }).parent_session_id;
        if (r.event.name === "session.lineage_set" && typeof p === "string") parent = p;
      },
    });
  } catch {
    return undefined;
  }
  return parent;
}

/** How long a handoff waits for its replacement to take the dossier (its extensions start first). */
const REPLACEMENT_SEEDED_MS = 120_000;

/** Resolves true once `path` no longer exists, false after `ms`. */
async function fileGone(path: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (existsSync(path)) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** One line of text with no control characters (for directed error strings). */
function sanitizeLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ");
}

let mandatoryNotices = 0;

/** Current-state keys: the latest event per key is re-synthesised for late subscribers. */
function snapshotKey(e: Event): string | null {
  switch (e.name) {
    case "harness.notice":
      return e.data.mandatory === true ? `${e.name}:${mandatoryNotices++}` : null;
    case "agent.stats_updated":
      return `${e.name}:${e.data.agent_id}`;
    case "tool.register":
      return `tool:${e.data.name}`;
    case "provider.models_updated":
      return `${e.name}:${e.data.instance}`;
    default:
      return e.name;
  }
}
