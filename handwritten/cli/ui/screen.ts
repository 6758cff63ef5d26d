// A cell grid and the diffing renderer that turns grids into terminal bytes. This is the only
// module in tau that writes escape sequences, and it writes only sequences it builds itself:
// CUP (cursor position), SGR (from structured styles), EL (erase line, on full repaints),
// DECAWM off/on (enter/leave) and, when asked, synchronized-output brackets.
import type { SafeText } from "./sanitize.js";
import { DEFAULT_STYLE, sameStyle, sgrParams, styleKey } from "./style.js";
import type { Style } from "./style.js";
import { clusterWidth, graphemes, isUncertainWidth } from "./width.js";

/** Largest accepted grid dimension (columns or rows). */
export const MAX_GRID_DIMENSION = 4096;

/**
 * One terminal cell. `char` is one grapheme cluster; `width` 2 marks a wide cluster whose right
 * half is the next cell, a continuation with `width` 0 and `char` "".
 */
export interface Cell {
  readonly char: string;
  readonly width: 0 | 1 | 2;
  readonly style: Style;
}

/** A run of safe text in one style. */
export interface Span {
  readonly text: SafeText;
  readonly style: Style;
}

/** A line of spans; a block is a list of lines. */
export type StyledLine = readonly Span[];
export type Block = readonly StyledLine[];

export interface CursorPosition {
  /** 0-based row within the grid. */
  readonly row: number;
  /** 0-based column within the grid. */
  readonly col: number;
}

const BLANK: Cell = Object.freeze({ char: " ", width: 1, style: DEFAULT_STYLE });

function blank(style: Style): Cell {
  return style === DEFAULT_STYLE ? BLANK : Object.freeze({ char: " ", width: 1, style });
}

function checkDimension(name: string, n: number): void {
  if (!Number.isInteger(n) || n < 0 || n > MAX_GRID_DIMENSION) {
    throw new RangeError(`grid ${name} must be an integer from 0 to ${MAX_GRID_DIMENSION}, got ${n}`);
  }
}

/** A `cols` × `rows` grid of cells. Wide clusters occupy two cells; nothing crosses the right edge. */
export class Grid {
  readonly cols: number;
  readonly rows: number;
  private readonly cells: Cell[];

  constructor(cols: number, rows: number, cells?: Cell[]) {
    checkDimension("columns", cols);
    checkDimension("rows", rows);
    this.cols = cols;
    this.rows = rows;
    this.cells = cells ?? new Array<Cell>(cols * rows).fill(BLANK);
  }

  /** The cell at a position (a blank cell outside the grid). */
  cell(row: number, col: number): Cell {
    if (row < 0 || row >= this.rows || col < 0 || col >= this.cols) return BLANK;
    return this.cells[row * this.cols + col] as Cell;
  }

  /** A copy sharing the (immutable) cells. */
  clone(): Grid {
    return new Grid(this.cols, this.rows, this.cells.slice());
  }

  /** Clears every cell (or one row) to blanks in `style`. */
  clear(style: Style = DEFAULT_STYLE, row?: number): void {
    const b = blank(style);
    if (row === undefined) this.cells.fill(b);
    else if (row >= 0 && row < this.rows) this.cells.fill(b, row * this.cols, (row + 1) * this.cols);
  }

  /**
   * Writes safe text on one row from `col`, stopping before column `end` (default: the right edge).
   * A `\n` shows as `␊` (line breaks belong to the layout). A wide cluster that would cross `end`
   * is replaced by a space. Returns the column after the last written cell.
   */
  write(row: number, col: number, text: SafeText, style: Style = DEFAULT_STYLE, end = this.cols): number {
    if (row < 0 || row >= this.rows) return col;
    const stop = Math.min(end, this.cols);
    let x = Math.max(0, col);
    for (const raw of graphemes(text)) {
      if (x >= stop) break;
      const cluster = raw === "\n" ? "\u240a" : raw;
      const w = clusterWidth(cluster);
      if (w === 0) continue;
      if (x + w > stop) {
        this.put(row, x, " ", 1, style);
        x += 1;
        break;
      }
      this.put(row, x, cluster, w, style);
      x += w;
    }
    return x;
  }

  /** Writes spans one after another on a row; returns the column after the last cell. */
  writeSpans(row: number, col: number, line: StyledLine, end = this.cols): number {
    let x = col;
    for (const span of line) x = this.write(row, x, span.text, span.style, end);
    return x;
  }

  /** Writes a block from `row` downwards (lines past the bottom are dropped). */
  writeBlock(row: number, col: number, block: Block, end = this.cols): number {
    let y = row;
    for (const line of block) {
      if (y >= this.rows) break;
      this.writeSpans(y, col, line, end);
      y++;
    }
    return y;
  }

  private put(row: number, x: number, char: string, width: 1 | 2, style: Style): void {
    const base = row * this.cols;
    const old = this.cells[base + x] as Cell;
    if (old.width === 0 && x > 0) {
      const lead = this.cells[base + x - 1] as Cell;
      this.cells[base + x - 1] = blank(lead.style);
    }
    if (old.width === 2 && x + 1 < this.cols) {
      this.cells[base + x + 1] = blank(old.style);
    }
    this.cells[base + x] = Object.freeze({ char, width, style });
    if (width === 2) {
      const right = this.cells[base + x + 1] as Cell;
      if (right.width === 2 && x + 2 < this.cols) this.cells[base + x + 2] = blank(right.style);
      this.cells[base + x + 1] = Object.freeze({ char: "", width: 0, style });
    }
  }
}

function sameCell(a: Cell, b: Cell): boolean {
  return a === b || (a.char === b.char && a.width === b.width && sameStyle(a.style, b.style));
}

function isDefaultBlank(c: Cell): boolean {
  return c.char === " " && styleKey(c.style) === "0";
}

/** Characters a cell must never carry to the terminal (defence in depth behind `SafeText`). */
const UNSAFE_CELL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

export interface RenderOptions {
  /** Where the cursor rests after the frame (clamped into the grid); default the top-left cell. */
  cursor?: CursorPosition;
  /** 1-based terminal row of the grid's row 0 (default 1). */
  originRow?: number;
  /** Bracket the frame in synchronized-output mode 2026 (default false). */
  synchronized?: boolean;
}

/**
 * The bytes that turn a terminal showing `prev` into one showing `next`: only changed cells, as
 * cursor moves + SGR + text. Without `prev`, or when the size differs, every row is erased and
 * repainted. A frame ends with the SGR reset and the cursor at `options.cursor`.
 *
 * Contract: between two frames nothing else writes to the terminal region (and the style stays
 * the default); anything that breaks it (a resize, foreign output) calls for a full repaint.
 */
export function render(prev: Grid | undefined, next: Grid, options: RenderOptions = {}): string {
  const full = prev === undefined || prev.cols !== next.cols || prev.rows !== next.rows;
  const origin = options.originRow ?? 1;
  const cols = next.cols;
  let out = "";
  let cx = -1;
  let cy = -1;
  // Every frame ends in the default style, so a diff starts from it; a full repaint assumes nothing.
  let sgr: string | undefined = full ? undefined : "0";
  const moveTo = (y: number, x: number): void => {
    if (cx !== x || cy !== y) {
      out += `\x1b[${origin + y};${x + 1}H`;
      cx = x;
      cy = y;
    }
  };
  const setStyle = (style: Style): void => {
    const k = styleKey(style);
    if (k !== sgr) {
      out += `\x1b[${sgrParams(style)}m`;
      sgr = k;
    }
  };
  for (let y = 0; y < next.rows; y++) {
    // After a cluster of uncertain width, cells up to this column are redrawn even if unchanged.
    let forceUntil = -1;
    if (full) {
      moveTo(y, 0);
      setStyle(DEFAULT_STYLE);
      out += "\x1b[2K";
    }
    for (let x = 0; x < cols; x++) {
      const c = next.cell(y, x);
      if (c.width === 0) continue;
      let changed: boolean;
      if (x < forceUntil) changed = true;
      else if (full || prev === undefined) changed = !isDefaultBlank(c);
      else {
        changed = !sameCell(prev.cell(y, x), c) || (c.width === 2 && !sameCell(prev.cell(y, x + 1), next.cell(y, x + 1)));
      }
      if (!changed) continue;
      let char = c.char;
      if (UNSAFE_CELL.test(char)) char = c.width === 2 ? "\ufffd " : "\ufffd";
      const uncertain = isUncertainWidth(char);
      if (uncertain && c.width === 2 && x + 1 < cols) {
        // Blank the right half first: a terminal that draws the cluster narrower leaves no stale cell.
        moveTo(y, x + 1);
        setStyle(c.style);
        out += " ";
        cx = -1;
      }
      moveTo(y, x);
      setStyle(c.style);
      out += char;
      if (uncertain) {
        // Terminals disagree about this cluster: re-anchor before the next cell, and redraw the cells
        // a terminal could have covered (at most two columns per code point).
        cx = -1;
        let codePoints = 0;
        for (const _ of char) codePoints++;
        forceUntil = Math.max(forceUntil, x + 2 * codePoints);
      } else {
        cx += c.width;
        if (cx >= cols) cx = -1; // pending-wrap state: always re-anchor
      }
    }
  }
  if (sgr !== undefined && sgr !== "0") {
    out += "\x1b[0m";
  }
  const cursor = options.cursor ?? { row: 0, col: 0 };
  const row = Math.max(0, Math.min(next.rows - 1, cursor.row));
  const col = Math.max(0, Math.min(cols - 1, cursor.col));
  if (next.rows > 0 && cols > 0) moveTo(row, col);
  if (options.synchronized === true && out !== "") out = "\x1b[?2026h" + out + "\x1b[?2026l";
  return out;
}

/** Turns off autowrap, so a cluster a terminal draws wider than expected can never wrap or scroll. */
export const ENTER_SEQUENCE = "\x1b[?7l";
/** Restores the default style and autowrap. */
export const LEAVE_SEQUENCE = "\x1b[0m\x1b[?7h";

/** Keeps the last frame and emits diffs; a resize or `invalidate()` makes the next frame a full repaint. */
export class Screen {
  private last: Grid | undefined;
  constructor(private readonly options: Omit<RenderOptions, "cursor"> = {}) {}

  /** The bytes for the next frame. */
  frame(next: Grid, cursor?: CursorPosition): string {
    const out = render(this.last, next, cursor === undefined ? this.options : { ...this.options, cursor });
    this.last = next.clone();
    return out;
  }

  /** Forgets the terminal's contents: the next frame repaints everything. */
  invalidate(): void {
    this.last = undefined;
  }

  /** Bytes to write once before the first frame. */
  enter(): string {
    return ENTER_SEQUENCE;
  }

  /** Bytes to write once after the last frame. */
  leave(): string {
    return LEAVE_SEQUENCE;
  }
}
