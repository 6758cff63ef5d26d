// Cross-process single-writer lock beside a journal (`<journal>.lock`).
//
// The lock file is published atomically with its content (write a private temp file, then link(2)
// it into place, which fails with EEXIST if a lock exists), so there is never an empty lock whose
// holder is unknown. Content: "<pid> <start-marker> <token>". A holder is live when
// `process.kill(pid, 0)` succeeds and, where /proc exists, the pid is not a zombie and its start time
// still matches the marker (so neither a killed holder its parent has not reaped yet nor a recycled
// pid keeps a dead holder's lock). A dead holder's lock is taken over under a second exclusive guard
// file so two contenders never both remove it.
import * as fs from "node:fs";
import { randomHex } from "../startup/random.js";
import { JournalLockedError } from "./errors.js";
import { LOCK_TAKEOVER_ATTEMPTS } from "./limits.js";

interface Holder {
  pid: number;
  start: string;
  raw: string;
}

/** State (field 3) and start time in clock ticks (field 22) of `/proc/<pid>/stat`, or undefined. */
function procStat(pid: number): { state: string; start: string } | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may contain spaces and parentheses: fields start after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "", start: fields[19] ?? "-" };
  } catch {
    return undefined;
  }
}

/** Process start time in clock ticks from /proc, or "-" where unavailable. */
export function processStartMarker(pid: number): string {
  return procStat(pid)?.start ?? "-";
}

let selfMarker: string | undefined;
function ownMarker(): string {
  selfMarker ??= processStartMarker(process.pid);
  return selfMarker;
}

function parseHolder(raw: string): Holder | null {
  const [pidText, start] = raw.trim().split(" ");
  const pid = Number(pidText);
  if (!Number.isSafeInteger(pid) || pid <= 0 || start === undefined) return null;
  return { pid, start, raw };
}

export function isHolderAlive(pid: number, start: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const now = procStat(pid);
  if (now === undefined) return true; // no /proc here: the signal probe decides
  // A zombie (Z) or dying (X) process has exited; it only waits for its parent to reap it (a SIGKILLed
  // daemon whose parent does not wait for it stays Z), yet still answers the signal probe.
  if (now.state === "Z" || now.state === "X") return false;
  return start === "-" || now.start === "-" || now.start === start;
}

function readHolder(path: string): Holder | null | "missing" {
  try {
    return parseHolder(fs.readFileSync(path, "utf8"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw err;
  }
}

/** Publishes `content` at `path` only if nothing is there; returns false on EEXIST. */
function publishExclusive(path: string, content: string): boolean {
  const tmp = `${path}.${process.pid}.${randomHex(6)}.tmp`;
  fs.writeFileSync(tmp, content, { mode: 0o600, flag: "wx" });
  try {
    fs.linkSync(tmp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

function unlinkIfContent(path: string, raw: string): void {
  try {
    if (fs.readFileSync(path, "utf8") === raw) fs.unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

export interface LockHandle {
  readonly path: string;
  release(): void;
}

/**
 * Takes the writer lock for `journalPath` or throws JournalLockedError naming the live holder.
 * Never waits: a live holder is an immediate error, a dead holder is taken over.
 */
export function acquireJournalLock(journalPath: string): LockHandle {
  const lockPath = `${journalPath}.lock`;
  const guardPath = `${lockPath}.takeover`;
  const content = `${process.pid} ${ownMarker()} ${randomHex(8)}\n`;
  for (let attempt = 0; attempt < LOCK_TAKEOVER_ATTEMPTS; attempt++) {
    if (publishExclusive(lockPath, content)) {
      let released = false;
      return {
        path: lockPath,
        release() {
          if (released) return;
          released = true;
          unlinkIfContent(lockPath, content);
        },
      };
    }
    const holder = readHolder(lockPath);
    if (holder === "missing") continue; // released between our attempt and the read
    if (holder !== null && isHolderAlive(holder.pid, holder.start)) throw new JournalLockedError(journalPath, holder.pid);
    // Dead (or unreadable) holder: remove it under the takeover guard.
    const guardContent = `${process.pid} ${ownMarker()} ${randomHex(8)}\n`;
    if (!publishExclusive(guardPath, guardContent)) {
      const g = readHolder(guardPath);
      if (g !== "missing" && g !== null && isHolderAlive(g.pid, g.start)) throw new JournalLockedError(journalPath, g.pid);
      if (g !== "missing") unlinkIfContent(guardPath, g === null ? fs.readFileSync(guardPath, "utf8") : g.raw);
      continue;
    }
    try {
      const again = readHolder(lockPath);
      const seen = holder === null ? null : holder.raw;
      if (again !== "missing") {
        const againRaw = again === null ? fs.readFileSync(lockPath, "utf8") : again.raw;
        if (seen === null || againRaw === seen) fs.rmSync(lockPath, { force: true });
      }
    } finally {
      unlinkIfContent(guardPath, guardContent);
    }
  }
  const last = readHolder(lockPath);
  throw new JournalLockedError(journalPath, last !== "missing" && last !== null ? last.pid : 0);
}

/**
 * The pid of the live writer holding `journalPath`'s lock, or null when no live process holds it
 * (no lock file, an unreadable one, or a dead holder). A read-only probe: it never takes, removes
 * or waits for the lock (offline readers use it to choose how to read a journal).
 */
export function liveJournalWriter(journalPath: string): number | null {
  const holder = readHolder(`${journalPath}.lock`);
  if (holder === "missing" || holder === null) return null;
  return isHolderAlive(holder.pid, holder.start) ? holder.pid : null;
}
