// Where a journal's frames start, by seq, without holding an offset for every frame: an anchor (the
// offset of every FRAME_ANCHOR_EVERY-th frame) is kept for the whole journal, and the offsets inside
// a block of frames are found by reading frame headers from the block's anchor when a reader needs
// them (a few recently used blocks are kept). Anchors come from the opening scan, from a checkpoint
// (for the frames before its boundary, which a resumed open does not scan) and from appends; a
// missing one is found by walking headers from the nearest known anchor before it.
import { StoreError } from "./errors.js";
import { readFully, type JournalIo } from "./io.js";
import { FRAME_ANCHOR_EVERY, FRAME_HEADER_BYTES, FRAME_INDEX_CACHED_BLOCKS } from "./limits.js";

/** Bytes read at a time while walking headers: a page, since most frames are skipped, not read. */
const HEADER_READ_BYTES = 8 * 1024;

/** Whether `anchors` can be the anchors of the frames before `seq` (boundary `offset`). */
export function plausibleAnchors(anchors: unknown, seq: number, offset: number): anchors is number[] {
  if (!Array.isArray(anchors) || anchors.length !== Math.ceil(seq / FRAME_ANCHOR_EVERY)) return false;
  let prev = -1;
  for (const a of anchors) {
    if (typeof a !== "number" || !Number.isSafeInteger(a) || a <= prev || a >= offset) return false;
    prev = a;
  }
  return anchors.length === 0 || anchors[0] === 0;
}

export class FrameIndex {
  /** anchors[k]: the offset of frame k·FRAME_ANCHOR_EVERY, where known. */
  private anchors: Array<number | undefined> = [];
  /** Recently used blocks' frame offsets (Map order is use order). */
  private readonly blocks = new Map<number, number[]>();

  constructor(
    private readonly io: JournalIo,
    /** The journal's descriptor, opened again if it was given back since the last read. */
    private readonly fd: () => number,
    private readonly file: string,
  ) {}

  /** Whether some anchors came from a checkpoint rather than from reading this file. */
  seeded = false;

  /** Anchors known for the frames before a boundary (from its checkpoint). */
  seed(anchors: readonly number[]): void {
    anchors.forEach((a, k) => (this.anchors[k] = a));
    this.seeded = anchors.length > 0;
  }

  /** A frame the opening scan read or an append wrote. */
  noteFrame(seq: number, offset: number): void {
    const k = Math.floor(seq / FRAME_ANCHOR_EVERY);
    if (seq % FRAME_ANCHOR_EVERY === 0) this.anchors[k] = offset;
    const block = this.blocks.get(k);
    if (block && block.length === seq - k * FRAME_ANCHOR_EVERY) block.push(offset);
  }

  /** The offset of frame `seq` (seq < nextSeq; frames end at `end`). */
  offsetOf(seq: number, nextSeq: number, end: number): number {
    const k = Math.floor(seq / FRAME_ANCHOR_EVERY);
    let block = this.blocks.get(k);
    if (block === undefined) {
      block = this.readBlock(k, nextSeq, end);
      if (this.blocks.size >= FRAME_INDEX_CACHED_BLOCKS) this.blocks.delete(this.blocks.keys().next().value as number);
    } else this.blocks.delete(k);
    this.blocks.set(k, block);
    return block[seq - k * FRAME_ANCHOR_EVERY] as number;
  }

  /** Every anchor of the frames before `nextSeq`, walking headers where one is not known yet. */
  complete(nextSeq: number, end: number): number[] {
    const n = Math.ceil(nextSeq / FRAME_ANCHOR_EVERY);
    for (let k = 0; k < n; k++) if (this.anchors[k] === undefined) this.anchorOf(k, nextSeq, end);
    return this.anchors.slice(0, n) as number[];
  }

  private readBlock(k: number, nextSeq: number, end: number): number[] {
    const first = k * FRAME_ANCHOR_EVERY;
    const count = Math.min(FRAME_ANCHOR_EVERY, nextSeq - first);
    const start = this.anchorOf(k, nextSeq, end);
    const { offsets, after } = this.walk(start, count, end);
    // Frames are contiguous: the walk must land on the next anchor, or on the end after the last frame.
    const expected = first + count >= nextSeq ? end : this.anchors[k + 1];
    if (expected !== undefined && after !== expected) throw new StoreError("journal_corrupt", `${this.file}: frames from ${start} end at ${after}, not at ${expected}`);
    if (expected === undefined) this.anchors[k + 1] = after;
    return offsets;
  }

  /** The anchor of block `k`, found by walking from the nearest known one before it if needed. */
  private anchorOf(k: number, nextSeq: number, end: number): number {
    const known = this.anchors[k];
    if (known !== undefined) return known;
    let j = k;
    while (j > 0 && this.anchors[j] === undefined) j--;
    let at = this.anchors[j] ?? 0;
    this.anchors[j] = at;
    for (; j < k; j++) {
      at = this.walk(at, Math.min(FRAME_ANCHOR_EVERY, nextSeq - j * FRAME_ANCHOR_EVERY), end).after;
      this.anchors[j + 1] = at;
    }
    return at;
  }

  /** Offsets of `count` frames starting at `start` (headers only), and where the last one ends. */
  private walk(start: number, count: number, end: number): { offsets: number[]; after: number } {
    const offsets: number[] = [];
    let chunk = Buffer.alloc(0);
    let chunkStart = 0;
    let pos = start;
    for (let i = 0; i < count; i++) {
      if (pos + FRAME_HEADER_BYTES > end) throw new StoreError("journal_corrupt", `${this.file}: frame header at ${pos} lies past the end ${end}`);
      offsets.push(pos);
      if (pos < chunkStart || pos + FRAME_HEADER_BYTES > chunkStart + chunk.length) {
        chunk = Buffer.allocUnsafe(Math.min(HEADER_READ_BYTES, end - pos));
        chunkStart = pos;
        chunk = chunk.subarray(0, readFully(this.io, this.fd(), chunk, pos));
        if (chunk.length < FRAME_HEADER_BYTES) throw new StoreError("journal_corrupt", `${this.file}: short read at ${pos}`);
      }
      const at = pos - chunkStart;
      if (chunk.readUInt32LE(at + 4) !== 0) throw new StoreError("journal_corrupt", `${this.file}: frame length at ${pos} changed since it was scanned`);
      pos += FRAME_HEADER_BYTES + chunk.readUInt32LE(at);
    }
    return { offsets, after: pos };
  }
}
