// The sender's half of peer messaging (SPEC-peer-messaging) against a real unix socket server in a
// private runtime folder, speaking the real wire protocol: at-least-once delivery resends the same
// message id on a fresh connection until it is acknowledged, a bounded number of times; a refusal
// is final; a socket outside this user's private boundary is never connected to.
import * as fs from "node:fs";
import * as net from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listenUnix, sendPeerMessage, type Connection, type UnixServer } from "../../../handwritten/transport/index.js";
import type { WireMessage } from "../../../generated/index.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

function runtimeFolder(): string {
  const home = mkdtempSync(join(tmpdir(), "tau-peer-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  return join(home, "runtime");
}

type PeerRequest = Extract<WireMessage, { message: "peer_message_request" }>["payload"];

/** A daemon stand-in: `answer(n)` says what the n-th connection's request gets (undefined: the connection is dropped unanswered, or left silent). */
async function standIn(answer: (n: number, conn: Connection, req: PeerRequest) => void): Promise<{ server: UnixServer; requests: PeerRequest[]; hellos: string[] }> {
  const requests: PeerRequest[] = [];
  const hellos: string[] = [];
  const server = await listenUnix(join(runtimeFolder(), "1-0123456789abcdef.sock"), {
    onConnection: (conn) => {
      conn.onMessage((m) => {
        if (m.message === "hello") hellos.push(m.payload.role);
        if (m.message !== "peer_message_request") return;
        requests.push(m.payload);
        answer(requests.length, conn, m.payload);
      });
    },
  });
  cleanups.push(() => server.close());
  return { server, requests, hellos };
}

const message = { message_id: "pm-test-1", from_session: "s-from", from_agent: "a-from", to_agent: "a-to", text: "hello" };

describe("sending a peer message", () => {
  it("[peer-messaging.sender.retry-until-ack] a lost answer is resent with the same message id on a fresh peer connection until the receiver acknowledges it", async () => {
    const s = await standIn((n, conn, req) => {
      if (n === 1) conn.destroy("dropped before answering");
      else conn.send({ message: "peer_message_result", payload: { request_id: req.request_id, status: n === 2 ? "duplicate" : "accepted" } });
    });
    const d = await sendPeerMessage(s.server.path, message, { backoffMs: 1 });
    expect(d).toEqual({ kind: "duplicate", attempts: 2 });
    expect(s.requests).toHaveLength(2);
    expect(s.requests[0]).toEqual({ request_id: "pm-test-1", from_session: "s-from", from_agent: "a-from", to_agent: "a-to", text: "hello" });
    expect(s.requests[1]).toEqual(s.requests[0]);
    expect(s.hellos).toEqual(["peer", "peer"]);
  });

  it("[peer-messaging.sender.bounded] a receiver that never answers gets exactly the bounded number of attempts; a refusal is final and never resent", async () => {
    const silent = await standIn(() => {});
    const d = await sendPeerMessage(silent.server.path, message, { attempts: 3, attemptDeadlineMs: 200, backoffMs: 1 });
    expect(d).toEqual({ kind: "unacknowledged", detail: "no answer in time", attempts: 3 });
    expect(silent.requests.map((r) => r.request_id)).toEqual(["pm-test-1", "pm-test-1", "pm-test-1"]);

    const refusing = await standIn((_n, conn, req) => conn.send({ message: "peer_message_result", payload: { request_id: req.request_id, status: "refused", reason: "peer budget exhausted" } }));
    expect(await sendPeerMessage(refusing.server.path, message, { backoffMs: 1 })).toEqual({ kind: "refused", reason: "peer budget exhausted", attempts: 1 });
    expect(refusing.requests).toHaveLength(1);
    // A content-free error (the frame was refused) is final too.
    const erroring = await standIn((_n, conn, req) => conn.send({ message: "error", payload: { code: "unauthorized", request_id: req.request_id } }));
    expect(await sendPeerMessage(erroring.server.path, message, { backoffMs: 1 })).toEqual({ kind: "refused", reason: "the daemon refused the request (unauthorized)", attempts: 1 });
    expect(erroring.requests).toHaveLength(1);
  });

  it("[peer-messaging.sender.same-user-boundary] a socket whose folder is not this user's private 0700 runtime folder is never connected to", async () => {
    const dir = runtimeFolder();
    fs.mkdirSync(dir, { mode: 0o755 });
    fs.chmodSync(dir, 0o755);
    const path = join(dir, "1-0123456789abcdef.sock");
    let connections = 0;
    const server = net.createServer(() => connections++);
    await new Promise<void>((resolve) => server.listen(path, resolve));
    cleanups.push(() => new Promise((r) => server.close(r)));
    expect(await sendPeerMessage(path, message, { backoffMs: 1 })).toEqual({ kind: "refused", reason: "the runtime folder is not private (mode 0700)", attempts: 0 });
    fs.chmodSync(dir, 0o700);
    fs.chmodSync(path, 0o666);
    expect(await sendPeerMessage(path, message, { backoffMs: 1 })).toEqual({ kind: "refused", reason: "the daemon's socket is not private (mode 0600)", attempts: 0 });
    expect(connections).toBe(0);
  });
});
