// Replay reads the journals, not memory (SPEC-event-publication): the session's journals and each
// agent's, merged by the time each record was committed, from where each ended when the reader was
// opened back to its start — or, windowed, to its `recent` most recent records (about
// REPLAY_WINDOW_BYTES of them at most) plus, for an agent's or the session's journal, its first one
// (`agent.started`, `session.started`: who the journal is about). Records are read a few at a time,
// as the subscriber takes them.
import type { EventName } from "../../generated/index.js";
import type { HistoricalRecord, HistoryReader, PublisherEnvelope } from "../bus/index.js";
import type { EventLog, JournalRecord } from "../store/index.js";
import { HISTORY_READ_BYTES, REPLAY_WINDOW_BYTES } from "./limits.js";

/** Records handed to the bus per `next()`. */
const RECORDS_PER_STEP = 256;

interface Cursor {
  readonly log: EventLog;
  at: number;
  readonly to: number;
  buffer: JournalRecord[];
  index: number;
  /** A windowed replay's first record, still to come before the window. */
  first: boolean;
}

function recordedAt(log: EventLog, seq: number): number {
  return log.readRange(seq, seq + 1)[0]?.recorded_at ?? Infinity;
}

/** The first seq in [from, to) recorded at or after `since` (a binary search: commit times ascend). */
export function firstAtOrAfter(log: EventLog, from: number, to: number, since: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (recordedAt(log, mid) < since) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function openJournalHistory(logs: readonly EventLog[], recent: number | undefined): HistoryReader {
  let omitted = 0;
  const windows = logs.map((log) => {
    const to = log.nextSeq; // taken now: what is appended later is live, not history
    return { log, to, at: recent === undefined ? 0 : log.windowStart(to, recent, REPLAY_WINDOW_BYTES) };
  });
  // The session's own journals (its lifecycle, the restore stream) hold records about every agent's
  // turns: windowed, they go back no further than the agents' windows do, so what is replayed is one
  // stretch of the session's recent past rather than unrelated ones (tool calls of omitted turns).
  const agentWindows = windows.filter((w) => w.log.kind === "agent" && w.to > 0);
  if (recent !== undefined && agentWindows.length > 0) {
    const since = Math.min(...agentWindows.map((w) => (w.at < w.to ? recordedAt(w.log, w.at) : Infinity)));
    for (const w of windows) if (w.log.kind !== "agent" && Number.isFinite(since)) w.at = Math.max(w.at, firstAtOrAfter(w.log, w.at, w.to, since));
  }
  const cursors: Cursor[] = windows.map(({ log, to, at }) => {
    // The restore stream's first record is a tool call like any other, not who the journal is about.
    const keepsFirst = log.kind !== "restore";
    const first = keepsFirst && at > 1;
    const start = keepsFirst && at === 1 ? 0 : at; // a window from 1 reaches the first record anyway
    omitted += first ? at - 1 : start;
    return { log, at: start, to, buffer: [], index: 0, first };
  });
  const head = (c: Cursor): JournalRecord | undefined => {
    if (c.index >= c.buffer.length) {
      if (c.first) {
        c.first = false;
        c.buffer = c.log.readRange(0, 1);
      } else {
        if (c.at >= c.to) return undefined;
        c.buffer = c.log.readRange(c.at, c.to, HISTORY_READ_BYTES);
        c.at += c.buffer.length;
      }
      c.index = 0;
    }
    return c.buffer[c.index];
  };
  return {
    omitted,
    next(): HistoricalRecord[] {
      const out: HistoricalRecord[] = [];
      while (out.length < RECORDS_PER_STEP) {
        // The earliest head of all journals (ties in journal order: session, restore, agents).
        let best: Cursor | undefined;
        let bestRecord: JournalRecord | undefined;
        for (const c of cursors) {
          const r = head(c);
          if (r !== undefined && (bestRecord === undefined || r.recorded_at < bestRecord.recorded_at)) {
            best = c;
            bestRecord = r;
          }
        }
        if (!best || !bestRecord) break;
        best.index++;
        out.push({
          name: bestRecord.event.name as EventName,
          data: bestRecord.event.data,
          recordedAt: bestRecord.recorded_at,
          publisher: Object.freeze({ ...bestRecord.source }) as PublisherEnvelope,
          seq: bestRecord.seq,
        });
      }
      return out;
    },
    close(): void {
      for (const c of cursors) c.buffer = [];
    },
  };
}
