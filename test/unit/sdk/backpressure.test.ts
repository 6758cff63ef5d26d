// The extension SDK never drops a message: when the harness does not read for a while, emits wait
// (in order) for room instead of being lost, and all arrive once it reads again.
import { describe, expect, it } from "vitest";
import { PassThrough } from "node:stream";
import { Extension } from "../../../handwritten/sdk/index.js";
import { MessageReader, REVISION, encodeFrame } from "../../../handwritten/protocol/index.js";
import type { WireMessage } from "../../../generated/index.js";
import { waitFor } from "../../support/wait.js";

describe("extension SDK sends", () => {
  it("[sdk.emit.backpressure-never-drops] 5,000 emits while the harness is not reading all arrive, in order, once it reads", async () => {
    const toExtension = new PassThrough();
    const fromExtension = new PassThrough();
    const reader = new MessageReader("harness");
    const got: WireMessage[] = [];
    const take = (chunk: Buffer) => {
      for (const r of reader.push(chunk)) if (r.ok) got.push(r.message);
    };
    fromExtension.once("data", take); // hello
    const connecting = Extension.connect({ input: toExtension, output: fromExtension });
    await waitFor(() => got.length > 0, "the extension's hello");
    expect(got[0]?.message).toBe("hello");
    toExtension.write(
      encodeFrame({
        message: "configure",
        payload: { revision: { ...REVISION }, instance: "x", kind: "tool", tool_prefix: "", state_dir: "/tmp", session_id: "s-1", config: {}, secrets: {} },
      }),
    );
    const ext = await connecting;
    // The harness stops reading: the pipe fills, then the connection's queue (1,024 frames).
    fromExtension.pause();
    const results: Array<Promise<unknown>> = [];
    for (let i = 0; i < 5000; i++) results.push(ext.emit("extension.event", { category: "n", name: "x", payload: { i } }));
    // Every emit was offered at once: the pipe and the queue are full and the rest wait for room.
    expect(ext.conn.stats().waiters).toBeGreaterThan(0);
    fromExtension.on("data", take);
    fromExtension.resume();
    expect(new Set(await Promise.all(results))).toEqual(new Set(["queued"]));
    const numbers = () => got.flatMap((m) => (m.message === "emit" ? [(m.payload.event.data.payload as { i: number }).i] : []));
    await waitFor(() => numbers().length >= 5000, "all 5,000 emits to arrive");
    expect(numbers()).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    ext.conn.destroy();
  });
});
