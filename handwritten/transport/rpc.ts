// The daemon's half of the client RPCs: answering `session_current_request` from any socket peer,
// and content-free refusals for everything a non-UI socket peer may not ask.
import type { ErrorCode, WireMessage } from "../../generated/index.js";
import { compareRevision, type WireError } from "../protocol/index.js";
import type { Connection, SendResult } from "./connection.js";

/** What a daemon answers about itself: its in-memory current session and canonical startup root. */
export interface SessionInfo {
  readonly session_id: string;
  readonly project_root: string;
  readonly pid: number;
}

export type RpcOutcome = "answered" | "not_rpc";

/** The correlation id a message carries, if any (used only to address a refusal). */
export function requestIdOf(message: WireMessage): string | undefined {
  const id = (message.payload as { request_id?: unknown }).request_id;
  return typeof id === "string" ? id : undefined;
}

/**
 * Answers the RPCs any socket peer may call. Today that is `session_current_request`, answered with
 * the same `request_id`. Returns "not_rpc" for anything else, which the caller then handles (or refuses).
 */
export function handleClientRpc(connection: Connection, message: WireMessage, info: () => SessionInfo): RpcOutcome {
  if (message.message !== "session_current_request") return "not_rpc";
  const current = info();
  const result = connection.send({
    message: "session_current_result",
    payload: {
      request_id: message.payload.request_id,
      session_id: current.session_id,
      project_root: current.project_root,
      pid: current.pid,
    },
  });
  // A peer that does not read its answers is not served further.
  if (result === "full") connection.destroy("peer is not reading its answers");
  return "answered";
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
 * RPCs are answered, `disconnect` closes, and everything else gets a content-free `unauthorized`.
 */
export function serveClientPeer(connection: Connection, info: () => SessionInfo): void {
  connection.onMessage((message) => {
    if (handleClientRpc(connection, message, info) === "answered") return;
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
