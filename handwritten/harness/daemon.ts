// The daemon's socket front: admits peers (attached UIs, plain clients), routes their messages into
// the harness, and decides when an owned daemon exits (SPEC-daemon-peers).
import type { ErrorCode, WireMessage } from "../../generated/index.js";
import { REVISION, compareRevision } from "../protocol/index.js";
import { codeForWireError, handleClientRpc, refuseContentFree, requestIdOf, type Connection, type SessionInfo } from "../transport/index.js";
import type { PublisherEnvelope } from "../bus/index.js";
import { addPeerInterceptor, connectionSink, replyFromPeer } from "../host/index.js";
import type { Harness } from "./harness.js";

export interface DaemonPolicy {
  /** A daemon a CLI started exits when its last participating UI leaves (unless detached). */
  readonly exitWhenUisLeave: boolean;
  readonly onIdle: () => void;
  /** An attached UI asked to end the session for everyone (`ui_session_end_request`). */
  readonly onEndRequested?: () => void;
  /**
   * Why this daemon's socket is not inside the user's private boundary now (its runtime folder
   * 0700 and socket 0600, both the user's), or undefined; a peer is admitted only when it is.
   * Absent: no peer is admitted.
   */
  readonly peerBoundaryProblem?: () => string | undefined;
}

type PeerState =
  | { readonly kind: "new" }
  | { readonly kind: "ui"; readonly generation: number; readonly publisher: PublisherEnvelope; detached: boolean; subscriptions: number[] }
  | { readonly kind: "client"; readonly generation: number }
  | { readonly kind: "peer"; readonly generation: number; inFlight: number };

/** A new socket connection must send its first message (`hello`, or a client RPC) within this long. */
export const HELLO_DEADLINE_MS = 10_000;
/**
 * Connections per class, so no class can crowd out another (SPEC-daemon-peers): connections that
 * have not said who they are yet, non-UI clients (probes, scripts), and attached UIs. When the first
 * two are full, a newcomer takes the place of the oldest; UIs beyond their limit are refused.
 */
export const MAX_PENDING_PEERS = 64;
export const MAX_CLIENT_PEERS = 128;
export const MAX_UI_PEERS = 64;
/** Peer-messaging connections from other daemons (SPEC-peer-messaging); a newcomer beyond takes the oldest's place. */
export const MAX_PEER_CONNECTIONS = 32;
/** Peer messages one peer connection may have waiting for their answer. */
export const MAX_PEER_IN_FLIGHT = 16;

/** The connections of one class, oldest first. */
class PeerClass {
  private readonly members = new Set<Connection>();
  constructor(
    readonly limit: number,
    private readonly evicted: string,
  ) {}
  get full(): boolean {
    return this.members.size >= this.limit;
  }
  /** Adds a connection, closing the oldest member first when the class is full. */
  admitEvicting(conn: Connection): void {
    if (this.full) {
      const oldest = this.members.values().next().value as Connection;
      this.members.delete(oldest);
      oldest.close(this.evicted);
    }
    this.members.add(conn);
  }
  add(conn: Connection): void {
    this.members.add(conn);
  }
  delete(conn: Connection): void {
    this.members.delete(conn);
  }
}

const REFUSAL_CODES: Record<"unknown_event" | "unauthorized" | "invalid" | "overloaded", ErrorCode> = {
  unknown_event: "unauthorized",
  unauthorized: "unauthorized",
  invalid: "invalid",
  overloaded: "overloaded",
};


export class DaemonFront {
  private nextGeneration = 1;
  private participatingUis = 0;
  private uiEverAdmitted = false;
  private readonly pending = new PeerClass(MAX_PENDING_PEERS, "too many connections waiting to say hello");
  private readonly clients = new PeerClass(MAX_CLIENT_PEERS, "too many client connections");
  private readonly uis = new PeerClass(MAX_UI_PEERS, "too many attached UIs");
  private readonly peerConns = new PeerClass(MAX_PEER_CONNECTIONS, "too many peer connections");

  constructor(
    private readonly harness: Harness,
    private readonly policy: DaemonPolicy,
  ) {}

  /**
   * An owned daemon whose launcher never attaches (it died, or gave the daemon up) must not linger:
   * it goes idle when no UI has been admitted `ms` after its socket was published.
   */
  expectFirstUi(ms: number): void {
    if (!this.policy.exitWhenUisLeave) return;
    setTimeout(() => {
      if (!this.uiEverAdmitted) this.policy.onIdle();
    }, ms).unref();
  }

  sessionInfo(): SessionInfo {
    return { session_id: this.harness.sessionId, project_root: this.harness.projectRoot, pid: process.pid };
  }

  /** Called for every accepted socket connection, before any message can arrive. */
  accept(conn: Connection): void {
    let state: PeerState = { kind: "new" };
    this.pending.admitEvicting(conn);
    const helloTimer = setTimeout(() => {
      if (state.kind === "new") conn.close(`no hello within ${HELLO_DEADLINE_MS / 1000} s`);
    }, HELLO_DEADLINE_MS);
    helloTimer.unref();
    conn.onInvalid((err) => refuseContentFree(conn, undefined, codeForWireError(err)));
    conn.onMessage((message) => {
      if (state.kind === "new") {
        state = this.admit(conn, message);
        if (state.kind === "new") return;
        clearTimeout(helloTimer);
        this.pending.delete(conn);
        if (state.kind === "client") this.clients.admitEvicting(conn);
        else if (state.kind === "peer") this.peerConns.admitEvicting(conn);
        else this.uis.add(conn);
        return;
      }
      if (state.kind === "client") {
        this.serveClient(conn, message);
        return;
      }
      if (state.kind === "peer") {
        this.servePeer(conn, state, message);
        return;
      }
      this.serveUi(conn, state, message);
    });
    conn.onClose(() => {
      clearTimeout(helloTimer);
      this.pending.delete(conn);
      this.clients.delete(conn);
      this.uis.delete(conn);
      this.peerConns.delete(conn);
      const s = state as PeerState;
      if (s.kind === "new" || s.kind === "peer") return;
      this.harness.removePeer(s.generation);
      if (s.kind !== "ui") return;
      for (const id of s.subscriptions) this.harness.bus.unsubscribe(id);
      this.participatingUis--;
      if (!s.detached && this.participatingUis === 0 && this.policy.exitWhenUisLeave) this.policy.onIdle();
    });
  }

  private admit(conn: Connection, message: WireMessage): PeerState {
    if (message.message !== "hello") {
      if (handleClientRpc(conn, message, () => this.sessionInfo()) === "answered") return { kind: "client", generation: this.nextGeneration++ };
      refuseContentFree(conn, requestIdOf(message));
      return { kind: "new" };
    }
    const verdict = compareRevision(message.payload.revision);
    if (verdict === "incompatible") {
      refuseContentFree(conn, undefined, "revision_mismatch");
      conn.close("revision mismatch");
      return { kind: "new" };
    }
    if (verdict === "compatible") {
      // Same major, other minor: it goes on, told once (on this connection) what tau speaks.
      const { major, minor } = message.payload.revision;
      conn.send({ message: "notice", payload: { level: "warning", text: `this daemon speaks protocol ${REVISION.major}.${REVISION.minor}; your client speaks ${major}.${minor}, continuing` } });
    }
    const generation = this.nextGeneration++;
    if (message.payload.role === "peer") {
      // Same user only: the socket must still be where only this user can connect (SPEC-peer-messaging).
      const problem = this.policy.peerBoundaryProblem ? this.policy.peerBoundaryProblem() : "peer messaging is off";
      if (problem !== undefined) {
        refuseContentFree(conn, undefined, "unauthorized");
        conn.close(`peer refused: ${problem}`);
        return { kind: "new" };
      }
      return { kind: "peer", generation, inFlight: 0 };
    }
    if (message.payload.role !== "ui") return { kind: "client", generation };
    if (message.payload.session_id !== undefined && message.payload.session_id !== this.harness.sessionId) {
      refuseContentFree(conn, undefined, "session_mismatch");
      conn.close("session mismatch");
      return { kind: "new" };
    }
    if (this.uis.full) {
      refuseContentFree(conn, undefined, "overloaded");
      conn.close("too many attached UIs");
      return { kind: "new" };
    }
    const publisher: PublisherEnvelope = Object.freeze({ class: "ui_attached", generation });
    this.harness.addPeer({ generation, publisher, send: (m) => conn.send(m), sendAsync: (m) => conn.sendAsync(m) });
    this.participatingUis++;
    this.uiEverAdmitted = true;
    conn.send({
      message: "ui_session_accepted",
      payload: { session_id: this.harness.sessionId, revision: { ...REVISION }, project_root: this.harness.projectRoot },
    });
    return { kind: "ui", generation, publisher, detached: false, subscriptions: [] };
  }

  /** Non-UI socket peers get their RPCs and a content-free error for anything else. */
  private serveClient(conn: Connection, message: WireMessage): void {
    if (handleClientRpc(conn, message, () => this.sessionInfo()) === "answered") return;
    if (message.message === "disconnect") return void conn.close("peer disconnected");
    refuseContentFree(conn, requestIdOf(message));
  }

  /**
   * A peer daemon (SPEC-peer-messaging): its messages and its agent listing, the client RPCs, and a
   * content-free refusal for everything else. Every message is answered to its `request_id`.
   */
  private servePeer(conn: Connection, state: PeerState & { kind: "peer" }, message: WireMessage): void {
    switch (message.message) {
      case "peer_message_request": {
        const request_id = message.payload.request_id;
        if (state.inFlight >= MAX_PEER_IN_FLIGHT) {
          conn.send({ message: "peer_message_result", payload: { request_id, status: "refused", reason: `at most ${MAX_PEER_IN_FLIGHT} messages may wait for their answer on one connection` } });
          return;
        }
        state.inFlight++;
        void this.harness.peerInbox.receive(message.payload).then((answer) => {
          state.inFlight--;
          conn.send({ message: "peer_message_result", payload: { request_id, ...answer } });
        });
        return;
      }
      case "peer_agents_request":
        conn.send({ message: "peer_agents_result", payload: { request_id: message.payload.request_id, session_id: this.harness.sessionId, agents: this.harness.peerInbox.agents() } });
        return;
      case "disconnect":
        conn.close("peer disconnected");
        return;
      default:
        if (handleClientRpc(conn, message, () => this.sessionInfo()) === "answered") return;
        refuseContentFree(conn, requestIdOf(message));
    }
  }

  private serveUi(conn: Connection, state: PeerState & { kind: "ui" }, message: WireMessage): void {
    const bus = this.harness.bus;
    switch (message.message) {
      case "subscribe":
        state.subscriptions.push(bus.subscribe(message.payload, connectionSink(conn), message.payload.recent));
        return;
      case "intercept":
        addPeerInterceptor(bus, state.generation, conn, message.payload);
        return;
      case "intercept_reply":
        replyFromPeer(bus, state.generation, message.payload);
        return;
      case "emit":
        void bus.publishFromPeer(message.payload.event, state.publisher).then((outcome) => {
          if (outcome.status === "refused") refuseContentFree(conn, undefined, REFUSAL_CODES[outcome.reason]);
        });
        return;
      case "ui_detach_request":
        state.detached = true;
        return;
      case "ui_session_end_request":
        this.policy.onEndRequested?.();
        return;
      case "ui_roster_request": {
        // Directed to the requester alone, never published (SPEC-agent-team, "Roster").
        const { request_id, include_unloaded, cursor, limit } = message.payload;
        const page = this.harness.rosterPage({ includeUnloaded: include_unloaded, ...(cursor !== undefined ? { cursor } : {}), ...(limit !== undefined ? { limit } : {}) });
        conn.send({ message: "ui_roster_result", payload: { request_id, ...page } });
        return;
      }
      case "ui_navigation_request": {
        // UI control state: answered to the requester alone, never published or journaled (SPEC-agent-navigation).
        const { request_id, agent_id, mode } = message.payload;
        const now = this.harness.navigation.request(agent_id, mode);
        if (now === undefined) return void refuseContentFree(conn, request_id, "invalid");
        conn.send({ message: "ui_navigation_result", payload: { request_id, agent_id, mode: now } });
        return;
      }
      case "ui_tree_request":
        conn.send({ message: "notice", payload: { level: "info", text: this.tree(), request_id: message.payload.request_id } });
        return;
      case "ui_history_request": {
        const { request_id, agent_id, before, limit } = message.payload;
        const page = this.harness.historyPage(agent_id, before, limit);
        if (!page) return void refuseContentFree(conn, request_id, "invalid");
        const records = page.records.map((r) => ({ event: r.event, seq: r.seq, recorded_at: r.recorded_at }));
        void conn.sendAsync({ message: "ui_history_result", payload: { request_id, agent_id, first: page.first, total: page.total, records: records as never } });
        return;
      }
      case "ui_debug_event_stats_request":
        conn.send({ message: "notice", payload: { level: "info", text: this.extensionStats(), request_id: message.payload.request_id } });
        return;
      case "disconnect":
        conn.close("peer disconnected");
        return;
      default:
        if (handleClientRpc(conn, message, () => this.sessionInfo()) === "answered") return;
        refuseContentFree(conn, requestIdOf(message));
    }
  }

  /** One line per configured extension: its protocol counters, never a payload. */
  private extensionStats(): string {
    const rows = this.harness.extensions.counters();
    if (rows.length === 0) return "(no configured extensions)";
    return rows
      .map(
        (r) =>
          `${r.instance} (${r.kind}, ${r.phase}, generation ${r.generation}, ${r.restarts} restarts): ${r.messages} messages, ` +
          `${r.published} published, ${r.refused} refused, ${r.staged} staged, ${r.notices} notices, ${r.invalid} unreadable`,
      )
      .join("\n");
  }

  private tree(): string {
    const agents = [...this.harness.agents.values()];
    const lines: string[] = [];
    const walk = (parent: string | undefined, depth: number) => {
      for (const a of agents.filter((x) => x.fold.parent_id === parent)) {
        lines.push(`${"  ".repeat(depth)}${a.id}`);
        walk(a.id, depth + 1);
      }
    };
    walk(undefined, 0);
    return lines.length > 0 ? lines.join("\n") : "(no agents)";
  }
}
