// Agents that start agents (SPEC-agent-team): the harness answers a model's agent tools itself —
// starting a child, messaging, waiting for results, cancelling, watching, setting its own work
// status — tells waiting parents when a turn ends, and answers the roster. A child's words reach
// another agent only inside an exact-close frame that names it, as tool output or a harness
// prompt: never as the user's instruction. Its rooms beside it: the watches (agent-watches.ts),
// the bounds (agent-bounds.ts), the parent tree (agent-tree.ts) and the roster (agent-roster.ts).
import type { Committed } from "../bus/index.js";
import type { AgentLimits, EventName, EventPayloads, RolePolicy, RosterRow } from "../../generated/index.js";
import type { JournalRecord } from "../store/index.js";
import type { AgentFold } from "./agent-fold.js";
import { AgentBounds } from "./agent-bounds.js";
import { rosterPage } from "./agent-roster.js";
import { AGENT_TOOL_NAMES, WORK_PHASES, cutText, exactCloseFrame, workTitleProblem, type WorkPhaseName } from "./agent-tools.js";
import { childrenOf, isDescendant } from "./agent-tree.js";
import { AGENT_RESULT_MAX_CHARS, AgentWatches } from "./agent-watches.js";
import { mintId } from "./ids.js";

/** Default and most seconds an `agent_wait` waits. */
export const AGENT_WAIT_DEFAULT_S = 300;
export const AGENT_WAIT_MAX_S = 600;
/** Most agents one `agent_wait` names. */
export const AGENT_WAIT_MAX_TARGETS = 64;
/** Longest task or message one agent sends another (UTF-16 units), as the tools' schemas say. */
export const AGENT_TEXT_MAX_CHARS = 65_536;

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
  /** Children started whose task is not yet queued: they count as busy. */
  private readonly starting = new Set<string>();
  private readonly waiters = new Set<Waiter>();
  /** Calls already answered (each is answered once). */
  private readonly answered = new WeakSet<Call>();
  private readonly watches: AgentWatches;
  private readonly bounds: AgentBounds;

  constructor(
    private readonly port: AgentTeamPort,
    options: { longWaitThresholdsS?: readonly number[]; limits?: AgentLimits } = {},
  ) {
    this.watches = new AgentWatches(port, options.longWaitThresholdsS);
    this.bounds = new AgentBounds(port, options.limits);
  }

  /** Stops the long-wait scheduler (the session ends). */
  close(): void {
    this.watches.close();
  }

  /** Watches folded from the session journal on a cold resume: only edges between loaded agents that keep the graph acyclic. */
  restoreWatches(records: ReadonlyArray<{ name: string; data: Record<string, unknown> }>): void {
    this.watches.restore(records);
  }

  /** The agents watching `target`. */
  watchersOf(target: string): string[] {
    return this.watches.watchersOf(target);
  }

  /** The agents `watcher` watches. */
  watchedBy(watcher: string): string[] {
    return this.watches.watchedBy(watcher);
  }

  /** A watch enabled (see AgentWatches.enable): why it was refused, "unchanged" for an edge that exists, or undefined. */
  enableWatch(watcher: string, target: string): string | "unchanged" | undefined {
    return this.watches.enable(watcher, target);
  }

  /** A watch disabled: no cycle analysis; true when an edge was removed. */
  disableWatch(watcher: string, target: string): boolean {
    return this.watches.disable(watcher, target);
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
    const refused = this.bounds.refusal(call.agentId);
    if (refused !== undefined) return this.error(call, refused);
    this.bounds.counted();
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

  private async cancel(call: Call, args: Args): Promise<void> {
    const target = typeof args.agent_id === "string" ? args.agent_id : "";
    if (!this.port.fold(target)) return this.error(call, `unknown agent ${JSON.stringify(target.slice(0, 128))}`);
    if (!isDescendant(this.port, target, call.agentId)) return this.error(call, `agent ${target} was not started by you or your children; only those can be cancelled`);
    const ok = await this.port.publish("agent.cancel_request", { agent_id: target });
    if (!ok) return this.error(call, "the cancel could not be recorded");
    await this.result(call, `agent ${target} and the agents it started were cancelled`);
  }

  private async watch(call: Call, args: Args, enable: boolean): Promise<void> {
    const target = typeof args.agent_id === "string" ? args.agent_id : "";
    if (!enable) {
      if (!this.watches.disable(call.agentId, target)) return this.result(call, `you were not watching ${target}`);
      await this.port.publish("session.watch_set", { watcher: call.agentId, target, enabled: false });
      return this.result(call, `you no longer watch ${target}`);
    }
    const refused = this.watches.enable(call.agentId, target);
    if (refused === "unchanged") return this.result(call, `you already watch ${target}`);
    if (refused !== undefined) return this.error(call, refused);
    if (!(await this.port.publish("session.watch_set", { watcher: call.agentId, target, enabled: true }))) {
      this.watches.disable(call.agentId, target); // not recorded: not kept
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
    if (args.agent_ids === undefined) targets = childrenOf(this.port, call.agentId);
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

  /** A turn ended (or a prompt failed before it started): waiters may be answered, watchers told (see AgentWatches.turnFinished). */
  onTurnFinished(c: Committed<"agent.outer_turn_finished">): void {
    this.settle();
    this.watches.turnFinished(c);
  }

  /** A cancel reaches the cancelled agent's children (and, through theirs, every descendant). */
  onCancelRequest(c: Committed<"agent.cancel_request">): void {
    const parent = c.data.agent_id;
    for (const w of [...this.waiters]) {
      if (w.agentId !== parent) continue;
      this.drop(w);
      void this.error(w, "the wait was cancelled with its turn");
    }
    for (const child of childrenOf(this.port, parent)) {
      if (this.port.busy(child) || childrenOf(this.port, child).length > 0) void this.port.publish("agent.cancel_request", { agent_id: child });
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

  /** A page of the roster (see rosterPage); `stateOf` says what an agent's loop is doing. */
  roster(o: { includeUnloaded: boolean; cursor?: string; limit?: number }, stateOf: (agentId: string) => "running" | "queued" | undefined): { rows: RosterRow[]; total: number; next_cursor?: string } {
    return rosterPage(this.port, o, (id) => this.runState(id, stateOf(id)));
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
