// Excerpts of long untrusted text: the first or the last rows of `wrap(sanitize(text), width)`,
// computed from only as much of the text as those rows need, so a huge output costs what is
// shown rather than its size.
//
// Rules (SPEC-terminal-presentation):
// - the text is split at `\n` (a `\r` before it belongs to the break, as `sanitize` has it) and
//   each line is sanitized on its own: tab stops and the `◌` base depend only on their own line,
//   so the rows are exactly the ones the whole text gives;
// - a line longer than its rows need is cut before it is sanitized, only at a grapheme boundary
//   (never inside a surrogate pair; every escape `sanitize` writes comes from one code point, so
//   no cut can split one); rows are taken only from before the cut's last row, which keeps them
//   exact. At most `EXCERPT_UNITS_PER_CELL` code units per cell shown are ever looked at: a line
//   that needs more (long runs of spaces or of combining marks) is shown up to that bound.
import { sanitize, type SafeText } from "./sanitize.js";
import { graphemes, wrap } from "./width.js";

/** Code units of a line looked at, at most, per cell of the rows taken from it. */
export const EXCERPT_UNITS_PER_CELL = 32;
/**
 * A line up to this many code units is always wrapped whole for its last rows, so they break
 * exactly where the whole line's do; only a longer one is wrapped from a boundary near its end.
 */
export const EXCERPT_EXACT_TAIL_UNITS = 65_536;
/** Code units segmented on either side of a cut to find a grapheme boundary. */
const BOUNDARY_CONTEXT = 64;

const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/** Number of `\n` in `text[from, to)`. */
export function countLineBreaks(text: string, from = 0, to = text.length): number {
  let n = 0;
  for (let i = text.indexOf("\n", from); i !== -1 && i < to; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** The length of `text` without its trailing `\n`s. */
export function endWithoutTrailingNewlines(text: string): number {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x0a) end--;
  return end;
}

/**
 * The largest index in `(start, limit]` that is a grapheme boundary of `text`, `start` being one.
 * Every boundary in that range is decided with its whole left context (from `start`) and more than
 * a code point of right context. A single cluster longer than the range is cut at `limit` (moved
 * off the middle of a surrogate pair).
 */
export function graphemeCutBefore(text: string, start: number, limit: number): number {
  if (limit >= text.length) return text.length;
  let cut = start;
  let pos = start;
  for (const g of graphemes(text.slice(start, Math.min(text.length, limit + BOUNDARY_CONTEXT)))) {
    pos += g.length;
    if (pos > limit) break;
    cut = pos;
  }
  if (cut > start) return cut;
  if (!(isLow(text.charCodeAt(limit)) && isHigh(text.charCodeAt(limit - 1)))) return limit;
  return limit - 1 > start ? limit - 1 : limit + 1;
}

/**
 * A grapheme boundary of `text` at or after `at` (and at most `end`), found with
 * `BOUNDARY_CONTEXT` code units of left context: exact unless a cluster or a run of regional
 * indicators reaches further back than that, and never inside a surrogate pair.
 */
export function graphemeCutAfter(text: string, at: number, end: number): number {
  if (at <= 0) return 0;
  const from = Math.max(0, at - BOUNDARY_CONTEXT);
  let pos = from;
  for (const g of graphemes(text.slice(from, Math.min(end, at + BOUNDARY_CONTEXT)))) {
    if (pos >= at && pos > from) return pos;
    pos += g.length;
  }
  if (pos === end) return end;
  return isLow(text.charCodeAt(at)) && isHigh(text.charCodeAt(at - 1)) ? at + 1 : at;
}

/** Where the line starting at `start` ends: its content end (a `\r` before the `\n` left out) and the break. */
function lineAt(text: string, start: number): { contentEnd: number; lineEnd: number } {
  const nl = text.indexOf("\n", start);
  const lineEnd = nl === -1 ? text.length : nl;
  const contentEnd = nl !== -1 && lineEnd > start && text.charCodeAt(lineEnd - 1) === 0x0d ? lineEnd - 1 : lineEnd;
  return { contentEnd, lineEnd };
}

/** The first `room` rows of one line, and whether they are the whole line. */
function headOfLine(text: string, start: number, end: number, width: number, room: number): { rows: SafeText[]; whole: boolean } {
  const cap = room * width * EXCERPT_UNITS_PER_CELL;
  // Start with about what the rows hold, and look further only while they are not yet full.
  let units = room * width * 2 + BOUNDARY_CONTEXT;
  for (;;) {
    const whole = end - start <= units;
    const cut = whole ? end : graphemeCutBefore(text, start, start + units);
    const rows = wrap(sanitize(text.slice(start, cut)), width);
    if (whole) return rows.length <= room ? { rows, whole: true } : { rows: rows.slice(0, room), whole: false };
    // The cut can change only the last row it produces: every row before it is final.
    if (rows.length > room) return { rows: rows.slice(0, room), whole: false };
    if (units >= cap) return { rows, whole: false };
    units = Math.min(cap, units * 4);
  }
}

export interface HeadExcerpt {
  /** The first rows of `wrap(sanitize(text), width)`, at most `maxRows`. */
  readonly rows: SafeText[];
  /** Lines of the text (`\n`-separated) the rows do not show in full. */
  readonly hiddenLines: number;
}

/** The first `maxRows` rows of `text` wrapped to `width`, looking only at the lines they come from. */
export function wrapHead(text: string, width: number, maxRows: number): HeadExcerpt {
  const rows: SafeText[] = [];
  if (width <= 0) return { rows, hiddenLines: 0 };
  let start = 0;
  for (;;) {
    const { contentEnd, lineEnd } = lineAt(text, start);
    if (rows.length >= maxRows) return { rows, hiddenLines: 1 + countLineBreaks(text, lineEnd) };
    const line = headOfLine(text, start, contentEnd, width, maxRows - rows.length);
    rows.push(...line.rows);
    if (!line.whole) return { rows, hiddenLines: 1 + countLineBreaks(text, lineEnd) };
    if (lineEnd >= text.length) return { rows, hiddenLines: 0 };
    start = lineEnd + 1;
  }
}

export interface TailExcerpt {
  /** The last rows of `wrap(sanitize(text), width)`, at most `maxRows`. */
  readonly rows: SafeText[];
  /** Whether the text has rows before these. */
  readonly more: boolean;
}

/**
 * The last `maxRows` rows of `text` wrapped to `width`, wrapping lines from the last one back
 * until the rows are full. A line longer than both `EXCERPT_EXACT_TAIL_UNITS` and
 * `EXCERPT_UNITS_PER_CELL` code units per cell shown is wrapped only from a grapheme boundary that
 * far before its end, a whole number of widths from its start: its rows show its last characters
 * and break where the whole line's do when it is of one-cell characters, but may break elsewhere
 * otherwise (where depends on all of its hidden start).
 */
export function wrapTail(text: string, width: number, maxRows: number): TailExcerpt {
  if (width <= 0) return { rows: [], more: false };
  if (maxRows <= 0) return { rows: [], more: true };
  const lines: SafeText[][] = [];
  let count = 0;
  let more = false;
  let end = text.length;
  for (;;) {
    const start = end === 0 ? 0 : text.lastIndexOf("\n", end - 1) + 1;
    const contentEnd = end < text.length && end > start && text.charCodeAt(end - 1) === 0x0d ? end - 1 : end;
    const cap = Math.max(EXCERPT_EXACT_TAIL_UNITS, (maxRows - count) * width * EXCERPT_UNITS_PER_CELL);
    // The cut is a whole number of widths from the line's start, so a line of one-cell characters
    // (a long word, minified data) keeps its breaks exactly.
    const from = contentEnd - start > cap ? graphemeCutAfter(text, start + Math.floor((contentEnd - cap - start) / width) * width, contentEnd) : start;
    const rows = wrap(sanitize(text.slice(from, contentEnd)), width);
    lines.push(rows);
    count += rows.length;
    // Every line has at least one row, so an earlier line means earlier rows.
    if (count > maxRows || from > start || (count === maxRows && start > 0)) {
      more = true;
      break;
    }
    if (start === 0) break;
    end = start - 1;
  }
  const rows = lines.reverse().flat();
  return { rows: rows.slice(Math.max(0, rows.length - maxRows)), more };
}
