// The session's journals (SPEC-event-publication, "Persistence classes"): each durable commit
// appended to the session journal, the restore stream or its agent's journal; the checkpoints that
// keep a resume short (the session's summary, each agent's fold); and reads of them for replay,
// history pages and an agent's last answer.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Committed, Event, HistoryReader } from "../bus/index.js";
import type { EventLog, JournalRecord, StateStore } from "../store/index.js";
import { agentIdOf } from "../protocol/index.js";
import { SessionSummaryFold } from "../sessions/index.js";
import { foldAgentRecord } from "./agent-fold.js";
import { lastAnswerOf } from "./agent-team.js";
import { publisherToSource } from "./session-restore.js";
import { openJournalHistory } from "./history.js";
import { RestoreCalls } from "./restore-calls.js";
import { CHECKPOINT_EVERY_BYTES, HISTORY_PAGE_BYTES, HISTORY_PAGE_MAX_EVENTS } from "./limits.js";
import type { AgentState } from "./harness.js";

/** The records that end an agent's unit of work (a turn, a compaction): its journal gets a checkpoint after each. */
const CHECKPOINTED_ENDS = new Set(["agent.outer_turn_finished", "agent.compaction_committed", "agent.compaction_failed"]);

export interface SessionJournalsPort {
  readonly sessionId: string;
  readonly projectRoot: string;
  readonly store: StateStore;
  readonly agents: ReadonlyMap<string, AgentState>;
  /** An agent record was appended at `seq` (the agent loop folds it). */
  agentRecordAppended(c: Committed, seq: number): void;
  warn(message: string): void;
}

export class SessionJournals {
  sessionLog!: EventLog;
  restoreLog!: EventLog;
  /** The session journal folded for listings; kept in its checkpoint after every append. */
  private readonly summary: SessionSummaryFold;
  /** A session-journal append is not in the checkpoint's summary yet. */
  private checkpointDue = false;
  /** The restore stream's open calls, and its compaction. */
  readonly restoreCalls: RestoreCalls;

  constructor(private readonly port: SessionJournalsPort) {
    this.summary = new SessionSummaryFold(port.projectRoot);
    this.restoreCalls = new RestoreCalls(port.warn, (agentId) => port.agents.has(agentId));
  }

  /** Opens the session journal and the restore stream; returns the session journal's records, folded into its summary. */
  open(): JournalRecord[] {
    const { store, sessionId } = this.port;
    const records: JournalRecord[] = [];
    this.sessionLog = store.openSession(sessionId, { onRecord: (r) => records.push(r) });
    // Read whole: it holds only open calls' records and what finished since its last compaction.
    this.restoreLog = store.openRestore(sessionId, { onRecord: (r) => this.restoreCalls.noteRecord(r, null) });
    for (const r of records) this.summary.fold(r.event.name, r.event.data, r.recorded_at);
    return records;
  }

  /** Whether the session has a title already. */
  get hasTitle(): boolean {
    return this.summary.hasTitle;
  }

  /** A new session's manifest: its id and project. */
  writeManifest(stateDir: string): void {
    const dir = join(stateDir, "sessions", this.port.sessionId);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = join(dir, `.manifest.json.${process.pid}.tmp`);
    writeFileSync(tmp, `${JSON.stringify({ session_id: this.port.sessionId, project_root: this.port.projectRoot }, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, join(dir, "manifest.json"));
  }

  /** Durable appends by persistence class; throwing aborts the commit. */
  append(c: Committed): void {
    const source = publisherToSource(c.publisher);
    const input = { event: { name: c.name, data: c.data }, source, recorded_at: c.recordedAt };
    const agentId = agentIdOf(c);
    const agent = agentId !== undefined ? this.port.agents.get(agentId) : undefined;
    // An ephemeral agent's facts stay in memory: its own journal is memory-only, and the session's
    // journals never name it, so nothing of it is left to resume.
    if (c.persistence !== "agent" && agent?.fold.ephemeral === true) return;
    if (c.persistence === "session") {
      this.sessionLog.append(input);
      this.summary.fold(c.name, c.data, c.recordedAt);
      this.checkpointSessionSoon();
    } else if (c.persistence === "restore") {
      this.restoreCalls.noteRecord(this.restoreLog.append(input), this.restoreLog.path);
      this.restoreCalls.compact(this.restoreLog);
    } else if (c.persistence === "agent") {
      if (!agent) throw new Error(`no loaded agent ${agentId ?? "(none named)"} for ${c.name}`);
      const parent = agent.log.nextSeq === 0 ? null : agent.log.nextSeq - 1;
      const seq = agent.log.nextSeq;
      agent.log.append({ ...input, parent });
      foldAgentRecord(agent.fold, c, c.recordedAt);
      this.restoreCalls.noteAgentRecord(c);
      this.port.agentRecordAppended(c, seq);
      // The creation record and the end of each turn or compaction get a checkpoint (the fold is
      // simple and the journal quiet then: a `:compact` of an idle agent ends no turn, and a trace
      // or `session stats` of the running session reads up to the checkpoint), and so does a
      // round's end past CHECKPOINT_EVERY_BYTES in a long turn.
      if (seq === 0 || CHECKPOINTED_ENDS.has(c.name)) this.checkpointAgent(agent);
      else if (c.name === "provider.response_finished") this.checkpointAgent(agent, CHECKPOINT_EVERY_BYTES);
    }
  }

  /**
   * Writes the session journal's checkpoint with its summary soon: appends made in one turn of the
   * event loop (a session's start, an agent and its membership) share one write. It is derived, so
   * one lost to a crash only leaves a listing without the newest title.
   */
  private checkpointSessionSoon(): void {
    if (this.checkpointDue) return;
    this.checkpointDue = true;
    setImmediate(() => this.checkpointSession());
  }

  /** The session journal's checkpoint with its summary (listings read it instead of the journal), when one is due. */
  checkpointSession(): void {
    if (!this.checkpointDue) return;
    this.checkpointDue = false;
    try {
      this.sessionLog.checkpoint({ ...this.summary.value(Date.now() * 1000) });
    } catch (err) {
      this.port.warn(`could not write the session's summary: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /**
   * Writes an agent's checkpoint (its fold at the journal's end) when at least `due` bytes were
   * appended since the last one: a resume after a crash folds a short tail, and a trace of a running
   * session reads up to it. Always with `due` 0 when anything was appended (shutdown, a turn's end).
   */
  checkpointAgent(agent: AgentState, due = 1): void {
    if (agent.fold.ephemeral || agent.log.bytesSinceCheckpoint < due) return;
    try {
      agent.log.checkpoint({ ...agent.fold });
    } catch (err) {
      this.port.warn(`could not write the checkpoint of agent ${agent.id}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /**
   * Replayed history from every journal of the session: the session's, the restore stream, each
   * agent's. The restore stream is not compacted while a replay reads it (its seqs would move).
   */
  openHistory(recent: number | undefined): HistoryReader {
    const done = this.restoreCalls.reading();
    try {
      const reader = openJournalHistory([this.sessionLog, this.restoreLog, ...[...this.port.agents.values()].map((a) => a.log)], recent);
      return {
        omitted: reader.omitted,
        next: () => reader.next(),
        close: () => {
          reader.close();
          done();
          this.restoreCalls.compact(this.restoreLog);
        },
      };
    } catch (err) {
      done();
      throw err;
    }
  }

  /**
   * A page of one agent's history for `ui_history_request`: the records before `before` (its
   * journal's end when absent), at most `limit` and about HISTORY_PAGE_BYTES of them, oldest first.
   */
  historyPage(agentId: string, before: number | undefined, limit: number): { first: number; total: number; records: JournalRecord[] } | undefined {
    const agent = this.port.agents.get(agentId);
    if (!agent) return undefined;
    const total = agent.log.nextSeq;
    const end = Math.min(before ?? total, total);
    const first = agent.log.windowStart(end, Math.min(limit, HISTORY_PAGE_MAX_EVENTS), HISTORY_PAGE_BYTES);
    return { first, total, records: agent.log.readRange(first, end) };
  }

  /** An agent's last answer, from the last records of its journal (bounded: a result, not a transcript). */
  lastAnswer(agentId: string): string | undefined {
    const log = this.port.agents.get(agentId)?.log;
    if (!log) return undefined;
    const end = log.nextSeq;
    return lastAnswerOf(log.readRange(log.windowStart(end, 256, 4 * 1024 * 1024), end));
  }
}

let mandatoryNotices = 0;

/**
 * Current-state keys of the `snapshot` persistence class, which the bus keeps instead of a journal:
 * the latest event per key is re-synthesised for late subscribers.
 */
export function snapshotKey(e: Event & { readonly publisher?: { readonly instance?: string } }): string | null {
  switch (e.name) {
    case "mcp.server_state_reported":
      // One per publishing instance: the server is the instance's (SPEC-mcp, "Authority").
      return `${e.name}:${e.publisher?.instance ?? ""}`;
    case "harness.notice":
      return e.data.mandatory === true ? `${e.name}:${mandatoryNotices++}` : null;
    case "agent.stats_updated":
    case "harness.agent_context_initialized":
      return `${e.name}:${e.data.agent_id}`;
    case "session.initialization_started":
    case "session.initialized":
      return "session.initialization"; // one projection: pending, then finished (SPEC-extension-declarations)
    case "tool.register":
      return `tool:${e.data.name}`;
    case "provider.models_updated":
      return `${e.name}:${e.data.instance}`;
    default:
      return e.name;
  }
}
