// Background writeback: makes accepted journal appends durable without putting fsync on the publish
// path. An append only bumps a per-file generation and schedules a wake (setImmediate); the worker
// later fsyncs every dirty file once per wake (coalescing any number of appends), plus the
// directories that hold a journal's entry, so a freshly created journal survives a crash by name.
//
// Generations: each target has `gen` (bumped on every dirty mark) and `synced` (the generation the
// last successful sync started at). The worker captures `gen` before it syncs and records exactly
// that value afterwards, so a mark that arrives while the sync runs leaves `gen > synced` and the
// target is synced again: no wake is lost. A failed sync changes nothing about accepted records —
// the target simply stays dirty and is retried after a bounded, doubling back-off.
import * as fs from "node:fs";
import * as path from "node:path";
import { WRITEBACK_RETRY_BASE_MS, WRITEBACK_RETRY_MAX_MS } from "./limits.js";

export interface SyncTarget {
  kind: "file" | "dir";
  path: string;
}

/** Makes one file's data (or one directory's entries) durable. Injected by fault tests. */
export type SyncFn = (target: SyncTarget) => Promise<void>;

/**
 * Production sync: opens its own read-only descriptor (so a journal closed meanwhile is still
 * synced, and no writer's descriptor is shared) and calls fdatasync for files, fsync for directories.
 * Runs on libuv's thread pool: the event loop never blocks on the disk.
 */
export const nodeSync: SyncFn = async (target) => {
  const flags = fs.constants.O_RDONLY | (target.kind === "dir" ? (fs.constants.O_DIRECTORY ?? 0) : 0);
  const handle = await fs.promises.open(target.path, flags);
  try {
    if (target.kind === "file") await handle.datasync();
    else await handle.sync();
  } finally {
    await handle.close();
  }
};

/** Delay before retry number `failures` (1 = after the first failure): base·2^(failures−1), capped. */
export function retryDelayMs(failures: number, baseMs = WRITEBACK_RETRY_BASE_MS, maxMs = WRITEBACK_RETRY_MAX_MS): number {
  if (failures <= 0) return 0;
  // Cap the exponent first so large failure counts never overflow to Infinity.
  const exp = Math.min(failures - 1, 52);
  return Math.min(maxMs, baseMs * 2 ** exp);
}

export interface WritebackOptions {
  /**
   * The state root. A journal seen for the first time has its parent directory and every ancestor
   * up to and including `root` synced once (a new agent directory is an entry of `agents/`, which is
   * an entry of the root). Without a root only the parent directory is covered.
   */
  root?: string;
  sync?: SyncFn;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Told about every failed attempt; the target stays dirty and will be retried. */
  onError?: (err: unknown, target: SyncTarget, failures: number) => void;
}

export interface WritebackStats {
  /** Targets whose latest generation is not yet durable (including ones waiting to retry). */
  dirty: number;
  /** Dirty targets currently in back-off after a failure. */
  retrying: number;
  /** The target being synced right now, if any. */
  syncing: SyncTarget | null;
  /** Successful sync calls so far. */
  syncs: number;
  /** Failed sync calls so far. */
  failures: number;
  /** Files that no longer existed when their turn came (nothing left to make durable). */
  vanished: number;
}

interface Entry {
  target: SyncTarget;
  gen: number;
  synced: number;
  failures: number;
  retryAt: number;
}

const key = (t: SyncTarget) => `${t.kind}:${t.path}`;

export class WritebackWorker {
  private readonly entries = new Map<string, Entry>();
  /** Files seen by this worker: directory coverage is requested the first time only. */
  private readonly seen = new Set<string>();
  private readonly sync: SyncFn;
  private readonly root: string | null;
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly onError: WritebackOptions["onError"];
  private scheduled = false;
  private running = false;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  private current: SyncTarget | null = null;
  private readonly counters = { syncs: 0, failures: 0, vanished: 0 };
  private waiters: Array<() => void> = [];

  constructor(opts: WritebackOptions = {}) {
    this.sync = opts.sync ?? nodeSync;
    this.root = opts.root === undefined ? null : path.resolve(opts.root);
    this.baseMs = opts.retryBaseMs ?? WRITEBACK_RETRY_BASE_MS;
    this.maxMs = opts.retryMaxMs ?? WRITEBACK_RETRY_MAX_MS;
    this.onError = opts.onError;
  }

  /**
   * The file store's `onAppend` hook. O(1) and never touches the disk: it bumps a generation and
   * schedules a wake for a later turn of the event loop.
   */
  readonly onAppend = (journal: { readonly path: string }): void => {
    this.markDirty(journal.path);
  };

  /** Marks a journal file dirty (and, the first time, the directories holding its entry). */
  markDirty(file: string): void {
    if (this.closed) return;
    const abs = path.resolve(file);
    if (!this.seen.has(abs)) {
      this.seen.add(abs);
      for (const dir of this.coveringDirs(abs)) this.bump({ kind: "dir", path: dir });
    }
    this.bump({ kind: "file", path: abs });
    this.wake();
  }

  stats(): WritebackStats {
    let dirty = 0;
    let retrying = 0;
    for (const e of this.entries.values()) {
      if (e.gen > e.synced) dirty++;
      if (e.gen > e.synced && e.failures > 0) retrying++;
    }
    return { dirty, retrying, syncing: this.current, syncs: this.counters.syncs, failures: this.counters.failures, vanished: this.counters.vanished };
  }

  /** Whether `file`'s latest generation has been made durable (false while dirty or unknown-dirty). */
  isClean(file: string): boolean {
    const e = this.entries.get(key({ kind: "file", path: path.resolve(file) }));
    return e === undefined || e.gen === e.synced;
  }

  /**
   * Resolves true once nothing is dirty, or false after `timeoutMs`. For tests and an optional,
   * best-effort orderly shutdown; no shutdown path is required to call it.
   */
  flush(timeoutMs = Infinity): Promise<boolean> {
    if (this.allClean()) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      let timeout: NodeJS.Timeout | null = null;
      const done = () => {
        if (timeout) clearTimeout(timeout);
        resolve(true);
      };
      this.waiters.push(done);
      if (Number.isFinite(timeoutMs)) {
        timeout = setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== done);
          resolve(false);
        }, timeoutMs);
      }
      this.wake();
    });
  }

  /** Stops the worker: later marks are ignored, no retry is scheduled. Never waits for a sync. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private coveringDirs(file: string): string[] {
    const dirs: string[] = [];
    let dir = path.dirname(file);
    for (;;) {
      dirs.push(dir);
      if (this.root === null || dir === this.root) break;
      const up = path.dirname(dir);
      // Stop at the filesystem root, or if the file is not under the configured root at all.
      if (up === dir || !dir.startsWith(this.root + path.sep)) break;
      dir = up;
    }
    return dirs;
  }

  private bump(target: SyncTarget): void {
    const k = key(target);
    let e = this.entries.get(k);
    if (!e) this.entries.set(k, (e = { target, gen: 0, synced: 0, failures: 0, retryAt: 0 }));
    e.gen++;
  }

  private allClean(): boolean {
    for (const e of this.entries.values()) if (e.gen > e.synced) return false;
    return true;
  }

  private wake(): void {
    if (this.closed || this.scheduled || this.running) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.run();
    });
  }

  private async run(): Promise<void> {
    if (this.running || this.closed) return;
    this.running = true;
    try {
      for (;;) {
        const now = Date.now();
        const ready = [...this.entries.values()].filter((e) => e.gen > e.synced && e.retryAt <= now);
        if (ready.length === 0) break;
        // Files first, then directories deepest first (a journal's own directory before its ancestors).
        ready.sort((a, b) =>
          a.target.kind !== b.target.kind ? (a.target.kind === "file" ? -1 : 1) : a.target.kind === "dir" ? b.target.path.length - a.target.path.length : 0,
        );
        for (const e of ready) {
          if (this.closed) return;
          const gen = e.gen;
          this.current = e.target;
          try {
            await this.sync(e.target);
            e.synced = Math.max(e.synced, gen);
            e.failures = 0;
            e.retryAt = 0;
            this.counters.syncs++;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === "ENOENT") {
              // The file is gone: there is nothing left to make durable.
              e.synced = Math.max(e.synced, gen);
              e.failures = 0;
              this.counters.vanished++;
            } else {
              e.failures++;
              e.retryAt = Date.now() + retryDelayMs(e.failures, this.baseMs, this.maxMs);
              this.counters.failures++;
              try {
                this.onError?.(err, e.target, e.failures);
              } catch {
                /* a reporting hook never stops the worker */
              }
            }
          } finally {
            this.current = null;
          }
          // Clean file entries are forgotten (directory entries stay: they are few and cheap).
          if (e.target.kind === "file" && e.gen === e.synced) this.entries.delete(key(e.target));
        }
      }
    } finally {
      this.running = false;
    }
    this.armRetry();
    if (this.allClean()) {
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
    }
  }

  private armRetry(): void {
    if (this.closed) return;
    let next = Infinity;
    for (const e of this.entries.values()) if (e.gen > e.synced) next = Math.min(next, e.retryAt);
    if (!Number.isFinite(next)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.wake();
    }, Math.max(0, next - Date.now()));
    // A pending retry never keeps the process alive: nothing is required to wait for writeback.
    this.timer.unref();
  }
}
