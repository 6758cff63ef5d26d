// Addressing agents and sessions by id or unique prefix, from the state directory alone.
import * as fs from "node:fs";
import * as path from "node:path";
import { isValidId, replayJournal, validateJournalRecord, type JournalRecord } from "../store/index.js";
import { TraceError } from "./snapshot.js";

function idsIn(dir: string): string[] {
  try {
    return fs.readdirSync(dir).filter(isValidId).sort();
  } catch {
    return [];
  }
}

/** The one id in `ids` equal to `query`, else the one starting with it; a TraceError otherwise. */
export function resolveId(query: string, ids: readonly string[], what: string): string {
  if (ids.includes(query)) return query;
  const matches = ids.filter((id) => id.startsWith(query));
  if (matches.length === 1) return matches[0] as string;
  if (matches.length === 0) throw new TraceError(`no ${what} matches ${JSON.stringify(query)}`);
  const shown = matches.slice(0, 5).join(", ");
  throw new TraceError(`${JSON.stringify(query)} is ambiguous: ${matches.length} ${what}s match (${shown}${matches.length > 5 ? ", …" : ""})`);
}

export function resolveSession(stateDir: string, query: string): string {
  return resolveId(query, idsIn(path.join(stateDir, "sessions")), "session");
}

/**
 * Agents a session ever loaded, from its membership journal (strict read-only replay: nothing is
 * locked or repaired; a torn tail of a live session is simply not read yet).
 */
export function sessionAgents(stateDir: string, sessionId: string): string[] {
  const file = path.join(stateDir, "sessions", sessionId, "events.cbor");
  const agents = new Set<string>();
  try {
    replayJournal<JournalRecord>(file, {
      validate: validateJournalRecord,
      collect: false,
      onRecord: (r) => {
        const id = r.event.data.agent_id;
        if (r.event.name === "session.agent_loaded" && typeof id === "string") agents.add(id);
      },
    });
  } catch (err) {
    throw new TraceError(`cannot read the journal of session ${sessionId}: ${(err as Error).message}`);
  }
  return [...agents].sort();
}

/** Resolves AGENT (id or unique prefix) among all agents, or among `--session`'s members. */
export function resolveAgent(stateDir: string, query: string, session?: string): { agentId: string; sessionId: string | null } {
  if (session === undefined) return { agentId: resolveId(query, idsIn(path.join(stateDir, "agents")), "agent"), sessionId: null };
  const sessionId = resolveSession(stateDir, session);
  const members = sessionAgents(stateDir, sessionId).filter((id) => fs.existsSync(path.join(stateDir, "agents", id)));
  return { agentId: resolveId(query, members, `agent of session ${sessionId}`), sessionId };
}
