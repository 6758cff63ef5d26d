// An in-process subscriber behind the bounded queue (1,024 items and 64 MiB): deliveries wait
// until the consumer takes them; a full queue refuses the offer and the bus cuts the sink off.
import type { Delivery, Sink } from "./bus.js";
import { SUBSCRIBER_QUEUE_BYTES, SUBSCRIBER_QUEUE_ITEMS } from "./limits.js";

export class MemorySink implements Sink {
  private readonly items: Array<{ delivery: Delivery; bytes: number }> = [];
  private bytes = 0;
  private waiter: (() => void) | undefined;
  closedReason: string | undefined;

  constructor(
    private readonly maxItems: number = SUBSCRIBER_QUEUE_ITEMS,
    private readonly maxBytes: number = SUBSCRIBER_QUEUE_BYTES,
  ) {}

  offer(delivery: Delivery, frame: Buffer): "queued" | "full" {
    if (this.closedReason !== undefined) return "full";
    if (this.items.length + 1 > this.maxItems || this.bytes + frame.length > this.maxBytes) return "full";
    this.items.push({ delivery, bytes: frame.length });
    this.bytes += frame.length;
    this.waiter?.();
    return "queued";
  }

  close(reason: string): void {
    this.closedReason = reason;
    this.waiter?.();
  }

  get size(): number {
    return this.items.length;
  }

  get queuedBytes(): number {
    return this.bytes;
  }

  /** Takes everything queued now. */
  drain(): Delivery[] {
    const out = this.items.splice(0).map((i) => i.delivery);
    this.bytes = 0;
    return out;
  }

  /** Waits until at least `n` deliveries are queued (or the sink closes), then takes them all. */
  async take(n: number): Promise<Delivery[]> {
    while (this.items.length < n && this.closedReason === undefined) {
      await new Promise<void>((r) => (this.waiter = r));
      this.waiter = undefined;
    }
    return this.drain();
  }
}
