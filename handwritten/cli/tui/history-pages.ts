// An agent's earlier history, a page at a time (`:history`, the history-page key): an attach
// replays only the newest records of each journal; this component remembers, per agent, where the
// records this UI has begin, and writes the page before them below, between two marker lines.
import type { Delivery, SessionClient } from "../session-client.js";
import { PERSISTENCE } from "../../../generated/index.js";
import { RequestError, agentIdOf, checkedEvent } from "../../protocol/index.js";
import { Transcript } from "./transcript.js";
import type { UiContext } from "./context.js";

/**
 * Records of each journal an attach replays: the UI keeps TRANSCRIPT_MAX_ITEMS items per agent and
 * writes a few screens of them, so older records stay in the journals until `:history` asks.
 */
export const REPLAY_RECENT_RECORDS = 2000;

/** Records one `:history` page asks for. */
export const HISTORY_PAGE_RECORDS = 200;

export class HistoryPages {
  /** Per agent, the journal position of the oldest record this UI has (where `:history` goes on). */
  private readonly oldestSeq = new Map<string, number>();
  /** The attach left older records in the journals (`session.replay_complete.omitted`). */
  private olderInJournals = false;

  constructor(private readonly ui: UiContext) {}

  /**
   * A delivered event: a replayed record of an agent's journal carries its position there, where
   * `:history` resumes (its first record, `agent.started`, comes with every windowed replay and does
   * not count).
   */
  track(d: Delivery): void {
    const ev = d.event;
    const agentId = agentIdOf(ev);
    if (d.replay && d.seq > 0 && PERSISTENCE[ev.name] === "agent" && agentId !== undefined) {
      const at = this.oldestSeq.get(agentId);
      if (at === undefined || d.seq < at) this.oldestSeq.set(agentId, d.seq);
    }
  }

  /** The replay is in; `omitted` records of it stayed in the journals. */
  replayed(omitted: number): void {
    if (omitted > 0) this.olderInJournals = true;
  }

  /** Once the replay is written: says, once, that earlier records stayed in the journals. */
  announce(): void {
    if (!this.olderInJournals) return;
    this.olderInJournals = false;
    this.ui.note("info", "earlier history stays in the session's journals: :history shows it, a page at a time");
  }

  /**
   * `:history`: the page of the focused agent's journal just before what this UI has of it, written
   * below as a block between two marker lines; each use goes a page further back, to the first turn.
   */
  async older(client: SessionClient): Promise<void> {
    const agentId = this.ui.focus();
    const before = this.oldestSeq.get(agentId);
    if (before === 0) return this.ui.note("info", "── this is the start of this agent's history ──");
    let page;
    try {
      page = await client.request("ui_history_request", { agent_id: agentId, limit: HISTORY_PAGE_RECORDS, ...(before !== undefined ? { before } : {}) });
    } catch (err) {
      return this.ui.note("error", err instanceof RequestError && err.failure === "refused" ? "the session has no history for that agent" : (err as Error).message);
    }
    const end = page.first + page.records.length;
    this.oldestSeq.set(agentId, page.first);
    if (page.records.length === 0) return this.ui.note("info", "── this is the start of this agent's history ──");
    const scratch = new Transcript();
    // Records of a page are checked here, one by one: one that does not match its schema is skipped.
    for (const r of page.records) {
      const e = checkedEvent(r.event.name, r.event.data);
      if (!(e instanceof Error)) scratch.apply(e);
    }
    const fmt = (n: number) => String(n).replace(/\B(?=(\d{3})+$)/g, ",");
    this.ui.note("info", `── earlier history: records ${fmt(page.first + 1)}–${fmt(end)} of ${fmt(page.total)} ──`);
    // A call whose outcome lies past the page's end (in the newer history already shown) has its row
    // there: here it would stay open, and hold back every row after it.
    for (const item of scratch.agent(agentId).items) if (item.done) this.ui.local(item);
    this.ui.note("info", page.first === 0 ? "── the start of this agent's history ──" : "── end of that page; :history goes further back ──");
  }
}
