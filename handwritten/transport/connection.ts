// A framed, validated message connection over any byte stream: a unix socket or a child's stdio.
//
// Inbound: bytes go through `MessageReader`; valid messages are emitted in order, recoverable frame
// errors are reported and skipped, a non-recoverable one (oversize) ends the connection.
// Outbound: `send` encodes one frame into a bounded queue (MAX_QUEUE_ITEMS frames and
// MAX_QUEUE_BYTES bytes, counting frames still held by the stream as well as frames not yet handed
// to it). When a frame would not fit, `send` returns "full" and buffers nothing; `sendAsync` waits
// in FIFO order for room instead. The connection ends exactly once, with a reason.
import type { Duplex, Readable, Writable } from "node:stream";
import type { WireMessage } from "../../generated/index.js";
import { MAX_FRAME_BYTES, MessageReader, WireError, encodeFrame, type Side, type WireErrorCode } from "../protocol/index.js";
import { CLOSE_GRACE_MS, MAX_QUEUE_BYTES, MAX_QUEUE_ITEMS, MAX_SEND_WAITERS } from "./limits.js";
import { errnoOf } from "./errors.js";

/** A duplex stream (net.Socket), or a readable and a writable (a child's stdout and stdin). */
export type ByteStream = Duplex | { readonly readable: Readable; readonly writable: Writable };

/** Why a connection ended; the first reason wins and is reported once. */
export type CloseReason =
  /** `close()` was called here. */
  | { readonly kind: "local"; readonly detail?: string }
  /** The peer half-closed (end of input). */
  | { readonly kind: "peer_end" }
  /** The stream closed without an end of input. */
  | { readonly kind: "peer_closed" }
  /** A stream error (EPIPE, ECONNRESET, …). */
  | { readonly kind: "io_error"; readonly errno: string }
  /** A non-recoverable frame error: the stream cannot be resynchronised. */
  | { readonly kind: "protocol"; readonly code: WireErrorCode };

/**
 * `queued`: the frame is in the outbound queue and will be written in order.
 * `full`: it would exceed the queue bound (or callers are already waiting); nothing was buffered.
 * `closed`: the connection has ended. `oversize`: the frame can never fit (frame or queue byte cap).
 */
export type SendResult = "queued" | "full" | "closed" | "oversize";

/** `sendAsync` never returns a plain `full` unless MAX_SEND_WAITERS callers are already waiting. */
export type SendAsyncResult = SendResult | "aborted";

/**
 * Memory for partially received frames, shared by every connection of one server: a hostile peer
 * holding many connections each in the middle of a large frame can take no more than `limit` bytes
 * in all. The connection whose bytes would pass it is closed.
 */
export class InboundBudget {
  private used = 0;
  constructor(readonly limit: number) {}

  get inUse(): number {
    return this.used;
  }

  /** Moves a connection's holding from `from` to `to` bytes; false when the total would pass the limit. */
  change(from: number, to: number): boolean {
    if (to > from && this.used - from + to > this.limit) return false;
    this.used += to - from;
    return true;
  }
}

export interface ConnectionOptions {
  /** Which end this is: "harness" reads peer → harness messages, "peer" the other direction. */
  readonly side: Side;
  /** Shared bound on partially received frames (socket servers); none for a lone connection. */
  readonly inboundBudget?: InboundBudget;
  /** A frame begun must be complete within this long (socket peers); no deadline when absent. */
  readonly frameDeadlineMs?: number;
  readonly maxFrameBytes?: number;
  readonly maxQueueItems?: number;
  readonly maxQueueBytes?: number;
  readonly maxSendWaiters?: number;
  readonly closeGraceMs?: number;
}

export interface QueueStats {
  /** Frames held: not yet handed to the stream plus handed but not yet flushed. */
  readonly items: number;
  readonly bytes: number;
  /** Highest `items` / `bytes` seen over the connection's life. */
  readonly peakItems: number;
  readonly peakBytes: number;
  readonly waiters: number;
}

interface Waiter {
  /** The message to encode once there is room (undefined: `frame` was given encoded). */
  readonly message: WireMessage | undefined;
  frame: Buffer | undefined;
  readonly resolve: (result: SendAsyncResult) => void;
  readonly cleanup: () => void;
}

type Listener<T> = (value: T) => void;

export class Connection {
  readonly side: Side;
  /** Resolves once, when the connection ends. */
  readonly closed: Promise<CloseReason>;

  private readonly input: Readable;
  private readonly output: Writable;
  private readonly reader: MessageReader;
  private readonly maxItems: number;
  private readonly maxBytes: number;
  private readonly maxFrameBytes: number;
  private readonly maxWaiters: number;
  private readonly graceMs: number;

  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private inFlightItems = 0;
  private inFlightBytes = 0;
  private peakItemsSeen = 0;
  private peakBytesSeen = 0;
  private blocked = false;
  private waiters: Waiter[] = [];
  /** `whenBelow` callers: each waits until at most `bytes` are held for sending. */
  private lowWaters: Array<{ bytes: number; resolve: (open: boolean) => void }> = [];
  private endingOutput = false;
  private tornDown = false;
  private reason: CloseReason | undefined;
  private readonly budget: InboundBudget | undefined;
  private readonly frameDeadlineMs: number | undefined;
  /** Bytes of a partial frame this connection holds against `budget`. */
  private held = 0;
  private frameTimer: NodeJS.Timeout | undefined;
  private resolveClosed!: (reason: CloseReason) => void;
  private readonly onMessageListeners = new Set<Listener<WireMessage>>();
  private readonly onInvalidListeners = new Set<Listener<WireError>>();
  private readonly onCloseListeners = new Set<Listener<CloseReason>>();

  constructor(stream: ByteStream, options: ConnectionOptions) {
    this.side = options.side;
    if ("readable" in stream && "writable" in stream && typeof stream.readable === "object") {
      this.input = stream.readable;
      this.output = stream.writable;
    } else {
      this.input = stream as Duplex;
      this.output = stream as Duplex;
    }
    this.maxFrameBytes = options.maxFrameBytes ?? MAX_FRAME_BYTES;
    this.maxItems = options.maxQueueItems ?? MAX_QUEUE_ITEMS;
    this.maxBytes = options.maxQueueBytes ?? MAX_QUEUE_BYTES;
    this.maxWaiters = options.maxSendWaiters ?? MAX_SEND_WAITERS;
    this.graceMs = options.closeGraceMs ?? CLOSE_GRACE_MS;
    this.reader = new MessageReader(options.side, this.maxFrameBytes);
    this.budget = options.inboundBudget;
    this.frameDeadlineMs = options.frameDeadlineMs;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));

    this.input.on("data", (chunk: Buffer | string) => this.onData(typeof chunk === "string" ? Buffer.from(chunk) : chunk));
    this.input.on("end", () => this.finish({ kind: "peer_end" }, true));
    this.input.on("error", (err: unknown) => this.finish({ kind: "io_error", errno: errnoOf(err) }, false));
    this.input.on("close", () => this.finish({ kind: "peer_closed" }, false));
    if (this.output !== (this.input as unknown)) {
      this.output.on("error", (err: unknown) => this.finish({ kind: "io_error", errno: errnoOf(err) }, false));
      this.output.on("close", () => this.finish({ kind: "peer_closed" }, false));
    }
    this.output.on("drain", () => {
      this.blocked = false;
      this.pump();
      this.serveWaiters();
    });
  }

  /** Whether the connection still accepts sends and emits messages. */
  get isOpen(): boolean {
    return this.reason === undefined;
  }

  get closeReason(): CloseReason | undefined {
    return this.reason;
  }

  /** Validated inbound messages, in arrival order. Returns an unsubscribe function. */
  onMessage(listener: Listener<WireMessage>): () => void {
    this.onMessageListeners.add(listener);
    return () => this.onMessageListeners.delete(listener);
  }

  /** Recoverable frame errors (bad_cbor, invalid, unknown_message); the connection stays open. */
  onInvalid(listener: Listener<WireError>): () => void {
    this.onInvalidListeners.add(listener);
    return () => this.onInvalidListeners.delete(listener);
  }

  /** Called once when the connection ends (immediately if it already has). */
  onClose(listener: Listener<CloseReason>): () => void {
    if (this.reason) {
      const reason = this.reason;
      queueMicrotask(() => listener(reason));
      return () => undefined;
    }
    this.onCloseListeners.add(listener);
    return () => this.onCloseListeners.delete(listener);
  }

  stats(): QueueStats {
    return {
      items: this.queue.length + this.inFlightItems,
      bytes: this.queuedBytes + this.inFlightBytes,
      peakItems: this.peakItemsSeen,
      peakBytes: this.peakBytesSeen,
      waiters: this.waiters.length,
    };
  }

  /** Queues one message without waiting; never buffers beyond the bound (see `SendResult`). */
  send(message: WireMessage): SendResult {
    if (this.reason) return "closed";
    if (this.waiters.length > 0 || this.itemCount() >= this.maxItems) return "full";
    const frame = this.encode(message);
    if (frame === undefined) return "oversize";
    if (!this.fits(frame.length)) return "full";
    this.enqueue(frame);
    return "queued";
  }

  /**
   * Queues a frame already encoded with `encodeFrame` (one encoding shared by every subscriber of
   * a broadcast), under the same bounds as `send`. The caller vouches that it is one valid frame.
   */
  sendFrame(frame: Buffer): SendResult {
    if (this.reason) return "closed";
    if (this.waiters.length > 0 || this.itemCount() >= this.maxItems) return "full";
    if (frame.length - 4 > this.maxFrameBytes) return "oversize";
    if (!this.fits(frame.length)) return "full";
    this.enqueue(frame);
    return "queued";
  }

  /**
   * Queues several frames encoded with `encodeFrame`, written back to back, as one item of the queue:
   * bounded by bytes like every frame, but a batch counts once against the item bound (a replay
   * hands over a whole history at once). The caller vouches that each is one valid frame.
   */
  sendFrames(frames: readonly Buffer[]): SendResult {
    if (this.reason) return "closed";
    if (this.waiters.length > 0 || this.itemCount() >= this.maxItems) return "full";
    let len = 0;
    for (const frame of frames) {
      if (frame.length - 4 > this.maxFrameBytes) return "oversize";
      len += frame.length;
    }
    if (!this.fits(len)) return "full";
    this.enqueue(frames.length === 1 ? (frames[0] as Buffer) : Buffer.concat(frames, len));
    return "queued";
  }

  /**
   * Resolves true once at most `bytes` are held for sending (at once if that is already so), false
   * if the connection ends first: a long replay keeps only a little queued at a time this way.
   */
  whenBelow(bytes: number): Promise<boolean> {
    if (this.reason) return Promise.resolve(false);
    if (this.queuedBytes + this.inFlightBytes <= bytes) return Promise.resolve(true);
    return new Promise((resolve) => this.lowWaters.push({ bytes, resolve }));
  }

  /**
   * `sendFrames`, waiting (FIFO with other waiters) for room instead of refusing: a replay hands a
   * long history over batch by batch at the pace the peer reads. One batch counts as one item.
   */
  sendFramesAsync(frames: readonly Buffer[]): Promise<SendAsyncResult> {
    if (this.reason) return Promise.resolve("closed");
    let len = 0;
    for (const frame of frames) {
      if (frame.length - 4 > this.maxFrameBytes) return Promise.resolve("oversize");
      len += frame.length;
    }
    if (len > this.maxBytes) return Promise.resolve("oversize");
    const whole = frames.length === 1 ? (frames[0] as Buffer) : Buffer.concat(frames, len);
    if (this.waiters.length === 0 && this.fits(whole.length)) {
      this.enqueue(whole);
      return Promise.resolve("queued");
    }
    if (this.waiters.length >= this.maxWaiters) return Promise.resolve("full");
    return new Promise<SendAsyncResult>((resolve) => {
      this.waiters.push({ message: undefined, frame: whole, resolve, cleanup: () => undefined });
    });
  }

  /** Queues one message, waiting (FIFO with other waiters) until it fits; `closed` if the connection ends first. */
  sendAsync(message: WireMessage, signal?: AbortSignal): Promise<SendAsyncResult> {
    if (this.reason) return Promise.resolve("closed");
    if (signal?.aborted) return Promise.resolve("aborted");
    let frame: Buffer | undefined;
    if (this.waiters.length === 0 && this.itemCount() < this.maxItems) {
      frame = this.encode(message);
      if (frame === undefined) return Promise.resolve("oversize");
      if (this.fits(frame.length)) {
        this.enqueue(frame);
        return Promise.resolve("queued");
      }
    }
    if (this.waiters.length >= this.maxWaiters) return Promise.resolve("full");
    return new Promise<SendAsyncResult>((resolve) => {
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve("aborted");
        // The head may have been blocking others that fit now.
        this.serveWaiters();
      };
      const waiter: Waiter = {
        message,
        frame,
        resolve,
        cleanup: () => signal?.removeEventListener("abort", onAbort),
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /**
   * Ends the connection from this side: no more sends, queued frames are flushed, then the stream is
   * ended (and destroyed after CLOSE_GRACE_MS if the peer does not take them).
   */
  close(detail?: string): void {
    this.finish(detail === undefined ? { kind: "local" } : { kind: "local", detail }, true);
  }

  /** Ends the connection at once, dropping queued frames. */
  destroy(detail?: string): void {
    this.finish(detail === undefined ? { kind: "local" } : { kind: "local", detail }, false);
  }

  private onData(chunk: Buffer): void {
    if (this.reason) return;
    const results = this.reader.push(chunk);
    if (!this.trackPartialFrame(results.length > 0)) return;
    for (const result of results) {
      if (this.reason) return;
      try {
        if (result.ok) {
          for (const l of [...this.onMessageListeners]) l(result.message);
        } else if (result.error.recoverable) {
          for (const l of [...this.onInvalidListeners]) l(result.error);
        } else {
          this.finish({ kind: "protocol", code: result.error.code }, true);
          return;
        }
      } catch (err) {
        this.listenerFailed(err);
        return;
      }
    }
  }

  /**
   * Accounts the partial frame the reader now holds (shared budget, completion deadline). Returns
   * false when the connection was closed for it.
   */
  private trackPartialFrame(completedSome: boolean): boolean {
    const buffered = this.reader.bufferedBytes;
    if (this.budget !== undefined) {
      if (!this.budget.change(this.held, buffered)) {
        this.finish({ kind: "local", detail: "too much partially received data across connections" }, false);
        return false;
      }
      this.held = buffered;
    }
    if (this.frameDeadlineMs === undefined) return true;
    // The deadline runs from the last completed frame while a frame is pending.
    if (completedSome || buffered === 0) {
      clearTimeout(this.frameTimer);
      this.frameTimer = undefined;
    }
    if (buffered > 0 && this.frameTimer === undefined) {
      const ms = this.frameDeadlineMs;
      this.frameTimer = setTimeout(() => this.finish({ kind: "local", detail: `a frame did not complete within ${ms / 1000} s` }, false), ms);
      this.frameTimer.unref();
    }
    return true;
  }

  /**
   * A handler threw on an inbound message: nothing a peer sends may escape into the process. The
   * failure is logged (never the message), a harness answers a content-free `invalid`, and the
   * connection ends, since the handler's state can no longer be trusted for this peer.
   */
  private listenerFailed(err: unknown): void {
    const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    process.stderr.write(`tau: a message handler failed (${what.slice(0, 300).replace(/[\u0000-\u001f\u007f-\u009f]/g, " ")}); closing that connection\n`);
    if (this.side === "harness") this.send({ message: "error", payload: { code: "invalid" } });
    this.close("a message could not be handled");
  }

  private encode(message: WireMessage): Buffer | undefined {
    let frame: Buffer;
    try {
      frame = encodeFrame(message, this.maxFrameBytes);
    } catch (err) {
      if (err instanceof WireError && err.code === "oversize") return undefined;
      throw err;
    }
    return frame.length > this.maxBytes ? undefined : frame;
  }

  private itemCount(): number {
    return this.queue.length + this.inFlightItems;
  }

  private fits(len: number): boolean {
    return this.itemCount() + 1 <= this.maxItems && this.queuedBytes + this.inFlightBytes + len <= this.maxBytes;
  }

  private enqueue(frame: Buffer): void {
    this.queue.push(frame);
    this.queuedBytes += frame.length;
    const items = this.itemCount();
    const bytes = this.queuedBytes + this.inFlightBytes;
    if (items > this.peakItemsSeen) this.peakItemsSeen = items;
    if (bytes > this.peakBytesSeen) this.peakBytesSeen = bytes;
    this.pump();
  }

  /** Hands queued frames to the stream until it asks us to wait for `drain`. */
  private pump(): void {
    while (!this.blocked && this.queue.length > 0 && !this.output.destroyed && !this.output.writableEnded) {
      const frame = this.queue.shift() as Buffer;
      const len = frame.length;
      this.queuedBytes -= len;
      this.inFlightItems += 1;
      this.inFlightBytes += len;
      const ok = this.output.write(frame, () => this.flushed(len));
      if (!ok) this.blocked = true;
    }
    if (this.endingOutput && this.queue.length === 0 && !this.output.writableEnded && !this.output.destroyed) {
      this.output.end();
    }
  }

  private flushed(len: number): void {
    this.inFlightItems -= 1;
    this.inFlightBytes -= len;
    this.serveWaiters();
    if (this.lowWaters.length > 0) {
      const held = this.queuedBytes + this.inFlightBytes;
      const ready = this.lowWaters.filter((w) => held <= w.bytes);
      if (ready.length > 0) {
        this.lowWaters = this.lowWaters.filter((w) => held > w.bytes);
        for (const w of ready) w.resolve(true);
      }
    }
  }

  private serveWaiters(): void {
    while (this.waiters.length > 0 && !this.reason) {
      const head = this.waiters[0] as Waiter;
      if (head.frame === undefined) {
        if (this.itemCount() >= this.maxItems) return;
        head.frame = this.encode(head.message as WireMessage);
        if (head.frame === undefined) {
          this.waiters.shift();
          head.cleanup();
          head.resolve("oversize");
          continue;
        }
      }
      if (!this.fits(head.frame.length)) return;
      this.waiters.shift();
      head.cleanup();
      this.enqueue(head.frame);
      head.resolve("queued");
    }
  }

  private finish(reason: CloseReason, graceful: boolean): void {
    if (this.reason) {
      // Already ended; a later stream error or close only forces the teardown along.
      if (!graceful && reason.kind !== "peer_end") this.teardown();
      return;
    }
    this.reason = reason;
    for (const w of this.lowWaters.splice(0)) w.resolve(false);
    clearTimeout(this.frameTimer);
    if (this.budget !== undefined) this.budget.change(this.held, 0);
    this.held = 0;
    for (const w of this.waiters.splice(0)) {
      w.cleanup();
      w.resolve("closed");
    }
    this.input.removeAllListeners("data");
    if (graceful && !this.output.destroyed && !this.output.writableEnded) {
      this.endingOutput = true;
      this.output.once("finish", () => this.teardown());
      const timer = setTimeout(() => this.teardown(), this.graceMs);
      timer.unref();
      this.pump();
    } else {
      this.teardown();
    }
    this.resolveClosed(reason);
    for (const l of [...this.onCloseListeners]) l(reason);
    this.onCloseListeners.clear();
  }

  private teardown(): void {
    // Once only: stdio streams (a file as stdout) never report themselves destroyed and emit `close`
    // again on every destroy(), which would otherwise call back here forever.
    if (this.tornDown) return;
    this.tornDown = true;
    this.queue = [];
    this.queuedBytes = 0;
    if (!this.input.destroyed) this.input.destroy();
    if (!this.output.destroyed) this.output.destroy();
  }
}
