// Debug `events.jsonl` mirror: a best-effort, ordered subsequence of a session's events for humans.
// It is never evidence — absence never proves an event was absent, and a crash can lose queued rows
// or tear the last line, which restart neither repairs nor salvages.
//
//   producer: redact → serialise one complete line (bounded) → admit(path, line), never blocking
//   FIFO:     one per process, lazy; at most 1,024 lines and 64 MiB of line+path bytes, counting the
//             line being written; anything beyond is dropped at admission
//   writer:   detached async loop; per line it takes `<events.jsonl>.lock`, opens the file (never
//             through a symlink), appends at the exact end, and on a failed or short write truncates
//             back to that end. A rollback that fails (or leaves another size) poisons the writer for
//             the process. It never fsyncs, and nothing — no session or process shutdown — waits for it.
//   warnings: drops (overflow, busy lock, I/O failure) are coalesced into one warning per episode,
//             emitted when the writer next goes idle; poisoning warns once and then stays silent.
import * as fs from "node:fs";
import * as path from "node:path";
import { JournalLockedError } from "./errors.js";
import {
  DEBUG_FIFO_MAX_BYTES,
  DEBUG_FIFO_MAX_LINES,
  DEBUG_LOG_MAX_DEPTH,
  DEBUG_LOG_MAX_LINE_BYTES,
  DEBUG_LOG_MAX_STRING_CHARS,
  DEBUG_LOG_REDACT_BUDGET,
  DEBUG_LOG_RETENTION_MS,
} from "./limits.js";
import { acquireJournalLock, type LockHandle } from "./lock.js";
import { isValidId } from "./validate.js";
import { StoreError } from "./errors.js";

export const DEBUG_LOG_FILE = "events.jsonl";

export function debugLogPath(stateDir: string, sessionId: string): string {
  if (!isValidId(sessionId)) throw new StoreError("bad_id", `not a valid tau id: ${JSON.stringify(sessionId)}`);
  return path.join(stateDir, "sessions", sessionId, DEBUG_LOG_FILE);
}

// ---------------------------------------------------------------------------------------------
// Producers: redaction and serialisation

/** Turns an event into a JSON-safe, redacted value. Runs in the producer, before admission. */
export type Redactor = (value: unknown) => unknown;

/** Key names whose (non-numeric, non-boolean) values the default redaction removes. */
export const SECRET_KEY_PATTERN =
  /(secret|token|api[_-]?key|password|passwd|passphrase|authorization|cookie|credential|private[_-]?key|access[_-]?key|bearer)/i;
export const REDACTED = "[redacted]";

function truncateString(s: string): string {
  if (s.length <= DEBUG_LOG_MAX_STRING_CHARS) return s;
  return `${s.slice(0, DEBUG_LOG_MAX_STRING_CHARS)}…[truncated ${s.length - DEBUG_LOG_MAX_STRING_CHARS} chars]`;
}

/**
 * Default redaction: values of secret-like keys become "[redacted]" (numbers, booleans and null are
 * kept, so `input_tokens: 42` survives), strings longer than DEBUG_LOG_MAX_STRING_CHARS are cut,
 * nesting deeper than DEBUG_LOG_MAX_DEPTH and cycles become markers, binary data becomes a size, and
 * past DEBUG_LOG_REDACT_BUDGET the rest of each container is elided.
 */
export function redact(value: unknown): unknown {
  const seen = new Set<object>();
  let budget = DEBUG_LOG_REDACT_BUDGET;
  const walk = (v: unknown, depth: number): unknown => {
    budget -= 2;
    if (typeof v === "string") {
      budget -= Math.min(v.length, DEBUG_LOG_MAX_STRING_CHARS);
      return truncateString(v);
    }
    if (typeof v === "number") return Number.isFinite(v) ? v : String(v);
    if (typeof v === "boolean" || v === null) return v;
    if (typeof v === "bigint") return v.toString();
    if (v === undefined || typeof v === "function" || typeof v === "symbol") return undefined;
    if (typeof v !== "object") return String(v);
    if (depth >= DEBUG_LOG_MAX_DEPTH) return "[too deep]";
    if (seen.has(v)) return "[circular]";
    if (v instanceof Uint8Array) return `[${v.byteLength} bytes]`;
    if (v instanceof Error) return { name: v.name, message: truncateString(v.message) };
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
    seen.add(v);
    try {
      if (Array.isArray(v)) {
        const out: unknown[] = [];
        for (let i = 0; i < v.length; i++) {
          if (budget <= 0) return [...out, `[${v.length - i} more items]`];
          out.push(walk(v[i], depth + 1) ?? null);
        }
        return out;
      }
      const out: Record<string, unknown> = {};
      let left = 0;
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue;
        if (budget <= 0) {
          left++;
          continue;
        }
        const x = (v as Record<string, unknown>)[k];
        budget -= k.length + 3;
        if (SECRET_KEY_PATTERN.test(k) && typeof x !== "number" && typeof x !== "boolean" && x !== null && x !== undefined) out[k] = REDACTED;
        else {
          const w = walk(x, depth + 1);
          if (w !== undefined) out[k] = w;
        }
      }
      if (left > 0) out["…"] = `[${left} more keys]`;
      return out;
    } finally {
      seen.delete(v);
    }
  };
  return walk(value, 0);
}

let activeRedactor: Redactor = redact;

/**
 * The redaction hook point: a higher layer (for example one that knows which command arguments an
 * extension marked sensitive) installs a redactor that usually wraps `redact`. `null` restores the default.
 */
export function setDebugRedactor(redactor: Redactor | null): void {
  activeRedactor = redactor ?? redact;
}

/**
 * Serialises one event as a complete line (ending in "\n") of at most DEBUG_LOG_MAX_LINE_BYTES.
 * A line that would be longer is replaced by a summary naming its size (and the event name, if any).
 */
export function formatDebugLine(event: unknown, redactor: Redactor = activeRedactor): string {
  let body: string;
  try {
    body = JSON.stringify(redactor(event)) ?? "null";
  } catch (err) {
    body = JSON.stringify({ _unserialisable: truncateString((err as Error).message ?? String(err)).slice(0, 256) });
  }
  const line = `${body}\n`;
  const bytes = Buffer.byteLength(line);
  if (bytes <= DEBUG_LOG_MAX_LINE_BYTES) return line;
  const summary: Record<string, unknown> = { _truncated_bytes: bytes };
  if (typeof event === "object" && event !== null) {
    for (const k of ["name", "event", "type"]) {
      const v = (event as Record<string, unknown>)[k];
      if (typeof v === "string" && v.length <= 128) summary[k] = v;
    }
  }
  return `${JSON.stringify(summary)}\n`;
}

// ---------------------------------------------------------------------------------------------
// The FIFO and its detached writer

/** The writer's OS boundary (async, on libuv's pool); fault tests inject failures here. */
export interface DebugLogIo {
  open(file: string): Promise<fs.promises.FileHandle>;
  size(handle: fs.promises.FileHandle): Promise<number>;
  write(handle: fs.promises.FileHandle, buf: Buffer, off: number, len: number, pos: number): Promise<number>;
  truncate(handle: fs.promises.FileHandle, len: number): Promise<void>;
}

export const nodeDebugLogIo: DebugLogIo = {
  // No O_APPEND: the writer appends at the end it measured under the lock, so rollback knows it.
  open: (file) => fs.promises.open(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o600),
  size: async (h) => (await h.stat()).size,
  write: async (h, buf, off, len, pos) => (await h.write(buf, off, len, pos)).bytesWritten,
  truncate: (h, len) => h.truncate(len),
};

export interface DebugLogWriterOptions {
  io?: DebugLogIo;
  /** Receives each coalesced warning; default process.emitWarning. */
  warn?: (message: string) => void;
}

export interface DebugLogStats {
  /** Lines retained right now, the one being written included. Never above DEBUG_FIFO_MAX_LINES. */
  lines: number;
  /** Line-plus-path bytes retained right now, in-flight included. Never above DEBUG_FIFO_MAX_BYTES. */
  bytes: number;
  /** High-water marks of `lines` and `bytes` over the writer's life. */
  peakLines: number;
  peakBytes: number;
  inFlight: boolean;
  admitted: number;
  written: number;
  dropped: number;
  warnings: number;
  poisoned: boolean;
}

type DropReason = "fifo full" | "line too long or incomplete" | "lock busy" | "I/O failure" | "writer poisoned";

interface Item {
  path: string;
  line: string;
  cost: number;
}

export class DebugLogWriter {
  private readonly io: DebugLogIo;
  private readonly warnSink: (message: string) => void;
  /** Slots already written are emptied (undefined) until the array is compacted. */
  private readonly queue: Array<Item | undefined> = [];
  private head = 0;
  private lines = 0;
  private bytes = 0;
  private peakLines = 0;
  private peakBytes = 0;
  private running = false;
  private poisoned = false;
  private readonly counts = { admitted: 0, written: 0, dropped: 0, warnings: 0 };
  private episode: { dropped: number; reasons: Set<DropReason> } | null = null;
  private episodeCheck = false;
  private idleWaiters: Array<() => void> = [];

  constructor(opts: DebugLogWriterOptions = {}) {
    this.io = opts.io ?? nodeDebugLogIo;
    this.warnSink = opts.warn ?? ((m) => process.emitWarning(m, { code: "TAU_DEBUG_LOG" }));
  }

  /**
   * Offers one complete line (ending in its only "\n") for `file`. Never blocks and never throws:
   * returns false when the line was dropped (bounds, malformed line, or a poisoned writer).
   */
  admit(file: string, line: string): boolean {
    if (this.poisoned) return this.drop(1, "writer poisoned"), false;
    const lineBytes = Buffer.byteLength(line);
    if (lineBytes > DEBUG_LOG_MAX_LINE_BYTES || !line.endsWith("\n") || line.indexOf("\n") !== line.length - 1)
      return this.drop(1, "line too long or incomplete"), false;
    const cost = lineBytes + Buffer.byteLength(file);
    if (this.lines + 1 > DEBUG_FIFO_MAX_LINES || this.bytes + cost > DEBUG_FIFO_MAX_BYTES) return this.drop(1, "fifo full"), false;
    this.queue.push({ path: file, line, cost });
    this.lines++;
    this.bytes += cost;
    if (this.lines > this.peakLines) this.peakLines = this.lines;
    if (this.bytes > this.peakBytes) this.peakBytes = this.bytes;
    this.counts.admitted++;
    if (!this.running) {
      this.running = true;
      // Detached: the loop runs on later turns; admit returns now.
      setImmediate(() => void this.drain());
    }
    return true;
  }

  stats(): DebugLogStats {
    return {
      lines: this.lines,
      bytes: this.bytes,
      peakLines: this.peakLines,
      peakBytes: this.peakBytes,
      inFlight: this.running && this.lines > 0,
      ...this.counts,
      poisoned: this.poisoned,
    };
  }

  /** Resolves when the FIFO is empty and the writer idle. Tests only: no shutdown path waits for this. */
  idle(): Promise<void> {
    if (!this.running && this.lines === 0 && !this.episodeCheck) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async drain(): Promise<void> {
    try {
      while (this.head < this.queue.length) {
        const item = this.queue[this.head]!; // stays counted while in flight
        let outcome: "ok" | DropReason;
        try {
          outcome = this.poisoned ? "writer poisoned" : await this.writeOne(item);
        } catch {
          outcome = "I/O failure"; // never leave a line counted against the bounds
        }
        this.queue[this.head] = undefined;
        this.head++;
        if (this.head > 256 && this.head * 2 > this.queue.length) {
          this.queue.splice(0, this.head);
          this.head = 0;
        }
        this.lines--;
        this.bytes -= item.cost;
        if (outcome === "ok") this.counts.written++;
        else this.drop(1, outcome);
      }
      this.queue.length = 0;
      this.head = 0;
    } finally {
      this.running = false;
    }
    this.endEpisode();
  }

  private async writeOne(item: Item): Promise<"ok" | DropReason> {
    let lock: LockHandle;
    try {
      lock = acquireJournalLock(item.path);
    } catch (err) {
      return err instanceof JournalLockedError ? "lock busy" : "I/O failure";
    }
    let handle: fs.promises.FileHandle | null = null;
    try {
      handle = await this.io.open(item.path);
      const end = await this.io.size(handle);
      const buf = Buffer.from(item.line);
      try {
        let written = 0;
        while (written < buf.length) {
          const n = await this.io.write(handle, buf, written, buf.length - written, end + written);
          if (!(n > 0)) throw new Error(`short write at ${end + written}`);
          written += n;
        }
      } catch {
        // Roll back to the exact end measured under the lock; if that is uncertain, stop for good.
        try {
          await this.io.truncate(handle, end);
          const size = await this.io.size(handle);
          if (size !== end) throw new Error(`size ${size} after rollback to ${end}`);
        } catch (rollbackErr) {
          this.poison(item.path, rollbackErr);
          return "writer poisoned";
        }
        return "I/O failure";
      }
      // "Flush": the positional write above has completed in the kernel; the mirror never fsyncs.
      return "ok";
    } catch {
      return "I/O failure";
    } finally {
      if (handle) await handle.close().catch(() => {});
      try {
        lock.release();
      } catch {
        /* a lock file we cannot remove is taken over once this process is gone */
      }
    }
  }

  private poison(file: string, cause: unknown): void {
    this.poisoned = true;
    const earlier = this.episode?.dropped ?? 0;
    this.episode = null;
    this.warn(
      `debug log: writer disabled for this process after a failed rollback of ${file} (${(cause as Error)?.message ?? String(cause)})` +
        (earlier > 0 ? `; dropped ${earlier} line${earlier === 1 ? "" : "s"} before that` : "") +
        "; further lines are dropped",
    );
  }

  private drop(n: number, reason: DropReason): void {
    this.counts.dropped += n;
    if (reason === "writer poisoned") return; // warned once when it was poisoned
    this.episode ??= { dropped: 0, reasons: new Set() };
    this.episode.dropped += n;
    this.episode.reasons.add(reason);
    // An episode ends when the writer is next idle; if it is idle already, check on a later turn.
    if (!this.running && !this.episodeCheck) {
      this.episodeCheck = true;
      setImmediate(() => {
        this.episodeCheck = false;
        if (!this.running) this.endEpisode();
      });
    }
  }

  private endEpisode(): void {
    const ep = this.episode;
    this.episode = null;
    if (ep && !this.poisoned) {
      this.warn(`debug log: dropped ${ep.dropped} line${ep.dropped === 1 ? "" : "s"} (${[...ep.reasons].join(", ")})`);
    }
    if (!this.running && this.lines === 0 && !this.episodeCheck) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private warn(message: string): void {
    this.counts.warnings++;
    try {
      this.warnSink(message);
    } catch {
      /* a warning sink never breaks the writer */
    }
  }
}

let processWriter: DebugLogWriter | null = null;

/** The one process-wide FIFO and writer, created on first use. */
export function debugLog(): DebugLogWriter {
  processWriter ??= new DebugLogWriter();
  return processWriter;
}

/** Producer convenience: redact, serialise and admit one event for a session's mirror. */
export function mirrorDebugEvent(stateDir: string, sessionId: string, event: unknown): boolean {
  let file: string;
  try {
    file = debugLogPath(stateDir, sessionId);
  } catch {
    return false;
  }
  return debugLog().admit(file, formatDebugLine(event));
}

// ---------------------------------------------------------------------------------------------
// Startup cleanup

export interface DebugCleanupOptions {
  /** Files whose mtime is more than this many ms before `now` are removed. Default 14 days. */
  windowMs?: number;
  /** Clock (ms since the epoch); default Date.now(). */
  now?: number;
}

export interface DebugCleanupReport {
  removed: string[];
  /** Old files left in place because a live process holds their lock. */
  locked: string[];
  errors: Array<{ path: string; error: string }>;
}

/**
 * Removes `state/sessions/<id>/events.jsonl` regular files older than the window whose lock can be
 * taken. Looks at nothing else: never follows a symlink (a symlinked session directory or log is
 * skipped), never touches journals, checkpoints, locks of other files, or unrelated files.
 */
export function cleanupDebugLogs(stateDir: string, opts: DebugCleanupOptions = {}): DebugCleanupReport {
  const windowMs = opts.windowMs ?? DEBUG_LOG_RETENTION_MS;
  const now = opts.now ?? Date.now();
  const report: DebugCleanupReport = { removed: [], locked: [], errors: [] };
  const sessions = path.join(stateDir, "sessions");
  let dirents: fs.Dirent[];
  try {
    dirents = fs.readdirSync(sessions, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") report.errors.push({ path: sessions, error: String(err) });
    return report;
  }
  for (const d of dirents) {
    // Dirent types come from lstat semantics: a symlink to a directory is not a directory here.
    if (!d.isDirectory()) continue;
    const file = path.join(sessions, d.name, DEBUG_LOG_FILE);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(file);
    } catch {
      continue;
    }
    if (!st.isFile() || !(now - st.mtimeMs > windowMs)) continue;
    let lock: LockHandle;
    try {
      lock = acquireJournalLock(file);
    } catch (err) {
      if (err instanceof JournalLockedError) report.locked.push(file);
      else report.errors.push({ path: file, error: String(err) });
      continue;
    }
    try {
      // Re-check under the lock: still the same old regular file.
      const again = fs.lstatSync(file);
      if (again.isFile() && again.ino === st.ino && again.dev === st.dev && now - again.mtimeMs > windowMs) {
        fs.unlinkSync(file);
        report.removed.push(file);
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") report.errors.push({ path: file, error: String(err) });
    } finally {
      lock.release();
    }
  }
  return report;
}
