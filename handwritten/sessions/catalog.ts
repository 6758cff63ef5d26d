// Saved sessions in a state directory: listed from their summaries (one small checkpoint file per
// session, never a journal scan) and removed under their writer locks, so a running session is
// never touched (SPEC-session-lifecycle, "Saved sessions").
import * as fs from "node:fs";
import * as path from "node:path";
import {
  JournalLockedError,
  acquireJournalLock,
  checkpointPath,
  isValidId,
  journalPath,
  liveJournalWriter,
  readCheckpointFile,
  replayJournal,
  validateJournalRecord,
  type JournalRecord,
  type LockHandle,
} from "../store/index.js";
import { randomHex } from "../startup/random.js";
import { parseSessionSummary } from "./summary.js";

/** Most saved sessions a listing reads (newest folders beyond it are not missed: all are stat'ed). */
export const MAX_LISTED_SESSIONS = 10_000;
/** Largest manifest.json read. */
const MAX_MANIFEST_BYTES = 64 * 1024;

export interface SavedSession {
  readonly id: string;
  readonly title?: string;
  readonly project_root?: string;
  /** Microseconds since the epoch (from the summary), when known. */
  readonly created_at?: number;
  /** Milliseconds since the epoch: the newest change to the session's or its agents' journals. */
  readonly last_active: number;
  /** Bytes on disk of the session's folder and its agents' folders. */
  readonly bytes: number;
  /** The pid of the daemon writing it, when one is. */
  readonly running_pid?: number;
  readonly agents: readonly string[];
  /** Whether the listing had a summary to read (sessions from before summaries have none). */
  readonly summarized: boolean;
  /** The session this one continues (a handoff), and the one it was handed off to (SPEC-handoff). */
  readonly parent?: string;
  readonly successor?: string;
  /** The session this one is a fork of (`session.forked`). */
  readonly forked_from?: string;
}

export class SessionCatalogError extends Error {
  override name = "SessionCatalogError";
  constructor(
    readonly code: "unknown" | "ambiguous" | "running" | "failed",
    message: string,
  ) {
    super(message);
  }
}

const sessionsDir = (stateDir: string) => path.join(stateDir, "sessions");
const agentDir = (stateDir: string, id: string) => path.join(stateDir, "agents", id);

/** Ids of the session folders that hold a session journal. */
function sessionIds(stateDir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(sessionsDir(stateDir));
  } catch {
    return [];
  }
  return names.filter((n) => isValidId(n) && isFile(journalPath(stateDir, "session", n)));
}

function isFile(file: string): boolean {
  try {
    return fs.lstatSync(file).isFile();
  } catch {
    return false;
  }
}

/** Size and newest modification of the regular files directly in `dir` (journals, checkpoints, locks). */
function folderUsage(dir: string): { bytes: number; mtimeMs: number } {
  let bytes = 0;
  let mtimeMs = 0;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return { bytes, mtimeMs };
  }
  for (const n of names) {
    try {
      const st = fs.lstatSync(path.join(dir, n));
      if (!st.isFile()) continue;
      bytes += st.size;
      if (n.endsWith(".cbor")) mtimeMs = Math.max(mtimeMs, st.mtimeMs);
    } catch {
      // gone meanwhile
    }
  }
  return { bytes, mtimeMs };
}

function manifestProjectRoot(stateDir: string, id: string): string | undefined {
  const file = path.join(sessionsDir(stateDir), id, "manifest.json");
  try {
    const st = fs.lstatSync(file);
    if (!st.isFile() || st.size > MAX_MANIFEST_BYTES) return undefined;
    const v: unknown = JSON.parse(fs.readFileSync(file, "utf8"));
    const root = typeof v === "object" && v !== null ? (v as { project_root?: unknown }).project_root : undefined;
    return typeof root === "string" ? root : undefined;
  } catch {
    return undefined;
  }
}

/** One saved session as its summary (or, without one, its manifest) and its folders' files describe it. */
export function describeSession(stateDir: string, id: string): SavedSession {
  const summary = parseSessionSummary(readCheckpointFile(checkpointPath(stateDir, "session", id))?.fold);
  const own = folderUsage(path.join(sessionsDir(stateDir), id));
  let bytes = own.bytes;
  let lastActive = own.mtimeMs;
  const agents = summary?.agents ?? [];
  for (const a of agents) {
    if (!isValidId(a)) continue;
    const u = folderUsage(agentDir(stateDir, a));
    bytes += u.bytes;
    lastActive = Math.max(lastActive, u.mtimeMs);
  }
  const pid = liveJournalWriter(journalPath(stateDir, "session", id));
  const projectRoot = summary?.project_root ?? manifestProjectRoot(stateDir, id);
  return {
    id,
    ...(summary?.title !== undefined ? { title: summary.title } : {}),
    ...(projectRoot !== undefined ? { project_root: projectRoot } : {}),
    ...(summary !== undefined ? { created_at: summary.created_at } : {}),
    last_active: lastActive,
    bytes,
    ...(pid !== null ? { running_pid: pid } : {}),
    agents,
    summarized: summary !== undefined,
    ...(summary?.parent !== undefined ? { parent: summary.parent } : {}),
    ...(summary?.successor !== undefined ? { successor: summary.successor } : {}),
    ...(summary?.forked_from !== undefined ? { forked_from: summary.forked_from } : {}),
  };
}

/** Every saved session, the most recently active first. */
export function listSavedSessions(stateDir: string): SavedSession[] {
  const ids = sessionIds(stateDir).slice(0, MAX_LISTED_SESSIONS);
  return ids.map((id) => describeSession(stateDir, id)).sort((a, b) => b.last_active - a.last_active || a.id.localeCompare(b.id));
}

/** The saved session `query` names: its id, or a unique prefix of one. */
export function resolveSavedSession(stateDir: string, query: string): string {
  const ids = sessionIds(stateDir);
  if (ids.includes(query)) return query;
  const matches = query === "" ? [] : ids.filter((id) => id.startsWith(query));
  if (matches.length === 1) return matches[0] as string;
  if (matches.length === 0) throw new SessionCatalogError("unknown", `no saved session matches ${JSON.stringify(query.slice(0, 80))}`);
  const shown = matches.slice(0, 5).join(", ");
  throw new SessionCatalogError("ambiguous", `${JSON.stringify(query)} is ambiguous: ${matches.length} sessions match (${shown}${matches.length > 5 ? ", …" : ""})`);
}

/** The agents a session loaded, from its membership journal (when its summary does not say). */
export function membersFromJournal(stateDir: string, id: string): string[] {
  const members = new Set<string>();
  replayJournal<JournalRecord>(journalPath(stateDir, "session", id), {
    validate: validateJournalRecord,
    collect: false,
    onRecord: (r) => {
      const agent = (r.event.data as { agent_id?: unknown }).agent_id;
      if (typeof agent !== "string") return;
      if (r.event.name === "session.agent_loaded") members.add(agent);
      else if (r.event.name === "session.agent_unloaded") members.delete(agent);
    },
  });
  return [...members];
}

/**
 * Removes a saved session: its folder and the folders of its agents that no other saved session
 * lists. The session's writer lock and each agent's are taken first, so a running session (or one
 * starting) is refused and nothing is removed; then every folder is moved into a trash folder in
 * one rename each and the trash is deleted, so a crash leaves either the session or trash.
 */
export function removeSavedSession(stateDir: string, id: string): SavedSession {
  emptyTrash(stateDir);
  const described = describeSession(stateDir, id);
  const locks: LockHandle[] = [];
  try {
    try {
      locks.push(acquireJournalLock(journalPath(stateDir, "session", id)));
    } catch (err) {
      if (err instanceof JournalLockedError) throw new SessionCatalogError("running", `${id} is running (pid ${err.holderPid}); end it first (:quit in its UI), then remove it`);
      throw err;
    }
    const agents = described.summarized ? described.agents : membersFromJournal(stateDir, id);
    const elsewhere = new Set(
      sessionIds(stateDir)
        .filter((s) => s !== id)
        .flatMap((s) => parseSessionSummary(readCheckpointFile(checkpointPath(stateDir, "session", s))?.fold)?.agents ?? []),
    );
    const own = agents.filter((a) => isValidId(a) && !elsewhere.has(a) && fs.existsSync(agentDir(stateDir, a)));
    for (const a of own) {
      try {
        locks.push(acquireJournalLock(journalPath(stateDir, "agent", a)));
      } catch (err) {
        if (err instanceof JournalLockedError) throw new SessionCatalogError("running", `${id}: its agent ${a} is in use by pid ${err.holderPid}; nothing was removed`);
        throw err;
      }
    }
    const trash = path.join(stateDir, ".trash", `${id}.${process.pid}.${randomHex(4)}`);
    fs.mkdirSync(trash, { recursive: true, mode: 0o700 });
    // The session folder first: once it is gone the session is no longer listed or resumable.
    fs.renameSync(path.join(sessionsDir(stateDir), id), path.join(trash, "session"));
    for (const a of own) fs.renameSync(agentDir(stateDir, a), path.join(trash, `agent-${a}`));
    fs.rmSync(trash, { recursive: true, force: true });
    return described;
  } finally {
    for (const l of locks) l.release();
  }
}

/** Deletes what removals interrupted by a crash left in the trash folder (a live remover's is left alone). */
function emptyTrash(stateDir: string): void {
  const dir = path.join(stateDir, ".trash");
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const pid = Number(n.split(".")[1]);
    if (pid === process.pid || (Number.isSafeInteger(pid) && pid > 0 && processAlive(pid))) continue;
    fs.rmSync(path.join(dir, n), { recursive: true, force: true });
  }
}

/** Whether a process with this pid exists (one of another user's counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Of a session's agents, the one a user's prompt continues: not started by another agent, not
 * ephemeral, the most recently written; its checkpoint says who started it. An agent whose
 * checkpoint cannot be read is still a candidate (most agents a user starts have no creator).
 */
export function agentToContinue(stateDir: string, agents: readonly string[]): string | undefined {
  let best: { id: string; at: number } | undefined;
  for (const id of agents) {
    const dir = agentDir(stateDir, id);
    const fold = readCheckpointFile(path.join(dir, "meta.json"))?.fold as { created_by?: unknown; ephemeral?: unknown; creator?: unknown } | undefined;
    if (fold?.created_by !== undefined || fold?.ephemeral === true || fold?.creator === "agent") continue;
    let at: number;
    try {
      at = fs.statSync(path.join(dir, "events.cbor")).mtimeMs;
    } catch {
      continue;
    }
    if (!best || at > best.at || (at === best.at && id > best.id)) best = { id, at };
  }
  return best?.id;
}
