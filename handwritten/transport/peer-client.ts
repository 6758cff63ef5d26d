// Peer messaging, the sender's half (SPEC-peer-messaging): a daemon delivers one agent's message to
// another running daemon of the same user over that daemon's socket, as a `peer` connection. The
// message id is minted once and every resend carries it, so the receiver can deduplicate; the
// sender resends after a lost answer (timeout, closed connection) until the receiver acknowledges,
// a bounded number of times. A refusal is final and never resent.
import * as fs from "node:fs";
import { dirname } from "node:path";
import { REQUESTS, type ErrorCode } from "../../generated/index.js";
import { REVISION, request, type RequestError, type RequestOptions } from "../protocol/index.js";
import type { Connection } from "./connection.js";
import { ConnectError } from "./errors.js";
import { RUNTIME_DIR_MODE, SOCKET_MODE } from "./limits.js";
import { connectUnix } from "./unix.js";

/** Longest peer message (UTF-16 units), as the wire schema says. */
export const PEER_TEXT_MAX_CHARS = 65_536;
/** Attempts of one delivery (the first and its resends). */
export const PEER_SEND_ATTEMPTS = 4;
/** One attempt's deadline: connect, hello and the answer. */
export const PEER_ATTEMPT_DEADLINE_MS = 5_000;
/** Pause before the n-th resend: this times 2^(n-1). */
export const PEER_RESEND_BACKOFF_MS = 250;
/** Largest frame a peer client reads (its answers are small). */
export const PEER_MAX_FRAME_BYTES = 256 * 1024;

export interface PeerMessage {
  readonly message_id: string;
  readonly from_session: string;
  readonly from_agent: string;
  readonly to_agent: string;
  readonly text: string;
}

export type PeerDelivery =
  | { readonly kind: "accepted" | "duplicate"; readonly attempts: number }
  | { readonly kind: "refused"; readonly reason: string; readonly attempts: number }
  /** No answer after every attempt: the message may or may not have arrived. */
  | { readonly kind: "unacknowledged"; readonly detail: string; readonly attempts: number };

export interface PeerSendOptions {
  readonly attempts?: number;
  readonly attemptDeadlineMs?: number;
  readonly backoffMs?: number;
}

function uid(): number | undefined {
  return typeof process.geteuid === "function" ? process.geteuid() : undefined;
}

/**
 * Why a daemon socket is not inside this user's private boundary, or undefined: its folder must be
 * a real 0700 directory owned by this user and the socket a 0600 socket owned by this user. Under
 * those modes only this user (and the superuser) can connect, which is what lets a receiving
 * daemon treat a peer connection as the same user's (Node exposes no SO_PEERCRED).
 */
export function sameUserBoundaryProblem(socketPath: string): string | undefined {
  const me = uid();
  try {
    const dir = fs.lstatSync(dirname(socketPath));
    if (!dir.isDirectory()) return "the runtime folder is not a directory";
    if (me !== undefined && dir.uid !== me) return "the runtime folder belongs to another user";
    if ((dir.mode & 0o777) !== RUNTIME_DIR_MODE) return "the runtime folder is not private (mode 0700)";
    const sock = fs.lstatSync(socketPath);
    if (!sock.isSocket()) return "the daemon's endpoint is not a socket";
    if (me !== undefined && sock.uid !== me) return "the daemon's socket belongs to another user";
    if ((sock.mode & 0o777) !== SOCKET_MODE) return "the daemon's socket is not private (mode 0600)";
  } catch (err) {
    return `the daemon's socket cannot be inspected (${(err as NodeJS.ErrnoException).code ?? "error"})`;
  }
  return undefined;
}

type Attempt = { kind: "answer"; status: "accepted" | "duplicate" | "refused"; reason?: string } | { kind: "error"; code: ErrorCode } | { kind: "lost"; detail: string };

async function connectPeer(socketPath: string, deadlineMs: number): Promise<Connection> {
  const conn = await connectUnix(socketPath, { timeoutMs: deadlineMs, connection: { maxFrameBytes: PEER_MAX_FRAME_BYTES, maxQueueItems: 8, maxQueueBytes: 1024 * 1024 } });
  conn.send({ message: "hello", payload: { revision: { ...REVISION }, role: "peer", client: "tau peer" } });
  return conn;
}

/**
 * One request on a fresh peer connection (it carries this request alone), answered or lost at the
 * deadline; the connection is destroyed either way.
 */
async function exchange<T>(conn: Connection, deadlineMs: number, ask: (o: RequestOptions) => Promise<T>): Promise<T | { kind: "error"; code: ErrorCode } | { kind: "lost"; detail: string }> {
  try {
    return await ask({ timeoutMs: deadlineMs, soleRequest: true });
  } catch (err) {
    const e = err as RequestError;
    if (e.failure === "refused") return { kind: "error", code: e.refusal as ErrorCode };
    if (e.failure === "closed") return { kind: "lost", detail: `the connection closed (${conn.closeReason?.kind ?? "closed"})` };
    return { kind: "lost", detail: "no answer in time" };
  } finally {
    conn.destroy("peer exchange finished");
  }
}

async function attempt(socketPath: string, m: PeerMessage, deadlineMs: number): Promise<Attempt> {
  const started = performance.now();
  let conn: Connection;
  try {
    conn = await connectPeer(socketPath, deadlineMs);
  } catch (err) {
    return { kind: "lost", detail: err instanceof ConnectError ? `cannot connect (${err.failure})` : "cannot connect" };
  }
  const params = { from_session: m.from_session, from_agent: m.from_agent, to_agent: m.to_agent, text: m.text };
  // The message id is the request id: a resend carries the same one, so the receiver can deduplicate.
  return exchange(conn, Math.max(1, deadlineMs - (performance.now() - started)), async (o) => {
    const answer = await request(conn, REQUESTS.peer_message_request, params, { ...o, requestId: m.message_id });
    return { kind: "answer" as const, status: answer.status, ...(answer.reason !== undefined ? { reason: answer.reason } : {}) };
  });
}

/**
 * Delivers one peer message at least once: attempts until the receiver answers, at most
 * `attempts` times with a growing pause between them, every attempt on a fresh connection with the
 * same message id. `refused` and content-free errors are final.
 */
export async function sendPeerMessage(socketPath: string, m: PeerMessage, options: PeerSendOptions = {}): Promise<PeerDelivery> {
  const boundary = sameUserBoundaryProblem(socketPath);
  if (boundary !== undefined) return { kind: "refused", reason: boundary, attempts: 0 };
  const attempts = Math.max(1, options.attempts ?? PEER_SEND_ATTEMPTS);
  const deadline = options.attemptDeadlineMs ?? PEER_ATTEMPT_DEADLINE_MS;
  const backoff = options.backoffMs ?? PEER_RESEND_BACKOFF_MS;
  let last = "no attempt";
  for (let n = 1; n <= attempts; n++) {
    if (n > 1) await new Promise((r) => setTimeout(r, backoff * 2 ** (n - 2)));
    const a = await attempt(socketPath, m, deadline);
    if (a.kind === "answer") return a.status === "refused" ? { kind: "refused", reason: a.reason ?? "refused", attempts: n } : { kind: a.status, attempts: n };
    if (a.kind === "error") return { kind: "refused", reason: `the daemon refused the request (${a.code})`, attempts: n };
    last = a.detail;
  }
  return { kind: "unacknowledged", detail: last, attempts };
}

export interface PeerAgents {
  readonly session_id: string;
  readonly agents: ReadonlyArray<{ readonly agent_id: string; readonly display_name?: string; readonly busy: boolean }>;
}

/** The agents a running daemon lets peers address, or undefined when it does not answer in time. */
export async function askPeerAgents(socketPath: string, deadlineMs = PEER_ATTEMPT_DEADLINE_MS, requestId = "peer-agents"): Promise<PeerAgents | undefined> {
  if (sameUserBoundaryProblem(socketPath) !== undefined) return undefined;
  const started = performance.now();
  let conn: Connection;
  try {
    conn = await connectPeer(socketPath, deadlineMs);
  } catch {
    return undefined;
  }
  const a = await exchange(conn, Math.max(1, deadlineMs - (performance.now() - started)), async (o) => {
    const answer = await request(conn, REQUESTS.peer_agents_request, {}, { ...o, requestId });
    return { kind: "agents" as const, session_id: answer.session_id, agents: answer.agents };
  });
  return a.kind === "agents" ? { session_id: a.session_id, agents: a.agents } : undefined;
}
