// Frames: a 4-byte big-endian length, then one CBOR item. The reader reassembles frames split at
// any byte and refuses an oversize length before reading or allocating the body.
import { FRAME_HEADER_BYTES, MAX_FRAME_BYTES } from "./limits.js";
import { WireError } from "./errors.js";
import { encodeCbor, decodeCborRange } from "./cbor.js";

/** Encodes one value as a frame; throws `WireError("oversize")` if the body exceeds the cap. */
export function encodeFrame(value: unknown, maxBytes: number = MAX_FRAME_BYTES): Buffer {
  const body = encodeCbor(value);
  if (body.length > maxBytes) {
    throw new WireError("oversize", `frame body of ${body.length} bytes exceeds ${maxBytes}`);
  }
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, FRAME_HEADER_BYTES);
  return frame;
}

export type FrameResult = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: WireError };

/**
 * Incremental frame reader. `push` returns every complete frame in order, each decoded to a plain
 * value or a typed error. After `oversize` the stream cannot be resynchronised: the reader is
 * closed and drops further input.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private closed = false;

  constructor(private readonly maxBytes: number = MAX_FRAME_BYTES) {}

  /** Bytes held while waiting for the rest of a frame (never more than a header plus the cap). */
  get bufferedBytes(): number {
    return this.buffered;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Feeds bytes; `chunk` is kept (not copied) until its frames are decoded: do not reuse it. */
  push(chunk: Uint8Array): FrameResult[] {
    if (this.closed || chunk.length === 0) return [];
    const results: FrameResult[] = [];
    // Decoded values may alias `chunk` (byte strings), so the caller must not reuse its memory —
    // true of every Node stream, which hands out a fresh buffer per chunk.
    let input = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    if (this.buffered === 0) {
      // Fast path: whole frames at the start of a fresh chunk are decoded in place.
      let off = 0;
      while (input.length - off >= FRAME_HEADER_BYTES) {
        const len = input.readUInt32BE(off);
        if (len > this.maxBytes) return this.fail(results, len);
        const end = off + FRAME_HEADER_BYTES + len;
        if (end > input.length) break;
        results.push(decodeBody(input, off + FRAME_HEADER_BYTES, end));
        off = end;
      }
      if (off === input.length) return results;
      input = input.subarray(off);
    }
    this.chunks.push(input);
    this.buffered += input.length;
    while (this.buffered >= FRAME_HEADER_BYTES) {
      const len = this.peek(FRAME_HEADER_BYTES).readUInt32BE(0);
      if (len > this.maxBytes) return this.fail(results, len);
      if (this.buffered < FRAME_HEADER_BYTES + len) break;
      const whole = this.take(FRAME_HEADER_BYTES + len);
      results.push(decodeBody(whole, FRAME_HEADER_BYTES, whole.length));
    }
    return results;
  }

  private fail(results: FrameResult[], len: number): FrameResult[] {
    this.closed = true;
    this.chunks = [];
    this.buffered = 0;
    results.push({ ok: false, error: new WireError("oversize", `frame length ${len} exceeds ${this.maxBytes}`) });
    return results;
  }

  private peek(n: number): Buffer {
    const first = this.chunks[0] as Buffer;
    if (first.length >= n) return first.subarray(0, n);
    return Buffer.concat(this.chunks, this.buffered).subarray(0, n);
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.buffered);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return out;
  }
}

function decodeBody(bytes: Buffer, start: number, end: number): FrameResult {
  try {
    return { ok: true, value: decodeCborRange(bytes, start, end) };
  } catch (err) {
    if (err instanceof WireError) return { ok: false, error: err };
    return { ok: false, error: new WireError("bad_cbor", "undecodable item") };
  }
}
