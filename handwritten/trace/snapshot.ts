// Read-only, snapshot-consistent capture of one agent journal for trace export (SPEC-trace-export).
//
// Two modes, chosen only by the writer lock:
//   - inactive (no live holder): the store's writer lock is taken without waiting before the journal
//     is opened, and kept until the caller closes the snapshot (staging finished), so no daemon can
//     resume, repair or append the journal under the export. The cut is the file's end.
//   - live (a running daemon holds the lock): the journal is opened and the cut is the exact frame
//     boundary its bound checkpoint (meta.json: same device and inode, witness of the bytes before
//     the boundary) names. Without a binding checkpoint there is no consistent cut and export fails.
// Either way one descriptor is kept, so every later read sees the same file, and nothing is read
// past the cut. The journal and its checkpoint are never written.
import * as fs from "node:fs";
import * as path from "node:path";
import { JournalLockedError, acquireJournalLock, boundCheckpoint, isValidId, liveJournalWriter, type LockHandle } from "../store/index.js";

export interface JournalSnapshot {
  readonly agentId: string;
  readonly file: string;
  /** Read-only descriptor of the journal; the caller closes it (`closeSnapshot`). */
  readonly fd: number;
  /** Bytes of the selected prefix: the file's end (inactive) or the checkpoint's boundary (live). */
  readonly cut: number;
  readonly mode: "eof" | "checkpoint";
  /** The seq the checkpoint says follows the cut (live mode only): the scan must end exactly there. */
  readonly expectedNextSeq: number | null;
  /** The live writer's pid (live mode only). */
  readonly writerPid: number | null;
  /** The writer lock this export holds (EOF mode only), released by `closeSnapshot`. */
  readonly lock: LockHandle | null;
}

export class TraceError extends Error {
  override name = "TraceError";
}

function openReadOnly(file: string, agentId: string): number {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new TraceError(code === "ENOENT" ? `agent ${agentId} has no journal (${file})` : `cannot open ${file}: ${(err as Error).message}`);
  }
  if (!fs.fstatSync(fd).isFile()) {
    fs.closeSync(fd);
    throw new TraceError(`${file} is not a regular file`);
  }
  return fd;
}

/** Captures the journal of agent `agentId` under `stateDir` (see the modes above). */
export function captureAgentJournal(stateDir: string, agentId: string): JournalSnapshot {
  if (!isValidId(agentId)) throw new TraceError(`not a valid agent id: ${JSON.stringify(agentId)}`);
  const dir = path.join(stateDir, "agents", agentId);
  const file = path.join(dir, "events.cbor");
  const meta = path.join(dir, "meta.json");
  let writerPid = liveJournalWriter(file);
  if (writerPid === null) {
    let lock;
    try {
      lock = acquireJournalLock(file);
    } catch (err) {
      if (!(err instanceof JournalLockedError)) throw err;
      writerPid = err.holderPid; // a writer started in between: take the live path
    }
    if (lock) {
      try {
        const fd = openReadOnly(file, agentId);
        return { agentId, file, fd, cut: fs.fstatSync(fd).size, mode: "eof", expectedNextSeq: null, writerPid: null, lock };
      } catch (err) {
        lock.release();
        throw err;
      }
    }
  }
  const fd = openReadOnly(file, agentId);
  try {
    const cp = boundCheckpoint(meta, fd);
    if (!cp)
      throw new TraceError(
        `agent ${agentId} is being written by a running daemon (pid ${writerPid}) and has no checkpoint that binds its journal yet; ` +
          "a consistent prefix is available once the daemon writes one (at the end of its current turn, or at shutdown)",
      );
    return { agentId, file, fd, cut: cp.boundary, mode: "checkpoint", expectedNextSeq: cp.next_seq, writerPid, lock: null };
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

export function closeSnapshot(s: JournalSnapshot): void {
  try {
    fs.closeSync(s.fd);
  } finally {
    s.lock?.release();
  }
}
