// The harness: one session's state, built from committed events. It owns the bus, the journals and
// the rooms whose consumers turn requests into canonical facts (SPEC-session-lifecycle,
// SPEC-agent-lifecycle, SPEC-agent-metadata, SPEC-ui-commands); which consumer handles which event,
// and in what order, is the declared table WIRING below.
import { Bus, type Committed, type Event, type PublishOutcome, type PublisherEnvelope } from "../bus/index.js";
import { WritebackWorker, mirrorDebugEvent, openFileStateStore, openMemoryStateStore, type EventLog, type JournalRecord, type StateStore } from "../store/index.js";
import { ToolRouter } from "./tools.js";
import { PromptEngine, type PromptPort } from "./prompts.js";
import { DEFAULT_COMPACTION } from "./compactor.js";
import { HARNESS_TOOLS, policyOf } from "./tool-policy.js";
import { PromptSnapshot } from "./prompt-snapshot.js";
import { ShellCommandRouter } from "./shell-commands.js";
import { ConsumerRegistry, type ConsumerName, type DeclaredEvent } from "./consumers.js";
import { AgentContext, type ContextHolder } from "./agent-context.js";
import { ResumeError, recordEvent, reopenAgent, sessionMembers } from "./session-restore.js";
import { agentIdOf, eventProblem, splitProviderCall, type ProviderCall } from "../protocol/index.js";
import type { EventName, EventPayloads } from "../../generated/index.js";
import { mcpSamplingOf, providerEndpoint } from "../config/index.js";
import { mintId } from "./ids.js";
import { PeerInbox, PeerOutbox } from "./peer-messaging.js";
import type { Peer } from "./peers.js";
import { ExtensionCommands } from "./extension-commands.js";
import type { AgentFold } from "./agent-fold.js";
import { AgentTeam } from "./agent-team.js";
import { Navigation } from "./navigation.js";
import { SessionJournals, snapshotKey } from "./session-journals.js";
import { CUT_CALL_ERROR } from "./restore-calls.js";
import { SessionRequests, type NewAgent } from "./session-requests.js";
import { HandoffRequests, type HandoffSeed } from "./handoff-request.js";
import { PromptFragments } from "./prompt-fragments.js";
import { AgentInitializations, freezeInitialization, type AgentInitializationPort } from "./agent-initialization.js";
import { SessionInitialization } from "./session-initialization.js";
import { DiscoverySources } from "./discovery-sources.js";
import { AgentStartRequests } from "./agent-start-requests.js";
import type { ExtensionLiveness, HarnessOptions } from "./harness-options.js";

export type { ExtensionLiveness, HarnessOptions } from "./harness-options.js";

export const HARNESS: PublisherEnvelope = Object.freeze({ class: "harness" });

export interface AgentState extends ContextHolder {
  readonly id: string;
  /** Identity, model, metadata and open prompts, folded from the journal (stored with its checkpoints). */
  readonly fold: AgentFold;
  log: EventLog;
}

/** The rooms the harness's post-commit consumers live in, one job each. */
interface Rooms {
  readonly bus: Bus;
  readonly session: SessionRequests;
  readonly handoff: HandoffRequests;
  readonly tools: ToolRouter;
  readonly shell: ShellCommandRouter;
  readonly prompts: PromptEngine;
  readonly team: AgentTeam;
  readonly fragments: PromptFragments;
  readonly initializations: AgentInitializations;
  readonly sessionInit: SessionInitialization;
  readonly discovery: DiscoverySources;
  readonly starts: AgentStartRequests;
}

/** One row of the wiring: a declared consumer (consumers.ts), the event it handles, and its handler. */
interface Wire {
  attach(registry: ConsumerRegistry, rooms: Rooms): void;
}

function consume<C extends ConsumerName, N extends DeclaredEvent<C>>(consumer: C, event: N, handler: (rooms: Rooms, c: Committed<N>) => unknown): Wire {
  return { attach: (registry, rooms) => registry.consume(consumer, event, (c: Committed<N>) => handler(rooms, c)) };
}

/**
 * The harness's post-commit consumers, registered in this order through the declared table of
 * consumers.ts: the consumers of one event run in it (a cancel reaches the agent's tool calls first,
 * then its turn, then its children).
 */
const WIRING: readonly Wire[] = [
  consume("session", "ui.create_agent", (r, c) => r.session.onCreateAgent(c)),
  consume("session", "ui.skill_load", (r, c) => r.session.onSkillLoad(c)),
  consume("session", "agent.metadata_request", (r, c) => r.session.onMetadataRequest(c)),
  consume("session", "agent.prompt_submitted", (r, c) => r.session.onPromptSubmitted(c)),
  consume("session", "agent.start_request", (r, c) => r.starts.onStartRequest(c)),
  consume("session", "session.handoff_request", (r, c) => r.handoff.onHandoffRequest(c)),
  consume("fragments", "extension.prompt_fragment_declared", (r, c) => r.fragments.onDeclared(c)),
  consume("discovery", "extension.discovery_snapshot_declared", (r, c) => r.discovery.onDeclared(c)),
  consume("initializations", "agent.readiness_wait_declared", (r, c) => r.initializations.onWaitDeclared(c)),
  consume("initializations", "agent.context_declared", (r, c) => r.initializations.onContextDeclared(c)),
  consume("initializations", "agent.discovery_snapshot_declared", (r, c) => r.initializations.onDiscoveryDeclared(c)),
  consume("initializations", "agent.readiness_declared", (r, c) => r.initializations.onReadinessDeclared(c)),
  consume("initializations", "session.readiness_wait_declared", (r, c) => r.sessionInit.onWaitDeclared(c)),
  consume("initializations", "session.readiness_declared", (r, c) => r.sessionInit.onReadinessDeclared(c)),
  consume("tools", "tool.registration_declared", (r, c) => r.tools.onRegistrationDeclared(c)),
  consume("tools", "tool.unregistration_declared", (r, c) => r.tools.onUnregistrationDeclared(c)),
  consume("session", "tool.unregister", (r, c) => r.bus.forgetSnapshot(`tool:${c.data.name}`)),
  consume("tools", "tool.request", (r, c) => r.tools.onRequest(c)),
  consume("tools", "tool.progress_reported", (r, c) => r.tools.onProgressReported(c)),
  consume("tools", "tool.result_reported", (r, c) => r.tools.onTerminalReported(c)),
  consume("tools", "tool.error_reported", (r, c) => r.tools.onTerminalReported(c)),
  consume("tools", "tool.cancelled_reported", (r, c) => r.tools.onTerminalReported(c)),
  consume("shell", "shell.command_request", (r, c) => r.shell.onRequest(c)),
  consume("shell", "shell.command_progress_reported", (r, c) => r.shell.onProgressReported(c)),
  consume("shell", "shell.command_finished_reported", (r, c) => r.shell.onFinishedReported(c)),
  consume("prompts", "ui.prompt_submit", (r, c) => r.prompts.onUiPromptSubmit(c)),
  consume("prompts", "agent.internal_prompt_request", (r, c) => r.prompts.onInternalPromptRequest(c)),
  consume("prompts", "agent.external_message_reported", (r, c) => r.prompts.onExternalMessageReported(c)),
  consume("prompts", "agent.prompt_submitted", (r, c) => r.prompts.onPromptSubmitted(c)),
  consume("prompts", "ui.model_select", (r, c) => r.prompts.onModelSelect(c)),
  consume("prompts", "ui.compact_request", (r, c) => r.prompts.onCompactRequest(c)),
  consume("prompts", "provider.models_declared", (r, c) => r.prompts.onModelsDeclared(c)),
  consume("prompts", "provider.response_delta_reported", (r, c) => r.prompts.onDeltaReported(c)),
  consume("prompts", "provider.response_finished_reported", (r, c) => r.prompts.onFinishedReported(c)),
  consume("prompts", "provider.response_failed_reported", (r, c) => r.prompts.onFailedReported(c)),
  consume("prompts", "provider.retry_reported", (r, c) => r.prompts.onRetryReported(c)),
  consume("prompts", "sandbox.state_reported", (r, c) => r.prompts.onSandboxState(c)),
  consume("prompts", "handoff.state_reported", (r, c) => r.prompts.onHandoffState(c)),
  consume("prompts", "sandbox.review_request", (r, c) => r.prompts.onReviewRequest(c)),
  consume("prompts", "mcp.sampling_request", (r, c) => r.prompts.onSamplingRequest(c)),
  consume("prompts", "mcp.sampling_cancel", (r, c) => r.prompts.onSamplingCancel(c)),
  consume("prompts", "provider.tool_result", (r, c) => r.prompts.onToolOutcome(c)),
  consume("prompts", "provider.tool_error", (r, c) => r.prompts.onToolOutcome(c)),
  consume("tools", "agent.cancel_request", (r, c) => r.tools.cancelAgent(c.data.agent_id)),
  consume("prompts", "agent.cancel_request", (r, c) => r.prompts.onCancelRequest(c)),
  consume("agents", "tool.request", (r, c) => r.team.onToolRequest(c)),
  consume("agents", "agent.outer_turn_finished", (r, c) => r.team.onTurnFinished(c)),
  consume("agents", "agent.prompt_failed", (r) => r.team.settle()),
  consume("agents", "agent.cancel_request", (r, c) => r.team.onCancelRequest(c)),
];

export class Harness {
  readonly bus: Bus;
  readonly agents = new Map<string, AgentState>();
  private readonly peers = new Map<number, Peer>();
  /** The session's journals and their checkpoints. */
  private readonly journals: SessionJournals;
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
  /** Colon commands the live extensions own (SPEC-extension-commands): never published. */
  readonly extensionCommands = new ExtensionCommands({
    send: (generation, message) => this.peers.get(generation)?.send(message) ?? false,
    changed: (commands) => {
      for (const peer of this.peers.values()) if (peer.publisher.class === "ui_attached") peer.send({ message: "ui_extension_commands", payload: { commands: [...commands] } });
    },
    warn: (text, instance) => void this.publishHarness("harness.notice", { level: "warning", text: text.slice(0, 1024), mandatory: false, instance }),
  });
  private readonly shellCommands: ShellCommandRouter;
  private readonly writeback: WritebackWorker | undefined;
  private readonly context: AgentContext;
  /** Extensions' prompt fragments (SPEC-extension-declarations): what agents initializing now take. */
  private readonly fragments: PromptFragments;
  /** Agents' initializations: keyed context and readiness from extensions (SPEC-extension-declarations). */
  private readonly initializations: AgentInitializations;
  /** The session's initialization in this process: session readiness (SPEC-extension-declarations). */
  private readonly sessionInit: SessionInitialization;
  /** Extensions' AGENTS.md files and skills (SPEC-extension-declarations, "Discovery snapshots"). */
  private readonly discovery: DiscoverySources;
  /** Agents joining the session, metadata, skill loads and the first-prompt title. */
  private readonly session: SessionRequests;
  /** Handoffs of this session, and the seeding of a replacement (SPEC-handoff). */
  private readonly handoff: HandoffRequests;
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
      append: (c) => this.journals.append(c),
      warn: options.warn,
      snapshotKey,
      ephemeral: (e) => this.concernsEphemeral(e),
      history: { open: (recent) => this.journals.openHistory(recent) },
    });
    this.writeback = writeback;
    const warn = (m: string) => options.warn?.(m);
    const agentRecordAppended = (c: Committed, seq: number) => this.prompts.fold(c, seq);
    this.journals = new SessionJournals({ sessionId, projectRoot, store, agents: this.agents, agentRecordAppended, warn });
    const isLive = (instance: string, generation: number) => this.extensions.isLive(instance, generation);
    const notice = (text: string) => void this.publishHarness("harness.notice", { level: "warning", text: text.slice(0, 1024), mandatory: false });
    this.fragments = new PromptFragments({ isLive, warn: notice });
    const freeze: AgentInitializationPort["freeze"] = (agentId, context, discovery) => {
      const agent = this.agents.get(agentId);
      if (agent !== undefined) freezeInitialization(this.context, agent, context, discovery);
    };
    const validated: AgentInitializationPort["validated"] = (instance, items) => this.discovery.validated(instance, items);
    this.sessionInit = new SessionInitialization({ sessionId, isLive, publish: (n, d) => this.publishHarness(n, d) });
    const sessionReady = () => this.sessionInit.ready;
    this.initializations = new AgentInitializations({ sessionId, isLive, hasAgent: (id) => this.agents.has(id), publish: (n, d) => this.publishHarness(n, d), freeze, validated, warn: notice, sessionReady });
    const sessionSkills = () => {
      this.context.discoveryChanged();
      void this.publishHarness("harness.session_skills_available", this.context.sessionSkills());
    };
    this.discovery = new DiscoverySources({ isLive, warn: notice, changed: sessionSkills });
    this.context = new AgentContext({
      fragments: () => this.fragments.current(),
      discovery: this.discovery,
      projectRoot,
      ...(options.configRoot !== undefined ? { configRoot: options.configRoot } : {}),
      ...(options.systemTemplate !== undefined ? { systemTemplate: options.systemTemplate } : {}),
      skillSkipped: (p) => void this.publishHarness("harness.notice", { level: "warning", text: `skill skipped: ${p}`.slice(0, 1024), mandatory: false }),
    });
    const publish = <N extends EventName>(name: N, data: EventPayloads[N]) => this.publishHarness(name, data);
    const sendDirected = <N extends EventName>(generation: number | undefined, name: N, data: EventPayloads[N]) => this.sendDirected(generation, name, data);
    const hasAgent = (agentId: string) => this.agents.has(agentId);
    const { agents, context } = this;
    const isPeer = (generation: number) => this.peers.has(generation);
    const titledFrom = (agentId: string, promptId: string, text: string) => this.prompts.titleFromAnswerOf(agentId, promptId, text);
    const beginInitialization = (agentId: string) => void this.initializations.begin(agentId);
    this.session = new SessionRequests({ sessionId, projectRoot, store, agents, context, publish, sendDirected, isPeer, titledFrom, beginInitialization });
    const agent = (agentId: string) => this.agents.get(agentId);
    const createAgent = (o: NewAgent) => this.createAgent(o);
    this.handoff = new HandoffRequests({ sessionId, stateDir: options.stateDir, ephemeral: store.memoryOnly, launch: options.launchReplacement, ...(options.replacementPid ? { runningPid: options.replacementPid } : {}), agent, createAgent, isLive, publish, sendDirected });
    this.tools = new ToolRouter({
      publish: (name, data) => void this.publishHarness(name, data),
      direct: (generation, name, data) => this.sendDirected(generation, name, data),
      isLive,
      toolPrefix: (instance) => this.extensions.toolPrefix(instance),
      mayCall: (instance, tool) => this.extensions.mayCall(instance, tool),
      mayReturn: (instance) => this.extensions.mayReturn(instance),
      hasAgent,
      callRefusal: (agentId, promptId, tool) => this.prompts.callRefusal(agentId, promptId, tool),
      warn,
    });
    this.prompts = new PromptEngine(this.promptPort());
    this.shellCommands = new ShellCommandRouter({ publish: (name, data) => void this.publishHarness(name, data), shellTool: () => this.tools.tools.get("shell"), hasAgent, isLive });
    this.team = new AgentTeam(this.teamPort(), {
      ...(options.longWaitThresholdsS !== undefined ? { longWaitThresholdsS: options.longWaitThresholdsS } : {}),
      ...(options.agentLimits !== undefined ? { limits: options.agentLimits } : {}),
    });
    this.peerInbox = new PeerInbox({ sessionId, addressable: (agentId) => this.agents.get(agentId)?.fold.ephemeral === false, publish: (name, data) => this.committed(name, data), agents: () => this.peerRoster() }, options.peerBudget, options.peerClock);
    this.peerOutbox = new PeerOutbox({ runtimeDir: options.runtimeDir, sessionId });
    this.wire({ bus: this.bus, session: this.session, handoff: this.handoff, tools: this.tools, shell: this.shellCommands, prompts: this.prompts, team: this.team, fragments: this.fragments, initializations: this.initializations, sessionInit: this.sessionInit, discovery: this.discovery, starts: this.agentStarts() });
  }

  /** Registers the declared consumers (WIRING), every one of them, then the debug log's mirror of every commit. */
  private wire(rooms: Rooms): void {
    const registry = new ConsumerRegistry(this.bus);
    for (const wire of WIRING) wire.attach(registry, rooms);
    registry.assertComplete();
    const stateDir = this.options.stateDir;
    if (stateDir && this.options.debugLog !== false) {
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
      const sessionRecords = h.journals.open();
      h.session.titleRequested = h.journals.hasTitle;
      if (options.resume) h.restoreFromJournals(sessionRecords);
      else if (options.stateDir) h.journals.writeManifest(options.stateDir);
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
    // The daemon begins it once its first extensions started, so that they can hold it.
    if (options.deferSessionInitialization !== true) void h.beginSessionInitialization();
    if (options.resume) {
      await h.settleCutCalls();
      await h.prompts.settleRestored(new Map([...h.agents].map(([id, a]) => [id, a.fold])));
    }
    return h;
  }

  /**
   * Cold restore: each call the restore stream holds open (requested, with no outcome in its agent's
   * journal) was cut by the daemon's end; it ends with one recorded error and is never run again.
   * The stream is then compacted, so a later resume finds only calls still owed an outcome.
   */
  private async settleCutCalls(): Promise<void> {
    for (const call of this.journals.restoreCalls.calls) this.tools.endCut(call, CUT_CALL_ERROR);
    await this.bus.settled();
    this.journals.restoreCalls.compact(this.journals.restoreLog, true);
  }

  /**
   * The session begins in this process (SPEC-extension-declarations, "Session readiness"): it
   * captures the live session waiters; until they are ready no agent finishes initializing.
   */
  beginSessionInitialization(): Promise<void> {
    const ready = this.sessionInit.begin();
    this.initializations.sessionBegins();
    return ready;
  }

  /** A handoff's replacement session: seeded once its extensions started (handoff-request.ts). */
  seedFromHandoff(seed: HandoffSeed): Promise<void> {
    return this.handoff.seed(seed);
  }

  /** The session journal (session-journals.ts). */
  private get sessionLog(): EventLog {
    return this.journals.sessionLog;
  }

  /** Creates an agent of this session (session-requests.ts); returns why it could not, or undefined. */
  private createAgent(o: NewAgent): Promise<string | undefined> {
    return this.session.createAgent(o);
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
    this.journals.restoreCalls.reconcile(new Map([...this.agents].map(([id, a]) => [id, a.log])));
    // Resumed agents are idle until prompted: their journals hold no descriptor (SPEC-journal-storage).
    for (const a of this.agents.values()) a.log.rest();
  }

  /**
   * A page of one agent's history for `ui_history_request`: the records before `before` (its
   * journal's end when absent), at most `limit` and about HISTORY_PAGE_BYTES of them, oldest first.
   */
  historyPage(agentId: string, before: number | undefined, limit: number): ReturnType<SessionJournals["historyPage"]> {
    return this.journals.historyPage(agentId, before, limit);
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

  publishHarness<N extends EventName>(name: N, data: EventPayloads[N]): Promise<PublishOutcome> {
    const outcome = this.bus.publish({ name, data }, HARNESS);
    // Whoever answered a model's call, an outcome that could not be recorded ends its turn.
    if (name === "provider.tool_result" || name === "provider.tool_error") {
      const d = data as EventPayloads["provider.tool_result" | "provider.tool_error"];
      void outcome.then((o) => {
        if (o.status === "committed") return;
        const why = o.status === "failed" ? ((o.error as NodeJS.ErrnoException).code ?? "the append failed") : o.status === "refused" ? o.reason : "dropped";
        return this.prompts.outcomeLost(d.agent_id, d.prompt_id, d.call_id, why);
      });
    }
    return outcome;
  }

  /** Publishes as the harness; true once committed. */
  private async committed<N extends EventName>(name: N, data: EventPayloads[N]): Promise<boolean> {
    return (await this.publishHarness(name, data)).status === "committed";
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
    this.extensionCommands.gone(instance, generation);
    this.tools.onOwnerGone(instance, generation);
    this.fragments.onOwnerGone(instance, generation);
    this.initializations.onOwnerGone(instance, generation);
    this.sessionInit.onOwnerGone(instance, generation);
    this.discovery.onOwnerGone(instance, generation);
    this.shellCommands.onOwnerGone(instance, generation);
    void this.prompts.onProviderGone(instance, generation);
  }

  /** Render previews for `tau dev print-*` (AgentContext.preview): a new agent's tools, under the `default` role. */
  preview(kind: "system-prompt" | "tools" | "prompt", text = ""): string {
    return this.context.preview(kind, text, this.promptSnapshot(undefined).tools, (m) => this.options.warn?.(m));
  }

  /** What a prompt of an agent is told and may call (prompt-snapshot.ts), taken at its first round. */
  promptSnapshot(agentId: string | undefined, onlyTools?: ReadonlySet<string>): PromptSnapshot {
    const agent = agentId === undefined ? undefined : this.agents.get(agentId);
    const role = agent?.fold.role;
    const policy = policyOf(this.options.roles, role);
    const system = (offers: (name: string) => boolean) => this.context.systemPrompt(agent) + this.team.promptAddendum(role, offers("agent_start"));
    return new PromptSnapshot({ role, policy, harnessTools: HARNESS_TOOLS.values(), registry: this.tools.tools, onlyTools, system });
  }

  /** The system prompt an agent's next prompt gets (its snapshot's). */
  systemPromptFor(agentId: string): string {
    return this.promptSnapshot(agentId).system;
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

  /** The session's addressable agents, for another session's `peer_list` (SPEC-peer-messaging). */
  private peerRoster(): Array<{ agent_id: string; busy: boolean; display_name?: string }> {
    return [...this.agents.values()]
      .filter((a) => !a.fold.ephemeral)
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((a) => ({ agent_id: a.id, busy: this.prompts.activity(a.id) !== undefined, ...(a.fold.metadata.display_name !== undefined ? { display_name: a.fold.metadata.display_name } : {}) }));
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

  /** What the agent loop needs of the harness (prompts.ts). */
  private promptPort(): PromptPort {
    const options = this.options;
    return {
      publish: (name, data) => this.committed(name, data),
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
      snapshot: (agentId, onlyTools) => this.promptSnapshot(agentId, onlyTools),
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
      agentIdle: (agentId) => this.agents.get(agentId)?.log.rest(),
      agentAtWork: (agentId) => this.agents.get(agentId)?.log.wake(),
      initializing: (agentId) => (this.agents.has(agentId) ? this.initializations.initializing(agentId) : undefined),
      samplingOf: (instance) => mcpSamplingOf(this.extensions.configOf?.(instance)),
      parentOf: (agentId) => {
        const fold = this.agents.get(agentId)?.fold;
        if (fold?.parent_id !== undefined && this.agents.has(fold.parent_id) && !this.unloaded.has(fold.parent_id)) return fold.parent_id;
        return fold?.creator === "agent" ? null : undefined;
      },
    };
  }

  /** Start-agent requests from extensions (agent-start-requests.ts). */
  private agentStarts(): AgentStartRequests {
    const { sessionId, agents, options } = this;
    const isLive = (instance: string, generation: number) => this.extensions.isLive(instance, generation);
    const sendDirected = <N extends EventName>(generation: number | undefined, name: N, data: EventPayloads[N]) => this.sendDirected(generation, name, data);
    return new AgentStartRequests({ sessionId, agents, isLive, roles: () => options.roles, createAgent: (o) => this.createAgent(o), sendDirected });
  }

  /** What the agent team needs of the harness (agent-team.ts). */
  private teamPort(): ConstructorParameters<typeof AgentTeam>[0] {
    const p = this.prompts;
    return {
      publish: (name, data) => this.committed(name, data),
      fold: (agentId) => this.agents.get(agentId)?.fold,
      agentIds: () => [...this.agents.keys()],
      startChild: (o) => this.session.startChild(o),
      busy: (agentId) => p.activity(agentId) !== undefined,
      callOpen: (agentId, promptId, callId) => p.callOpen(agentId, promptId, callId),
      callRefusal: (agentId, promptId, tool) => p.callRefusal(agentId, promptId, tool),
      roles: () => this.options.roles,
      lastAnswer: (agentId) => this.journals.lastAnswer(agentId),
      unloadedIds: () => [...this.unloaded],
      currentTurn: (agentId) => p.currentTurn(agentId),
      peerSend: (from, to, text) => this.peerOutbox.send(from, to, text),
      peerList: () => this.peerOutbox.list(),
      warn: (m) => this.options.warn?.(m),
    };
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
    for (const agent of this.agents.values()) this.journals.checkpointAgent(agent);
    this.journals.checkpointSession(); // before closing, which would bind the end without the summary
    // The restore stream keeps only calls still open, so the next resume reads next to nothing.
    if (!this.store.memoryOnly) this.journals.restoreCalls.compact(this.journals.restoreLog, true);
    this.store.close();
    // Give background syncs a short chance at an orderly exit; nothing depends on their finishing.
    await this.writeback?.flush(500);
    this.writeback?.close();
  }
}
