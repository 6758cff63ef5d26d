// Reading a session back from its journals (SPEC-session-lifecycle): records checked against their
// schemas as they are read, the session journal's membership, and each member agent's journal
// opened from its checkpoint with the fold that stands for the records before it.
import type { Event, PublisherEnvelope } from "../bus/index.js";
import { journalPath, type EventLog, type JournalRecord, type StateStore } from "../store/index.js";
import { checkedEvent } from "../protocol/index.js";
import { isEventName } from "../../generated/index.js";
import { workTitleProblem } from "./agent-tools.js";
import { emptyAgentFold, foldAgentRecord, parseAgentFold, type AgentFold } from "./agent-fold.js";

/** Thrown when a session cannot be resumed; the message names the file and the reason. */
export class ResumeError extends Error {
  override name = "ResumeError";
}

/** A journal record's event, checked against its schema (a record that fails it is a corrupt journal). */
export function recordEvent(r: JournalRecord, file: string | null): Event {
  if (!isEventName(r.event.name)) throw new ResumeError(`${file ?? "journal"}: record ${r.seq} names unknown event ${r.event.name}`);
  const e = checkedEvent(r.event.name, r.event.data);
  if (e instanceof Error) throw new ResumeError(`${file ?? "journal"}: record ${r.seq}: ${e.message}`);
  // The title's byte bound is not a schema's: it is held here, at the journal boundary (SPEC-agent-team).
  if (e.name === "agent.work_status_set") {
    const problem = workTitleProblem(e.data.title);
    if (problem !== undefined) throw new ResumeError(`${file ?? "journal"}: record ${r.seq}: agent.work_status_set: ${problem}`);
  }
  return e;
}

/** How a publisher is recorded as a journal record's source. */
export function publisherToSource(p: PublisherEnvelope): JournalRecord["source"] {
  const s: JournalRecord["source"] = { class: p.class };
  if (p.instance !== undefined) s.instance = p.instance;
  if (p.kind !== undefined) s.kind = p.kind;
  return s;
}

/** The agents loaded in a session at the end of its journal, sorted. */
export function sessionMembers(sessionRecords: readonly JournalRecord[], file: string | null): string[] {
  const members = new Set<string>();
  for (const r of sessionRecords) {
    const e = recordEvent(r, file);
    if (e.name === "session.agent_loaded") members.add(e.data.agent_id);
    if (e.name === "session.agent_unloaded") members.delete(e.data.agent_id);
  }
  return [...members].sort();
}

/**
 * Opens a member agent's journal for a resume. Its opening scan folds, as it reads, what follows a
 * checkpoint whose fold stands for the records before it — or the whole journal: memory stays
 * bounded by a record, not the journal.
 */
export function reopenAgent(store: StateStore, id: string): { fold: AgentFold; log: EventLog } {
  const file = journalPath(store.stateDir ?? "", "agent", id);
  let fold = emptyAgentFold();
  const log = store.openAgent(id, {
    resume: (stored, seq) => {
      const f = parseAgentFold(stored, seq);
      if (f) fold = f;
      return f !== undefined;
    },
    onRecord: (r) => {
      const e = recordEvent(r, file);
      if (fold.next_seq === 0 && e.name !== "agent.started") throw new ResumeError(`${file}: agent journal does not start with agent.started`);
      foldAgentRecord(fold, e, r.recorded_at);
    },
  });
  if (fold.next_seq === 0) throw new ResumeError(`${log.path ?? id}: agent journal does not start with agent.started`);
  return { fold, log };
}
