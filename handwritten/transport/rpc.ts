// The daemon's half of the client requests: `session_current_request`, which any socket peer may
// send, served through a RequestServer (protocol/requests.ts) from its declaration in spec/, and
// content-free refusals for everything a non-UI socket peer may not ask.
import { REQUESTS, type ErrorCode, type RequestCaller, type WireMessage } from "../../generated/index.js";
import { RequestServer, compareRevision, type WireError } from "../protocol/index.js";
import type { Connection, SendResult } from "./connection.js";

/** What a daemon answers about itself: its in-memory current session and canonical startup root. */
export interface SessionInfo {
  readonly session_id: string;
  readonly project_root: string;
  readonly pid: number;
}

/** The correlation id a message carries, if any (used only to address a refusal). */
export function requestIdOf(message: WireMessage): string | undefined {
  const id = (message.payload as { request_id?: unknown }).request_id;
  return typeof id === "string" ? id : undefined;
}

/**
 * The requests any socket peer may send, on a server the daemon adds its own to: today
 * `session_current_request`, answered with what `info` says.
 */
export function clientRequests<C>(info: () => SessionInfo, log?: (line: string) => void): RequestServer<C> {
  return new RequestServer<C>({ refuseUnauthorized: true, ...(log ? { log } : {}) }).serve(REQUESTS.session_current_request, () => {
    const { session_id, project_root, pid } = info();
    return { session_id, project_root, pid };
  });
}

/** Sends a content-free `error` frame (the code is the whole explanation). */
export function refuseContentFree(connection: Connection, requestId?: string, code: ErrorCode = "unauthorized"): SendResult {
  const payload: { code: ErrorCode; request_id?: string } = { code };
  if (requestId !== undefined) payload.request_id = requestId;
  const result = connection.send({ message: "error", payload });
  if (result === "full") connection.destroy("peer is not reading its answers");
  return result;
}

/** The `error` code that answers a frame the reader refused (an oversize frame ends the stream instead). */
export function codeForWireError(error: WireError): ErrorCode {
  return error.code === "oversize" ? "invalid" : error.code;
}

/**
 * The whole message handler for a non-UI socket peer (a probe or a script): `hello` is checked for
 * its revision (another major is refused with `revision_mismatch` and the connection closed), client
 * requests are answered, `disconnect` closes, and everything else gets a content-free `unauthorized`.
 */
export function serveClientPeer(connection: Connection, info: () => SessionInfo): void {
  const requests = clientRequests<undefined>(info);
  const caller: RequestCaller = "client";
  connection.onMessage((message) => {
    if (requests.handle(connection, caller, message, undefined)) return;
    switch (message.message) {
      case "hello":
        if (compareRevision(message.payload.revision) === "incompatible") {
          refuseContentFree(connection, undefined, "revision_mismatch");
          connection.close("revision mismatch");
        }
        return;
      case "disconnect":
        connection.close("peer disconnected");
        return;
      default:
        refuseContentFree(connection, requestIdOf(message));
    }
  });
  connection.onInvalid((error) => {
    refuseContentFree(connection, undefined, codeForWireError(error));
  });
}
