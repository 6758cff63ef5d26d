// The agent team's roster (SPEC-agent-team, "Roster"): a bounded page of the session's agents,
// loaded and (when asked) unloaded, their names and work titles escaped.
import type { RosterRow } from "../../generated/index.js";
import type { AgentFold } from "./agent-fold.js";
import { cutText, escapeUntrusted } from "./agent-tools.js";

/** Most rows in a roster page. */
export const ROSTER_PAGE_MAX = 256;

/** What the roster is read from (a part of the team's port). */
export interface AgentRosterPort {
  fold(agentId: string): AgentFold | undefined;
  agentIds(): readonly string[];
  unloadedIds(): readonly string[];
}

/**
 * A page of the roster: the session's agents ordered by id from after `cursor`, at most `limit`;
 * the count is checked before any row is built. `statusOf` says what a loaded agent is doing now.
 */
export function rosterPage(
  port: AgentRosterPort,
  o: { includeUnloaded: boolean; cursor?: string; limit?: number },
  statusOf: (agentId: string) => RosterRow["status"],
): { rows: RosterRow[]; total: number; next_cursor?: string } {
  const loaded = [...port.agentIds()];
  const unloaded = o.includeUnloaded ? port.unloadedIds().filter((id) => !port.fold(id)) : [];
  const ids = [...loaded, ...unloaded].sort();
  const limit = Math.min(Math.max(o.limit ?? ROSTER_PAGE_MAX, 1), ROSTER_PAGE_MAX);
  const from = o.cursor === undefined ? 0 : ids.findIndex((id) => id > (o.cursor as string));
  const page = from < 0 ? [] : ids.slice(from, from + limit);
  const rows = page.map((id): RosterRow => {
    const f = port.fold(id);
    if (!f) return { agent_id: id, loaded: false, ephemeral: false, created_at: 0, status: "unloaded" };
    const row: RosterRow = { agent_id: id, loaded: true, ephemeral: f.ephemeral, created_at: f.created_at, status: statusOf(id) };
    const name = f.metadata.display_name;
    if (name !== undefined) row.display_name = cutText(escapeUntrusted(name), 1024);
    if (f.parent_id !== undefined) row.parent_id = f.parent_id;
    if (f.creator !== undefined) row.creator = f.creator;
    if (f.role !== undefined) row.role = f.role.slice(0, 1024);
    if (f.work) {
      row.work_phase = f.work.phase;
      row.work_title = cutText(escapeUntrusted(f.work.title), 1024);
    }
    return row;
  });
  const last = page.at(-1);
  const more = from >= 0 && from + limit < ids.length && last !== undefined;
  return { rows, total: ids.length, ...(more ? { next_cursor: last } : {}) };
}
