import { describe, expect, it } from "vitest";
import { RENDER_QUEUE_MAX_BYTES, RENDER_QUEUE_MAX_ITEMS, RenderQueue } from "../../../handwritten/cli/ui/index.js";

describe("socket-to-renderer queue", () => {
  it("[ui.queue.bounded] the bounds are 1,024 items and 64 MiB", () => {
    expect(RENDER_QUEUE_MAX_ITEMS).toBe(1024);
    expect(RENDER_QUEUE_MAX_BYTES).toBe(64 * 1024 * 1024);
  });

  it("[ui.queue.bounded] item bound: 1,023 and 1,024 accepted, the 1,025th refused, nothing dropped", () => {
    const q = new RenderQueue<number>();
    for (let i = 0; i < RENDER_QUEUE_MAX_ITEMS - 1; i++) expect(q.offer(i, 1).accepted).toBe(true);
    expect(q.length).toBe(1023);
    expect(q.offer(1023, 1)).toEqual({ accepted: true });
    expect(q.length).toBe(1024);
    expect(q.offer(1024, 1)).toEqual({ accepted: false, reason: "items" });
    expect(q.offer(1024, 0)).toEqual({ accepted: false, reason: "items" });
    expect(q.length).toBe(1024);
    expect(q.refused).toBe(2);
    // FIFO order, first item intact.
    expect(q.shift()?.item).toBe(0);
    expect(q.offer(1024, 1).accepted).toBe(true);
    const order: number[] = [];
    for (let e = q.shift(); e !== undefined; e = q.shift()) order.push(e.item);
    expect(order).toEqual(Array.from({ length: 1024 }, (_, i) => i + 1));
    expect(q.bytes).toBe(0);
  });

  it("[ui.queue.bounded] byte bound: exactly 64 MiB accepted, one byte more refused", () => {
    const q = new RenderQueue<string>();
    const big = 16 * 1024 * 1024;
    for (let i = 0; i < 3; i++) expect(q.offer("f", big).accepted).toBe(true);
    expect(q.offer("one-below", big - 2).accepted).toBe(true);
    expect(q.bytes).toBe(RENDER_QUEUE_MAX_BYTES - 2);
    expect(q.offer("at", 1).accepted).toBe(true);
    expect(q.bytes).toBe(RENDER_QUEUE_MAX_BYTES - 1);
    expect(q.offer("exactly", 1).accepted).toBe(true);
    expect(q.bytes).toBe(RENDER_QUEUE_MAX_BYTES);
    expect(q.offer("above", 1)).toEqual({ accepted: false, reason: "bytes" });
    expect(q.offer("empty", 0).accepted).toBe(true); // a zero-byte item still fits the byte bound
    expect(q.length).toBe(7);
  });

  it("[ui.queue.bounded] an item larger than the byte bound can never be accepted", async () => {
    const q = new RenderQueue<string>();
    expect(q.offer("x", RENDER_QUEUE_MAX_BYTES).accepted).toBe(true);
    const empty = new RenderQueue<string>();
    expect(empty.offer("x", RENDER_QUEUE_MAX_BYTES + 1)).toEqual({ accepted: false, reason: "too_large" });
    await expect(empty.whenWritable(RENDER_QUEUE_MAX_BYTES + 1)).rejects.toThrow(RangeError);
    expect(() => empty.offer("x", -1)).toThrow(RangeError);
  });

  it("[ui.queue.bounded] a refused producer waits for room for its item (backpressure), then succeeds", async () => {
    const q = new RenderQueue<string>({ maxItems: 4, maxBytes: 100 });
    expect(q.offer("a", 60).accepted).toBe(true);
    expect(q.offer("b", 30).accepted).toBe(true);
    expect(q.offer("c", 20)).toEqual({ accepted: false, reason: "bytes" });
    let resumed = false;
    const wait = q.whenWritable(20).then(() => {
      resumed = true;
    });
    await Promise.resolve();
    expect(resumed).toBe(false);
    q.shift(); // frees 60 bytes
    await wait;
    expect(resumed).toBe(true);
    expect(q.offer("c", 20).accepted).toBe(true);
  });

  it("[ui.queue.bounded] reports the oldest item's age from the injected clock", () => {
    let now = 1000;
    const q = new RenderQueue<string>({ clock: () => now });
    expect(q.oldestAgeMs()).toBe(0);
    q.offer("a", 1);
    now = 1250;
    q.offer("b", 1);
    expect(q.oldestAgeMs()).toBe(250);
    q.shift();
    expect(q.oldestAgeMs()).toBe(0);
  });
});
