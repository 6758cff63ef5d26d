// Framed append-only journal: each frame is an 8-byte little-endian payload length followed by one
// CBOR record. Three ways in:
//   - FileJournal.open: the single writer (under the cross-process lock). Repairs only an incomplete
//     frame at the very end (a crash tail); any complete frame that fails decode, schema, seq or the
//     semantic hook fails closed and nothing is changed.
//   - replayJournal: strict read-only replay for offline readers. O_RDONLY, no lock, no repair; a torn
//     tail is reported, a corrupt frame fails closed.
//   - MemoryJournal: the same validation pipeline with no file at all (memory-only mode).
import * as fs from "node:fs";
import * as path from "node:path";
import { decodePayload, encodeFrame } from "./codec.js";
import {
  JournalCorruptError,
  JournalPoisonedError,
  RecordInvalidError,
  StoreError,
} from "./errors.js";
import { nodeIo, readFully, type JournalIo } from "./io.js";
import { FRAME_HEADER_BYTES, MAX_OPEN_JOURNAL_DESCRIPTORS, MAX_RECORD_BYTES, SCAN_CHUNK_BYTES } from "./limits.js";
import { acquireJournalLock, type LockHandle } from "./lock.js";
import { FrameIndex, plausibleAnchors } from "./frame-index.js";
import type { RecordValidator, SemanticValidator, ValidationResult } from "./validate.js";

export interface SeqRecord {
  seq: number;
}

export interface RecordPipeline<R> {
  /** Structural validation of every decoded record (generated validators plug in here). */
  validate: RecordValidator;
  /** Semantic validation against the caller's folded state; runs after `validate` and the seq check. */
  semantic?: SemanticValidator<R>;
  /** Called for every accepted record, in order, on scan and after each successful append (the fold). */
  onRecord?: (record: R, offset: number) => void;
}

export interface TornTail {
  /** Where the incomplete frame starts (the end of the last complete frame). */
  offset: number;
  /** Bytes of the incomplete frame. */
  bytes: number;
}

export interface ScanBudget {
  maxBytes?: number;
  maxRecords?: number;
  /** Absolute deadline in ms (performance.now() clock). */
  deadline?: number;
  /** Stop at this offset (a frame boundary) instead of the end of the file. */
  until?: number;
}

export interface ScanResult {
  /** End of the last complete valid frame. */
  end: number;
  nextSeq: number;
  records: number;
  /** Offset of the last complete frame scanned, or null if none. */
  lastFrameOffset: number | null;
  tornTail: TornTail | null;
  /** True when a budget stopped the scan before the end of the file. */
  exhausted: boolean;
}

/** Where a scan resumes: a known frame boundary and the seq expected there. */
export interface ScanStart {
  offset: number;
  seq: number;
}

/** A checkpointed boundary to open at, with the frame anchors before it when the checkpoint has them. */
export interface ResumeStart extends ScanStart {
  anchors?: readonly number[];
}

function check(result: ValidationResult, file: string, offset: number, what: string): void {
  if (!result.ok) throw new JournalCorruptError(file, offset, `${what}: ${result.reason}`);
}

/**
 * Scans frames from `start` to the end of file (or until a budget runs out), validating each.
 * Never writes. Throws JournalCorruptError for a complete bad frame.
 */
export function scanFrames<R extends SeqRecord>(
  io: JournalIo,
  fd: number,
  file: string,
  pipeline: RecordPipeline<R>,
  start: ScanStart = { offset: 0, seq: 0 },
  budget: ScanBudget = {},
): ScanResult {
  const size = budget.until ?? io.size(fd);
  let pos = start.offset;
  let seq = start.seq;
  let records = 0;
  let lastFrameOffset: number | null = null;
  const maxBytes = budget.maxBytes ?? Infinity;
  const maxRecords = budget.maxRecords ?? Infinity;
  // A fresh chunk per refill: decoded byte strings may be views into it.
  let chunk = Buffer.alloc(0);
  let chunkStart = 0;
  const bytes = (at: number, len: number): Buffer => {
    if (at >= chunkStart && at + len <= chunkStart + chunk.length) return chunk.subarray(at - chunkStart, at - chunkStart + len);
    if (len > SCAN_CHUNK_BYTES) {
      const own = Buffer.allocUnsafe(len);
      if (readFully(io, fd, own, at) !== len) throw new StoreError("journal_corrupt", `${file}: short read at ${at}`);
      return own;
    }
    // No further than the byte budget reaches: a short read of a long journal reads little of it.
    chunk = Buffer.allocUnsafe(Math.min(SCAN_CHUNK_BYTES, size - at, Math.max(len, start.offset + maxBytes - at)));
    chunkStart = at;
    const got = readFully(io, fd, chunk, at);
    if (got < len) throw new StoreError("journal_corrupt", `${file}: file shrank during scan at ${at}`);
    chunk = chunk.subarray(0, got);
    return chunk.subarray(0, len);
  };
  while (pos < size) {
    if (records >= maxRecords || pos - start.offset >= maxBytes || (budget.deadline !== undefined && performance.now() > budget.deadline))
      return { end: pos, nextSeq: seq, records, lastFrameOffset, tornTail: null, exhausted: true };
    if (size - pos < FRAME_HEADER_BYTES) return torn();
    const header = bytes(pos, FRAME_HEADER_BYTES);
    const lo = header.readUInt32LE(0);
    const hi = header.readUInt32LE(4);
    // Checked before any allocation: a complete header is never torn, so a huge length is corruption.
    if (hi !== 0 || lo > MAX_RECORD_BYTES)
      throw new JournalCorruptError(file, pos, `frame length ${header.readBigUInt64LE(0)} exceeds the ${MAX_RECORD_BYTES}-byte cap`);
    const len = lo;
    if (size - pos - FRAME_HEADER_BYTES < len) return torn();
    // A frame is read only if it fits entirely inside the byte budget.
    if (pos + FRAME_HEADER_BYTES + len - start.offset > maxBytes)
      return { end: pos, nextSeq: seq, records, lastFrameOffset, tornTail: null, exhausted: true };
    let value: unknown;
    try {
      value = decodePayload(bytes(pos + FRAME_HEADER_BYTES, len));
    } catch (err) {
      throw new JournalCorruptError(file, pos, `CBOR decode failed: ${(err as Error).message}`, { cause: err });
    }
    check(pipeline.validate(value), file, pos, "schema");
    const record = value as R;
    if (record.seq !== seq) throw new JournalCorruptError(file, pos, `seq ${String(record.seq)} where ${seq} was expected`);
    if (pipeline.semantic) check(pipeline.semantic(record), file, pos, "semantic");
    pipeline.onRecord?.(record, pos);
    lastFrameOffset = pos;
    pos += FRAME_HEADER_BYTES + len;
    seq++;
    records++;
  }
  return { end: pos, nextSeq: seq, records, lastFrameOffset, tornTail: null, exhausted: false };
  function torn(): ScanResult {
    return { end: pos, nextSeq: seq, records, lastFrameOffset, tornTail: { offset: pos, bytes: size - pos }, exhausted: false };
  }
}

/** Shared by file and memory journals: a journal-agnostic append target. */
export interface Journal<R extends SeqRecord> {
  /** File path, or null for a memory-only journal. */
  readonly path: string | null;
  readonly nextSeq: number;
  /** Validates, frames and synchronously writes one record; returns the accepted (decoded) record. */
  append(record: R): R;
  /** Every accepted record, in order (a strict re-read for file journals). */
  readAll(): R[];
  /**
   * Records `from` up to (not including) `to`, in order, stopping early once they hold about
   * `maxBytes` (at least one record is returned when any is in range). A re-read, validated.
   */
  readRange(from: number, to: number, maxBytes?: number): R[];
  /**
   * The first seq of the window that ends at `end`: at most `maxRecords` records and, beyond the
   * first, about `maxBytes` of frames (a page of history read backwards).
   */
  windowStart(end: number, maxRecords: number, maxBytes: number): number;
  /**
   * Replaces the whole journal with `records`, renumbered from seq 0, atomically (a file journal:
   * temp file, sync, rename). Returns the new end (bytes for a file, records in memory).
   */
  rewrite(records: readonly R[]): number;
  close(): void;
}

export interface AppendResult {
  offset: number;
  bytes: number;
}

/** Encodes and validates a record exactly as a reader would see it, before any byte is written. */
function prepare<R extends SeqRecord>(record: R, nextSeq: number, pipeline: RecordPipeline<R>): { frame: Buffer; decoded: R } {
  const frame = encodeFrame(record, MAX_RECORD_BYTES);
  // Validate the decoded form, so nothing that reopen would refuse can ever be written.
  const decoded = decodePayload(frame.subarray(FRAME_HEADER_BYTES)) as R;
  const v = pipeline.validate(decoded);
  if (!v.ok) throw new RecordInvalidError(v.reason);
  if (decoded.seq !== nextSeq) throw new RecordInvalidError(`seq ${String(decoded.seq)} where ${nextSeq} was expected`);
  if (pipeline.semantic) {
    const s = pipeline.semantic(decoded);
    if (!s.ok) throw new RecordInvalidError(s.reason);
  }
  return { frame, decoded };
}

// A journal path whose failed append could not be rolled back stays poisoned for this process.
const poisonedPaths = new Map<string, unknown>();

export interface FileJournalOptions<R extends SeqRecord> extends RecordPipeline<R> {
  io?: JournalIo;
  /**
   * Where the opening scan may start instead of the beginning: a checkpointed boundary the caller
   * verified against this very file (`fd`). Only the records after it are scanned and folded.
   */
  resumeFrom?: (fd: number) => ResumeStart | undefined;
  /** Called after every successful append (the writeback worker marks the journal dirty here). */
  onAppend?: (journal: FileJournal<R>) => void;
  /** Called when open truncated a crash tail (checkpoints are invalidated here). */
  onRecover?: (report: TornTail) => void;
}

export interface OpenReport {
  /** The crash tail open removed, or null. `offset` is where the file now ends. */
  recovered: { removedBytes: number; offset: number } | null;
  /** Records the opening scan read (the tail only, when it resumed from a checkpoint). */
  records: number;
  /** The checkpointed boundary the scan started at, or null for a scan of the whole journal. */
  resumedFrom: ScanStart | null;
}

/**
 * The file journals of this process whose descriptor is open, least recently used first (a Set
 * keeps insertion order; a use moves its journal to the end). At most MAX_OPEN_JOURNAL_DESCRIPTORS.
 */
const openDescriptors = new Set<{ park(): void }>();

export class FileJournal<R extends SeqRecord> implements Journal<R> {
  readonly path: string;
  /** Open, or undefined while given back to the pool (the writer lock stays held). */
  private openFd: number | undefined;
  /** The file this writer opened (or renamed into place): a descriptor opened again must be this very file, unchanged. */
  private identity: { dev: number; ino: number };
  readonly report: OpenReport;
  private _end: number;
  private _nextSeq: number;
  private _lastFrameOffset: number | null;
  private poison: unknown = undefined;
  private closed = false;
  private readonly io: JournalIo;
  private readonly lock: LockHandle;
  private readonly opts: FileJournalOptions<R>;
  /** Where frames start, by seq (anchors from the opening scan, the checkpoint and appends). */
  private index: FrameIndex;

  private constructor(p: string, fd: number, lock: LockHandle, opts: FileJournalOptions<R>, scan: ScanResult, report: OpenReport, index: FrameIndex) {
    this.path = p;
    this.openFd = fd;
    const st = fs.fstatSync(fd);
    this.identity = { dev: st.dev, ino: st.ino };
    this.index = index;
    this.lock = lock;
    this.opts = opts;
    this.io = opts.io ?? nodeIo;
    this._end = scan.end;
    this._nextSeq = scan.nextSeq;
    this._lastFrameOffset = scan.lastFrameOffset;
    this.report = report;
  }

  /** Opens (creating if absent) the journal as its single writer. */
  static open<R extends SeqRecord>(file: string, opts: FileJournalOptions<R>): FileJournal<R> {
    const abs = path.resolve(file);
    const poisoned = poisonedPaths.get(abs);
    if (poisoned !== undefined) throw new JournalPoisonedError(abs, poisoned);
    const io = opts.io ?? nodeIo;
    const lock = withRoom(() => acquireJournalLock(abs));
    let fd = -1;
    try {
      fd = withRoom(() => fs.openSync(abs, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600));
      const resume = opts.resumeFrom?.(fd);
      const start = resume ? { offset: resume.offset, seq: resume.seq } : undefined;
      let journal: FileJournal<R> | undefined;
      // Reads go through the journal's descriptor once it exists (it may be given back and reopened).
      const index = new FrameIndex(io, () => (journal ? journal.fd : fd), abs);
      if (resume?.anchors && plausibleAnchors(resume.anchors, resume.seq, resume.offset)) index.seed(resume.anchors);
      const scan = scanFrames(io, fd, abs, { ...opts, onRecord: (r: R, at: number) => (index.noteFrame(r.seq, at), opts.onRecord?.(r, at)) }, start);
      let recovered: OpenReport["recovered"] = null;
      if (scan.tornTail) {
        io.truncate(fd, scan.tornTail.offset);
        recovered = { removedBytes: scan.tornTail.bytes, offset: scan.tornTail.offset };
        opts.onRecover?.(scan.tornTail);
      }
      journal = new FileJournal(abs, fd, lock, opts, scan, { recovered, records: scan.records, resumedFrom: start ?? null }, index);
      makeRoomForDescriptor();
      openDescriptors.add(journal);
      return journal;
    } catch (err) {
      if (fd >= 0) fs.closeSync(fd);
      lock.release();
      throw err;
    }
  }

  /**
   * The journal's descriptor, opened again when it was given back: the file must still be the one
   * this writer holds, with exactly its accepted bytes, or the journal fails closed (poisoned).
   */
  get fd(): number {
    if (this.closed) throw new StoreError("journal_closed", `${this.path} is closed`);
    if (this.openFd !== undefined) {
      openDescriptors.delete(this);
      openDescriptors.add(this);
      return this.openFd;
    }
    if (this.poison !== undefined) throw new JournalPoisonedError(this.path, this.poison);
    makeRoomForDescriptor();
    // Failing to open (EMFILE, say) is an error for this one use; the journal is unchanged.
    const fd = withRoom(() => fs.openSync(this.path, fs.constants.O_RDWR | fs.constants.O_NOFOLLOW));
    let st: fs.Stats;
    try {
      st = fs.fstatSync(fd);
    } catch (err) {
      fs.closeSync(fd);
      throw err;
    }
    if (st.dev !== this.identity.dev || st.ino !== this.identity.ino || st.size !== this._end) {
      fs.closeSync(fd);
      const err = new StoreError("journal_corrupt", `${this.path} was replaced or changed by another writer while tau held its lock (${st.size} bytes, ${this._end} expected)`);
      this.poison = err;
      poisonedPaths.set(this.path, err);
      throw err;
    }
    this.openFd = fd;
    openDescriptors.add(this);
    return fd;
  }

  /** Gives the descriptor back until the next use; the writer lock stays held. */
  park(): void {
    if (this.openFd === undefined) return;
    openDescriptors.delete(this);
    const fd = this.openFd;
    this.openFd = undefined;
    fs.closeSync(fd);
  }

  get nextSeq(): number {
    return this._nextSeq;
  }
  /** Byte offset just past the last accepted frame. */
  get end(): number {
    return this._end;
  }
  get lastFrameOffset(): number | null {
    return this._lastFrameOffset;
  }
  get poisoned(): boolean {
    return this.poison !== undefined;
  }

  append(record: R): R {
    return this.appendFrame(record).record;
  }

  appendFrame(record: R): AppendResult & { record: R } {
    if (this.closed) throw new StoreError("journal_closed", `${this.path} is closed`);
    if (this.poison !== undefined) throw new JournalPoisonedError(this.path, this.poison);
    const { frame, decoded } = prepare(record, this._nextSeq, this.opts);
    const start = this._end;
    try {
      let written = 0;
      while (written < frame.length) {
        const n = this.io.write(this.fd, frame, written, frame.length - written, start + written);
        if (!(n > 0)) throw new StoreError("journal_corrupt", `${this.path}: write made no progress at ${start + written}`);
        written += n;
      }
    } catch (err) {
      this.rollback(start);
      throw err;
    }
    this._end = start + frame.length;
    this._nextSeq++;
    this._lastFrameOffset = start;
    this.index.noteFrame(decoded.seq, start);
    this.opts.onRecord?.(decoded, start);
    this.opts.onAppend?.(this);
    return { offset: start, bytes: frame.length, record: decoded };
  }

  /**
   * Replaces the whole journal with `records` (renumbered from seq 0), atomically: they are written
   * and validated into a private temp file beside it, which is synced and renamed over the journal,
   * and the folder is synced. Until the rename the journal is untouched; after it, the journal is
   * exactly the new records. A crash at any point leaves one or the other, complete (a leftover temp
   * file is truncated by the next rewrite). The writer lock is held throughout. Returns the new end.
   */
  rewrite(records: readonly R[]): number {
    if (this.closed) throw new StoreError("journal_closed", `${this.path} is closed`);
    if (this.poison !== undefined) throw new JournalPoisonedError(this.path, this.poison);
    const tmp = `${this.path}.rewrite.tmp`;
    const offsets: number[] = [];
    let end = 0;
    const out = withRoom(() => fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o600));
    try {
      records.forEach((r, seq) => {
        const { frame } = prepare({ ...r, seq }, seq, { validate: this.opts.validate });
        for (let written = 0; written < frame.length; ) {
          const n = this.io.write(out, frame, written, frame.length - written, end + written);
          if (!(n > 0)) throw new StoreError("journal_corrupt", `${tmp}: write made no progress at ${end + written}`);
          written += n;
        }
        offsets.push(end);
        end += frame.length;
      });
      fs.fdatasyncSync(out);
    } finally {
      fs.closeSync(out);
    }
    fs.renameSync(tmp, this.path);
    // From here the file on disk is the new journal: failing to take it up poisons this writer
    // (the next open reads the new file), never the bytes.
    try {
      syncFolder(path.dirname(this.path));
      this.park();
      const fd = withRoom(() => fs.openSync(this.path, fs.constants.O_RDWR | fs.constants.O_NOFOLLOW));
      const st = fs.fstatSync(fd);
      this.identity = { dev: st.dev, ino: st.ino };
      this.openFd = fd;
      makeRoomForDescriptor();
      openDescriptors.add(this);
    } catch (err) {
      this.poison = err;
      poisonedPaths.set(this.path, err);
      throw err;
    }
    this._end = end;
    this._nextSeq = records.length;
    this._lastFrameOffset = offsets.length > 0 ? (offsets[offsets.length - 1] as number) : null;
    this.index = new FrameIndex(this.io, () => this.fd, this.path);
    offsets.forEach((at, seq) => this.index.noteFrame(seq, at));
    return end;
  }

  /** Restores the exact pre-append end; if that fails the journal is poisoned. */
  private rollback(start: number): void {
    try {
      this.io.truncate(this.fd, start);
      const size = this.io.size(this.fd);
      if (size !== start) throw new StoreError("journal_corrupt", `${this.path}: size ${size} after rollback to ${start}`);
    } catch (truncErr) {
      this.poison = truncErr;
      poisonedPaths.set(this.path, truncErr);
    }
  }

  /** Strict re-read of the accepted prefix through this writer's descriptor. */
  readAll(): R[] {
    const out: R[] = [];
    scanFrames<R>(this.io, this.fd, this.path, { validate: this.opts.validate, onRecord: (r) => out.push(r) }, undefined, { until: this._end });
    return out;
  }

  /** The offset of frame `seq` (0 ≤ seq ≤ nextSeq; nextSeq is the end). */
  private offsetOf(seq: number): number {
    if (seq >= this._nextSeq) return this._end;
    return this.fromIndex((index) => index.offsetOf(seq, this._nextSeq, this._end));
  }

  /** The offset of every FRAME_ANCHOR_EVERY-th frame (stored with a checkpoint at the end). */
  anchors(): number[] {
    return this.fromIndex((index) => index.complete(this._nextSeq, this._end));
  }

  private fromIndex<T>(f: (index: FrameIndex) => T): T {
    try {
      return f(this.index);
    } catch (err) {
      // Anchors a checkpoint gave that do not fit the file: find every one from the start again.
      if (!(err instanceof StoreError) || !this.index.seeded) throw err;
      this.index = new FrameIndex(this.io, () => this.fd, this.path);
      return f(this.index);
    }
  }

  windowStart(end: number, maxRecords: number, maxBytes: number): number {
    const last = Math.min(end, this._nextSeq);
    let first = last;
    while (first > 0 && last - first < maxRecords) {
      if (first < last && this.offsetOf(last) - this.offsetOf(first - 1) > maxBytes) break;
      first--;
    }
    return first;
  }

  readRange(from: number, to: number, maxBytes = Infinity): R[] {
    const first = Math.max(0, from);
    const last = Math.min(to, this._nextSeq);
    if (first >= last) return [];
    // A frame that does not decode where the index put it is the index's fault when a checkpoint gave it.
    return this.fromIndex(() => this.readFrames(first, last, maxBytes));
  }

  private readFrames(first: number, last: number, maxBytes: number): R[] {
    const out: R[] = [];
    const start = this.offsetOf(first);
    const until = this.offsetOf(last);
    // At least one record; then as many as fit in `maxBytes` of frames.
    const scanned = scanFrames<R>(this.io, this.fd, this.path, { validate: this.opts.validate, onRecord: (r) => out.push(r) }, { offset: start, seq: first }, { until, maxBytes: Math.max(maxBytes, 1) });
    if (out.length === 0 && scanned.exhausted) {
      // The first frame alone is larger than maxBytes: read it on its own.
      scanFrames<R>(this.io, this.fd, this.path, { validate: this.opts.validate, onRecord: (r) => out.push(r) }, { offset: start, seq: first }, { until, maxRecords: 1 });
    }
    return out;
  }

  close(): void {
    if (this.closed) return;
    this.park();
    this.closed = true;
    this.lock.release();
  }
}

/** fsync of a folder, so a rename in it is durable. */
function syncFolder(dir: string): void {
  const fd = withRoom(() => fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY));
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Runs `open`; when the process is out of descriptors, gives back the least recently used journal
 * descriptor and tries again, so journals keep working while any of them holds one to spare.
 */
function withRoom<T>(open: () => T): T {
  for (;;) {
    try {
      return open();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const oldest = openDescriptors.values().next().value;
      if ((code !== "EMFILE" && code !== "ENFILE") || oldest === undefined) throw err;
      oldest.park();
    }
  }
}

/** Gives back the least recently used journal descriptor while the pool is full. */
function makeRoomForDescriptor(): void {
  while (openDescriptors.size >= MAX_OPEN_JOURNAL_DESCRIPTORS) {
    const oldest = openDescriptors.values().next().value;
    if (oldest === undefined) return;
    oldest.park();
  }
}

export interface ReplayResult<R> {
  records: R[];
  end: number;
  nextSeq: number;
  /** An incomplete frame at the end: reported, never repaired. */
  tornTail: TornTail | null;
}

export interface ReplayOptions<R extends SeqRecord> extends RecordPipeline<R> {
  io?: JournalIo;
  /** When false, records are only passed to onRecord and not collected. Default true. */
  collect?: boolean;
}

/** Strict read-only replay: opens O_RDONLY, never writes, never repairs, never touches the lock. */
export function replayJournal<R extends SeqRecord>(file: string, opts: ReplayOptions<R>): ReplayResult<R> {
  const io = opts.io ?? nodeIo;
  const fd = fs.openSync(file, fs.constants.O_RDONLY);
  try {
    const records: R[] = [];
    const collect = opts.collect ?? true;
    const scan = scanFrames<R>(io, fd, path.resolve(file), {
      validate: opts.validate,
      semantic: opts.semantic,
      onRecord: (r, off) => {
        if (collect) records.push(r);
        opts.onRecord?.(r, off);
      },
    });
    return { records, end: scan.end, nextSeq: scan.nextSeq, tornTail: scan.tornTail };
  } finally {
    fs.closeSync(fd);
  }
}

/** Memory-only journal: identical validation, framing cap and seq rules; no file, no lock. */
export class MemoryJournal<R extends SeqRecord> implements Journal<R> {
  readonly path = null;
  private closed = false;
  constructor(
    private readonly pipeline: RecordPipeline<R>,
    private readonly records: R[] = [],
  ) {}
  get nextSeq(): number {
    return this.records.length;
  }
  append(record: R): R {
    if (this.closed) throw new StoreError("journal_closed", "memory journal is closed");
    const { decoded } = prepare(record, this.records.length, this.pipeline);
    this.records.push(decoded);
    this.pipeline.onRecord?.(decoded, -1);
    return decoded;
  }
  /** Replaces every record with `records`, renumbered from seq 0 (validated first, all or nothing). */
  rewrite(records: readonly R[]): number {
    if (this.closed) throw new StoreError("journal_closed", "memory journal is closed");
    const decoded = records.map((r, seq) => prepare({ ...r, seq }, seq, { validate: this.pipeline.validate }).decoded);
    this.records.splice(0, this.records.length, ...decoded);
    return decoded.length;
  }
  readAll(): R[] {
    return [...this.records];
  }
  readRange(from: number, to: number): R[] {
    return this.records.slice(Math.max(0, from), Math.min(to, this.records.length));
  }
  windowStart(end: number, maxRecords: number): number {
    return Math.max(0, Math.min(end, this.records.length) - maxRecords);
  }
  close(): void {
    this.closed = true;
  }
}
