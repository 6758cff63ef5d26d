// Global prompt history (`state/prompt-history.cbor`), shared by every UI of the user.
//
// Same framing and validation pipeline as the journals (PromptHistoryRecord frames, `seq` = position),
// but many processes append: each append takes the cross-process lock only for the append itself
// (waiting briefly for another UI), repairs a crash tail left by a writer that died mid-append, and
// writes one frame at the exact end.
//
// Readers keep a process-local witness of what they have already folded: the file's device and
// inode, the end of the last complete frame (the boundary), the next seq, and a sha256 of the bytes
// just before the boundary. If the identity matches, the file is not shorter than the boundary and
// the witnessed bytes are unchanged, only the new tail is scanned. Replacement (a new inode),
// truncation or a changed tail fall back to a full read. The witness is not tamper evidence: a
// same-user process that keeps the inode and the witnessed tail while rewriting older bytes is
// outside the contract.
import * as fs from "node:fs";
import * as path from "node:path";
import { decodePayload, encodeFrame } from "./codec.js";
import { JournalLockedError, JournalPoisonedError, RecordInvalidError, StoreError } from "./errors.js";
import { nodeIo, readFully, type JournalIo, sha256Hex } from "./io.js";
import { scanFrames, type ScanResult } from "./journal.js";
import {
  FRAME_HEADER_BYTES,
  MAX_RECORD_BYTES,
  PROMPT_HISTORY_LOCK_POLL_MAX_MS,
  PROMPT_HISTORY_LOCK_TIMEOUT_MS,
  PROMPT_HISTORY_MAX_ENTRIES,
  PROMPT_HISTORY_WITNESS_BYTES,
} from "./limits.js";
import { acquireJournalLock, type LockHandle } from "./lock.js";
import { nowMicros } from "./stores.js";
import { validatePromptHistoryRecord, type PromptHistoryRecord } from "./validate.js";

export const promptHistoryPath = (stateDir: string) => path.join(stateDir, "prompt-history.cbor");

export interface PromptHistoryOptions {
  io?: JournalIo;
  /** Newest entries kept in memory; default PROMPT_HISTORY_MAX_ENTRIES. */
  maxEntries?: number;
  /** Total wait for another process's lock before an append fails; default PROMPT_HISTORY_LOCK_TIMEOUT_MS. */
  lockTimeoutMs?: number;
}

export interface PromptInput {
  text: string;
  session_id?: string;
  cwd?: string;
  /** Microseconds since the epoch; stamped now when omitted. */
  recorded_at?: number;
}

export type FullReadReason = "first" | "replaced" | "truncated" | "tail-changed";

export interface RefreshReport {
  /** `unchanged`: nothing new; `incremental`: only bytes after the boundary were scanned. */
  mode: "unchanged" | "incremental" | "full";
  reason?: FullReadReason;
  /** Offset the scan started at (the witnessed boundary, or 0 for a full read). */
  scannedFrom: number;
  /** Complete frames folded by this refresh. */
  newRecords: number;
  /** The boundary after this refresh. */
  end: number;
}

interface Witness {
  dev: bigint;
  ino: bigint;
  end: number;
  nextSeq: number;
  tail: string;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** Synchronous pause: the lock is held only for one append, so waits are a few milliseconds. */
function pause(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

function tailHash(io: JournalIo, fd: number, boundary: number): string {
  const len = Math.min(PROMPT_HISTORY_WITNESS_BYTES, boundary);
  const buf = Buffer.alloc(len);
  const got = readFully(io, fd, buf, boundary - len);
  return sha256Hex(buf.subarray(0, got));
}

export class PromptHistory {
  readonly path: string;
  private readonly io: JournalIo;
  private readonly maxEntries: number;
  private readonly lockTimeoutMs: number;
  private witness: Witness | null = null;
  private items: PromptHistoryRecord[] = [];
  private poison: unknown = undefined;
  private last: RefreshReport | null = null;

  constructor(file: string, opts: PromptHistoryOptions = {}) {
    this.path = path.resolve(file);
    this.io = opts.io ?? nodeIo;
    this.maxEntries = opts.maxEntries ?? PROMPT_HISTORY_MAX_ENTRIES;
    this.lockTimeoutMs = opts.lockTimeoutMs ?? PROMPT_HISTORY_LOCK_TIMEOUT_MS;
  }

  /** The newest entries (at most the in-memory bound), oldest first. Call refresh() to pick up others' appends. */
  entries(): readonly PromptHistoryRecord[] {
    return this.items;
  }

  /** How the last refresh (or append) read the file. */
  get lastRefresh(): RefreshReport | null {
    return this.last;
  }

  /** The next seq this process expects (the number of complete frames it has witnessed). */
  get nextSeq(): number {
    return this.witness?.nextSeq ?? 0;
  }

  /**
   * Folds whatever other processes appended. Read-only and lock-free: an incomplete frame at the end
   * (an append in progress, or a crash tail) is simply not read yet. A corrupt complete frame fails
   * closed with JournalCorruptError.
   */
  refresh(): RefreshReport {
    let fd: number;
    try {
      fd = fs.openSync(this.path, fs.constants.O_RDONLY);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      // No file: an empty history. A witness for a file that disappeared is a replacement.
      const reason: FullReadReason = this.witness === null ? "first" : "replaced";
      this.witness = null;
      this.items = [];
      return (this.last = { mode: "full", reason, scannedFrom: 0, newRecords: 0, end: 0 });
    }
    try {
      return (this.last = this.fold(fd));
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * Appends one prompt under the cross-process lock (held only for this append; waits at most the
   * lock timeout for another UI). Returns the accepted record with its `seq`.
   */
  append(input: PromptInput): PromptHistoryRecord {
    if (this.poison !== undefined) throw new JournalPoisonedError(this.path, this.poison);
    fs.mkdirSync(path.dirname(this.path), { recursive: true, mode: 0o700 });
    const lock = this.lock();
    try {
      const fd = fs.openSync(this.path, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
      try {
        const report = this.fold(fd, true);
        const w = this.witness!;
        const record: PromptHistoryRecord = { seq: w.nextSeq, text: input.text, recorded_at: input.recorded_at ?? nowMicros() };
        if (input.session_id !== undefined) record.session_id = input.session_id;
        if (input.cwd !== undefined) record.cwd = input.cwd;
        const frame = encodeFrame(record, MAX_RECORD_BYTES);
        const decoded = decodePayload(frame.subarray(FRAME_HEADER_BYTES)) as PromptHistoryRecord;
        const v = validatePromptHistoryRecord(decoded);
        if (!v.ok) throw new RecordInvalidError(v.reason);
        const start = w.end;
        try {
          let written = 0;
          while (written < frame.length) {
            const n = this.io.write(fd, frame, written, frame.length - written, start + written);
            if (!(n > 0)) throw new StoreError("journal_corrupt", `${this.path}: write made no progress at ${start + written}`);
            written += n;
          }
        } catch (err) {
          this.rollback(fd, start);
          throw err;
        }
        this.push(decoded);
        w.end = start + frame.length;
        w.nextSeq++;
        w.tail = tailHash(this.io, fd, w.end);
        this.last = { mode: report.mode, reason: report.reason, scannedFrom: report.scannedFrom, newRecords: report.newRecords, end: w.end };
        return decoded;
      } finally {
        fs.closeSync(fd);
      }
    } finally {
      lock.release();
    }
  }

  private lock(): LockHandle {
    const deadline = performance.now() + this.lockTimeoutMs;
    let wait = 1;
    for (;;) {
      try {
        return acquireJournalLock(this.path);
      } catch (err) {
        if (!(err instanceof JournalLockedError) || performance.now() + wait > deadline) throw err;
        pause(wait);
        wait = Math.min(wait * 2, PROMPT_HISTORY_LOCK_POLL_MAX_MS);
      }
    }
  }

  private rollback(fd: number, start: number): void {
    try {
      this.io.truncate(fd, start);
      const size = this.io.size(fd);
      if (size !== start) throw new StoreError("journal_corrupt", `${this.path}: size ${size} after rollback to ${start}`);
    } catch (truncErr) {
      // The shared file may now end in a partial frame we cannot remove: stop writing to it from here.
      this.poison = truncErr;
    }
  }

  private push(record: PromptHistoryRecord): void {
    this.items.push(record);
    if (this.items.length > this.maxEntries) this.items.splice(0, this.items.length - this.maxEntries);
  }

  /**
   * Brings the in-memory view up to the file's last complete frame. As the locked writer
   * (`repair`), an incomplete frame at the end is a crash tail of a dead writer and is truncated.
   */
  private fold(fd: number, repair = false): RefreshReport {
    const st = fs.fstatSync(fd, { bigint: true });
    const size = Number(st.size);
    const w = this.witness;
    let reason: FullReadReason | undefined;
    if (w === null) reason = "first";
    else if (w.dev !== st.dev || w.ino !== st.ino) reason = "replaced";
    else if (size < w.end) reason = "truncated";
    else if (tailHash(this.io, fd, w.end) !== w.tail) reason = "tail-changed";

    const incremental = reason === undefined && w !== null;
    const start = incremental ? { offset: w.end, seq: w.nextSeq } : { offset: 0, seq: 0 };
    const fresh: PromptHistoryRecord[] = [];
    const scan: ScanResult = scanFrames<PromptHistoryRecord>(
      this.io,
      fd,
      this.path,
      {
        validate: validatePromptHistoryRecord,
        onRecord: (r) => {
          // Bounded while scanning: a long history never holds more than twice the bound.
          if (fresh.push(r) >= 2 * this.maxEntries) fresh.splice(0, fresh.length - this.maxEntries);
        },
      },
      start,
    );
    if (scan.tornTail && repair) this.io.truncate(fd, scan.tornTail.offset);

    if (!incremental) this.items = [];
    for (const r of fresh.length > this.maxEntries ? fresh.slice(-this.maxEntries) : fresh) this.push(r);
    const tail = scan.records === 0 && incremental ? w.tail : tailHash(this.io, fd, scan.end);
    this.witness = { dev: st.dev, ino: st.ino, end: scan.end, nextSeq: scan.nextSeq, tail };
    if (incremental) return { mode: scan.records === 0 ? "unchanged" : "incremental", scannedFrom: start.offset, newRecords: scan.records, end: scan.end };
    return { mode: "full", reason, scannedFrom: 0, newRecords: scan.records, end: scan.end };
  }
}

/** Opens the global prompt history of a state directory (the file is created on the first append). */
export function openPromptHistory(stateDir: string, opts: PromptHistoryOptions = {}): PromptHistory {
  const h = new PromptHistory(promptHistoryPath(stateDir), opts);
  h.refresh();
  return h;
}
