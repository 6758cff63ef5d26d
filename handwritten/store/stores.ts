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
import { invalidateCheckpoint, writeCheckpoint } from "./checkpoint.js";
import { validateJournalRecord, type JournalRecord, type RecordValidator, type SemanticValidator } from "./validate.js";

import { checkId, journalPath, type JournalKind } from "./paths.js";
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

/** A journal of JournalRecords that stamps `seq` and `recorded_at` itself. */
export class EventLog {
  constructor(
    readonly kind: JournalKind,
    readonly id: string,
    readonly journal: Journal<JournalRecord>,
  ) {}
  get path(): string | null {
    return this.journal.path;
  }
  get nextSeq(): number {
    return this.journal.nextSeq;
  }
  append(input: AppendInput): JournalRecord {
    return this.journal.append({
      seq: this.journal.nextSeq,
      event: input.event,
      parent: input.parent ?? null,
      source: input.source,
      recorded_at: input.recorded_at ?? nowMicros(),
    });
  }
  readAll(): JournalRecord[] {
    return this.journal.readAll();
  }
  close(): void {
    this.journal.close();
  }
}

export interface JournalHooks {
  semantic?: SemanticValidator<JournalRecord>;
  onRecord?: (record: JournalRecord, offset: number) => void;
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
  protected abstract make(kind: JournalKind, id: string, pipeline: RecordPipeline<JournalRecord>): Journal<JournalRecord>;
  constructor(protected readonly validate: RecordValidator) {}

  private openLog(kind: JournalKind, id: string, hooks: JournalHooks = {}): EventLog {
    checkId(id);
    const journal = this.make(kind, id, { validate: this.validate, semantic: hooks.semantic, onRecord: hooks.onRecord });
    const log = new EventLog(kind, id, journal);
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
  protected make(kind: JournalKind, id: string, pipeline: RecordPipeline<JournalRecord>): Journal<JournalRecord> {
    const file = journalPath(this.stateDir, kind, id);
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const journal = FileJournal.open<JournalRecord>(file, {
      ...pipeline,
      io: this.opts.io,
      onAppend: this.opts.onAppend as ((j: FileJournal<JournalRecord>) => void) | undefined,
      onRecover: () => {
        // Locked recovery changed the journal: the derived checkpoint no longer describes it.
        if (kind === "agent") invalidateCheckpoint(path.dirname(file));
        this.opts.onRecover?.(kind, id, file);
      },
    });
    if (kind === "agent") {
      const close = journal.close.bind(journal);
      journal.close = () => {
        // Publishing derived metadata is best effort: failing it never invalidates a committed record.
        try {
          if (!journal.poisoned) writeCheckpoint(path.dirname(file), journal.end, journal.nextSeq);
        } catch {
          /* the next listing repairs or reports the agent unverified */
        }
        close();
      };
    }
    return journal;
  }
}

class MemoryStateStore extends BaseStore {
  readonly memoryOnly = true;
  readonly stateDir = null;
  // Records survive close/reopen for the life of the store, as a file would.
  private readonly backing = new Map<string, JournalRecord[]>();
  private readonly writers = new Set<string>();
  protected make(kind: JournalKind, id: string, pipeline: RecordPipeline<JournalRecord>): Journal<JournalRecord> {
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
    return journal;
  }
}

export function openFileStateStore(opts: FileStoreOptions): StateStore {
  return new FileStateStore(opts);
}

export function openMemoryStateStore(opts: { validate?: RecordValidator } = {}): StateStore {
  return new MemoryStateStore(opts.validate ?? validateJournalRecord);
}
