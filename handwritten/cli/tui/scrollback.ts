// What of each agent's transcript is written into the terminal's scrollback, above the live
// region: finished rows are written once, streamed text row by row as it grows, and an agent shown
// for the first time gets only its newest screens below one line counting what is left out.
import { finalRows, newestRows, renderItem, type AgentView, type Item } from "./transcript.js";
import { sanitize, truncateEnd, type SafeText, type StyledLine, type Theme } from "../ui/index.js";

/**
 * Screens of an agent's history written into scrollback when the UI starts showing it (after a
 * replay, or on switching to an agent not shown yet); older items are summarized in one line.
 */
export const HISTORY_SHOWN_SCREENS = 3;

/** How rows are drawn now: the theme, whether reasoning shows, and the screen's height. */
export interface DrawSettings {
  readonly theme: Theme;
  readonly reasoning: boolean;
  readonly screenRows: number;
}

/** How far an agent's transcript has been written above the live region. */
interface Written {
  /** The newest item written in full (by reference: the transcript drops its oldest items). */
  last: Item | undefined;
  /** Rows already written of the item after `last` (streamed text only grows). */
  rows: number;
  /** The oldest item written at all, and the line written above it, when older ones were left out. */
  start?: { item: Item; note: SafeText };
}

/** The line that stands for history not written: `… 12,345 earlier entries not shown`. */
export function historySummary(hidden: number, cut: boolean): string | undefined {
  // Digits grouped by hand: a locale formatter costs milliseconds to make.
  const n = `${String(hidden).replace(/\B(?=(\d{3})+$)/g, ",")} earlier entr${hidden === 1 ? "y" : "ies"}`;
  if (hidden > 0) return cut ? `… ${n} and the start of the next not shown` : `… ${n} not shown`;
  return cut ? "… the start of the next entry is not shown" : undefined;
}

export class Scrollback {
  /** Per agent: how much of its transcript is written above the live region. */
  private readonly written = new Map<string, Written>();
  /** Rows to write before the next frame's finished rows (the start of a bounded history). */
  private readonly backlog: StyledLine[] = [];

  /**
   * The session's first agent takes over the notes written before it existed (`early`, moved to
   * the front of its items): what of them was written stays written.
   */
  adopt(a: AgentView, early: readonly Item[], width: number, s: DrawSettings): void {
    const before = this.written.get("");
    this.written.delete("");
    const w = this.written.get(a.id);
    if (w === undefined) this.showNewest(a, before?.last === undefined ? 0 : early.indexOf(before.last) + 1, width, s);
    else w.last ??= before?.last;
  }

  /** The index of the first item of `a` not yet written in full. */
  private unwritten(a: AgentView, w: Written): number {
    return w.last === undefined ? 0 : a.items.lastIndexOf(w.last) + 1;
  }

  /**
   * Starts showing an agent whose items from `from` on were never written: only its newest
   * finished rows (HISTORY_SHOWN_SCREENS screens, whole items unless the newest alone is larger)
   * go into the backlog, below one line counting the items left out. Nothing older is rendered.
   */
  private showNewest(a: AgentView, from: number, width: number, s: DrawSettings): Written {
    let live = from;
    while (live < a.items.length && (a.items[live] as Item).done) live++;
    const shown = newestRows(a.items, from, live, width, s.theme, s.reasoning, HISTORY_SHOWN_SCREENS * s.screenRows, false);
    // Items that left the in-memory transcript were never written either.
    const summary = historySummary(a.earlier + shown.first - from, shown.cut);
    const w: Written = { last: live > 0 ? a.items[live - 1] : undefined, rows: 0 };
    if (summary !== undefined) {
      const note = sanitize(summary);
      this.backlog.push([{ text: truncateEnd(note, width), style: s.theme.styles.muted }]);
      const first = a.items[shown.first];
      if (first !== undefined) w.start = { item: first, note };
    }
    this.backlog.push(...shown.rows);
    this.written.set(a.id, w);
    return w;
  }

  /** Rows of agent `a` to make permanent now, and the rows still live. */
  split(a: AgentView, width: number, s: DrawSettings): { committed: StyledLine[]; live: StyledLine[] } {
    const w = this.written.get(a.id) ?? this.showNewest(a, 0, width, s);
    const committed: StyledLine[] = this.backlog.splice(0);
    const live: StyledLine[] = [];
    let i = this.unwritten(a, w);
    // The item `rows` counted may have left the transcript with `last`.
    let rows = i === 0 && w.last !== undefined ? 0 : w.rows;
    for (; i < a.items.length; i++) {
      const item = a.items[i] as Item;
      const r = renderItem(item, width, s.theme, s.reasoning);
      if (item.done) {
        committed.push(...r.slice(rows));
        rows = 0;
        w.last = item;
        continue;
      }
      const final = item.kind === "assistant" ? finalRows(item, width, s.theme, s.reasoning) : 0;
      if (final > rows) {
        // Streamed markdown only grows: the rows before its open chunk are final.
        committed.push(...r.slice(rows, final));
        rows = final;
      }
      live.push(...r.slice(rows));
      break;
    }
    w.rows = rows;
    // The view shows at most a screen of the live region: later items are rendered only that far back.
    live.push(...newestRows(a.items, i + 1, a.items.length, width, s.theme, s.reasoning, s.screenRows, true).rows);
    return { committed, live };
  }

  /**
   * After a resize: a screen's worth of the newest written rows of `a`, back to the first item
   * shown (and its summary). The partly written item is redrawn whole in the live region.
   */
  rewrite(a: AgentView, width: number, s: DrawSettings): StyledLine[] {
    const w = this.written.get(a.id);
    const tail: StyledLine[] = [];
    if (w === undefined) return tail;
    const start = w.start === undefined ? 0 : Math.max(0, a.items.indexOf(w.start.item));
    const shown = newestRows(a.items, start, this.unwritten(a, w), width, s.theme, s.reasoning, s.screenRows, true);
    if (w.start !== undefined && shown.first === start && !shown.cut && shown.rows.length < s.screenRows) {
      tail.push([{ text: truncateEnd(w.start.note, width), style: s.theme.styles.muted }]);
    }
    tail.push(...shown.rows);
    w.rows = 0;
    return tail;
  }
}
