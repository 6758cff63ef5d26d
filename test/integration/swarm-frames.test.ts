// Tau Swarm framing over a real Iroh connection on loopback, relays disabled (SPEC-swarm, "Wire"):
// the length is checked before a body is gathered, and every frame against the schema.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FrameReader, SWARM_ALPN, SWARM_MAX_FRAME_BYTES, SwarmFrameError, SwarmInvalidFrame, bindEndpoint, encodeFrame, generateKey, loadIroh, type IrohEndpoint } from "../../handwritten/swarm/index.js";

let server: IrohEndpoint;
let client: IrohEndpoint;

beforeAll(async () => {
  server = await bindEndpoint({ key: await generateKey(), accept: true, bind: "127.0.0.1:0" });
  client = await bindEndpoint({ key: await generateKey(), bind: "127.0.0.1:0" });
});
afterAll(async () => {
  await client?.close();
  await server?.close();
});

/** Sends `bytes` on a fresh connection's stream and reads frames off it at the other end. */
async function across(bytes: Buffer): Promise<FrameReader> {
  const iroh = await loadIroh();
  const accepted = (async () => {
    const incoming = await server.acceptNext();
    const conn = await (await incoming!.accept()).connect();
    return new FrameReader((await conn.acceptBi()).recv);
  })();
  const conn = await client.connect(new iroh.EndpointAddr(server.id(), null, server.boundSockets().filter((a) => a.startsWith("127."))), SWARM_ALPN);
  const bi = await conn.openBi();
  await bi.send.writeAll(Array.from(bytes));
  await bi.send.finish();
  return accepted;
}

describe("Tau Swarm frames over Iroh", () => {
  it("[swarm.wire.frame-cap] a length over 2 MiB is refused from its 4-byte head; a frame that does not hold to the schema is refused naming the field; a good frame reads back", async () => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(SWARM_MAX_FRAME_BYTES + 1, 0);
    await expect((await across(head)).next()).rejects.toThrow(SwarmFrameError);

    const bad = Buffer.from(JSON.stringify({ type: "update", seq: 1, kind: "exploded" }));
    const badHead = Buffer.alloc(4);
    badHead.writeUInt32BE(bad.length, 0);
    const err = await (await across(Buffer.concat([badHead, bad]))).next().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SwarmInvalidFrame);
    expect((err as Error).message).toContain("kind");

    const good = { type: "prompt", command_id: "c1", incarnation: "a".repeat(32), text: "hello" } as const;
    const reader = await across(Buffer.concat([encodeFrame(good), encodeFrame({ type: "ack", seq: 7 })]));
    expect(await reader.next()).toEqual(good);
    expect(await reader.next()).toEqual({ type: "ack", seq: 7 });
    expect(await reader.next()).toBeUndefined();
  });

  it("[swarm.wire.text-bound] a text over 1 MiB characters is refused by the schema, and no frame over 2 MiB is ever sent", () => {
    expect(() => encodeFrame({ type: "prompt", command_id: "c1", incarnation: "a".repeat(32), text: "é".repeat(SWARM_MAX_FRAME_BYTES / 2 + 1) })).toThrow(SwarmFrameError);
  });
});
