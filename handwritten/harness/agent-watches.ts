// The agent team's watches (SPEC-agent-team, "Watches", "Long waits"): the acyclic graph of who
// watches whom, the long-wait notices a watcher gets while a watched turn runs on, and the watch
// updates held for a watcher until it can take them in one prompt.
import type { Committed } from "../bus/index.js";
import type { EventName, EventPayloads } from "../../generated/index.js";
import type { AgentFold } from "./agent-fold.js";
import { cutText, exactCloseFrame } from "./agent-tools.js";
import { mintId } from "./ids.js";

/** Longest a parent's answer from one agent (UTF-16 units): a result is a summary, not a transcript. */
export const AGENT_RESULT_MAX_CHARS = 16 * 1024;
/** Seconds of one turn after which its watchers are told it is still running (SPEC-agent-team, "Long waits"). */
export const LONG_WAIT_THRESHOLDS_S: readonly number[] = [60, 300, 900, 3600];
/** Most long-wait notices delivered in one scheduler cycle; the rest follow in the next. */
export const LONG_WAIT_RECIPIENTS_PER_CYCLE = 64;

/** What the watches need of the harness (a part of the team's port). */
export interface AgentWatchesPort {
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<boolean>;
  fold(agentId: string): AgentFold | undefined;
  agentIds(): readonly string[];
  lastAnswer(agentId: string): string | undefined;
  currentTurn(agentId: string): { promptId: string; startedAt: number } | undefined;
}

export class AgentWatches {
  /** Watch edges: watcher → the agents it watches. */
  private readonly watches = new Map<string, Set<string>>();
  /** Per agent: the turn whose long-wait thresholds are counted, and the next threshold's index. */
  private readonly longWaitCursor = new Map<string, { promptId: string; next: number }>();
  /** Long-wait notices crossed and not yet delivered: one per recipient. */
  private readonly longWaitBacklog: Array<{ watcher: string; target: string; seconds: number }> = [];
  private longWaitTimer: NodeJS.Timeout | undefined;
  private longWaitDraining = false;
  private readonly thresholds: readonly number[];
  /** Watch updates held for a watcher until it can take them in one prompt (see turnFinished): the newest per watched agent. */
  private readonly heldUpdates = new Map<string, Map<string, string>>();
  /** Each watcher's watch-update prompt submitted and not yet ended (queued or running). */
  private readonly pendingWake = new Map<string, string>();

  constructor(
    private readonly port: AgentWatchesPort,
    longWaitThresholdsS: readonly number[] = LONG_WAIT_THRESHOLDS_S,
  ) {
    this.thresholds = [...longWaitThresholdsS].sort((a, b) => a - b);
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
  restore(records: ReadonlyArray<{ name: string; data: Record<string, unknown> }>): void {
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
  enable(watcher: string, target: string): string | "unchanged" | undefined {
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
  disable(watcher: string, target: string): boolean {
    const removed = this.watches.get(watcher)?.delete(target) === true;
    this.armLongWaits();
    return removed;
  }

  /**
   * A turn ended (or a prompt failed before it started): its watchers are told. Watch updates are
   * coalesced: a watcher has at most one wake prompt at a time — updates that arrive while its wake
   * is queued or running, or while it runs any other turn, are held (the newest per watched agent)
   * and reach it together in one prompt once that turn ends, so a chain or lattice of watchers
   * cannot multiply one change into many turns.
   */
  turnFinished(c: Committed<"agent.outer_turn_finished">): void {
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
}
