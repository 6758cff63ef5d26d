// Connections over real unix sockets and real child stdio: ordering, close reasons, and the bounded
// outbound queue with backpressure.
import { spawn } from "node:child_process";
import * as net from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { WireMessage } from "../../../generated/index.js";
import { MessageReader, encodeFrame } from "../../../handwritten/protocol/index.js";
import { PassThrough } from "node:stream";
import {
  Connection,
  InboundBudget,
  MAX_QUEUE_BYTES,
  MAX_QUEUE_ITEMS,
  listenUnix,
  type CloseReason,
  type ConnectionTuning,
  type UnixServer,
} from "../../../handwritten/transport/index.js";
import { cleanupAll, tempHome } from "../../fixtures/transport/helpers.js";
import { waitFor as until } from "../../support/wait.js";

afterAll(cleanupAll);

interface Pair {
  server: UnixServer;
  conn: Connection;
  client: net.Socket;
}

const servers: UnixServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** A server-side Connection and the raw client socket at the other end (which reads only when told to). */
async function pair(tuning?: ConnectionTuning): Promise<Pair> {
  const runtime = join(tempHome(), "runtime");
  const accepted: Connection[] = [];
  const server = await listenUnix(join(runtime, "1-0000000000000001.sock"), {
    onConnection: (c) => accepted.push(c),
    ...(tuning ? { connection: tuning } : {}),
  });
  servers.push(server);
  const client = net.createConnection({ path: server.path, allowHalfOpen: true });
  await new Promise<void>((resolve) => client.once("connect", () => resolve()));
  await until(() => accepted.length > 0, "the server to accept the connection");
  return { server, conn: accepted[0] as Connection, client };
}

/** The streams a connection reads and writes (one socket, or a child's two pipes). */
function streamsOf(conn: Connection): Array<{ readonly closed: boolean }> {
  return [...new Set(Object.values(conn as unknown as Record<string, unknown>).filter((v): v is net.Socket => v instanceof net.Socket))];
}

/** Reads frames from a raw socket as a peer would. */
function collect(socket: net.Socket): WireMessage[] {
  const reader = new MessageReader("peer");
  const got: WireMessage[] = [];
  socket.on("data", (chunk: Buffer) => {
    for (const r of reader.push(chunk)) if (r.ok) got.push(r.message);
  });
  return got;
}

const notice = (text: string, n = 0): WireMessage => ({ message: "notice", payload: { level: "info", text, request_id: `n-${n}` } });


describe("outbound queue", () => {
  it("[transport.queue.bounded] a batch of frames is one queued write: it counts once against the item bound and whole against the byte bound", async () => {
    const a = await pair({ maxQueueItems: 4, maxQueueBytes: 64 * 1024 });
    a.client.pause();
    const frames = Array.from({ length: 200 }, (_, i) => encodeFrame(notice("z".repeat(100), i)));
    expect(a.conn.sendFrames(frames)).toBe("queued");
    expect(a.conn.sendFrames(frames)).toBe("queued");
    expect(a.conn.stats().items).toBeLessThanOrEqual(4);
    // Bytes still bound a batch: this one would pass 64 KiB.
    const heavy = Array.from({ length: 400 }, (_, i) => encodeFrame(notice("w".repeat(200), i)));
    expect(a.conn.sendFrames(heavy)).toBe("full");
    expect(a.conn.stats().bytes).toBeLessThanOrEqual(64 * 1024);
    // Read back: every frame of both batches, whole and in order.
    const got = collect(a.client);
    a.client.resume();
    await until(() => got.length === 400, "both batches");
    expect(got.map((m) => (m.message === "notice" ? m.payload.request_id : "?"))).toEqual([...frames, ...frames].map((_, i) => `n-${i % 200}`));
    a.client.destroy();
  });

  it("[transport.queue.bounded] never holds more than 1,024 frames or 64 MiB for a peer that never reads", async () => {
    // Items: small frames until "full".
    const a = await pair();
    a.client.pause();
    let accepted = 0;
    for (;;) {
      const r = a.conn.send(notice("x".repeat(1000), accepted));
      expect(a.conn.stats().items).toBeLessThanOrEqual(MAX_QUEUE_ITEMS);
      if (r === "full") break;
      expect(r).toBe("queued");
      accepted++;
      expect(accepted).toBeLessThan(100_000);
    }
    expect(a.conn.stats().items).toBe(MAX_QUEUE_ITEMS);
    // The peer reads for a moment, which frees room; the bound still holds on every further send.
    a.client.resume();
    await until(() => a.conn.stats().items < MAX_QUEUE_ITEMS, "the queue to drain as the peer reads");
    a.client.pause();
    for (let i = 0; i < 5000; i++) {
      a.conn.send(notice("x".repeat(1000), i));
      expect(a.conn.stats().items).toBeLessThanOrEqual(MAX_QUEUE_ITEMS);
    }
    expect(a.conn.stats().peakItems).toBe(MAX_QUEUE_ITEMS);

    // Bytes: 1 MiB frames until "full".
    const b = await pair();
    b.client.pause();
    const big = notice("y".repeat(1024 * 1024));
    const bigLen = encodeFrame(big).length;
    let r: string;
    do {
      r = b.conn.send(big);
      expect(b.conn.stats().bytes).toBeLessThanOrEqual(MAX_QUEUE_BYTES);
    } while (r === "queued");
    expect(r).toBe("full");
    expect(b.conn.stats().bytes + bigLen).toBeGreaterThan(MAX_QUEUE_BYTES);
    expect(b.conn.stats().peakBytes).toBeLessThanOrEqual(MAX_QUEUE_BYTES);
    a.client.destroy();
    b.client.destroy();
  });

  it("[transport.queue.bounded] an injected byte cap is exact: a frame that would cross it is refused, and a larger-than-cap frame is oversize", async () => {
    const cap = 256 * 1024;
    const p = await pair({ maxQueueBytes: cap });
    p.client.pause();
    const frame = notice("z".repeat(10_000));
    const len = encodeFrame(frame).length;
    let r: string;
    do {
      r = p.conn.send(frame);
      expect(p.conn.stats().bytes).toBeLessThanOrEqual(cap);
    } while (r === "queued");
    expect(r).toBe("full");
    const { bytes } = p.conn.stats();
    expect(bytes).toBeLessThanOrEqual(cap);
    expect(bytes + len).toBeGreaterThan(cap);
    expect(p.conn.send(notice("w".repeat(cap + 1)))).toBe("oversize");
    expect(await p.conn.sendAsync(notice("w".repeat(cap + 1)))).toBe("oversize");
    p.client.destroy();
  });

  it("[transport.queue.bounded] a slow reader does not block sending on another connection", async () => {
    const slow = await pair({ maxQueueItems: MAX_QUEUE_ITEMS });
    slow.client.pause();
    while (slow.conn.send(notice("s".repeat(1000))) === "queued");
    expect(slow.conn.stats().items).toBe(MAX_QUEUE_ITEMS);

    const fast = await pair();
    const got = collect(fast.client);
    for (let i = 0; i < 300; i++) expect(fast.conn.send(notice("f", i))).toBe("queued");
    await until(() => got.length === 300, "300 frames on the fast connection");
    expect(got.map((m) => (m.payload as { request_id: string }).request_id)).toEqual(Array.from({ length: 300 }, (_, i) => `n-${i}`));
    // The slow one still fills up to its bound and no further.
    while (slow.conn.send(notice("s".repeat(1000))) === "queued");
    expect(slow.conn.stats().items).toBe(MAX_QUEUE_ITEMS);
    expect(slow.conn.stats().peakItems).toBe(MAX_QUEUE_ITEMS);
    slow.client.destroy();
    fast.client.destroy();
  });

  it("sendAsync waits for room in FIFO order and everything arrives in order once the peer reads", async () => {
    const p = await pair({ maxQueueItems: 8, maxQueueBytes: 64 * 1024 });
    p.client.pause();
    let n = 0;
    while (p.conn.send(notice("q".repeat(20_000), n)) === "queued") n++;
    // Plain send refuses while callers wait; waiters are served first.
    const body = "q".repeat(20_000);
    const waiting = [p.conn.sendAsync(notice(body, n)), p.conn.sendAsync(notice(body, n + 1)), p.conn.sendAsync(notice(body, n + 2))];
    expect(p.conn.stats().waiters).toBe(3);
    // Even a frame that would fit is refused while others wait, so order is kept.
    expect(p.conn.send(notice("late"))).toBe("full");
    const got = collect(p.client);
    p.client.resume();
    expect(await Promise.all(waiting)).toEqual(["queued", "queued", "queued"]);
    await until(() => got.length === n + 3, "all frames");
    expect(got.map((m) => (m.payload as { request_id: string }).request_id)).toEqual(Array.from({ length: n + 3 }, (_, i) => `n-${i}`));
    p.client.destroy();
  });

  it("sendAsync waiters are bounded too: beyond maxSendWaiters a caller gets full at once", async () => {
    const p = await pair({ maxQueueItems: 1, maxSendWaiters: 2 });
    p.client.pause();
    while (p.conn.send(notice("q".repeat(100_000))) === "queued");
    const w1 = p.conn.sendAsync(notice("1"));
    const w2 = p.conn.sendAsync(notice("2"));
    expect(await p.conn.sendAsync(notice("3"))).toBe("full");
    expect(p.conn.stats().waiters).toBe(2);
    p.conn.destroy();
    expect(await Promise.all([w1, w2])).toEqual(["closed", "closed"]);
    p.client.destroy();
  });

  it("sendAsync resolves closed when the connection ends and aborted when its signal fires", async () => {
    const p = await pair({ maxQueueItems: 1 });
    p.client.pause();
    while (p.conn.send(notice("q".repeat(100_000))) === "queued");
    const ac = new AbortController();
    const aborted = p.conn.sendAsync(notice("a"), ac.signal);
    const closed = p.conn.sendAsync(notice("b"));
    ac.abort();
    expect(await aborted).toBe("aborted");
    p.conn.destroy("test");
    expect(await closed).toBe("closed");
    expect(p.conn.send(notice("c"))).toBe("closed");
    p.client.destroy();
  });
});

describe("connection lifecycle", () => {
  it("emits messages in order, reports recoverable frame errors and keeps going", async () => {
    const p = await pair();
    const got: string[] = [];
    const invalid: string[] = [];
    p.conn.onMessage((m) => got.push(m.message));
    p.conn.onInvalid((e) => invalid.push(e.code));
    p.client.write(encodeFrame({ message: "no_such_message", payload: {} }));
    p.client.write(encodeFrame({ message: "hello", payload: { revision: { major: 1, minor: 0 }, role: "client" } }));
    p.client.write(encodeFrame({ message: "ready", payload: { extra: 1 } }));
    p.client.write(encodeFrame({ message: "session_current_request", payload: { request_id: "r1" } }));
    await until(() => got.length === 2, "two messages");
    expect(got).toEqual(["hello", "session_current_request"]);
    expect(invalid).toEqual(["unknown_message", "invalid"]);
    expect(p.conn.isOpen).toBe(true);
    p.client.destroy();
  });

  it("ends once with peer_end on half-close, after flushing what was queued", async () => {
    const p = await pair();
    const reasons: CloseReason[] = [];
    p.conn.onClose((r) => reasons.push(r));
    const got = collect(p.client);
    p.conn.onMessage(() => {
      for (let i = 0; i < 50; i++) p.conn.send(notice("reply", i));
    });
    p.client.end(encodeFrame({ message: "ready", payload: {} }));
    expect(await p.conn.closed).toEqual({ kind: "peer_end" });
    await new Promise<void>((resolve) => p.client.once("end", () => resolve()));
    expect(got.length).toBe(50);
    // The server side's stream closing is the last thing it reports: nothing can end the connection after it.
    const streams = streamsOf(p.conn);
    expect(streams).toHaveLength(1);
    await until(() => streams.every((s) => s.closed), "the server side's stream to close");
    expect(reasons).toEqual([{ kind: "peer_end" }]);
    expect(p.conn.send(notice("after"))).toBe("closed");
  });

  it("closes with a protocol reason on an oversize frame length", async () => {
    const p = await pair();
    const header = Buffer.alloc(4);
    header.writeUInt32BE(16 * 1024 * 1024 + 1);
    p.client.write(header);
    expect(await p.conn.closed).toEqual({ kind: "protocol", code: "oversize" });
    await new Promise<void>((resolve) => p.client.once("end", () => resolve()));
    p.client.destroy();
  });

  it("a local close flushes queued frames, then ends the stream", async () => {
    const p = await pair();
    const got = collect(p.client);
    for (let i = 0; i < 100; i++) p.conn.send(notice("bye", i));
    p.conn.close("done");
    expect(p.conn.closeReason).toEqual({ kind: "local", detail: "done" });
    await new Promise<void>((resolve) => p.client.once("end", () => resolve()));
    expect(got.length).toBe(100);
    p.client.destroy();
  });

  it("works over a child's stdio as well as a socket", async () => {
    const child = spawn(process.execPath, ["-e", "process.stdin.pipe(process.stdout)"], { stdio: ["pipe", "pipe", "inherit"] });
    const conn = new Connection({ readable: child.stdout, writable: child.stdin }, { side: "peer" });
    const got: WireMessage[] = [];
    conn.onMessage((m) => got.push(m));
    for (let i = 0; i < 20; i++) expect(conn.send(notice("echo", i))).toBe("queued");
    await until(() => got.length === 20, "20 echoed frames");
    expect(got.map((m) => (m.payload as { request_id: string }).request_id)).toEqual(Array.from({ length: 20 }, (_, i) => `n-${i}`));
    conn.close();
    // The child sees end of input, ends its output, and the connection ends once.
    expect((await conn.closed).kind).toBe("local");
    await new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", () => resolve())));
  });
});

describe("pre-encoded frames", () => {
  it("sendFrame queues a shared frame under the same item bound and refuses an oversize frame", async () => {
    const p = await pair({ maxQueueItems: 4, maxFrameBytes: 64 });
    p.client.pause();
    const frame = encodeFrame(notice("shared"));
    const results = Array.from({ length: 6 }, () => p.conn.sendFrame(frame));
    // The stream takes frames until it reports backpressure; the queue then holds at most 4 more.
    expect(results.filter((r) => r === "full").length).toBeGreaterThan(0);
    expect(p.conn.stats().items).toBeLessThanOrEqual(4);
    const fresh = await pair({ maxFrameBytes: 64 });
    expect(fresh.conn.sendFrame(encodeFrame(notice("x".repeat(100))))).toBe("oversize");
    const got = collect(fresh.client);
    expect(fresh.conn.sendFrame(frame)).toBe("queued");
    await until(() => got.length === 1, "the shared frame");
    expect(got[0]).toEqual(notice("shared"));
    p.client.destroy();
    fresh.client.destroy();
  });
});

describe("inbound bounds", () => {
  /** A frame header announcing `n` body bytes. */
  const header = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);

  it("[transport.inbound.shared-budget] partial frames of all connections share one byte budget: exactly at it is fine, one byte past closes the connection that crossed", async () => {
    const budget = new InboundBudget(100);
    const make = () => {
      const input = new PassThrough();
      const conn = new Connection({ readable: input, writable: new PassThrough() }, { side: "harness", inboundBudget: budget });
      return { input, conn };
    };
    const a = make();
    const b = make();
    a.input.write(Buffer.concat([header(1000), Buffer.alloc(56)])); // holds 60
    b.input.write(Buffer.concat([header(1000), Buffer.alloc(35)])); // holds 39
    await until(() => budget.inUse === 99, "both partial frames to be held");
    b.input.write(Buffer.alloc(1)); // 100: exactly at the budget
    // The budget is charged and checked in one step: once it shows 100, the check has passed.
    await until(() => budget.inUse === 100, "the 100th byte to be held");
    expect(b.conn.isOpen).toBe(true);
    b.input.write(Buffer.alloc(1)); // 101
    await until(() => !b.conn.isOpen, "the connection that crossed the budget to close");
    expect(b.conn.closeReason).toEqual({ kind: "local", detail: "too much partially received data across connections" });
    expect(a.conn.isOpen).toBe(true);
    expect(budget.inUse).toBe(60); // the closed connection's bytes are released
    a.conn.destroy();
    expect(budget.inUse).toBe(0);
  });

  it("[transport.inbound.frame-deadline] a frame begun must complete within the deadline; a connection with no partial frame is never timed out", async () => {
    const idle = await pair({ frameDeadlineMs: 200 });
    const idleGot: string[] = [];
    idle.conn.onMessage((m) => idleGot.push(m.message));
    idle.client.write(encodeFrame({ message: "ready", payload: {} }));
    await until(() => idleGot.length === 1, "the idle connection's whole frame");
    const slow = await pair({ frameDeadlineMs: 200 });
    slow.client.write(Buffer.concat([header(64), Buffer.alloc(10)]));
    const reason = await slow.conn.closed;
    expect(reason).toEqual({ kind: "local", detail: "a frame did not complete within 0.2 s" });
    // The slow connection's deadline started after anything the idle one could have started (its
    // connection and its frame came first), and timers of one length run in the order they were set.
    expect(idle.conn.isOpen).toBe(true);
    idle.client.destroy();
    slow.client.destroy();
  });
});

describe("a handler that throws", () => {
  it("[transport.handler.throw-contained] is contained: the peer gets error{invalid}, only its connection closes, and the process goes on", async () => {
    const { conn, client } = await pair();
    const other = await pair();
    conn.onMessage(() => {
      throw new Error("a bug the message found");
    });
    const answers = new MessageReader("peer");
    const got: WireMessage[] = [];
    client.on("data", (chunk: Buffer) => {
      for (const r of answers.push(chunk)) if (r.ok) got.push(r.message);
    });
    const ended = new Promise<void>((resolve) => client.once("end", () => resolve()));
    client.write(encodeFrame({ message: "ready", payload: {} }));
    const reason = await conn.closed;
    expect(reason).toEqual({ kind: "local", detail: "a message could not be handled" });
    await ended; // everything the server sent came before its end of stream
    expect(got).toEqual([{ message: "error", payload: { code: "invalid" } }]);
    expect(other.conn.isOpen).toBe(true);
    client.destroy();
    other.client.destroy();
  });
});

