// Peer harness messaging (SPEC-peer-messaging): an agent messages an agent of another running
// session of the same user. The receiver's inbox deduplicates by message id, admits a message only
// within the sending session's budget (and a budget for all senders together) and records it as the
// target's prompt of source `peer`, which reaches its provider exact-close framed with the sender's
// stable ids, never as the user's words. The sender's outbox finds the target daemon through the
// runtime directory and delivers at least once (transport's sendPeerMessage).
import { listSessions, askPeerAgents, sendPeerMessage, PEER_TEXT_MAX_CHARS, type PeerDelivery, type PeerSendOptions, type SessionRow } from "../transport/index.js";
import type { EventName, EventPayloads } from "../../generated/index.js";
import { cutText, escapeUntrusted, exactCloseFrame } from "./agent-tools.js";
import { mintId } from "./ids.js";

/** Messages one sending session may have admitted per window (each one starts or queues a turn). */
export const PEER_BUDGET_PER_SENDER = 8;
/** Messages all sending sessions together may have admitted per window. */
export const PEER_BUDGET_TOTAL = 32;
export const PEER_BUDGET_WINDOW_MS = 60_000;
/** Sending sessions whose admissions are remembered at once; a new one beyond is refused. */
export const PEER_MAX_SENDERS = 256;
/** Accepted message ids remembered for deduplication, and for how long. */
export const PEER_DEDUPE_MAX = 4096;
export const PEER_DEDUPE_TTL_MS = 10 * 60_000;
/** Sessions and agents one `peer_list` shows. */
export const PEER_LIST_MAX_SESSIONS = 32;

export interface PeerBudget {
  readonly perSender: number;
  readonly total: number;
  readonly windowMs: number;
}

export const DEFAULT_PEER_BUDGET: PeerBudget = { perSender: PEER_BUDGET_PER_SENDER, total: PEER_BUDGET_TOTAL, windowMs: PEER_BUDGET_WINDOW_MS };

export interface PeerRequest {
  readonly request_id: string;
  readonly from_session: string;
  readonly from_agent: string;
  readonly to_agent: string;
  readonly text: string;
}

export type PeerAnswer = { readonly status: "accepted" | "duplicate" } | { readonly status: "refused"; readonly reason: string };

export interface PeerInboxPort {
  readonly sessionId: string;
  /** Whether a loaded, durable agent of this session has this id. */
  addressable(agentId: string): boolean;
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<boolean>;
  /** The addressable agents, ordered by id: id, display name, whether busy. */
  agents(): ReadonlyArray<{ agent_id: string; display_name?: string; busy: boolean }>;
}

/** The provider form of a peer's message: framed with the sender's stable ids, its close defused. */
export function peerEnvelope(sender: { session_id: string; agent_id: string; message_id: string }, text: string): string {
  return exactCloseFrame("peer_message", { from: `${sender.session_id}/${sender.agent_id}`, id: sender.message_id }, text);
}

/** The receiving side: dedupe, budget, record. */
export class PeerInbox {
  /** Accepted (or being recorded) message ids by sender session, with when they were admitted. */
  private readonly seen = new Map<string, { at: number; outcome: Promise<PeerAnswer> }>();
  /** Per sending session: when its admitted messages were admitted (monotonic ms), oldest first. */
  private readonly admitted = new Map<string, number[]>();
  private readonly all: number[] = [];

  constructor(
    private readonly port: PeerInboxPort,
    private readonly budget: PeerBudget = DEFAULT_PEER_BUDGET,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Answers one peer message; a resend of an accepted id is `duplicate` and records nothing. */
  receive(req: PeerRequest): Promise<PeerAnswer> {
    const now = this.now();
    this.forget(now);
    const key = `${req.from_session}\n${req.request_id}`;
    const prior = this.seen.get(key);
    if (prior) return prior.outcome.then((a) => (a.status === "refused" ? a : { status: "duplicate" }));
    const refusal = this.check(req, now);
    if (refusal !== undefined) return Promise.resolve({ status: "refused", reason: refusal });
    // Admitted: counted now, synchronously, so concurrent requests cannot overrun the budget.
    const mine = this.admitted.get(req.from_session) ?? [];
    mine.push(now);
    this.admitted.set(req.from_session, mine);
    this.all.push(now);
    const outcome = this.port
      .publish("agent.prompt_submitted", {
        agent_id: req.to_agent,
        prompt_id: mintId("p"),
        source: "peer",
        peer: { session_id: req.from_session, agent_id: req.from_agent, message_id: req.request_id },
        mode: "queue",
        text: req.text,
      })
      // A publication that throws (the daemon stopping) is a refusal too, never an unhandled rejection.
      .catch(() => false)
      .then((ok): PeerAnswer => (ok ? { status: "accepted" } : { status: "refused", reason: "the message could not be recorded" }));
    const entry = { at: now, outcome };
    this.seen.set(key, entry);
    // A message that could not be recorded is not remembered: a resend may try again.
    void outcome.then((a) => {
      if (a.status === "refused" && this.seen.get(key) === entry) this.seen.delete(key);
    });
    return outcome;
  }

  private check(req: PeerRequest, now: number): string | undefined {
    if (req.from_session === this.port.sessionId) return "a session cannot peer-message itself; use agent_message";
    if (req.text.length === 0 || req.text.length > PEER_TEXT_MAX_CHARS) return `a peer message holds 1 to ${PEER_TEXT_MAX_CHARS} characters`;
    if (!this.port.addressable(req.to_agent)) return `no agent ${req.to_agent} is loaded in session ${this.port.sessionId}`;
    const mine = this.admitted.get(req.from_session);
    const secs = Math.ceil(this.budget.windowMs / 1000);
    if (mine !== undefined && mine.length >= this.budget.perSender) {
      const wait = Math.max(1, Math.ceil((mine[0]! + this.budget.windowMs - now) / 1000));
      return `peer budget exhausted: session ${req.from_session} may have at most ${this.budget.perSender} messages admitted per ${secs} s here; try again in ${wait} s`;
    }
    if (this.all.length >= this.budget.total) {
      const wait = Math.max(1, Math.ceil((this.all[0]! + this.budget.windowMs - now) / 1000));
      return `peer budget exhausted: this session admits at most ${this.budget.total} peer messages per ${secs} s from all sessions; try again in ${wait} s`;
    }
    if (mine === undefined && this.admitted.size >= PEER_MAX_SENDERS) return `this session is tracking ${PEER_MAX_SENDERS} sending sessions already; try again later`;
    return undefined;
  }

  /** Drops admissions older than the window and message ids older than their time to live (or beyond the count). */
  private forget(now: number): void {
    const horizon = now - this.budget.windowMs;
    for (const [sender, times] of this.admitted) {
      while (times.length > 0 && times[0]! <= horizon) times.shift();
      if (times.length === 0) this.admitted.delete(sender);
    }
    while (this.all.length > 0 && this.all[0]! <= horizon) this.all.shift();
    for (const [key, e] of this.seen) {
      if (this.seen.size <= PEER_DEDUPE_MAX && e.at > now - PEER_DEDUPE_TTL_MS) break; // insertion order: the rest are newer
      this.seen.delete(key);
    }
  }

  /** The agents a peer may address (at most 64); display names are presentation only, escaped where shown. */
  agents(): Array<{ agent_id: string; display_name?: string; busy: boolean }> {
    return this.port
      .agents()
      .slice(0, 64)
      .map((a) => ({ agent_id: a.agent_id, busy: a.busy, ...(a.display_name !== undefined ? { display_name: cutText(a.display_name, 128) } : {}) }));
  }
}

const ADDRESS = /^([A-Za-z0-9][A-Za-z0-9_.:-]{0,127})\/([A-Za-z0-9][A-Za-z0-9_.:-]{0,127})$/;

export interface PeerOutboxOptions {
  readonly runtimeDir: string | undefined;
  readonly sessionId: string;
  readonly send?: PeerSendOptions;
}

/** The sending side: the model's `peer_message` and `peer_list`. */
export class PeerOutbox {
  constructor(private readonly o: PeerOutboxOptions) {}

  private async sessions(): Promise<SessionRow[]> {
    if (this.o.runtimeDir === undefined) return [];
    const listing = await listSessions(this.o.runtimeDir, { client: "tau peer" });
    return listing.rows.filter((r) => r.session_id !== this.o.sessionId);
  }

  /** Sends `text` from agent `from` to `SESSION_ID/AGENT_ID`; the model reads the outcome. */
  async send(from: string, to: string, text: string): Promise<{ ok: boolean; text: string }> {
    const m = ADDRESS.exec(to);
    if (!m) return { ok: false, text: "to must be SESSION_ID/AGENT_ID (peer_list shows them)" };
    const session = m[1] ?? "";
    const agent = m[2] ?? "";
    if (session === this.o.sessionId) return { ok: false, text: "that is this session: use agent_message" };
    if (text === "" || text.length > PEER_TEXT_MAX_CHARS) return { ok: false, text: `a peer message holds 1 to ${PEER_TEXT_MAX_CHARS} characters` };
    if (this.o.runtimeDir === undefined) return { ok: false, text: "this daemon has no runtime folder to find other sessions in" };
    let rows: SessionRow[];
    try {
      rows = (await this.sessions()).filter((r) => r.session_id === session);
    } catch (err) {
      return { ok: false, text: `other sessions cannot be listed: ${(err as Error).message}` };
    }
    const row = rows[0];
    if (!row) return { ok: false, text: `no running session ${session} of this user was found` };
    const messageId = mintId("pm");
    const d: PeerDelivery = await sendPeerMessage(row.socket, { message_id: messageId, from_session: this.o.sessionId, from_agent: from, to_agent: agent, text }, this.o.send);
    switch (d.kind) {
      case "accepted":
      case "duplicate":
        return { ok: true, text: `message ${messageId} delivered to ${session}/${agent}` };
      case "refused":
        return { ok: false, text: `session ${session} refused message ${messageId}: ${d.reason}` };
      default:
        return { ok: false, text: `message ${messageId} was not acknowledged after ${d.attempts} attempts (${d.detail}); it may or may not have arrived` };
    }
  }

  /** The other running sessions of this user and the agents each lets peers address. */
  async list(): Promise<string> {
    if (this.o.runtimeDir === undefined) return "this daemon has no runtime folder to find other sessions in";
    const rows = (await this.sessions()).slice(0, PEER_LIST_MAX_SESSIONS);
    if (rows.length === 0) return "no other running sessions";
    const answers = await Promise.all(rows.map((r, i) => askPeerAgents(r.socket, undefined, `peer-list-${i}`)));
    const lines: string[] = [];
    rows.forEach((r, i) => {
      const a = answers[i];
      lines.push(`session ${r.session_id} (${escapeUntrusted(cutText(r.project_root, 256))})${a ? "" : ": did not answer"}`);
      for (const agent of a?.agents ?? []) {
        lines.push(`  ${r.session_id}/${agent.agent_id}${agent.display_name !== undefined ? ` name="${escapeUntrusted(cutText(agent.display_name, 128))}"` : ""}${agent.busy ? " (busy)" : ""}`);
      }
    });
    return lines.join("\n");
  }
}
