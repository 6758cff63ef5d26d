// Runtime discovery (SPEC-runtime-discovery): `<pid>-<16 lowercase hex>` stems, the launcher-minted
// instance value, discovery metadata, and the bounded, read-only runtime scan. Nothing here ever
// unlinks a file: only a daemon removes its own pair (see pair.ts).
import { INSTANCE_BYTES, INSTANCE_PATTERN, INSTANCE_SOURCE } from "../startup/launch-facts.js";
import { randomHex } from "../startup/random.js";
import * as fs from "node:fs";
import { join } from "node:path";
import { RuntimeDirError } from "./errors.js";
import {
  DAEMON_INSTANCE_ENV,
  METADATA_MAX_BYTES,
  METADATA_MODE,
  SCAN_MAX_CANDIDATES,
  SCAN_MAX_ENTRIES,
  SCAN_TIME_BUDGET_MS,
} from "./limits.js";
import { checkRuntimeDir } from "./runtime-dir.js";

const STEM_RE = new RegExp(`^([1-9][0-9]{0,9})-(${INSTANCE_SOURCE})$`);
/** Largest pid a stem may carry (the wire `pid` is a uint32). */
export const MAX_STEM_PID = 0xffff_ffff;

export const SOCKET_SUFFIX = ".sock";
export const METADATA_SUFFIX = ".json";

export interface Stem {
  readonly stem: string;
  readonly pid: number;
  readonly instance: string;
}

/** A fresh instance value: 16 lowercase hex digits (INSTANCE_BYTES) from the system CSPRNG. */
export function mintInstance(): string {
  return randomHex(INSTANCE_BYTES);
}

export function isValidInstance(value: unknown): value is string {
  return typeof value === "string" && INSTANCE_PATTERN.test(value);
}

function isValidPid(pid: unknown): pid is number {
  return typeof pid === "number" && Number.isInteger(pid) && pid >= 1 && pid <= MAX_STEM_PID;
}

/** Parses `<pid>-<instance>` in its one canonical form (no leading zeros, lowercase hex). */
export function parseStem(stem: string): Stem | undefined {
  const m = STEM_RE.exec(stem);
  if (!m) return undefined;
  const pid = Number(m[1]);
  if (!isValidPid(pid)) return undefined;
  return { stem, pid, instance: m[2] as string };
}

export function formatStem(pid: number, instance: string): string {
  if (!isValidPid(pid)) throw new RangeError("pid must be an integer from 1 to 4294967295");
  if (!isValidInstance(instance)) throw new RangeError("instance must be 16 lowercase hex digits");
  return `${pid}-${instance}`;
}

export interface PairPaths {
  readonly socket: string;
  readonly metadata: string;
}

export function pairPaths(runtimeDir: string, stem: string): PairPaths {
  if (!parseStem(stem)) throw new RangeError("not a runtime pair stem");
  return { socket: join(runtimeDir, stem + SOCKET_SUFFIX), metadata: join(runtimeDir, stem + METADATA_SUFFIX) };
}

// ---- The launcher hands its minted instance to the daemon --------------------------------------

/** Launcher side: the environment entries that hand `instance` to the daemon child. */
export function instanceEnv(instance: string): Record<string, string> {
  if (!isValidInstance(instance)) throw new RangeError("instance must be 16 lowercase hex digits");
  return { [DAEMON_INSTANCE_ENV]: instance };
}

export class InvalidInstanceError extends Error {
  constructor() {
    super(`${DAEMON_INSTANCE_ENV} is set but is not 16 lowercase hex digits; refusing to start`);
    this.name = "InvalidInstanceError";
  }
}

/**
 * Daemon side: the instance the launcher minted, or a locally minted one for a direct launch.
 * A present but malformed value fails closed (the launcher would look for another path).
 */
export function instanceFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const value = env[DAEMON_INSTANCE_ENV];
  if (value === undefined || value === "") return mintInstance();
  if (!isValidInstance(value)) throw new InvalidInstanceError();
  return value;
}

// ---- Metadata ----------------------------------------------------------------------------------

/** The discovery metadata beside a socket. It holds nothing secret and is never routing authority. */
export interface PairMetadata {
  readonly pid: number;
  readonly instance: string;
  /** ISO-8601 UTC time the pair was published. */
  readonly created_at: string;
  /** The tau version that wrote it. */
  readonly version: string;
}

const METADATA_KEYS = ["created_at", "instance", "pid", "version"];
const MAX_METADATA_TEXT = 64;

function validMetadata(value: unknown): value is PairMetadata {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value).sort();
  if (keys.length !== METADATA_KEYS.length || keys.some((k, i) => k !== METADATA_KEYS[i])) return false;
  const v = value as Record<string, unknown>;
  return (
    isValidPid(v.pid) &&
    isValidInstance(v.instance) &&
    typeof v.created_at === "string" &&
    v.created_at.length <= MAX_METADATA_TEXT &&
    typeof v.version === "string" &&
    v.version.length <= MAX_METADATA_TEXT
  );
}

/** Writes `<stem>.json` atomically: a 0600 temp file in the same folder, then rename. */
export function writePairMetadata(runtimeDir: string, metadata: PairMetadata): string {
  if (!validMetadata(metadata)) throw new RangeError("invalid pair metadata");
  const stem = formatStem(metadata.pid, metadata.instance);
  const target = join(runtimeDir, stem + METADATA_SUFFIX);
  // A dot name never matches a stem, so scanners ignore a temp file left by a crash.
  const temp = join(runtimeDir, `.${stem}.${randomHex(4)}.tmp`);
  const body = JSON.stringify({ pid: metadata.pid, instance: metadata.instance, created_at: metadata.created_at, version: metadata.version }) + "\n";
  const fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, METADATA_MODE);
  try {
    fs.fchmodSync(fd, METADATA_MODE);
    fs.writeSync(fd, body);
    fs.fsyncSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  try {
    fs.renameSync(temp, target);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  }
  return target;
}

export type MetadataProblem = "missing" | "not_regular" | "too_large" | "unparseable" | "invalid" | "io";
export type MetadataRead = { readonly ok: true; readonly metadata: PairMetadata } | { readonly ok: false; readonly problem: MetadataProblem };

/**
 * Reads one metadata file, never more than `maxBytes` (+1 to detect growth), never following a
 * symlink and never blocking on a FIFO. Read-only: a bad file is reported, not removed.
 */
export function readPairMetadata(path: string, maxBytes: number = METADATA_MAX_BYTES): MetadataRead {
  let fd: number;
  try {
    fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { ok: false, problem: "missing" };
    if (code === "ELOOP" || code === "ENXIO") return { ok: false, problem: "not_regular" };
    return { ok: false, problem: "io" };
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { ok: false, problem: "not_regular" };
    if (st.size > maxBytes) return { ok: false, problem: "too_large" };
    const buf = Buffer.alloc(maxBytes + 1);
    let total = 0;
    for (;;) {
      const n = fs.readSync(fd, buf, total, buf.length - total, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) return { ok: false, problem: "too_large" };
    }
    let value: unknown;
    try {
      value = JSON.parse(buf.subarray(0, total).toString("utf8"));
    } catch {
      return { ok: false, problem: "unparseable" };
    }
    return validMetadata(value) ? { ok: true, metadata: value } : { ok: false, problem: "invalid" };
  } catch {
    return { ok: false, problem: "io" };
  } finally {
    fs.closeSync(fd);
  }
}

// ---- The bounded scan --------------------------------------------------------------------------

export interface Candidate extends Stem {
  /** The socket path, used only as a probe target. */
  readonly socket: string;
}

export type ScanTruncation = false | "entries" | "candidates" | "time";

export interface ScanResult {
  /** False when the runtime directory does not exist (nothing is running). */
  readonly exists: boolean;
  readonly candidates: readonly Candidate[];
  /** Raw directory entries read. */
  readonly entriesRead: number;
  /** Which bound stopped the scan early, if any; the candidates are then a partial list. */
  readonly truncated: ScanTruncation;
}

export interface ScanOptions {
  readonly maxEntries?: number;
  readonly maxCandidates?: number;
  readonly timeBudgetMs?: number;
  /** Monotonic clock in milliseconds (tests inject one). */
  readonly now?: () => number;
}

function candidateOf(runtimeDir: string, entry: fs.Dirent): Candidate | undefined {
  if (!entry.name.endsWith(SOCKET_SUFFIX)) return undefined;
  const stem = parseStem(entry.name.slice(0, -SOCKET_SUFFIX.length));
  if (!stem) return undefined;
  // Anything known not to be a socket is skipped; an unknown type (no d_type) stays a candidate.
  if (entry.isFile() || entry.isDirectory() || entry.isSymbolicLink() || entry.isFIFO() || entry.isBlockDevice() || entry.isCharacterDevice()) {
    return undefined;
  }
  return { ...stem, socket: join(runtimeDir, entry.name) };
}

/**
 * Lists socket candidates in the runtime directory, read-only. At most `maxEntries` raw entries are
 * read and `maxCandidates` candidates returned; the scan stops once `timeBudgetMs` has elapsed (by
 * its clock, checked before each entry, and by a real timer that abandons a stuck directory read).
 * The directory is verified (owned by us, 0700) first; an unsafe one throws `RuntimeDirError`.
 */
export async function scanRuntime(runtimeDir: string, options: ScanOptions = {}): Promise<ScanResult> {
  const maxEntries = options.maxEntries ?? SCAN_MAX_ENTRIES;
  const maxCandidates = options.maxCandidates ?? SCAN_MAX_CANDIDATES;
  const budget = options.timeBudgetMs ?? SCAN_TIME_BUDGET_MS;
  const now = options.now ?? (() => performance.now());
  if (!checkRuntimeDir(runtimeDir)) return { exists: false, candidates: [], entriesRead: 0, truncated: false };

  const candidates: Candidate[] = [];
  let entriesRead = 0;
  let truncated: ScanTruncation = false;
  let abandoned = false;

  const work = (async () => {
    const start = now();
    let handle: fs.Dir;
    try {
      handle = await fs.promises.opendir(runtimeDir, { bufferSize: 64 });
    } catch (err) {
      throw new RuntimeDirError("io", runtimeDir, `cannot be read (${(err as NodeJS.ErrnoException).code})`);
    }
    try {
      for (;;) {
        if (abandoned) return;
        if (now() - start > budget) {
          truncated = "time";
          return;
        }
        const entry = await handle.read();
        if (entry === null || abandoned) return;
        if (entriesRead >= maxEntries) {
          truncated = "entries";
          return;
        }
        entriesRead += 1;
        const candidate = candidateOf(runtimeDir, entry);
        if (!candidate) continue;
        if (candidates.length >= maxCandidates) {
          truncated = "candidates";
          return;
        }
        candidates.push(candidate);
      }
    } finally {
      await handle.close().catch(() => undefined);
    }
  })();

  let timer: NodeJS.Timeout | undefined;
  const fence = new Promise<"time">((resolve) => {
    timer = setTimeout(() => resolve("time"), budget);
  });
  let winner: "done" | "time";
  try {
    winner = await Promise.race([work.then(() => "done" as const), fence]);
  } finally {
    clearTimeout(timer);
  }
  if (winner === "time") {
    abandoned = true;
    work.catch(() => undefined);
    if (!truncated) truncated = "time";
  }
  return { exists: true, candidates: [...candidates], entriesRead, truncated };
}
