// The tool calls of the restore stream (SPEC-journal-storage, "The restore stream"; SPEC-tool-routing):
// which are still open, so that a resume gives each call the daemon's end cut exactly one recorded
// outcome (never running it again), and so that the stream keeps only what a resume needs — the
// records of open calls — by rewriting itself without the finished ones once it grows past its bound.
import type { EventLog, JournalRecord } from "../store/index.js";
import { firstAtOrAfter } from "./history.js";
import { recordEvent } from "./session-restore.js";
import { HISTORY_READ_BYTES, RESTORE_STREAM_COMPACT_BYTES } from "./limits.js";

/** A call requested in the restore stream without its outcome yet. */
export interface OpenCall {
  readonly agentId: string;
  readonly callId: string;
  /** Set for a model's call: its outcome is a transcript fact too. */
  readonly promptId?: string;
  readonly tool: string;
  /**
   * What records the call's end in its agent's journal: for a model's call its transcript fact
   * (`provider.tool_result` / `provider.tool_error`: every such call gets exactly one, an agent
   * tool's from the harness itself), for an extension's call its `tool.result_display`.
   */
  readonly endsWith: "display" | "transcript";
  /** Requests of this id still owed an outcome (a refused reuse of a pending id counts too). */
  owed: number;
  /** When the first of them was recorded: its outcomes lie after it in the agent's journal. */
  readonly requestedAt: number;
}

/** The words of the outcome a resume records for a call the daemon's end cut. */
export const CUT_CALL_ERROR = "the daemon stopped during this call, so its outcome is unknown; it was not run again";

export class RestoreCalls {
  private readonly open = new Map<string, OpenCall>();
  /** The stream's size after its last compaction: what its open calls' records took. */
  private keptBytes = 0;
  /** Replays reading the journals now: the stream is never rewritten under one. */
  private readers = 0;

  constructor(
    private readonly warn: (message: string) => void,
    /** Whether an agent is loaded: a call of one that is not can get no outcome, and is forgotten. */
    private readonly isLoaded: (agentId: string) => boolean,
  ) {}

  /** Calls still open, oldest first. */
  get calls(): OpenCall[] {
    return [...this.open.values()];
  }

  /** A record of the restore stream: read by its opening scan, or just appended. */
  noteRecord(r: JournalRecord, file: string | null): void {
    const e = recordEvent(r, file);
    if (e.name !== "tool.request") return;
    const known = this.open.get(e.data.call_id);
    if (known) {
      known.owed++;
      return;
    }
    const promptId = r.source.class === "harness" ? e.data.prompt_id : undefined;
    this.open.set(e.data.call_id, {
      agentId: e.data.agent_id,
      callId: e.data.call_id,
      ...(promptId !== undefined ? { promptId } : {}),
      tool: e.data.tool,
      endsWith: promptId !== undefined ? "transcript" : "display",
      owed: 1,
      requestedAt: r.recorded_at,
    });
  }

  /** A record appended to an agent's journal: an outcome ends one request of its call. */
  noteAgentRecord(e: { readonly name: string; readonly data: Readonly<Record<string, unknown>> }): void {
    const callId = outcomeOf(e);
    const call = callId === undefined ? undefined : this.open.get(callId);
    if (!call || (call.endsWith === "display") !== (e.name === "tool.result_display")) return;
    if (--call.owed <= 0) this.open.delete(call.callId);
  }

  /**
   * At a resume, after the member agents' journals were opened: what each open call's agent journal
   * recorded after its request ends it (the daemon may have stopped after the outcome and before a
   * compaction). Calls of an agent that is not loaded can get no outcome and are forgotten.
   */
  reconcile(agentLogs: ReadonlyMap<string, EventLog>): void {
    const byAgent = new Map<string, OpenCall[]>();
    for (const call of this.open.values()) {
      if (!agentLogs.has(call.agentId)) this.open.delete(call.callId);
      else if (byAgent.has(call.agentId)) byAgent.get(call.agentId)?.push(call);
      else byAgent.set(call.agentId, [call]);
    }
    for (const [agentId, calls] of byAgent) {
      const log = agentLogs.get(agentId) as EventLog;
      const to = log.nextSeq;
      // Commit times ascend in a journal (as replay windows rely on): the outcomes follow the requests.
      let at = firstAtOrAfter(log, 0, to, Math.min(...calls.map((c) => c.requestedAt)));
      while (at < to) {
        const page = log.readRange(at, to, HISTORY_READ_BYTES);
        at += page.length;
        for (const r of page) this.noteAgentRecord(r.event);
      }
    }
  }

  /** A replay started reading the journals; the returned function ends it. */
  reading(): () => void {
    this.readers++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.readers--;
    };
  }

  /**
   * Rewrites the stream with only its open calls' records, when it grew past
   * RESTORE_STREAM_COMPACT_BYTES and twice what the last compaction kept (or `force`), and no replay
   * is reading it. Best effort: a failure is reported and the stream stays as it was, complete.
   */
  compact(log: EventLog, force = false): void {
    const size = log.size;
    if (this.readers > 0 || size === 0 || (!force && size <= Math.max(RESTORE_STREAM_COMPACT_BYTES, 2 * this.keptBytes))) return;
    for (const call of this.open.values()) if (!this.isLoaded(call.agentId)) this.open.delete(call.callId);
    try {
      // Read a page at a time: only the open calls' records are held.
      const kept: JournalRecord[] = [];
      for (let at = 0, to = log.nextSeq; at < to; ) {
        const page = log.readRange(at, to, HISTORY_READ_BYTES);
        at += page.length;
        for (const r of page) {
          const callId = r.event.data.call_id;
          if (typeof callId === "string" && this.open.has(callId)) kept.push(r);
        }
      }
      if (kept.length === log.nextSeq) {
        this.keptBytes = size;
        return;
      }
      log.rewrite(kept);
      this.keptBytes = log.size;
    } catch (err) {
      this.keptBytes = size; // tried again only once the stream doubled
      this.warn(`could not compact the restore stream: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

/** The call an agent-journal record ends, if it is an outcome. */
function outcomeOf(e: { readonly name: string; readonly data: Readonly<Record<string, unknown>> }): string | undefined {
  if (e.name !== "tool.result_display" && e.name !== "provider.tool_result" && e.name !== "provider.tool_error") return undefined;
  const callId = (e.data as { call_id?: unknown }).call_id;
  return typeof callId === "string" ? callId : undefined;
}
