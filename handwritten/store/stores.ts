// The durable stores of a tau state directory, with a memory-only variant behind the same interface:
//   agents/<agent-id>/events.cbor          per-agent transcript and identity journal
//   sessions/<session-id>/events.cbor      session membership journal
//   sessions/<session-id>/restore-events.cbor  restore stream
// Memory-only mode (render previews, tests, --no-persist) never touches the filesystem.
import * as fs from "node:fs";
import * as path from "node:path";
import { FileJournal, MemoryJournal, type Journal, type RecordPipeline, type SeqRecord } from "./journal.js";
import { JournalLockedError, StoreError } from "./errors.js";
import type { JournalIo } from "./io.js";
import { boundCheckpoint, invalidateCheckpoint, writeJournalCheckpoint } from "./checkpoint.js";
import { validateJournalRecord, type JournalRecord, type RecordValidator, type SemanticValidator } from "./validate.js";

import { checkId, checkpointPath, journalPath, type JournalKind } from "./paths.js";
export type { JournalKind } from "./paths.js";

export interface AppendInput {
  event: { name: string; data: Record<string, unknown> };
  parent?: number | null;
  source: { class: string; instance?: string; kind?: string };
  /** Microseconds since the epoch; stamped now when omitted. */
  recorded_at?: number;
}

export function nowMicros(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

/** Where an opening scan resumed: the checkpointed boundary's seq and the fold stored with it. */
export interface Resumed {
  readonly seq: number;
  readonly fold: Record<string, unknown> | undefined;
}

/** A journal of JournalRecords that stamps `seq` and `recorded_at` itself. */
export class EventLog {
  /** The end the last checkpoint this log wrote binds (closing writes none again for it). */
  private checkpointedEnd = -1;

  constructor(
    readonly kind: JournalKind,
    readonly id: string,
    readonly journal: Journal<JournalRecord>,
    /** The checkpoint file beside a file journal; null in memory. */
    private readonly checkpointFile: string | null = null,
    /** Set when the opening scan started at a checkpoint (only the tail after it was folded). */
    readonly resumed?: Resumed,
  ) {}
  get path(): string | null {
    return this.journal.path;
  }
  get nextSeq(): number {
    return this.journal.nextSeq;
  }
  /**
   * Writes this journal's checkpoint at its current end, with the owner's folded state at that end.
   * Derived and best effort: a failure never affects the journal (it is reported to the caller).
   */
  checkpoint(fold?: Record<string, unknown>): void {
    if (this.checkpointFile === null || !(this.journal instanceof FileJournal) || this.journal.poisoned) return;
    writeJournalCheckpoint({ journal: this.journal.path, meta: this.checkpointFile }, this.journal.end, this.journal.nextSeq, fold, this.journal.anchors());
    this.checkpointedEnd = this.journal.end;
  }
  /** The journal's size in bytes (0 in memory). */
  get size(): number {
    return this.journal instanceof FileJournal ? this.journal.end : 0;
  }
  /** Bytes appended since the last checkpoint this log wrote (or since it was opened). */
  get bytesSinceCheckpoint(): number {
    if (!(this.journal instanceof FileJournal)) return 0;
    return this.checkpointedEnd < 0 ? this.journal.end : this.journal.end - this.checkpointedEnd;
  }
  readRange(from: number, to: number, maxBytes?: number): JournalRecord[] {
    return this.used(() => this.journal.readRange(from, to, maxBytes));
  }
  windowStart(end: number, maxRecords: number, maxBytes: number): number {
    return this.used(() => this.journal.windowStart(end, maxRecords, maxBytes));
  }
  append(input: AppendInput): JournalRecord {
    return this.used(() =>
      this.journal.append({
        seq: this.journal.nextSeq,
        event: input.event,
        parent: input.parent ?? null,
        source: input.source,
        recorded_at: input.recorded_at ?? nowMicros(),
      }),
    );
  }
  readAll(): JournalRecord[] {
    return this.used(() => this.journal.readAll());
  }
  /**
   * Its owner is idle: the journal gives its descriptor back, and again after every use (a roster
   * read, a title written) until `wake` (the writer lock stays held all the while).
   */
  rest(): void {
    this.resting = true;
    this.park();
  }
  /** Its owner is at work: the descriptor stays open between uses (in the process's bounded pool). */
  wake(): void {
    this.resting = false;
  }
  private resting = false;
  private used<T>(use: () => T): T {
    try {
      return use();
    } finally {
      if (this.resting) this.park();
    }
  }
  private park(): void {
    if (this.journal instanceof FileJournal) this.journal.park();
  }
  /**
   * Replaces the journal with `records`, renumbered from seq 0, atomically (journal.ts `rewrite`),
   * and binds a fresh checkpoint to the new file (the old one named the file it replaced).
   */
  rewrite(records: readonly JournalRecord[]): void {
    this.journal.rewrite(records);
    this.checkpointedEnd = -1;
    try {
      this.checkpoint();
    } catch {
      // derived: a resume scans the journal without one
    }
  }
  close(): void {
    // A journal closed without a fresh checkpoint gets one that binds its end (no fold): listing
    // and the next open then need not scan it. Best effort: it never invalidates a record.
    if (this.journal instanceof FileJournal && this.journal.end !== this.checkpointedEnd) {
      try {
        this.checkpoint();
      } catch {
        // the next listing repairs or reports it unverified; a resume scans the journal
      }
    }
    this.journal.close();
  }
}

export interface JournalHooks {
  semantic?: SemanticValidator<JournalRecord>;
  /** Each record the opening scan reads (the tail after a checkpoint, when it resumed from one). */
  onRecord?: (record: JournalRecord, offset: number) => void;
  /**
   * Start the opening scan at the journal's checkpoint when it binds the file (same file, unchanged
   * before its boundary): only the records after it are scanned and folded, and `resumed` says so.
   * A function decides from the checkpoint's fold whether it can stand for the records before it
   * (false: the whole journal is scanned).
   */
  resume?: boolean | ((fold: Record<string, unknown> | undefined, seq: number) => boolean);
}

export interface StateStore {
  readonly memoryOnly: boolean;
  /** The state directory, or null in memory-only mode. */
  readonly stateDir: string | null;
  openAgent(agentId: string, hooks?: JournalHooks): EventLog;
  /** An agent journal held in memory only, whatever the store: an ephemeral agent leaves no file. */
  openEphemeralAgent(agentId: string): EventLog;
  openSession(sessionId: string, hooks?: JournalHooks): EventLog;
  openRestore(sessionId: string, hooks?: JournalHooks): EventLog;
  /** Closes every journal this store opened. */
  close(): void;
}

export interface FileStoreOptions {
  stateDir: string;
  validate?: RecordValidator;
  io?: JournalIo;
  /** Called after every successful append to a file journal (the writeback worker's dirty mark). */
  onAppend?: (journal: FileJournal<SeqRecord>) => void;
  /** Called when opening a journal removed a crash tail (derived checkpoints are invalidated). */
  onRecover?: (kind: JournalKind, id: string, file: string) => void;
}

export { journalPath } from "./paths.js";

abstract class BaseStore implements StateStore {
  abstract readonly memoryOnly: boolean;
  abstract readonly stateDir: string | null;
  protected readonly open = new Set<EventLog>();
  protected abstract make(
    kind: JournalKind,
    id: string,
    pipeline: RecordPipeline<JournalRecord>,
    resume: ((fold: Record<string, unknown> | undefined, seq: number) => boolean) | undefined,
  ): { journal: Journal<JournalRecord>; checkpoint: string | null; resumed?: Resumed };
  constructor(protected readonly validate: RecordValidator) {}

  private openLog(kind: JournalKind, id: string, hooks: JournalHooks = {}): EventLog {
    checkId(id);
    const resume = hooks.resume === undefined || hooks.resume === false ? undefined : hooks.resume === true ? () => true : hooks.resume;
    // The caller's onRecord sees what the opening scan reads, not later appends (the caller folds
    // those itself as it makes them: calling it again would fold each append twice).
    let opening = true;
    const onRecord = hooks.onRecord;
    const pipeline = { validate: this.validate, semantic: hooks.semantic, ...(onRecord ? { onRecord: (r: JournalRecord, at: number) => opening && onRecord(r, at) } : {}) };
    let made: ReturnType<BaseStore["make"]>;
    try {
      made = this.make(kind, id, pipeline, resume);
    } finally {
      opening = false;
    }
    const log = new EventLog(kind, id, made.journal, made.checkpoint, made.resumed);
    const close = log.close.bind(log);
    log.close = () => {
      this.open.delete(log);
      close();
    };
    this.open.add(log);
    return log;
  }
  openAgent(agentId: string, hooks?: JournalHooks): EventLog {
    return this.openLog("agent", agentId, hooks);
  }
  openEphemeralAgent(agentId: string): EventLog {
    checkId(agentId);
    return new EventLog("agent", agentId, new MemoryJournal<JournalRecord>({ validate: this.validate }));
  }
  openSession(sessionId: string, hooks?: JournalHooks): EventLog {
    return this.openLog("session", sessionId, hooks);
  }
  openRestore(sessionId: string, hooks?: JournalHooks): EventLog {
    return this.openLog("restore", sessionId, hooks);
  }
  close(): void {
    for (const log of [...this.open]) log.close();
  }
}

class FileStateStore extends BaseStore {
  readonly memoryOnly = false;
  readonly stateDir: string;
  constructor(private readonly opts: FileStoreOptions) {
    super(opts.validate ?? validateJournalRecord);
    this.stateDir = path.resolve(opts.stateDir);
  }
  protected make(
    kind: JournalKind,
    id: string,
    pipeline: RecordPipeline<JournalRecord>,
    resume: ((fold: Record<string, unknown> | undefined, seq: number) => boolean) | undefined,
  ): { journal: Journal<JournalRecord>; checkpoint: string; resumed?: Resumed } {
    const file = journalPath(this.stateDir, kind, id);
    const meta = checkpointPath(this.stateDir, kind, id);
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    let resumed: Resumed | undefined;
    const journal = FileJournal.open<JournalRecord>(file, {
      ...pipeline,
      io: this.opts.io,
      onAppend: this.opts.onAppend as ((j: FileJournal<JournalRecord>) => void) | undefined,
      resumeFrom: resume
        ? (fd) => {
            const cp = boundCheckpoint(meta, fd);
            if (!cp || !resume(cp.fold, cp.next_seq)) return undefined;
            resumed = { seq: cp.next_seq, fold: cp.fold };
            return { offset: cp.boundary, seq: cp.next_seq, ...(cp.anchors ? { anchors: cp.anchors } : {}) };
          }
        : undefined,
      onRecover: () => {
        // Locked recovery changed the journal: the derived checkpoint no longer describes it.
        invalidateCheckpoint(meta);
        this.opts.onRecover?.(kind, id, file);
      },
    });
    return { journal, checkpoint: meta, ...(resumed ? { resumed } : {}) };
  }
}

class MemoryStateStore extends BaseStore {
  readonly memoryOnly = true;
  readonly stateDir = null;
  // Records survive close/reopen for the life of the store, as a file would.
  private readonly backing = new Map<string, JournalRecord[]>();
  private readonly writers = new Set<string>();
  protected make(kind: JournalKind, id: string, pipeline: RecordPipeline<JournalRecord>): { journal: Journal<JournalRecord>; checkpoint: null } {
    const key = `${kind}/${id}`;
    if (this.writers.has(key)) throw new JournalLockedError(`memory:${key}`, process.pid);
    let records = this.backing.get(key);
    if (!records) this.backing.set(key, (records = []));
    for (const r of records) {
      if (pipeline.semantic) {
        const s = pipeline.semantic(r);
        if (!s.ok) throw new StoreError("journal_corrupt", `memory:${key}: semantic: ${s.reason}`);
      }
      pipeline.onRecord?.(r, -1);
    }
    const journal = new MemoryJournal<JournalRecord>(pipeline, records);
    this.writers.add(key);
    const close = journal.close.bind(journal);
    journal.close = () => {
      this.writers.delete(key);
      close();
    };
    return { journal, checkpoint: null };
  }
}

export function openFileStateStore(opts: FileStoreOptions): StateStore {
  return new FileStateStore(opts);
}

export function openMemoryStateStore(opts: { validate?: RecordValidator } = {}): StateStore {
  return new MemoryStateStore(opts.validate ?? validateJournalRecord);
}
