// The daemon's socket front: admits peers (attached UIs, plain clients), routes their messages into
// the harness, and decides when an owned daemon exits (SPEC-daemon-peers).
import type { ErrorCode, RequestCaller, WireMessage } from "../../generated/index.js";
import { REVISION, compareRevision, type RequestServer } from "../protocol/index.js";
import { codeForWireError, refuseContentFree, requestIdOf, type Connection, type SessionInfo } from "../transport/index.js";
import type { PublisherEnvelope } from "../bus/index.js";
import { addPeerInterceptor, connectionSink, replyFromPeer } from "../host/index.js";
import type { Harness } from "./harness.js";
import { socketRequests, type PeerState } from "./socket-requests.js";

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
export { MAX_PEER_IN_FLIGHT } from "./socket-requests.js";

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

/** Who a connection of each admitted class is, for the requests spec/ declares. */
const CALLERS: Record<Exclude<PeerState["kind"], "new">, RequestCaller> = { ui: "ui", client: "client", peer: "peer" };

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
  /** The answers to the requests spec/ declares for socket peers (socket-requests.ts). */
  private readonly requests: RequestServer<PeerState>;

  constructor(
    private readonly harness: Harness,
    private readonly policy: DaemonPolicy,
  ) {
    this.requests = socketRequests(harness, { sessionInfo: () => this.sessionInfo(), ...(policy.onEndRequested ? { onEndRequested: policy.onEndRequested } : {}) });
  }

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
      // A request spec/ declares is answered by its handler, or refused when this class may not send it.
      if (this.requests.handle(conn, CALLERS[state.kind], message, state)) return;
      if (state.kind === "ui") return this.serveUi(conn, state, message);
      if (message.message === "disconnect") return void conn.close("peer disconnected");
      refuseContentFree(conn, requestIdOf(message));
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
      // A request a client may send makes the connection a client (a probe sends no hello).
      if (!this.requests.accepts(message, "client")) {
        refuseContentFree(conn, requestIdOf(message));
        return { kind: "new" };
      }
      const state: PeerState = { kind: "client", generation: this.nextGeneration++ };
      this.requests.handle(conn, "client", message, state);
      return state;
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
    // The colon commands extensions offer now; later changes follow as they happen (SPEC-extension-commands).
    conn.send({ message: "ui_extension_commands", payload: { commands: this.harness.extensionCommands.list() } });
    return { kind: "ui", generation, publisher, detached: false, subscriptions: [] };
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
      case "disconnect":
        conn.close("peer disconnected");
        return;
      default:
        refuseContentFree(conn, requestIdOf(message));
    }
  }
}
