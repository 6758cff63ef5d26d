// Follows a `tau run`'s prompt through the session's events: which events are the run's (its
// agent's), and what the run learned of how its prompt went. The run's agent is known only once
// the daemon answers `ui.create_agent`, after that agent's first events were delivered: they are
// held until then (bounded), so the run's output begins with the agent's `agent.started`. A
// continued session's agent started long before: its `agent.started` is read from its journal.
import { agentIdOf, carriedEvent } from "../../protocol/index.js";
import type { ErrorClass, TurnOutcome } from "../../../generated/index.js";
import type { Delivery, SessionClient } from "../session-client.js";

/** How the run's wait ended, as far as the run saw it (ends are made from it: prompt.ts). */
export type Outcome =
  /** The daemon finished the run's prompt's turn. */
  | { readonly kind: "turn"; readonly outcome: TurnOutcome }
  /** The daemon failed the run's prompt before it ran (`agent.prompt_failed`). */
  | { readonly kind: "prompt_failed"; readonly code: string; readonly diagnostic: string }
  /** The daemon refused to make the agent, load the skill or take the prompt. */
  | { readonly kind: "refused"; readonly diagnostic: string }
  /** No provider declared a model in time. */
  | { readonly kind: "no_provider" }
  /** The connection to the daemon ended first; `reason` is what the daemon said, if it said anything. */
  | { readonly kind: "daemon_lost"; readonly reason?: string }
  /** The user interrupted the run before its prompt was sent. */
  | { readonly kind: "cancelled" }
  /** The reader of the output went away. */
  | { readonly kind: "reader_gone" };

/** At most this many deliveries of other agents and of the not yet known run's agent are held. */
export const HELD_DELIVERIES_MAX = 1024;

/**
 * After the run's turn ended with calls still open (a cancel ends the turn before a killed command
 * reports), how long the run waits for their outcomes, so the output holds every call's end.
 */
export const OPEN_CALLS_WAIT_MS = 3_000;

/** What the run shows of its agent's events (the printer, behind RunOutput). */
export interface AgentEventSink {
  agentEvent(d: Delivery): void;
}

export class RunFollower {
  agentId: string | undefined;
  promptId: string | undefined;
  /** The last failure the provider reported for the run's agent. */
  failure: { readonly errorClass: ErrorClass; readonly diagnostic: string } | undefined;
  /** Why the agent's last response ended short, if it did (SPEC-provider-chat-completions). */
  cutShort: "length" | "content_filter" | undefined;
  readonly outcome: Promise<Outcome>;
  private settle!: (o: Outcome) => void;
  private settled = false;
  /**
   * Deliveries held until the run's agent and its `agent.started` are known: those naming any agent
   * while the run's is not known, then the run's agent's. Undefined once they flow.
   */
  private held: Delivery[] | undefined = [];
  /** Whether a held delivery was let go for want of room (the start may have gone with it). */
  private overflowed = false;
  /** The run's agent's calls started and not yet ended (`tool.started` without its `tool.result`). */
  private readonly openCalls = new Set<string>();
  /** The turn's end, waiting for the open calls' outcomes (OPEN_CALLS_WAIT_MS at most). */
  private turnEnd: { outcome: Outcome; timer: NodeJS.Timeout } | undefined;

  constructor(private readonly sink: AgentEventSink) {
    this.outcome = new Promise<Outcome>((resolve) => (this.settle = resolve));
  }

  /** Ends the wait; the first outcome wins. */
  end(o: Outcome): void {
    if (this.settled) return;
    this.settled = true;
    if (this.turnEnd !== undefined) clearTimeout(this.turnEnd.timer);
    this.settle(o);
  }

  /** The run's turn ended: the run ends once its open calls have reported (or OPEN_CALLS_WAIT_MS passed). */
  private turnEnded(o: Outcome): void {
    if (this.openCalls.size === 0) return this.end(o);
    if (this.turnEnd !== undefined || this.settled) return;
    const timer = setTimeout(() => this.end(o), OPEN_CALLS_WAIT_MS);
    timer.unref();
    this.turnEnd = { outcome: o, timer };
  }

  get ended(): boolean {
    return this.settled;
  }

  /** One delivery of the session: the run's agent's go to the sink, in order. */
  deliver(d: Delivery): void {
    const agent = agentIdOf(d.event);
    if (agent === undefined || (this.agentId !== undefined && agent !== this.agentId)) return;
    if (this.held === undefined) return this.agentEvent(d);
    if (this.held.length >= HELD_DELIVERIES_MAX) {
      this.held.shift();
      this.overflowed = true;
    }
    this.held.push(d);
    if (this.agentId !== undefined && this.isStart(d)) this.release();
  }

  /**
   * The run's agent is `agentId`. A new agent's `agent.started` is on its way (the daemon committed
   * it before it answered, but may deliver it after): its events are held until it comes. A
   * continued agent's started before this run: its `agent.started` is read with `readStart` (from
   * its journal: startedFromJournal), and so is a new agent's whose start was let go from a full hold.
   */
  async follow(agentId: string, continued: boolean, readStart: () => Promise<Delivery | undefined>): Promise<void> {
    this.agentId = agentId;
    const held = (this.held ?? []).filter((d) => agentIdOf(d.event) === agentId);
    this.held = held;
    if (held.some((d) => this.isStart(d))) return this.release();
    if (!continued && !this.overflowed) return;
    const first = await readStart().catch(() => undefined);
    if (first) this.agentEvent(first);
    this.release();
  }

  private isStart(d: Delivery): boolean {
    return d.event.name === "agent.started" && agentIdOf(d.event) === this.agentId;
  }

  /** Lets the held events of the run's agent go, in order, and the rest flow as they come. */
  private release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const d of held) this.agentEvent(d);
  }

  private agentEvent(d: Delivery): void {
    this.sink.agentEvent(d);
    const e = d.event;
    switch (e.name) {
      case "agent.prompt_submitted":
        // The run's own prompt, not one another agent or session sent this agent meanwhile.
        if (this.promptId === undefined && e.data.source === "human_ui") this.promptId = e.data.prompt_id;
        break;
      case "provider.response_finished":
        this.cutShort = e.data.finish_reason === "length" || e.data.finish_reason === "content_filter" ? e.data.finish_reason : undefined;
        break;
      case "provider.response_failed":
        this.failure = { errorClass: e.data.error_class, diagnostic: e.data.diagnostic };
        break;
      case "agent.prompt_failed":
        if (e.data.prompt_id === this.promptId) this.end({ kind: "prompt_failed", code: e.data.code, diagnostic: e.data.diagnostic });
        break;
      case "tool.started":
        this.openCalls.add(e.data.call_id);
        break;
      case "tool.result":
        this.openCalls.delete(e.data.call_id);
        if (this.turnEnd !== undefined && this.openCalls.size === 0) this.end(this.turnEnd.outcome);
        break;
      case "agent.outer_turn_finished":
        if (e.data.prompt_id === this.promptId) this.turnEnded({ kind: "turn", outcome: e.data.outcome });
        break;
    }
  }
}

/**
 * The agent's `agent.started` from its journal (position 0), as a replayed delivery. A page of
 * history does not say who published a record; `agent.started` has one publisher, the harness (its
 * authority row, SPEC-agent-lifecycle).
 */
export async function startedFromJournal(client: SessionClient, agentId: string): Promise<Delivery | undefined> {
  const page = await client.request("ui_history_request", { agent_id: agentId, before: 1, limit: 1 });
  const record = page.first === 0 ? page.records[0] : undefined;
  if (record?.event.name !== "agent.started") return undefined;
  return { event: carriedEvent(record.event), seq: record.seq, recorded_at: record.recorded_at, publisher: { class: "harness" }, replay: true };
}
