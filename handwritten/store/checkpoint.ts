// Checkpoints (an agent's meta.json, a session journal's meta.json and restore-meta.json): derived,
// content-minimised summaries of a journal that let listing and resuming avoid scanning it. A
// checkpoint binds an exact frame boundary and next seq to the journal's device and inode and to a
// hash of the bytes just before the boundary, and may carry the owner's folded state at that
// boundary (`fold`, opaque here). It is never routing authority: only a checkpoint that validates
// against the journal marks an agent routable or lets a resume start at its boundary, and a stale or
// invalid one is repaired only within small byte, record and time budgets.
import * as fs from "node:fs";
import * as path from "node:path";
import { randomHex } from "../startup/random.js";
import { nodeIo, sha256Hex } from "./io.js";
import { scanFrames, type ScanStart } from "./journal.js";
import { JournalCorruptError } from "./errors.js";
import {
  CHECKPOINT_MAX_FILE_BYTES,
  CHECKPOINT_REPAIR_MAX_BYTES,
  CHECKPOINT_REPAIR_MAX_MS,
  CHECKPOINT_REPAIR_MAX_RECORDS,
  CHECKPOINT_WITNESS_BYTES,
} from "./limits.js";
import { isPlainObject, isValidId, validateJournalRecord, type RecordValidator } from "./validate.js";

export interface Checkpoint {
  version: 1;
  /** Journal file identity, as decimal strings (exact for any device/inode number). */
  dev: string;
  ino: string;
  /** Byte offset of a frame boundary, and the seq of the frame that would start there. */
  boundary: number;
  next_seq: number;
  /** sha256 (hex) of the up to 4 KiB immediately before `boundary`. */
  witness: string;
  /** The journal owner's folded state at `boundary` (the harness's, for a resume); opaque to the store. */
  fold?: Record<string, unknown>;
  /** Offsets of the frames before `boundary` whose seq is a multiple of FRAME_ANCHOR_EVERY (frame-index.ts). */
  anchors?: number[];
}

/** A journal and the checkpoint file beside it. */
export interface CheckpointPaths {
  readonly journal: string;
  readonly meta: string;
}

export interface RepairBudget {
  maxBytes: number;
  maxRecords: number;
  maxMs: number;
}

export const DEFAULT_REPAIR_BUDGET: RepairBudget = Object.freeze({
  maxBytes: CHECKPOINT_REPAIR_MAX_BYTES,
  maxRecords: CHECKPOINT_REPAIR_MAX_RECORDS,
  maxMs: CHECKPOINT_REPAIR_MAX_MS,
});

export type AgentStatus =
  /** The checkpoint validates against the journal end. */
  | "current"
  /** The checkpoint was stale or invalid and was repaired within budget. */
  | "repaired"
  /** Repair ran out of budget: the id is reserved, but the agent is not routable yet. */
  | "unverified"
  /** No journal, or a journal with no complete record: reserves the id only. */
  | "empty"
  /** A complete frame failed validation during repair. */
  | "corrupt";

export interface AgentListing {
  id: string;
  status: AgentStatus;
  /** Only a validated checkpoint makes an agent routable; everything else just reserves its id. */
  routable: boolean;
  next_seq: number | null;
  boundary: number | null;
  reason?: string;
}

export const metaPath = (agentDir: string) => path.join(agentDir, "meta.json");
export const eventsPath = (agentDir: string) => path.join(agentDir, "events.cbor");
const agentPaths = (agentDir: string): CheckpointPaths => ({ journal: eventsPath(agentDir), meta: metaPath(agentDir) });

function witnessOf(fd: number, boundary: number): string {
  const len = Math.min(CHECKPOINT_WITNESS_BYTES, boundary);
  const buf = Buffer.alloc(len);
  let got = 0;
  while (got < len) {
    const n = fs.readSync(fd, buf, got, len - got, boundary - len + got);
    if (n === 0) break;
    got += n;
  }
  return sha256Hex(buf.subarray(0, got));
}

/** Atomically replaces an agent's `meta.json` (0600 temp file, then rename). */
export function writeCheckpoint(agentDir: string, boundary: number, nextSeq: number, fold?: Record<string, unknown>): Checkpoint {
  return writeJournalCheckpoint(agentPaths(agentDir), boundary, nextSeq, fold);
}

/**
 * Atomically replaces a journal's checkpoint file (0600 temp file, then rename). A fold that would
 * make the file larger than its bound is left out: the checkpoint then binds the boundary only.
 */
export function writeJournalCheckpoint(
  paths: CheckpointPaths,
  boundary: number,
  nextSeq: number,
  fold?: Record<string, unknown>,
  anchors?: number[],
): Checkpoint {
  const fd = fs.openSync(paths.journal, fs.constants.O_RDONLY);
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    const bare: Checkpoint = { version: 1, dev: String(st.dev), ino: String(st.ino), boundary, next_seq: nextSeq, witness: witnessOf(fd, boundary) };
    // What does not fit goes first: the anchors (a replay can find frames without them), then the fold.
    const candidates: Checkpoint[] = [
      { ...bare, ...(fold !== undefined ? { fold } : {}), ...(anchors !== undefined ? { anchors } : {}) },
      { ...bare, ...(fold !== undefined ? { fold } : {}) },
      bare,
    ];
    let cp = bare;
    let text = JSON.stringify(bare);
    for (const c of candidates) {
      const t = JSON.stringify(c);
      if (Buffer.byteLength(t) <= CHECKPOINT_MAX_FILE_BYTES) {
        cp = c;
        text = t;
        break;
      }
    }
    const tmp = `${paths.meta}.${process.pid}.${randomHex(6)}.tmp`;
    fs.writeFileSync(tmp, text, { mode: 0o600, flag: "wx" });
    fs.renameSync(tmp, paths.meta);
    return cp;
  } finally {
    fs.closeSync(fd);
  }
}

/** Removes a checkpoint file (after locked recovery changed its journal). */
export function invalidateCheckpoint(meta: string): void {
  fs.rmSync(meta, { force: true });
}

/**
 * The checkpoint in `meta` when it binds the journal open on `fd`: the same device and inode, a
 * boundary inside the file, and the witness of the bytes before it. Reads at most the witness.
 */
export function boundCheckpoint(meta: string, fd: number): Checkpoint | null {
  const cp = parseCheckpoint(meta);
  if (!cp) return null;
  const st = fs.fstatSync(fd, { bigint: true });
  if (cp.dev !== String(st.dev) || cp.ino !== String(st.ino) || cp.boundary > Number(st.size)) return null;
  return witnessOf(fd, cp.boundary) === cp.witness ? cp : null;
}

/** The checkpoint file's content when it is well formed (bounded read; it is not checked against its journal). */
export function readCheckpointFile(file: string): Checkpoint | null {
  return parseCheckpoint(file);
}

function parseCheckpoint(file: string): Checkpoint | null {
  let text: string;
  try {
    const st = fs.lstatSync(file);
    if (!st.isFile() || st.size > CHECKPOINT_MAX_FILE_BYTES) return null;
    text = fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isPlainObject(v) || v.version !== 1) return null;
  const keys = Object.keys(v)
    .filter((k) => k !== "fold" && k !== "anchors")
    .sort()
    .join(",");
  if (keys !== "boundary,dev,ino,next_seq,version,witness") return null;
  if (v.fold !== undefined && !isPlainObject(v.fold)) return null;
  if (v.anchors !== undefined && !Array.isArray(v.anchors)) return null;
  const uint = (x: unknown): x is number => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
  const dec = (x: unknown): x is string => typeof x === "string" && /^[0-9]{1,20}$/.test(x);
  const { boundary, next_seq, dev, ino, witness, fold, anchors } = v;
  if (!uint(boundary) || !uint(next_seq) || !dec(dev) || !dec(ino)) return null;
  if (typeof witness !== "string" || !/^[0-9a-f]{64}$/.test(witness)) return null;
  return {
    version: 1,
    dev,
    ino,
    boundary,
    next_seq,
    witness,
    ...(isPlainObject(fold) ? { fold } : {}),
    ...(Array.isArray(anchors) ? { anchors: anchors as number[] } : {}), // checked in full where used
  };
}

export interface InspectOptions {
  budget?: RepairBudget;
  validate?: RecordValidator;
  /** When false, a stale or invalid checkpoint is reported unverified without scanning. Default true. */
  repair?: boolean;
}

/**
 * Classifies one agent directory from its checkpoint, repairing the checkpoint within budget.
 * Never writes the journal; only ever rewrites the derived meta.json.
 */
export function inspectAgent(agentDir: string, id: string, opts: InspectOptions = {}): AgentListing {
  const budget = opts.budget ?? DEFAULT_REPAIR_BUDGET;
  const base = { id, routable: false, next_seq: null, boundary: null };
  let fd: number;
  try {
    fd = fs.openSync(eventsPath(agentDir), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch {
    return { ...base, status: "empty", reason: "no journal" };
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (!st.isFile()) return { ...base, status: "empty", reason: "journal is not a regular file" };
    const size = Number(st.size);
    const cp = parseCheckpoint(metaPath(agentDir));
    let start: ScanStart = { offset: 0, seq: 0 };
    if (cp && cp.dev === String(st.dev) && cp.ino === String(st.ino) && cp.boundary <= size && witnessOf(fd, cp.boundary) === cp.witness) {
      if (cp.boundary === size) {
        return cp.next_seq > 0
          ? { id, status: "current", routable: true, next_seq: cp.next_seq, boundary: cp.boundary }
          : { ...base, status: "empty", next_seq: 0, boundary: 0, reason: "no records" };
      }
      start = { offset: cp.boundary, seq: cp.next_seq }; // stale: only the suffix needs checking
    }
    if (opts.repair === false) return { ...base, status: "unverified", reason: "checkpoint stale or invalid" };
    let scan;
    try {
      scan = scanFrames(nodeIo, fd, eventsPath(agentDir), { validate: opts.validate ?? validateJournalRecord }, start, {
        maxBytes: budget.maxBytes,
        maxRecords: budget.maxRecords,
        deadline: performance.now() + budget.maxMs,
      });
    } catch (err) {
      if (err instanceof JournalCorruptError) return { ...base, status: "corrupt", reason: err.message };
      throw err;
    }
    if (scan.exhausted) return { ...base, status: "unverified", reason: "repair budget exhausted" };
    if (scan.nextSeq === 0) return { ...base, status: "empty", next_seq: 0, boundary: 0, reason: "no records" };
    writeCheckpoint(agentDir, scan.end, scan.nextSeq);
    return { id, status: "repaired", routable: true, next_seq: scan.nextSeq, boundary: scan.end };
  } finally {
    fs.closeSync(fd);
  }
}

/** Lists `<stateDir>/agents/*` from checkpoints; ids that are not tau ids are skipped. */
export function listAgents(stateDir: string, opts: InspectOptions = {}): AgentListing[] {
  const root = path.join(stateDir, "agents");
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  return names
    .filter(isValidId)
    .sort()
    .map((id) => inspectAgent(path.join(root, id), id, opts));
}
