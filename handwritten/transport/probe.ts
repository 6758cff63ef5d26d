// Probing daemons: one `session_current_request` per socket (protocol/requests.ts) under a
// per-probe deadline.
// A probe never throws: every way it can end is a typed outcome. Listing probes every scanned
// candidate concurrently and reports only what responsive daemons said about themselves.
import { randomHex } from "../startup/random.js";
import { REQUESTS, type ErrorCode } from "../../generated/index.js";
import { REVISION, request, type RequestError } from "../protocol/index.js";
import type { CloseReason } from "./connection.js";
import { scanRuntime, type ScanOptions, type ScanResult } from "./discovery.js";
import { ConnectError, type ConnectFailure } from "./errors.js";
import { PROBE_DEADLINE_MS } from "./limits.js";
import { connectUnix } from "./unix.js";

/** Largest frame a probe reads: an answer is small, and many probes run at once. */
export const PROBE_MAX_FRAME_BYTES = 64 * 1024;

export type ProbeOutcome =
  | { readonly kind: "ok"; readonly socket: string; readonly session_id: string; readonly project_root: string; readonly pid: number }
  /** Nothing accepted the connection (no such socket, refused, connect timeout). */
  | { readonly kind: "unreachable"; readonly socket: string; readonly failure: ConnectFailure }
  /** Connected, but no matching answer arrived before the deadline. */
  | { readonly kind: "no_answer"; readonly socket: string }
  /** The daemon refused with a content-free error correlated to this probe (or to its hello). */
  | { readonly kind: "refused"; readonly socket: string; readonly code: ErrorCode }
  /** The connection ended before a matching answer. */
  | { readonly kind: "closed"; readonly socket: string; readonly reason: CloseReason };

export interface ProbeOptions {
  /** One deadline for connect plus answer. */
  readonly deadlineMs?: number;
  /** Tells the probe which client label to put in `hello` (diagnostics only). */
  readonly client?: string;
}

function freshRequestId(): string {
  return `probe-${randomHex(8)}`;
}

export async function probeSession(socketPath: string, options: ProbeOptions = {}): Promise<ProbeOutcome> {
  const deadlineMs = options.deadlineMs ?? PROBE_DEADLINE_MS;
  const started = performance.now();
  let connection;
  try {
    connection = await connectUnix(socketPath, {
      timeoutMs: deadlineMs,
      connection: { maxFrameBytes: PROBE_MAX_FRAME_BYTES, maxQueueItems: 4, maxQueueBytes: PROBE_MAX_FRAME_BYTES },
    });
  } catch (err) {
    return { kind: "unreachable", socket: socketPath, failure: err instanceof ConnectError ? err.failure : "io" };
  }
  const remaining = Math.max(0, deadlineMs - (performance.now() - started));
  const conn = connection;
  conn.send({ message: "hello", payload: { revision: { ...REVISION }, role: "client", client: options.client ?? "tau session probe" } });
  try {
    // The connection carries this request alone: a refusal of its hello refuses the probe too.
    const { session_id, project_root, pid } = await request(conn, REQUESTS.session_current_request, {}, { requestId: freshRequestId(), timeoutMs: remaining, soleRequest: true });
    return { kind: "ok", socket: socketPath, session_id, project_root, pid };
  } catch (err) {
    const e = err as RequestError;
    if (e.failure === "refused") return { kind: "refused", socket: socketPath, code: e.refusal as ErrorCode };
    if (e.failure === "closed") return { kind: "closed", socket: socketPath, reason: conn.closeReason ?? { kind: "peer_closed" } };
    return { kind: "no_answer", socket: socketPath };
  } finally {
    conn.destroy("probe finished");
  }
}

/** One running daemon as it described itself. */
export interface SessionRow {
  readonly session_id: string;
  readonly project_root: string;
  readonly pid: number;
  readonly socket: string;
}

export interface SessionListing {
  /** Responsive daemons, sorted by session id then socket path. */
  readonly rows: readonly SessionRow[];
  /** Every probe's outcome, in candidate order. */
  readonly outcomes: readonly ProbeOutcome[];
  readonly scan: ScanResult;
}

export interface ListOptions extends ProbeOptions {
  readonly scan?: ScanOptions;
}

/**
 * Lists running daemons: a bounded, read-only scan for socket candidates, then one probe per
 * candidate, all concurrently, each under its own deadline. Nothing is unlinked, and metadata files
 * supply no fields: every row comes from a daemon's correlated answer.
 */
export async function listSessions(runtimeDir: string, options: ListOptions = {}): Promise<SessionListing> {
  const scan = await scanRuntime(runtimeDir, options.scan);
  const outcomes = await Promise.all(scan.candidates.map((c) => probeSession(c.socket, options)));
  const rows: SessionRow[] = [];
  for (const o of outcomes) {
    if (o.kind === "ok") rows.push({ session_id: o.session_id, project_root: o.project_root, pid: o.pid, socket: o.socket });
  }
  rows.sort((a, b) => (a.session_id < b.session_id ? -1 : a.session_id > b.session_id ? 1 : a.socket < b.socket ? -1 : a.socket > b.socket ? 1 : 0));
  return { rows, outcomes, scan };
}
