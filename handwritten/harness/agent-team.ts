// Agents that start agents (SPEC-agent-team): the harness answers a model's agent tools itself —
// starting a child, messaging, waiting for results, cancelling, watching, setting its own work
// status — keeps the acyclic watch graph, tells waiting parents and watchers when a turn ends, and
// answers the roster. A child's words reach another agent only inside an exact-close frame that
// names it, as tool output or a harness prompt: never as the user's instruction.
import type { Committed } from "../bus/index.js";
import type { AgentLimits, EventName, EventPayloads, RolePolicy, RosterRow } from "../../generated/index.js";
import type { JournalRecord } from "../store/index.js";
import type { AgentFold } from "./agent-fold.js";
import { AGENT_TOOL_NAMES, WORK_PHASES, cutText, escapeUntrusted, exactCloseFrame, workTitleProblem, type WorkPhaseName } from "./agent-tools.js";
import { mintId } from "./ids.js";

/** Longest a parent's answer from one agent (UTF-16 units): a result is a summary, not a transcript. */
export const AGENT_RESULT_MAX_CHARS = 16 * 1024;
/** Default and most seconds an `agent_wait` waits. */
export const AGENT_WAIT_DEFAULT_S = 300;
export const AGENT_WAIT_MAX_S = 600;
/** Most agents one `agent_wait` names. */
export const AGENT_WAIT_MAX_TARGETS = 64;
/** The team bounds when harness.yaml's `agent_limits` sets none (SPEC-agent-team, "Bounds"). */
export const DEFAULT_AGENT_LIMITS: Readonly<Required<AgentLimits>> = Object.freeze({
  children_per_agent: 16,
  max_depth: 4,
  agents_per_session: 128,
  starts_per_minute: 60,
});
/** The window `starts_per_minute` counts starts in (ms). */
export const AGENT_START_WINDOW_MS = 60_000;
/** Longest task or message one agent sends another (UTF-16 units), as the tools' schemas say. */
export const AGENT_TEXT_MAX_CHARS = 65_536;
/** Most rows in a roster page. */
export const ROSTER_PAGE_MAX = 256;
/** Seconds of one turn after which its watchers are told it is still running (SPEC-agent-team, "Long waits"). */
export const LONG_WAIT_THRESHOLDS_S: readonly number[] = [60, 300, 900, 3600];
/** Most long-wait notices delivered in one scheduler cycle; the rest follow in the next. */
export const LONG_WAIT_RECIPIENTS_PER_CYCLE = 64;

export interface AgentTeamPort {
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<boolean>;
  fold(agentId: string): AgentFold | undefined;
  /** The loaded agents' ids. */
  agentIds(): readonly string[];
  /**
   * Starts a child (journal, `agent.started` with its creation record, membership, display name).
   * Its id is registered synchronously, before the first await.
   */
  startChild(o: { agentId: string; parentId: string; callId: string; role?: string; displayName?: string }): Promise<string | undefined>;
  /** Whether an agent has a turn, compaction or prompt under way or waiting. */
  busy(agentId: string): boolean;
  /** Whether an agent's turn `promptId` still waits for call `callId`. */
  callOpen(agentId: string, promptId: string, callId: string): boolean;
  /** Why a model's call of `tool` in prompt `promptId` may not run (that prompt's snapshot), or undefined. */
  callRefusal(agentId: string, promptId: string, tool: string): string | undefined;
  roles(): Readonly<Record<string, RolePolicy>> | undefined;
  /** The last answer of an agent's journal (its last response's text), bounded. */
  lastAnswer(agentId: string): string | undefined;
  /** Agents that left the session (for the roster's unloaded history). */
  unloadedIds(): readonly string[];
  /** An agent's current turn and when it started (monotonic ms). */
  currentTurn(agentId: string): { promptId: string; startedAt: number } | undefined;
  /** Peer messaging (SPEC-peer-messaging): delivers to `SESSION/AGENT` of another session, or lists them. */
  peerSend?(from: string, to: string, text: string): Promise<{ ok: boolean; text: string }>;
  peerList?(): Promise<string>;
  warn(message: string): void;
}

interface Call {
  readonly agentId: string;
  readonly promptId: string;
  readonly callId: string;
  readonly tool: string;
}

interface Waiter extends Call {
  readonly targets: readonly string[];
  readonly timer: NodeJS.Timeout;
}

type Args = Record<string, unknown>;

export class AgentTeam {
  /** Watch edges: watcher → the agents it watches. */
  private readonly watches = new Map<string, Set<string>>();
  /** Children started whose task is not yet queued: they count as busy. */
  private readonly starting = new Set<string>();
  private readonly waiters = new Set<Waiter>();
  /** Calls already answered (each is answered once). */
  private readonly answered = new WeakSet<Call>();
  /** Per agent: the turn whose long-wait thresholds are counted, and the next threshold's index. */
  private readonly longWaitCursor = new Map<string, { promptId: string; next: number }>();
  /** Long-wait notices crossed and not yet delivered: one per recipient. */
  private readonly longWaitBacklog: Array<{ watcher: string; target: string; seconds: number }> = [];
  private longWaitTimer: NodeJS.Timeout | undefined;
  private longWaitDraining = false;
  private readonly thresholds: readonly number[];
  private readonly limits: Readonly<Required<AgentLimits>>;
  /** When each agent start of the last AGENT_START_WINDOW_MS began (monotonic ms), oldest first. */
  private readonly recentStarts: number[] = [];
  /** Watch updates held for a watcher until it can take them in one prompt (see onTurnFinished): the newest per watched agent. */
  private readonly heldUpdates = new Map<string, Map<string, string>>();
  /** Each watcher's watch-update prompt submitted and not yet ended (queued or running). */
  private readonly pendingWake = new Map<string, string>();

  constructor(
    private readonly port: AgentTeamPort,
    options: { longWaitThresholdsS?: readonly number[]; limits?: AgentLimits } = {},
  ) {
    this.thresholds = [...(options.longWaitThresholdsS ?? LONG_WAIT_THRESHOLDS_S)].sort((a, b) => a - b);
    this.limits = { ...DEFAULT_AGENT_LIMITS, ...options.limits };
  }

  /**
   * Long waits (SPEC-agent-team): advances every running turn's cursor past the thresholds its
   * monotonic age crossed — with or without watchers — and queues one notice per watcher present
   * now, for each threshold crossed now. `deliver: false` only advances (before a new watch, so a
   * late watcher gets no past threshold).
   */
  private advanceLongWaits(deliver: boolean): void {
    const now = performance.now();
    for (const id of this.port.agentIds()) {
      const turn = this.port.currentTurn(id);
      if (!turn) {
        this.longWaitCursor.delete(id);
        continue;
      }
      let cursor = this.longWaitCursor.get(id);
      if (cursor?.promptId !== turn.promptId) this.longWaitCursor.set(id, (cursor = { promptId: turn.promptId, next: 0 }));
      while (cursor.next < this.thresholds.length && now - turn.startedAt >= (this.thresholds[cursor.next] as number) * 1000) {
        const seconds = this.thresholds[cursor.next] as number;
        cursor.next++;
        if (deliver) for (const watcher of this.watchersOf(id)) this.longWaitBacklog.push({ watcher, target: id, seconds });
      }
    }
    if (deliver) this.drainLongWaits();
  }

  /** Delivers at most LONG_WAIT_RECIPIENTS_PER_CYCLE notices, then yields; the rest follow in another cycle. */
  private drainLongWaits(): void {
    if (this.longWaitDraining || this.longWaitBacklog.length === 0) return;
    this.longWaitDraining = true;
    for (const n of this.longWaitBacklog.splice(0, LONG_WAIT_RECIPIENTS_PER_CYCLE)) {
      if (!this.port.fold(n.watcher)) continue;
      const text = exactCloseFrame("long_wait", { agent: n.target, seconds: String(n.seconds) }, `agent ${n.target} has been working on one turn for ${n.seconds} seconds`);
      void this.port.publish("agent.prompt_submitted", { agent_id: n.watcher, prompt_id: mintId("p"), source: "harness_internal", internal_kind: "long_wait", mode: "queue", text });
    }
    setImmediate(() => {
      this.longWaitDraining = false;
      this.drainLongWaits();
    });
  }

  /** The long-wait scheduler runs while any watch exists. */
  private armLongWaits(): void {
    const any = [...this.watches.values()].some((s) => s.size > 0);
    if (!any || this.thresholds.length === 0) {
      if (this.longWaitTimer) clearInterval(this.longWaitTimer);
      this.longWaitTimer = undefined;
      return;
    }
    if (this.longWaitTimer) return;
    const every = Math.min(1000, Math.max(10, ((this.thresholds[0] as number) * 1000) / 4));
    this.longWaitTimer = setInterval(() => this.advanceLongWaits(true), every);
    this.longWaitTimer.unref();
  }

  /** Stops the scheduler (the session ends). */
  close(): void {
    if (this.longWaitTimer) clearInterval(this.longWaitTimer);
    this.longWaitTimer = undefined;
  }

  /** Watches folded from the session journal on a cold resume: only edges between loaded agents that keep the graph acyclic. */
  restoreWatches(records: ReadonlyArray<{ name: string; data: Record<string, unknown> }>): void {
    const loaded = new Set(this.port.agentIds());
    for (const e of records) {
      if (e.name !== "session.watch_set") continue;
      const { watcher, target, enabled } = e.data as EventPayloads["session.watch_set"];
      if (!enabled) this.watches.get(watcher)?.delete(target);
      else if (loaded.has(watcher) && loaded.has(target) && watcher !== target && !this.reaches(target, watcher)) this.edgesOf(watcher).add(target);
    }
    this.armLongWaits();
  }

  /** Whether `from` reaches `to` through watch edges (iterative, so no depth can overflow the stack). */
  private reaches(from: string, to: string): boolean {
    const seen = new Set<string>([from]);
    const stack = [from];
    while (stack.length > 0) {
      const at = stack.pop() as string;
      if (at === to) return true;
      for (const next of this.watches.get(at) ?? []) {
        if (!seen.has(next)) {
          seen.add(next);
          stack.push(next);
        }
      }
    }
    return false;
  }

  private edgesOf(watcher: string): Set<string> {
    let s = this.watches.get(watcher);
    if (!s) this.watches.set(watcher, (s = new Set()));
    return s;
  }

  /** The agents watching `target`. */
  watchersOf(target: string): string[] {
    return [...this.watches].filter(([, ts]) => ts.has(target)).map(([w]) => w);
  }

  /** The agents `watcher` watches. */
  watchedBy(watcher: string): string[] {
    return [...(this.watches.get(watcher) ?? [])];
  }

  /**
   * A watch enabled (SPEC-agent-team, "Watches"): the live-target check, the cycle check and the
   * edge's insertion are one synchronous step, so no other enable can slip between them; a refusal
   * changes nothing. Returns why it was refused, "unchanged" for an edge that exists, or undefined.
   */
  enableWatch(watcher: string, target: string): string | "unchanged" | undefined {
    if (!this.port.fold(target)) return `unknown agent ${JSON.stringify(target.slice(0, 128))}`;
    if (target === watcher) return "an agent cannot watch itself";
    if (this.watches.get(watcher)?.has(target)) return "unchanged";
    if (this.reaches(target, watcher)) return `watching ${target} would close a cycle of watches (it already reaches ${watcher}); nothing was changed`;
    this.advanceLongWaits(false); // thresholds already crossed are not the new watcher's
    this.edgesOf(watcher).add(target);
    this.armLongWaits();
    return undefined;
  }

  /** A watch disabled: no cycle analysis; true when an edge was removed. */
  disableWatch(watcher: string, target: string): boolean {
    const removed = this.watches.get(watcher)?.delete(target) === true;
    this.armLongWaits();
    return removed;
  }

  /** The committed `tool.request` of an agent tool (the agent loop's own, publisher harness). */
  onToolRequest(c: Committed<"tool.request">): void {
    const { agent_id: agentId, prompt_id: promptId, call_id: callId, tool } = c.data;
    if (c.publisher.class !== "harness" || !AGENT_TOOL_NAMES.has(tool) || promptId === undefined) return;
    const call: Call = { agentId, promptId, callId, tool };
    const refusal = this.port.callRefusal(agentId, promptId, tool);
    if (refusal !== undefined) return void this.error(call, refusal);
    let args: Args;
    try {
      const parsed: unknown = JSON.parse(c.data.arguments_json === "" ? "{}" : c.data.arguments_json);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
      args = parsed as Args;
    } catch {
      return void this.error(call, `the arguments of ${tool} are not a JSON object`);
    }
    switch (tool) {
      case "agent_start":
        return void this.start(call, args);
      case "agent_message":
        return void this.message(call, args);
      case "agent_wait":
        return this.wait(call, args);
      case "agent_cancel":
        return void this.cancel(call, args);
      case "agent_watch":
      case "agent_unwatch":
        return void this.watch(call, args, tool === "agent_watch");
      case "work_status":
        return void this.workStatus(call, args);
      case "peer_message":
        return void this.peerMessage(call, args);
      case "peer_list":
        return void this.peerList(call);
    }
  }

  /**
   * Each agent-tool call is answered exactly once and always, even when its turn ended first (a
   * cancel, a provider that exited): its `tool.request` is in the journal, so its outcome must be.
   */
  private async result(call: Call, output: string): Promise<void> {
    if (this.answered.has(call)) return;
    this.answered.add(call);
    await this.port.publish("provider.tool_result", { agent_id: call.agentId, prompt_id: call.promptId, call_id: call.callId, tool: call.tool, output });
  }

  private async error(call: Call, error: string): Promise<void> {
    if (this.answered.has(call)) return;
    this.answered.add(call);
    await this.port.publish("provider.tool_error", { agent_id: call.agentId, prompt_id: call.promptId, call_id: call.callId, tool: call.tool, error });
  }

  private childrenOf(parent: string): string[] {
    return this.port.agentIds().filter((id) => this.port.fold(id)?.parent_id === parent);
  }

  private async start(call: Call, args: Args): Promise<void> {
    const task = args.task;
    if (typeof task !== "string" || task.trim() === "") return this.error(call, "agent_start needs a task");
    if (task.length > AGENT_TEXT_MAX_CHARS) return this.error(call, `the task is longer than ${AGENT_TEXT_MAX_CHARS} characters`);
    const role = args.role;
    if (role !== undefined && typeof role !== "string") return this.error(call, "role must be a string");
    if (role !== undefined && role !== "default" && this.port.roles()?.[role] === undefined) {
      const known = Object.keys(this.port.roles() ?? {}).filter((r) => r !== "default");
      return this.error(call, `unknown role ${JSON.stringify(role.slice(0, 64))}; ${known.length > 0 ? `configured roles: ${known.join(", ")}` : "no roles are configured; omit role"}`);
    }
    const name = args.display_name;
    if (name !== undefined && (typeof name !== "string" || name.length === 0 || name.length > 128 || /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(name))) {
      return this.error(call, "display_name must be one line of at most 128 characters");
    }
    // The bounds are checked and the start counted in one step with the child's registration
    // (startChild registers it before its first await), so parallel calls cannot both pass one.
    const refused = this.startRefusal(call.agentId);
    if (refused !== undefined) return this.error(call, refused);
    this.recentStarts.push(performance.now());
    const agentId = mintId("a");
    this.starting.add(agentId);
    try {
      const started = this.port.startChild({
        agentId,
        parentId: call.agentId,
        callId: call.callId,
        ...(role !== undefined ? { role } : {}),
        ...(name !== undefined ? { displayName: name } : {}),
      });
      const problem = await started;
      if (problem !== undefined) return await this.error(call, problem);
      const queued = await this.port.publish("agent.prompt_submitted", { agent_id: agentId, prompt_id: mintId("p"), source: "agent", sender: call.agentId, mode: "queue", text: task });
      if (!queued) return await this.error(call, `agent ${agentId} was started but its task could not be recorded`);
    } finally {
      this.starting.delete(agentId);
      this.settle();
    }
    await this.result(call, JSON.stringify({ agent_id: agentId, ...(role !== undefined ? { role } : {}), status: "started" }));
  }

  /** Why `parent` may not start an agent now (SPEC-agent-team, "Bounds"), or undefined. */
  private startRefusal(parent: string): string | undefined {
    const { children_per_agent, max_depth, agents_per_session, starts_per_minute } = this.limits;
    const how = "agent_start was refused, nothing was started";
    const depth = this.depthOf(parent) + 1;
    if (depth > max_depth) {
      return `${how}: the agent would be ${depth} levels below the user's agent, and agent_limits.max_depth is ${max_depth}; do the work yourself or hand it back to your parent`;
    }
    const children = this.childrenOf(parent).length;
    if (children >= children_per_agent) {
      return `${how}: you already started ${children} agents, and agent_limits.children_per_agent is ${children_per_agent}; give more work to the agents you have (agent_message) or wait for them`;
    }
    const agents = this.port.agentIds().length;
    if (agents >= agents_per_session) {
      return `${how}: the session already has ${agents} agents, and agent_limits.agents_per_session is ${agents_per_session}; reuse the agents you have`;
    }
    const now = performance.now();
    while (this.recentStarts.length > 0 && now - (this.recentStarts[0] as number) >= AGENT_START_WINDOW_MS) this.recentStarts.shift();
    if (this.recentStarts.length >= starts_per_minute) {
      const wait = Math.ceil((AGENT_START_WINDOW_MS - (now - (this.recentStarts[0] as number))) / 1000);
      return `${how}: ${this.recentStarts.length} agents were started in the last minute, and agent_limits.starts_per_minute is ${starts_per_minute}; try again in ${wait} s or reuse the agents you have`;
    }
    return undefined;
  }

  /** How many parents up an agent's chain goes to one that no agent started (0 for that one). */
  private depthOf(agentId: string): number {
    const seen = new Set<string>();
    let depth = 0;
    for (let at = this.port.fold(agentId)?.parent_id; at !== undefined && !seen.has(at); at = this.port.fold(at)?.parent_id) {
      seen.add(at);
      depth++;
    }
    return depth;
  }

  private async message(call: Call, args: Args): Promise<void> {
    const target = typeof args.agent_id === "string" ? args.agent_id : "";
    const text = args.text;
    if (typeof text !== "string" || text === "") return this.error(call, "agent_message needs a text");
    if (text.length > AGENT_TEXT_MAX_CHARS) return this.error(call, `the message is longer than ${AGENT_TEXT_MAX_CHARS} characters`);
    if (target === call.agentId) return this.error(call, "an agent cannot message itself");
    if (!this.port.fold(target)) return this.error(call, `unknown agent ${JSON.stringify(target.slice(0, 128))}`);
    const ok = await this.port.publish("agent.prompt_submitted", { agent_id: target, prompt_id: mintId("p"), source: "agent", sender: call.agentId, mode: "queue", text });
    if (!ok) return this.error(call, "the message could not be recorded");
    await this.result(call, `message queued for agent ${target}`);
  }

  private async peerMessage(call: Call, args: Args): Promise<void> {
    const to = args.to;
    const text = args.text;
    if (typeof to !== "string" || typeof text !== "string") return this.error(call, "peer_message needs to (SESSION_ID/AGENT_ID) and text");
    if (!this.port.peerSend) return this.error(call, "peer messaging is not available in this session");
    const r = await this.port.peerSend(call.agentId, to, text);
    return r.ok ? this.result(call, r.text) : this.error(call, r.text);
  }

  private async peerList(call: Call): Promise<void> {
    if (!this.port.peerList) return this.error(call, "peer messaging is not available in this session");
    await this.result(call, await this.port.peerList());
  }

  private isDescendant(agentId: string, ancestor: string): boolean {
    const seen = new Set<string>();
    for (let at = this.port.fold(agentId)?.parent_id; at !== undefined && !seen.has(at); at = this.port.fold(at)?.parent_id) {
      if (at === ancestor) return true;
      seen.add(at);
    }
    return false;
  }

  private async cancel(call: Call, args: Args): Promise<void> {
    const target = typeof args.agent_id === "string" ? args.agent_id : "";
    if (!this.port.fold(target)) return this.error(call, `unknown agent ${JSON.stringify(target.slice(0, 128))}`);
    if (!this.isDescendant(target, call.agentId)) return this.error(call, `agent ${target} was not started by you or your children; only those can be cancelled`);
    const ok = await this.port.publish("agent.cancel_request", { agent_id: target });
    if (!ok) return this.error(call, "the cancel could not be recorded");
    await this.result(call, `agent ${target} and the agents it started were cancelled`);
  }

  private async watch(call: Call, args: Args, enable: boolean): Promise<void> {
    const target = typeof args.agent_id === "string" ? args.agent_id : "";
    if (!enable) {
      if (!this.disableWatch(call.agentId, target)) return this.result(call, `you were not watching ${target}`);
      await this.port.publish("session.watch_set", { watcher: call.agentId, target, enabled: false });
      return this.result(call, `you no longer watch ${target}`);
    }
    const refused = this.enableWatch(call.agentId, target);
    if (refused === "unchanged") return this.result(call, `you already watch ${target}`);
    if (refused !== undefined) return this.error(call, refused);
    if (!(await this.port.publish("session.watch_set", { watcher: call.agentId, target, enabled: true }))) {
      this.disableWatch(call.agentId, target); // not recorded: not kept
      return this.error(call, "the watch could not be recorded");
    }
    await this.result(call, `you now watch ${target}: each time it finishes a turn you get its answer`);
  }

  private async workStatus(call: Call, args: Args): Promise<void> {
    const phase = args.phase;
    const title = args.title;
    if (typeof phase !== "string" || !(WORK_PHASES as readonly string[]).includes(phase)) return this.error(call, `phase must be one of ${WORK_PHASES.join(", ")}`);
    if (typeof title !== "string") return this.error(call, "title must be a string");
    const problem = workTitleProblem(title);
    if (problem !== undefined) return this.error(call, `${problem}; the status was not changed`);
    const epoch = (this.port.fold(call.agentId)?.work?.epoch ?? 0) + 1;
    const ok = await this.port.publish("agent.work_status_set", { agent_id: call.agentId, phase: phase as WorkPhaseName, title, epoch });
    if (!ok) return this.error(call, "the status could not be recorded");
    await this.result(call, `status set: ${phase}`);
  }

  private wait(call: Call, args: Args): void {
    let targets: string[];
    if (args.agent_ids === undefined) targets = this.childrenOf(call.agentId);
    else if (Array.isArray(args.agent_ids) && args.agent_ids.every((x) => typeof x === "string")) targets = [...new Set(args.agent_ids as string[])];
    else return void this.error(call, "agent_ids must be a list of agent ids");
    if (targets.length === 0) return void this.result(call, "you have no agents to wait for");
    if (targets.length > AGENT_WAIT_MAX_TARGETS) return void this.error(call, `at most ${AGENT_WAIT_MAX_TARGETS} agents per wait`);
    const unknown = targets.find((t) => !this.port.fold(t));
    if (unknown !== undefined) return void this.error(call, `unknown agent ${JSON.stringify(unknown.slice(0, 128))}`);
    if (targets.includes(call.agentId)) return void this.error(call, "an agent cannot wait for itself");
    const t = args.timeout_seconds;
    const seconds = typeof t === "number" && Number.isFinite(t) ? Math.min(Math.max(t, 1), AGENT_WAIT_MAX_S) : AGENT_WAIT_DEFAULT_S;
    const waiter: Waiter = { ...call, targets, timer: setTimeout(() => this.answerWait(waiter), seconds * 1000) };
    this.waiters.add(waiter);
    this.settle();
  }

  /** Whether an agent has nothing under way or waiting. */
  private settled(agentId: string): boolean {
    return !this.starting.has(agentId) && !this.port.busy(agentId);
  }

  /** Answers every waiter whose agents are all settled, and forgets those whose call closed. */
  settle(): void {
    for (const w of [...this.waiters]) {
      if (!this.port.callOpen(w.agentId, w.promptId, w.callId)) {
        this.drop(w);
        void this.error(w, "the wait ended with its turn (cancelled or failed) before the agents it waited for finished");
      }
      else if (w.targets.every((t) => this.settled(t))) this.answerWait(w);
    }
  }

  private drop(w: Waiter): void {
    clearTimeout(w.timer);
    this.waiters.delete(w);
  }

  private answerWait(w: Waiter): void {
    if (!this.waiters.has(w)) return;
    this.drop(w);
    const frames = w.targets.map((t) => {
      const f = this.port.fold(t);
      const outcome = !this.settled(t) ? "running" : (f?.last_outcome ?? "none");
      const name = f?.metadata.display_name;
      const answer = outcome === "running" ? "(still working)" : (this.port.lastAnswer(t) ?? "(no answer)");
      return exactCloseFrame("agent_result", { agent: t, ...(name !== undefined ? { name } : {}), outcome }, cutText(answer, AGENT_RESULT_MAX_CHARS));
    });
    void this.result(w, frames.join("\n"));
  }

  /**
   * A turn ended (or a prompt failed before it started): waiters may be answered, watchers told.
   * Watch updates are coalesced: a watcher has at most one wake prompt at a time — updates that
   * arrive while its wake is queued or running, or while it runs any other turn, are held (the
   * newest per watched agent) and reach it together in one prompt once that turn ends, so a chain
   * or lattice of watchers cannot multiply one change into many turns.
   */
  onTurnFinished(c: Committed<"agent.outer_turn_finished">): void {
    this.settle();
    const target = c.data.agent_id;
    const watchers = this.watchersOf(target).filter((w) => this.port.fold(w));
    if (watchers.length > 0) {
      const answer = this.port.lastAnswer(target) ?? "(no answer)";
      const text = exactCloseFrame("watch_update", { agent: target, outcome: c.data.outcome }, cutText(answer, AGENT_RESULT_MAX_CHARS));
      for (const w of watchers) {
        let held = this.heldUpdates.get(w);
        if (!held) this.heldUpdates.set(w, (held = new Map()));
        // The newest update from one agent replaces an older one still held.
        held.delete(target);
        held.set(target, text);
      }
    }
    // The watcher's own wake ended (its turn, or its closing unstarted): the next may be sent.
    if (this.pendingWake.get(target) === c.data.prompt_id) this.pendingWake.delete(target);
    for (const w of [...this.heldUpdates.keys()]) this.wake(w);
  }

  /** Submits a watcher's held updates as one prompt, once it runs no turn and no wake of its waits. */
  private wake(watcher: string): void {
    const held = this.heldUpdates.get(watcher);
    if (!held || held.size === 0 || this.pendingWake.has(watcher) || this.port.currentTurn(watcher) !== undefined) return;
    if (!this.port.fold(watcher)) {
      this.heldUpdates.delete(watcher);
      return;
    }
    this.heldUpdates.delete(watcher);
    const prompt_id = mintId("p");
    this.pendingWake.set(watcher, prompt_id);
    void this.port.publish("agent.prompt_submitted", { agent_id: watcher, prompt_id, source: "harness_internal", internal_kind: "watch_update", mode: "queue", text: [...held.values()].join("\n") }).then((ok) => {
      if (!ok && this.pendingWake.get(watcher) === prompt_id) this.pendingWake.delete(watcher);
    });
  }

  /** A cancel reaches the cancelled agent's children (and, through theirs, every descendant). */
  onCancelRequest(c: Committed<"agent.cancel_request">): void {
    const parent = c.data.agent_id;
    for (const w of [...this.waiters]) {
      if (w.agentId !== parent) continue;
      this.drop(w);
      void this.error(w, "the wait was cancelled with its turn");
    }
    for (const child of this.childrenOf(parent)) {
      if (this.port.busy(child) || this.childrenOf(child).length > 0) void this.port.publish("agent.cancel_request", { agent_id: child });
    }
  }

  /** What an agent is doing now, for the roster. */
  runState(agentId: string, busy: "running" | "queued" | undefined): RosterRow["status"] {
    // A turn parked in `agent_wait` is running, but what it does is wait.
    if ([...this.waiters].some((w) => w.agentId === agentId)) return "waiting";
    if (busy === "running") return "running";
    if (busy === "queued" || this.starting.has(agentId)) return "queued";
    const last = this.port.fold(agentId)?.last_outcome;
    if (last === "dispatch_uncertain" || last === "interrupted") return "interrupted";
    if (last === "cancelled") return "cancelled";
    if (last === "failed") return "failed";
    return "idle";
  }

  /**
   * A page of the roster: the session's agents ordered by id from after `cursor`, at most `limit`;
   * the count is checked before any row is built.
   */
  roster(o: { includeUnloaded: boolean; cursor?: string; limit?: number }, stateOf: (agentId: string) => "running" | "queued" | undefined): { rows: RosterRow[]; total: number; next_cursor?: string } {
    const loaded = [...this.port.agentIds()];
    const unloaded = o.includeUnloaded ? this.port.unloadedIds().filter((id) => !this.port.fold(id)) : [];
    const ids = [...loaded, ...unloaded].sort();
    const limit = Math.min(Math.max(o.limit ?? ROSTER_PAGE_MAX, 1), ROSTER_PAGE_MAX);
    const from = o.cursor === undefined ? 0 : ids.findIndex((id) => id > (o.cursor as string));
    const page = from < 0 ? [] : ids.slice(from, from + limit);
    const rows = page.map((id): RosterRow => {
      const f = this.port.fold(id);
      if (!f) return { agent_id: id, loaded: false, ephemeral: false, created_at: 0, status: "unloaded" };
      const row: RosterRow = { agent_id: id, loaded: true, ephemeral: f.ephemeral, created_at: f.created_at, status: this.runState(id, stateOf(id)) };
      const name = f.metadata.display_name;
      if (name !== undefined) row.display_name = cutText(escapeUntrusted(name), 1024);
      if (f.parent_id !== undefined) row.parent_id = f.parent_id;
      if (f.creator !== undefined) row.creator = f.creator;
      if (f.role !== undefined) row.role = f.role.slice(0, 1024);
      if (f.work) {
        row.work_phase = f.work.phase;
        row.work_title = cutText(escapeUntrusted(f.work.title), 1024);
      }
      return row;
    });
    const last = page.at(-1);
    const more = from >= 0 && from + limit < ids.length && last !== undefined;
    return { rows, total: ids.length, ...(more ? { next_cursor: last } : {}) };
  }

  /**
   * What an agent's system prompt gets after the template (SPEC-agent-team, "Roles"): its role's
   * configured prompt, and — only while its prompt offers `agent_start` — the roles it may start.
   */
  promptAddendum(role: string | undefined, mayStart: boolean): string {
    const roles = this.port.roles() ?? {};
    const parts: string[] = [];
    const own = roles[role ?? "default"]?.prompt;
    if (own !== undefined && own.trim() !== "") parts.push(own.trim());
    const named = Object.entries(roles).filter(([n]) => n !== "default");
    if (mayStart && named.length > 0) {
      const lines = named.map(([n, p]) => `- ${n}${p.description !== undefined ? `: ${p.description}` : ""}`);
      parts.push(["Roles you may give the agents you start with agent_start:", ...lines].join("\n"));
    }
    return parts.length > 0 ? `\n\n${parts.join("\n\n")}` : "";
  }
}

/** The text of the last response in some of an agent's last journal records. */
export function lastAnswerOf(records: readonly JournalRecord[]): string | undefined {
  for (let i = records.length - 1; i >= 0; i--) {
    const e = records[i]?.event;
    if (e?.name === "provider.response_finished" && typeof e.data.text === "string") return e.data.text;
  }
  return undefined;
}
