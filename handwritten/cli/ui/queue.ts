// The socket-to-renderer FIFO. Bounded by item count and by encoded bytes (the size of each item's
// wire frame, counted on entry). Policy when full: REFUSE. `offer` returns a refusal and never
// drops or evicts a queued item; the socket reader must stop reading (pause the socket) and resume
// when `whenWritable(bytes)` resolves. Backpressure thus moves backlog upstream to the harness writer
// queue; these bounds do not promise an end-to-end memory limit for a slow client.

/** Most items the queue holds. */
export const RENDER_QUEUE_MAX_ITEMS = 1024;
/** Most encoded bytes the queue holds (64 MiB). */
export const RENDER_QUEUE_MAX_BYTES = 64 * 1024 * 1024;

export type OfferResult =
  | { readonly accepted: true }
  /** `items` / `bytes`: full now, retry after `whenWritable()`; `too_large`: can never fit. */
  | { readonly accepted: false; readonly reason: "items" | "bytes" | "too_large" };

export interface QueueEntry<T> {
  readonly item: T;
  readonly bytes: number;
  /** Clock reading when the item was accepted. */
  readonly enqueuedAt: number;
}

export interface RenderQueueOptions {
  maxItems?: number;
  maxBytes?: number;
  /** Milliseconds clock for item ages (default `performance.now`). */
  clock?: () => number;
}

export class RenderQueue<T> {
  readonly maxItems: number;
  readonly maxBytes: number;
  private readonly clock: () => number;
  private entries: QueueEntry<T>[] = [];
  private head = 0;
  private totalBytes = 0;
  private waiters: Array<{ bytes: number; resolve: () => void }> = [];
  private refusedCount = 0;

  constructor(options: RenderQueueOptions = {}) {
    this.maxItems = options.maxItems ?? RENDER_QUEUE_MAX_ITEMS;
    this.maxBytes = options.maxBytes ?? RENDER_QUEUE_MAX_BYTES;
    this.clock = options.clock ?? (() => performance.now());
  }

  /** Items currently queued. */
  get length(): number {
    return this.entries.length - this.head;
  }

  /** Encoded bytes currently queued. */
  get bytes(): number {
    return this.totalBytes;
  }

  /** Offers refused since creation. */
  get refused(): number {
    return this.refusedCount;
  }

  /** Appends an item whose wire encoding is `encodedBytes` long, or refuses it (nothing is dropped). */
  offer(item: T, encodedBytes: number): OfferResult {
    if (!Number.isSafeInteger(encodedBytes) || encodedBytes < 0) {
      throw new RangeError(`encodedBytes must be a non-negative integer, got ${encodedBytes}`);
    }
    if (encodedBytes > this.maxBytes) {
      this.refusedCount++;
      return { accepted: false, reason: "too_large" };
    }
    if (this.length >= this.maxItems) {
      this.refusedCount++;
      return { accepted: false, reason: "items" };
    }
    if (this.totalBytes + encodedBytes > this.maxBytes) {
      this.refusedCount++;
      return { accepted: false, reason: "bytes" };
    }
    this.entries.push({ item, bytes: encodedBytes, enqueuedAt: this.clock() });
    this.totalBytes += encodedBytes;
    return { accepted: true };
  }

  /** Removes and returns the oldest entry. */
  shift(): QueueEntry<T> | undefined {
    if (this.head >= this.entries.length) return undefined;
    const e = this.entries[this.head] as QueueEntry<T>;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    this.totalBytes -= e.bytes;
    if (this.waiters.length > 0) {
      const ready = this.waiters.filter((w) => this.fits(w.bytes));
      this.waiters = this.waiters.filter((w) => !this.fits(w.bytes));
      for (const w of ready) w.resolve();
    }
    return e;
  }

  /** Age in milliseconds of the oldest queued item (0 when empty). */
  oldestAgeMs(): number {
    const e = this.entries[this.head];
    return e === undefined ? 0 : Math.max(0, this.clock() - e.enqueuedAt);
  }

  /** Whether an item of `encodedBytes` would be accepted now. */
  fits(encodedBytes: number): boolean {
    return this.length < this.maxItems && this.totalBytes + encodedBytes <= this.maxBytes;
  }

  /**
   * Resolves once an item of `encodedBytes` (default 0) would be accepted: the socket reader
   * awaits this after a refusal before offering the same item again. An item larger than
   * `maxBytes` never fits; waiting for it rejects at once.
   */
  whenWritable(encodedBytes = 0): Promise<void> {
    if (encodedBytes > this.maxBytes) return Promise.reject(new RangeError("item larger than the queue's byte bound"));
    if (this.fits(encodedBytes)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ bytes: encodedBytes, resolve }));
  }
}
