// Forks of saved sessions (SPEC-session-lifecycle, "Forks"): one agent's journal, up to the end of
// its last finished unit of work, copied under new agent and session ids into a new session built
// beside the state folders and published by two renames, so a fork is whole or absent and its
// source is only read.
import * as fs from "node:fs";
import * as path from "node:path";
import { isValidId, journalPath, openFileStateStore, replayJournal, validateJournalRecord, type EventLog, type JournalRecord } from "../store/index.js";
import { mintId } from "../startup/ids.js";
import { randomHex } from "../startup/random.js";
import { SessionCatalogError, agentToContinue, describeSession, membersFromJournal, processAlive } from "./catalog.js";
import { SessionSummaryFold } from "./summary.js";

/** Where forks are built, under the state folder: never listed, never resumed. */
export const FORKS_DIR = ".forks";

export interface Forked {
  readonly session_id: string;
  readonly agent_id: string;
  readonly from_session_id: string;
  readonly from_agent_id: string;
  /** Records of the source agent's journal the fork holds (its `agent.started` replaced). */
  readonly copied_records: number;
  /** Records after them the fork left out: the source's turn in progress, or what followed its last finished one. */
  readonly left_out: number;
  readonly title?: string;
}

export interface ForkOptions {
  /** The agent to fork; the one a user's prompt continues when absent. */
  readonly agentId?: string;
  /** Called once the staging folder exists and again once the agent's folder is published (crash tests). */
  readonly onStep?: (step: "staged" | "agent_published") => void;
}

/** Records after which an agent has no turn open: a unit of work ended. */
const UNIT_ENDS = new Set(["agent.outer_turn_finished", "agent.compaction_committed", "agent.compaction_failed"]);

const fail = (message: string) => new SessionCatalogError("failed", message);

/**
 * Forks agent `o.agentId` (or the one a prompt continues) of saved session `sessionId` into a new
 * session; returns what was made. Refused, with nothing written, when the agent is not the
 * session's, has no finished turn, or its journal cannot be read.
 */
export function forkSession(stateDir: string, sessionId: string, o: ForkOptions = {}): Forked {
  cleanInterruptedForks(stateDir);
  const source = describeSession(stateDir, sessionId);
  const members = source.summarized ? source.agents : membersFromJournal(stateDir, sessionId);
  const fromAgent = o.agentId ?? agentToContinue(stateDir, members);
  if (fromAgent === undefined) throw fail(`session ${sessionId} has no agent to fork`);
  if (!members.includes(fromAgent) || !isValidId(fromAgent)) throw fail(`agent ${fromAgent} is not an agent of session ${sessionId}`);
  const journal = journalPath(stateDir, "agent", fromAgent);
  const cut = lastUnitEnd(journal, fromAgent);
  if (cut.started === undefined) throw fail(`agent ${fromAgent} of session ${sessionId} has no journal to fork`);
  if (cut.through === 0) throw fail(`agent ${fromAgent} of session ${sessionId} has not finished a turn yet: there is nothing to fork`);
  const projectRoot = source.project_root ?? cut.started.cwd;
  const forked = { session_id: mintId("s"), agent_id: mintId("a") };
  const staging = path.join(stateDir, FORKS_DIR, `${forked.session_id}.${forked.agent_id}.${process.pid}.${randomHex(4)}`);
  fs.mkdirSync(staging, { recursive: true, mode: 0o700 });
  try {
    o.onStep?.("staged");
    const store = openFileStateStore({ stateDir: staging });
    const swap = new Map([
      [fromAgent, forked.agent_id],
      [sessionId, forked.session_id],
    ]);
    let copied = 0;
    try {
      const agentLog = store.openAgent(forked.agent_id);
      replayJournal<JournalRecord>(journal, {
        validate: validateJournalRecord,
        collect: false,
        onRecord: (r) => {
          if (r.seq >= cut.through) return;
          const data = r.seq === 0 ? forkStarted(cut.started as Started, forked, projectRoot) : (swapIds(r.event.data, swap) as Record<string, unknown>);
          agentLog.append({ event: { name: r.event.name, data }, parent: r.parent, source: r.source, recorded_at: r.recorded_at });
          copied++;
        },
      });
      if (copied !== cut.through) throw fail(`the journal of agent ${fromAgent} changed while it was copied; nothing was forked`);
      writeSessionJournal(store.openSession(forked.session_id), projectRoot, source.title, { from_session_id: sessionId, from_agent_id: fromAgent, agent_id: forked.agent_id, copied_records: copied });
      store.openRestore(forked.session_id);
      writeManifest(path.join(staging, "sessions", forked.session_id), forked.session_id, projectRoot);
    } finally {
      store.close();
    }
    const agentDir = path.join(staging, "agents", forked.agent_id);
    const sessionDir = path.join(staging, "sessions", forked.session_id);
    syncFolder(agentDir);
    syncFolder(sessionDir);
    // The agent's folder first: a session is never published naming an agent that is not there.
    publish(agentDir, path.join(stateDir, "agents", forked.agent_id));
    o.onStep?.("agent_published");
    publish(sessionDir, path.join(stateDir, "sessions", forked.session_id));
  } catch (err) {
    // Not published: the agent's folder, when it was, goes too (no session names it).
    if (fs.existsSync(path.join(staging, "sessions", forked.session_id))) fs.rmSync(path.join(stateDir, "agents", forked.agent_id), { recursive: true, force: true });
    fs.rmSync(staging, { recursive: true, force: true });
    if (err instanceof SessionCatalogError) throw err;
    throw fail(`the fork of session ${sessionId} could not be written: ${err instanceof Error ? err.message : String(err)}; nothing was forked`);
  }
  fs.rmSync(staging, { recursive: true, force: true });
  return {
    ...forked,
    from_session_id: sessionId,
    from_agent_id: fromAgent,
    copied_records: cut.through,
    left_out: cut.total - cut.through,
    ...(source.title !== undefined ? { title: source.title } : {}),
  };
}

interface Started {
  cwd: string;
  role?: string;
  model?: string;
}

/**
 * The source agent's `agent.started`, and the length of the prefix that ends with its last finished
 * unit of work: after an `agent.outer_turn_finished`, or a compaction's end with no turn open.
 */
function lastUnitEnd(journal: string, agentId: string): { started?: Started; through: number; total: number } {
  let started: Started | undefined;
  let through = 0;
  let total = 0;
  const open = new Set<string>();
  try {
    replayJournal<JournalRecord>(journal, {
      validate: validateJournalRecord,
      collect: false,
      onRecord: (r) => {
        total = r.seq + 1;
        const { name, data } = r.event;
        if (r.seq === 0) {
          if (name !== "agent.started" || data.agent_id !== agentId) throw fail(`${journal} does not begin with agent ${agentId}'s start`);
          if (data.ephemeral === true) throw fail(`agent ${agentId} is ephemeral: it keeps no conversation to fork`);
          started = { cwd: typeof data.cwd === "string" ? data.cwd : "", ...(typeof data.role === "string" ? { role: data.role } : {}), ...(typeof data.model === "string" ? { model: data.model } : {}) };
          return;
        }
        const prompt = typeof data.prompt_id === "string" ? data.prompt_id : undefined;
        if (name === "agent.prompt_started" && prompt !== undefined) open.add(prompt);
        if (name === "agent.outer_turn_finished" && prompt !== undefined) open.delete(prompt);
        if (UNIT_ENDS.has(name) && open.size === 0) through = r.seq + 1;
      },
    });
  } catch (err) {
    if (err instanceof SessionCatalogError) throw err;
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { through: 0, total: 0 };
    throw fail(`cannot read ${journal}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return { ...(started !== undefined ? { started } : {}), through, total };
}

/** The fork's own `agent.started`: a top-level agent a user made, with the source's role, model and folder. */
function forkStarted(started: Started, ids: { session_id: string; agent_id: string }, cwd: string): Record<string, unknown> {
  return { agent_id: ids.agent_id, session_id: ids.session_id, creator: "ui", cwd: started.cwd || cwd, ephemeral: false, ...(started.role !== undefined ? { role: started.role } : {}), ...(started.model !== undefined ? { model: started.model } : {}) };
}

/** `value` with every string that is exactly a key of `swap` replaced (ids are whole strings, never parts). */
function swapIds(value: unknown, swap: ReadonlyMap<string, string>): unknown {
  if (typeof value === "string") return swap.get(value) ?? value;
  if (Array.isArray(value)) return value.map((v) => swapIds(v, swap));
  if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = swapIds(v, swap);
    return out;
  }
  return value;
}

/** The fork's session journal, with its summary in the checkpoint so that listings show it at once. */
function writeSessionJournal(log: EventLog, projectRoot: string, title: string | undefined, forked: Record<string, unknown>): void {
  const summary = new SessionSummaryFold(projectRoot);
  const session_id = log.id;
  const records: Array<{ name: string; data: Record<string, unknown> }> = [
    { name: "session.started", data: { session_id, project_root: projectRoot, resumed: false, ephemeral: false } },
    { name: "session.forked", data: forked },
    { name: "session.agent_loaded", data: { agent_id: forked.agent_id } },
    ...(title !== undefined ? [{ name: "session.title_set", data: { title, origin: "fork" } }] : []),
  ];
  for (const event of records) {
    const r = log.append({ event, source: { class: "harness" } });
    summary.fold(event.name, event.data, r.recorded_at);
  }
  log.checkpoint({ ...summary.value(Date.now() * 1000) });
}

function writeManifest(dir: string, sessionId: string, projectRoot: string): void {
  fs.writeFileSync(path.join(dir, "manifest.json"), `${JSON.stringify({ session_id: sessionId, project_root: projectRoot }, null, 2)}\n`, { mode: 0o600 });
}

/** Every regular file in `dir` and `dir` itself made durable (a lock file left by the store is dropped). */
function syncFolder(dir: string): void {
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name);
    if (name.endsWith(".lock") || name.endsWith(".tmp")) {
      fs.rmSync(file, { force: true });
      continue;
    }
    if (fs.lstatSync(file).isFile()) syncPath(file);
  }
  syncPath(dir);
}

function syncPath(p: string): void {
  const fd = fs.openSync(p, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** One rename into its parent (created when missing), then the parent synced. */
function publish(from: string, to: string): void {
  fs.mkdirSync(path.dirname(to), { recursive: true, mode: 0o700 });
  fs.renameSync(from, to);
  syncPath(path.dirname(to));
}

/**
 * What forks killed on the way left: a staging folder whose process is gone, and the agent folder it
 * had published when its session had not been (no session names that agent).
 */
export function cleanInterruptedForks(stateDir: string): void {
  const dir = path.join(stateDir, FORKS_DIR);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const [sessionId, agentId, pidText] = n.split(".");
    const pid = Number(pidText);
    if (pid === process.pid || (Number.isSafeInteger(pid) && pid > 0 && processAlive(pid))) continue;
    const staged = path.join(dir, n);
    if (sessionId !== undefined && agentId !== undefined && isValidId(sessionId) && isValidId(agentId) && fs.existsSync(path.join(staged, "sessions", sessionId))) {
      if (!fs.existsSync(path.join(stateDir, "sessions", sessionId))) fs.rmSync(path.join(stateDir, "agents", agentId), { recursive: true, force: true });
    }
    fs.rmSync(staged, { recursive: true, force: true });
  }
}

