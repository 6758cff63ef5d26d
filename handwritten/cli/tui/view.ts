// The inline terminal view: finished transcript rows are written once into the normal screen and
// scroll into the terminal's own scrollback; the live region below them (streaming rows, running
// tools, the editor, the status line) is a cell grid redrawn by diffs. Nothing here takes
// untrusted text: rows arrive as styled lines of SafeText, and all bytes come from `render`.
import { Grid, render } from "../ui/index.js";
import type { Block, CursorPosition } from "../ui/index.js";

/** Erase from the cursor to the end of the screen (ED 0). */
const ERASE_BELOW = "\x1b[J";

export class InlineView {
  /** 1-based terminal row where the live region starts. */
  private top: number;
  /** Rows the live region currently occupies. */
  private height = 0;
  private last: Grid | undefined;

  constructor(
    private cols: number,
    private rows: number,
    /** The terminal row the cursor was on at start (1-based); the region starts there. */
    startRow: number,
  ) {
    this.top = Math.max(1, Math.min(rows, startRow));
  }

  get size(): { cols: number; rows: number } {
    return { cols: this.cols, rows: this.rows };
  }

  private cup(row: number): string {
    return `\x1b[${row};1H`;
  }

  /** Writes rows at the region's top, one per terminal row, scrolling the screen as needed. */
  private writeRows(rows: Block): string {
    let out = "";
    let cur = this.top;
    for (const row of rows) {
      if (cur > this.rows) {
        out += `${this.cup(this.rows)}\n`;
        cur = this.rows;
      }
      const g = new Grid(this.cols, 1);
      g.writeSpans(0, 0, row);
      out += render(undefined, g, { originRow: cur });
      cur++;
    }
    this.top = cur;
    return out;
  }

  /**
   * One frame: `committed` rows become permanent (above the live region, then scrollback); `live`
   * is the new live region, with the cursor placed at `cursor` inside it.
   */
  frame(committed: Block, live: Block, cursor: CursorPosition): string {
    let out = "";
    if (committed.length > 0) {
      out += this.cup(this.top) + ERASE_BELOW;
      out += this.writeRows(committed);
      this.height = 0;
      this.last = undefined;
    }
    const need = Math.min(live.length, this.rows);
    if (this.top + need - 1 > this.rows) {
      const s = this.top + need - 1 - this.rows;
      out += `${this.cup(this.rows)}${"\n".repeat(s)}`;
      this.top -= s;
      this.last = undefined;
    }
    // The region never shrinks between commits: rows it no longer needs are blank, below the content.
    const height = Math.max(need, Math.min(this.height, this.rows - this.top + 1));
    const grid = new Grid(this.cols, height);
    grid.writeBlock(0, 0, live.slice(live.length - need));
    const shift = live.length - need;
    const at = { row: Math.max(0, cursor.row - shift), col: cursor.col };
    const prev = this.last !== undefined && this.last.rows === height ? this.last : undefined;
    out += render(prev, grid, { originRow: this.top, cursor: at });
    this.last = grid;
    this.height = height;
    return out;
  }

  /**
   * After a resize the terminal may have reflowed everything: clear the screen (scrollback stays)
   * and redraw `tail` (the newest finished rows at the new width) and then the live region.
   */
  resize(cols: number, rows: number, tail: Block, live: Block, cursor: CursorPosition): string {
    this.cols = cols;
    this.rows = rows;
    this.top = 1;
    this.height = 0;
    this.last = undefined;
    const room = Math.max(0, rows - Math.min(live.length, rows));
    const shown = tail.slice(Math.max(0, tail.length - room));
    return `\x1b[H\x1b[2J${this.writeRows(shown)}${this.frame([], live, cursor)}`;
  }

  /** Erases the live region and leaves the cursor where it began, ready for the shell's prompt. */
  finish(): string {
    this.height = 0;
    this.last = undefined;
    return this.cup(Math.min(this.top, this.rows)) + ERASE_BELOW;
  }
}
