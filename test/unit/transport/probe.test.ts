// Probes and the daemon's responder half, over real sockets in this process.
import * as fs from "node:fs";
import * as net from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { WireMessage } from "../../../generated/index.js";
import {
  connectUnix,
  clientRequests,
  listSessions,
  listenUnix,
  mintInstance,
  probeSession,
  refuseContentFree,
  serveClientPeer,
  type Connection,
  type UnixServer,
} from "../../../handwritten/transport/index.js";
import { cleanupAll, snapshotDir, tempHome } from "../../fixtures/transport/helpers.js";
import { waitFor } from "../../support/wait.js";

const servers: UnixServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  cleanupAll();
});

function runtimeDir(): string {
  return join(tempHome(), "runtime");
}

async function serve(dir: string, onConnection: (c: Connection) => void, pid = 4000 + servers.length): Promise<UnixServer> {
  const server = await listenUnix(join(dir, `${pid}-${mintInstance()}.sock`), { onConnection });
  servers.push(server);
  return server;
}

const info = (session_id: string, project_root: string, pid = 1234) => () => ({ session_id, project_root, pid });

describe("probeSession", () => {
  it("sends hello (role client, current revision) and a correlated request, and accepts only the matching answer", async () => {
    const dir = runtimeDir();
    const seen: WireMessage[] = [];
    const server = await serve(dir, (c) => {
      c.onMessage((m) => {
        seen.push(m);
        if (m.message !== "session_current_request") return;
        // Decoys first: an answer to another request, an unrelated error, then the real answer.
        c.send({ message: "session_current_result", payload: { request_id: "someone-else", session_id: "wrong", project_root: "/wrong", pid: 1 } });
        c.send({ message: "error", payload: { code: "unauthorized", request_id: "someone-else" } });
        c.send({ message: "notice", payload: { level: "info", text: "hi" } });
        clientRequests(info("s-right", "/right")).handle(c, "client", m, undefined);
      });
    });
    const outcome = await probeSession(server.path, { deadlineMs: 5000 });
    expect(outcome).toEqual({ kind: "ok", socket: server.path, session_id: "s-right", project_root: "/right", pid: 1234 });
    expect(seen[0]).toMatchObject({ message: "hello", payload: { role: "client", revision: { major: 1, minor: 0 } } });
    expect(seen[1]?.message).toBe("session_current_request");
    const id = (seen[1]?.payload as { request_id: string }).request_id;
    expect(id).toMatch(/^probe-[0-9a-f]{16}$/);
  });

  it("uses a fresh request id for every probe", async () => {
    const dir = runtimeDir();
    const ids: string[] = [];
    const server = await serve(dir, (c) =>
      c.onMessage((m) => {
        if (m.message === "session_current_request") ids.push(m.payload.request_id);
        clientRequests(info("s", "/p")).handle(c, "client", m, undefined);
      }),
    );
    for (let i = 0; i < 5; i++) expect((await probeSession(server.path)).kind).toBe("ok");
    expect(new Set(ids).size).toBe(5);
  });

  it("never throws: unreachable, refused, closed and no-answer are typed outcomes", async () => {
    const dir = runtimeDir();
    expect(await probeSession(join(dir, "1-0000000000000001.sock"))).toMatchObject({ kind: "unreachable", failure: "not_found" });
    const closer = await serve(dir, (c) => c.destroy());
    expect((await probeSession(closer.path)).kind).toBe("closed");
    const refuser = await serve(dir, (c) => c.onMessage((m) => m.message === "session_current_request" && refuseContentFree(c, m.payload.request_id)));
    expect(await probeSession(refuser.path)).toMatchObject({ kind: "refused", code: "unauthorized" });
    const wrongOnly = await serve(dir, (c) =>
      c.onMessage((m) => {
        if (m.message === "session_current_request")
          c.send({ message: "session_current_result", payload: { request_id: "not-yours", session_id: "s", project_root: "/p", pid: 1 } });
      }),
    );
    expect(await probeSession(wrongOnly.path, { deadlineMs: 300 })).toEqual({ kind: "no_answer", socket: wrongOnly.path });
    // A stale socket file (nobody listening) is refused at connect.
    const stale = join(dir, `77-${mintInstance()}.sock`);
    const raw = net.createServer();
    await new Promise<void>((r) => raw.listen(stale, () => r()));
    // Close the handle without letting libuv unlink the path: duplicate it first.
    fs.linkSync(stale, stale + ".keep");
    await new Promise<void>((r) => raw.close(() => r()));
    fs.renameSync(stale + ".keep", stale);
    expect(await probeSession(stale)).toMatchObject({ kind: "unreachable", failure: "refused" });
  });

  it("[discovery.probe.deadline] a daemon that accepts and never answers does not hold up the listing", async () => {
    const dir = runtimeDir();
    const silentConnections: Connection[] = [];
    await serve(dir, (c) => silentConnections.push(c));
    const answering = await serve(dir, (c) => serveClientPeer(c, info("s-live", "/live", 77)));
    const before = snapshotDir(dir);
    const listing = await listSessions(dir, { deadlineMs: 400 });
    expect(listing.rows).toEqual([{ session_id: "s-live", project_root: "/live", pid: 77, socket: answering.path }]);
    expect(listing.outcomes.map((o) => o.kind).sort()).toEqual(["no_answer", "ok"]);
    // The silent server did receive the probe: it was reachable, just mute.
    expect(silentConnections.length).toBe(1);
    expect(snapshotDir(dir)).toEqual(before);
  });
});

describe("responder half", () => {
  async function client(server: UnixServer): Promise<{ conn: Connection; got: WireMessage[] }> {
    const conn = await connectUnix(server.path);
    const got: WireMessage[] = [];
    conn.onMessage((m) => got.push(m));
    return { conn, got };
  }

  it("answers session_current_request from any peer and gives a non-UI peer only content-free errors for anything else", async () => {
    const dir = runtimeDir();
    const server = await serve(dir, (c) => serveClientPeer(c, info("s-1", "/root/\u001b[2J")));
    const { conn, got } = await client(server);
    conn.send({ message: "hello", payload: { revision: { major: 1, minor: 3 }, role: "client" } });
    conn.send({ message: "session_current_request", payload: { request_id: "r-1" } });
    conn.send({ message: "ui_tree_request", payload: { request_id: "r-2" } });
    conn.send({ message: "ui_detach_request", payload: {} });
    conn.send({ message: "emit", payload: { event: { name: "session.started", data: {} } } } as unknown as WireMessage);
    await waitFor(() => got.length >= 4, "answers to the four requests");
    expect(got[0]).toEqual({
      message: "session_current_result",
      payload: { request_id: "r-1", session_id: "s-1", project_root: "/root/\u001b[2J", pid: 1234 },
    });
    expect(got[1]).toEqual({ message: "error", payload: { code: "unauthorized", request_id: "r-2" } });
    expect(got[2]).toEqual({ message: "error", payload: { code: "unauthorized" } });
    // The invalid emit is answered with a content-free code as well, never with its content.
    expect(got[3]?.message).toBe("error");
    expect(Object.keys(got[3]?.payload ?? {})).toEqual(["code"]);
    expect(conn.isOpen).toBe(true);
    conn.destroy();
  });

  it("refuses another major revision with revision_mismatch and closes", async () => {
    const dir = runtimeDir();
    const server = await serve(dir, (c) => serveClientPeer(c, info("s", "/p")));
    const { conn, got } = await client(server);
    conn.send({ message: "hello", payload: { revision: { major: 2, minor: 0 }, role: "client" } });
    expect((await conn.closed).kind).toBe("peer_end");
    expect(got).toEqual([{ message: "error", payload: { code: "revision_mismatch" } }]);
  });
});
