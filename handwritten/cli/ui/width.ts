// Terminal column widths per grapheme cluster, and the layouts built on them: middle and end
// truncation for one-row layouts and word wrapping. Widths never split a cluster.
//
// Rules (SPEC-terminal-presentation):
// - a cluster is one `Intl.Segmenter` grapheme; its width is 0, 1 or 2 columns;
// - zero-width code points (combining marks, ZWJ, variation selectors) add nothing to their cluster;
// - East Asian Wide / Fullwidth bases are 2, Ambiguous is 1 (UAX #11 default without context);
// - emoji presentation (VS16, emoji modifiers, ZWJ sequences) and regional-indicator pairs are 2.
import { eastAsianWidth } from "get-east-asian-width";
import type { SafeText } from "./sanitize.js";

/** The ellipsis every truncation inserts (one column). */
export const ELLIPSIS = "…";

// Made on first use: creating one loads ICU's break rules, about 7 ms that a process which never
// measures text (the `tau run` client only sanitizes it) would pay at start-up.
let graphemeSegmenter: Intl.Segmenter | undefined;
const segmenter = (): Intl.Segmenter => (graphemeSegmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" }));

const ZERO_WIDTH_START = /^[\p{M}\p{Default_Ignorable_Code_Point}]/u;
const ALL_ZERO_WIDTH = /^[\p{M}\p{Default_Ignorable_Code_Point}]+$/u;
const REGIONAL_INDICATOR = /\p{Regional_Indicator}/gu;
const PICTOGRAPHIC = /\p{Extended_Pictographic}/u;
const EMOJI = /^\p{Emoji}/u;
const EMOJI_MODIFIER = /\p{Emoji_Modifier}/u;
const ONLY_MARKS_AFTER_BASE = /^.[\p{M}]*$/su;

function printableAscii(code: number): boolean {
  return code >= 0x20 && code <= 0x7e;
}

/**
 * Splits text into grapheme clusters. Two adjacent printable ASCII characters always have a
 * cluster boundary between them (no UAX #29 rule joins them), so such runs skip the (slow)
 * segmenter; everything else goes through `Intl.Segmenter`. The result equals full segmentation.
 */
export function graphemes(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  let start = 0;
  for (let p = 1; p <= n; p++) {
    if (p < n && !(printableAscii(text.charCodeAt(p - 1)) && printableAscii(text.charCodeAt(p)))) continue;
    if (p - start === 1 && printableAscii(text.charCodeAt(start))) out.push(text[start] as string);
    else for (const s of segmenter().segment(text.slice(start, p))) out.push(s.segment);
    start = p;
  }
  return out;
}

/** Full segmentation with `Intl.Segmenter` only (the reference `graphemes` is tested against). */
export function graphemesBySegmenter(text: string): string[] {
  const out: string[] = [];
  for (const s of segmenter().segment(text)) out.push(s.segment);
  return out;
}

/** Terminal columns of one grapheme cluster: 0, 1 or 2. */
export function clusterWidth(cluster: string): 0 | 1 | 2 {
  const cp = cluster.codePointAt(0);
  if (cp === undefined) return 0;
  if (cluster.length === 1 && cp >= 0x20 && cp < 0x7f) return 1;
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (cluster.length === 1) {
    if (cp < 0x300) return 1;
    return ZERO_WIDTH_START.test(cluster) ? 0 : eastAsianWidth(cp, { ambiguousAsWide: false });
  }
  if (ZERO_WIDTH_START.test(cluster) && ALL_ZERO_WIDTH.test(cluster)) return 0;
  const ri = cluster.match(REGIONAL_INDICATOR);
  if (ri !== null) return ri.length >= 2 ? 2 : 1;
  if (cluster.length > 1 && EMOJI.test(cluster)) {
    if (cluster.includes("\uFE0F")) return 2;
    if (EMOJI_MODIFIER.test(cluster)) return 2;
    if (cluster.includes("\u200D") && PICTOGRAPHIC.test(cluster)) return 2;
  }
  return eastAsianWidth(cp, { ambiguousAsWide: false });
}

/**
 * Whether terminals are known to disagree about this cluster's width (emoji sequences, flags,
 * multi-code-point clusters other than a base plus combining marks). The renderer re-anchors the
 * cursor after writing such a cluster so one disagreement cannot shift the rest of the row.
 */
export function isUncertainWidth(cluster: string): boolean {
  if (cluster.length === 1) return false;
  const cp = cluster.codePointAt(0) ?? 0;
  if (cp >= 0x1f000 || PICTOGRAPHIC.test(cluster)) return true;
  if (cluster.includes("\uFE0F") || cluster.includes("\u20E3")) return true;
  return !ONLY_MARKS_AFTER_BASE.test(cluster);
}

/** Total terminal columns of a single-line text (a `\n` counts as 0). */
export function columns(text: string): number {
  if (PRINTABLE_ASCII.test(text)) return text.length;
  let n = 0;
  for (const c of graphemes(text)) n += clusterWidth(c);
  return n;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Pads with spaces to exactly `width` columns (text wider than `width` is returned unchanged). */
export function padEnd(text: SafeText, width: number): SafeText;
export function padEnd(text: string, width: number): string;
export function padEnd(text: string, width: number): string {
  const w = columns(text);
  return w >= width ? text : text + " ".repeat(width - w);
}

/** Takes whole clusters from the front while they fit in `budget` columns. */
function takeFront(clusters: string[], budget: number): { text: string; used: number; count: number } {
  let text = "";
  let used = 0;
  let count = 0;
  for (const c of clusters) {
    const w = clusterWidth(c);
    if (used + w > budget) break;
    text += c;
    used += w;
    count++;
  }
  return { text, used, count };
}

/** Takes whole clusters from the back (never past `stop` clusters from the front). */
function takeBack(clusters: string[], budget: number, stop: number): { text: string; used: number } {
  let text = "";
  let used = 0;
  for (let i = clusters.length - 1; i >= stop; i--) {
    const c = clusters[i] as string;
    const w = clusterWidth(c);
    if (used + w > budget) break;
    text = c + text;
    used += w;
  }
  return { text, used };
}

/**
 * Fits text into `width` columns for a one-row layout by cutting the middle and inserting `…`.
 * Cuts only at grapheme boundaries; a wide cluster that does not fit is replaced by padding, so a
 * truncated result is exactly `width` columns. Text that fits is returned unchanged.
 */
export function truncateMiddle(text: SafeText, width: number): SafeText;
export function truncateMiddle(text: string, width: number): string;
export function truncateMiddle(text: string, width: number): string {
  if (width <= 0) return "";
  if (columns(text) <= width) return text;
  if (width === 1) return ELLIPSIS;
  const clusters = graphemes(text);
  const budget = width - 1;
  const left = takeFront(clusters, Math.ceil(budget / 2));
  const right = takeBack(clusters, budget - left.used, left.count);
  const pad = " ".repeat(budget - left.used - right.used);
  return left.text + ELLIPSIS + pad + right.text;
}

/**
 * Fits text into `width` columns by cutting the end and appending `…` (same guarantees as
 * `truncateMiddle`).
 */
export function truncateEnd(text: SafeText, width: number): SafeText;
export function truncateEnd(text: string, width: number): string;
export function truncateEnd(text: string, width: number): string {
  if (width <= 0) return "";
  if (columns(text) <= width) return text;
  const front = takeFront(graphemes(text), width - 1);
  return front.text + " ".repeat(width - 1 - front.used) + ELLIPSIS;
}

/**
 * Word-wraps text to `width` columns. `\n` starts a new line; lines break at spaces (the breaking
 * spaces are dropped); a word longer than the width is hard-broken at grapheme boundaries. A wide
 * cluster that cannot fit even on an empty line (width 1) becomes one space.
 */
export function wrap(text: SafeText, width: number): SafeText[];
export function wrap(text: string, width: number): string[];
export function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  if (width <= 0) return out;
  for (const paragraph of text.split("\n")) {
    let line = "";
    let lineW = 0;
    let word = "";
    let wordW = 0;
    let spaces = "";
    let spacesW = 0;
    const flushWord = (): void => {
      if (word === "") return;
      if (lineW + spacesW + wordW <= width) {
        line += spaces + word;
        lineW += spacesW + wordW;
      } else {
        if (lineW > 0) out.push(line);
        line = "";
        lineW = 0;
        for (const c of graphemes(word)) {
          let cell = c;
          let w: number = clusterWidth(c);
          if (w > width) {
            cell = " ";
            w = 1;
          }
          if (lineW + w > width) {
            out.push(line);
            line = "";
            lineW = 0;
          }
          line += cell;
          lineW += w;
        }
      }
      word = "";
      wordW = 0;
      spaces = "";
      spacesW = 0;
    };
    for (const c of graphemes(paragraph)) {
      if (c === " ") {
        flushWord();
        spaces += c;
        spacesW += 1;
      } else {
        word += c;
        wordW += clusterWidth(c);
      }
    }
    flushWord();
    // Trailing spaces stay only if they fit on the line.
    if (spaces !== "" && lineW + spacesW <= width) line += spaces;
    out.push(line);
  }
  return out;
}
