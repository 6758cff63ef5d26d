// meta.json checkpoints: derived, content-minimised summaries of an agent journal that let listing
// avoid scanning journals. A checkpoint binds an exact frame boundary and next seq to the journal's
// device and inode and to a hash of the bytes just before the boundary. It is never routing
// authority: only a checkpoint that validates against the journal marks an agent routable, and a
// stale or invalid one is repaired only within small byte, record and time budgets.
import * as fs from "node:fs";
import * as path from "node:path";
import { randomHex } from "../protocol/random.js";
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

/** Atomically replaces `meta.json` (0600 temp file, then rename). */
export function writeCheckpoint(agentDir: string, boundary: number, nextSeq: number): Checkpoint {
  const fd = fs.openSync(eventsPath(agentDir), fs.constants.O_RDONLY);
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    const cp: Checkpoint = { version: 1, dev: String(st.dev), ino: String(st.ino), boundary, next_seq: nextSeq, witness: witnessOf(fd, boundary) };
    const tmp = `${metaPath(agentDir)}.${process.pid}.${randomHex(6)}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(cp), { mode: 0o600, flag: "wx" });
    fs.renameSync(tmp, metaPath(agentDir));
    return cp;
  } finally {
    fs.closeSync(fd);
  }
}

/** Removes a checkpoint (after locked recovery changed the journal). */
export function invalidateCheckpoint(agentDir: string): void {
  fs.rmSync(metaPath(agentDir), { force: true });
}

function parseCheckpoint(agentDir: string): Checkpoint | null {
  let text: string;
  try {
    const st = fs.lstatSync(metaPath(agentDir));
    if (!st.isFile() || st.size > CHECKPOINT_MAX_FILE_BYTES) return null;
    text = fs.readFileSync(metaPath(agentDir), "utf8");
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
  const keys = Object.keys(v).sort().join(",");
  if (keys !== "boundary,dev,ino,next_seq,version,witness") return null;
  const uint = (x: unknown) => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
  const dec = (x: unknown) => typeof x === "string" && /^[0-9]{1,20}$/.test(x);
  if (!uint(v.boundary) || !uint(v.next_seq) || !dec(v.dev) || !dec(v.ino)) return null;
  if (typeof v.witness !== "string" || !/^[0-9a-f]{64}$/.test(v.witness)) return null;
  return v as unknown as Checkpoint;
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
    const cp = parseCheckpoint(agentDir);
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
