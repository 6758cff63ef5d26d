// Probing daemons: one correlated `session_current_request` per socket under a per-probe deadline.
// A probe never throws: every way it can end is a typed outcome. Listing probes every scanned
// candidate concurrently and reports only what responsive daemons said about themselves.
import { randomHex } from "../startup/random.js";
import type { ErrorCode } from "../../generated/index.js";
import { REVISION } from "../protocol/index.js";
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
  const requestId = freshRequestId();
  return new Promise<ProbeOutcome>((resolve) => {
    let settled = false;
    const done = (outcome: ProbeOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      conn.destroy("probe finished");
      resolve(outcome);
    };
    const timer = setTimeout(() => done({ kind: "no_answer", socket: socketPath }), remaining);
    conn.onMessage((message) => {
      if (message.message === "session_current_result") {
        if (message.payload.request_id !== requestId) return;
        const { session_id, project_root, pid } = message.payload;
        done({ kind: "ok", socket: socketPath, session_id, project_root, pid });
      } else if (message.message === "error") {
        const id = message.payload.request_id;
        if (id === undefined || id === requestId) done({ kind: "refused", socket: socketPath, code: message.payload.code });
      }
      // Anything else is not an answer to this probe and is ignored.
    });
    conn.onClose((reason) => done({ kind: "closed", socket: socketPath, reason }));
    const hello = { message: "hello" as const, payload: { revision: { ...REVISION }, role: "client" as const, client: options.client ?? "tau session probe" } };
    conn.send(hello);
    conn.send({ message: "session_current_request", payload: { request_id: requestId } });
  });
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
