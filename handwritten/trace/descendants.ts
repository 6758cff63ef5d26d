// Descendant discovery for `tau agent trace --descendants` (SPEC-trace-export, "Descendants"): the
// agents another agent started, found only through creation records. An edge is a candidate
// journal's sequence-0 `agent.started` that passes its schema, names the candidate itself, says
// `creator: agent` and carries `created_by` naming its `parent_id` in the parent's session. A
// candidate whose first record is missing, unreadable, too large or anything else establishes no
// edge and stays outside the workflow; it is never an error. Discovery reads first records only,
// without locks; the export rechecks each edge on the captured journal before anything is written.
import * as fs from "node:fs";
import * as path from "node:path";
import { checkedEvent } from "../protocol/index.js";
import { isValidId, nodeIo, scanFrames, validateJournalRecord, type JournalRecord } from "../store/index.js";
import { TraceError } from "./snapshot.js";

/** Agents one export may include (each holds a journal descriptor until staging finishes). */
export const MAX_TRACE_AGENTS = 512;

/** A first record larger than this is no creation record (agent.started is a few hundred bytes). */
export const CREATION_RECORD_MAX_BYTES = 64 * 1024;

/** What an agent's creation record says of where it belongs. */
export interface CreationRecord {
  agentId: string;
  sessionId: string;
  recordedAt: number;
  /** Set for an agent another agent started: its parent and the tool call that started it. */
  createdBy?: { agentId: string; callId: string };
}

/** A member of an exported workflow: the root has no parent. */
export interface WorkflowAgent {
  agentId: string;
  parent: { agentId: string; callId: string } | null;
}

/** The creation record as the first record of a journal (read-only, no lock), or null when there is none valid. */
export function readCreationRecord(stateDir: string, agentId: string): CreationRecord | null {
  if (!isValidId(agentId)) return null;
  const file = path.join(stateDir, "agents", agentId, "events.cbor");
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return null;
    let first: JournalRecord | undefined;
    scanFrames<JournalRecord>(nodeIo, fd, file, { validate: validateJournalRecord, onRecord: (r) => (first = r) }, { offset: 0, seq: 0 }, { maxRecords: 1, maxBytes: CREATION_RECORD_MAX_BYTES });
    return first ? creationOf(first, agentId) : null;
  } catch {
    return null; // unreadable or corrupt: no edge (an included journal is validated strictly later)
  } finally {
    fs.closeSync(fd);
  }
}

/** What a journal's first record says of its agent, when it is a valid `agent.started` of `agentId`. */
export function creationOf(r: JournalRecord, agentId: string): CreationRecord | null {
  if (r.seq !== 0 || r.event.name !== "agent.started") return null;
  const e = checkedEvent("agent.started", r.event.data);
  if (e instanceof Error || e.name !== "agent.started" || e.data.agent_id !== agentId) return null;
  const d = e.data;
  const out: CreationRecord = { agentId, sessionId: d.session_id, recordedAt: r.recorded_at };
  if (d.creator === "agent" && d.created_by !== undefined && d.created_by.agent_id === d.parent_id) out.createdBy = { agentId: d.created_by.agent_id, callId: d.created_by.call_id };
  return out;
}

/**
 * The rooted workflow of `rootId`: the root, then its descendants breadth first, each agent's
 * children in creation order. `candidates` are the agents that may be descendants (a session's
 * members, or every agent in the state directory). A child belongs only when its creation record
 * names its parent and its parent's session.
 */
export function discoverWorkflow(stateDir: string, rootId: string, candidates: readonly string[]): WorkflowAgent[] {
  const root = readCreationRecord(stateDir, rootId);
  if (!root) throw new TraceError(`agent ${rootId} has no valid creation record (its journal's first record)`);
  const children = new Map<string, CreationRecord[]>();
  for (const id of candidates) {
    if (id === rootId) continue;
    const c = readCreationRecord(stateDir, id);
    if (!c?.createdBy) continue;
    const list = children.get(c.createdBy.agentId) ?? [];
    list.push(c);
    children.set(c.createdBy.agentId, list);
  }
  const out: WorkflowAgent[] = [{ agentId: rootId, parent: null }];
  const seen = new Set([rootId]);
  for (let i = 0; i < out.length; i++) {
    const parent = out[i] as WorkflowAgent;
    const kids = (children.get(parent.agentId) ?? []).filter((c) => c.sessionId === root.sessionId && !seen.has(c.agentId));
    kids.sort((a, b) => a.recordedAt - b.recordedAt || (a.agentId < b.agentId ? -1 : 1));
    for (const c of kids) {
      if (out.length >= MAX_TRACE_AGENTS) throw new TraceError(`the workflow of ${rootId} has more than ${MAX_TRACE_AGENTS} agents; export its parts one --descendants root at a time`);
      seen.add(c.agentId);
      out.push({ agentId: c.agentId, parent: { agentId: parent.agentId, callId: (c.createdBy as { callId: string }).callId } });
    }
  }
  return out;
}

/** Every agent id in the state directory (the candidates when no session narrows them). */
export function allAgents(stateDir: string): string[] {
  try {
    return fs.readdirSync(path.join(stateDir, "agents")).filter(isValidId).sort();
  } catch {
    return [];
  }
}
