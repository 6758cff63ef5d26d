// Replay reads the journals, not memory (SPEC-event-publication): the session's journals and each
// agent's, merged by the time each record was committed, from where each ended when the reader was
// opened back to its start — or, windowed, to its `recent` most recent records plus its first one
// (`agent.started`, `session.started`: who the journal is about). Records are read a few at a
// time, as the subscriber takes them.
import type { EventName } from "../../generated/index.js";
import type { HistoricalRecord, HistoryReader, PublisherEnvelope } from "../bus/index.js";
import type { EventLog, JournalRecord } from "../store/index.js";
import { HISTORY_READ_BYTES } from "./limits.js";

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

export function openJournalHistory(logs: readonly EventLog[], recent: number | undefined): HistoryReader {
  let omitted = 0;
  const cursors: Cursor[] = logs.map((log) => {
    const to = log.nextSeq; // taken now: what is appended later is live, not history
    const at = recent === undefined ? 0 : Math.max(0, to - recent);
    const first = at > 1;
    omitted += first ? at - 1 : 0;
    return { log, at: first ? at : 0, to, buffer: [], index: 0, first };
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
