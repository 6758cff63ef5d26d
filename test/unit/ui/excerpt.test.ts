import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  EXCERPT_EXACT_TAIL_UNITS,
  EXCERPT_UNITS_PER_CELL,
  graphemeCutAfter,
  graphemeCutBefore,
  graphemes,
  sanitize,
  wrap,
  wrapHead,
  wrapTail,
} from "../../../handwritten/cli/ui/index.js";

// Pieces that stress cuts: line breaks (and CR before them), tabs, spaces, combining marks (also
// leading ones), wide and emoji clusters, flags and lone regional indicators, lone surrogate
// halves, escape sequences, bidi overrides and long words.
const PIECES = [
  "a", "b", " ", "  ", "\n", "\r\n", "\r", "\t", "e\u0301", "\u0301", "字", "👩‍👩‍👧", "🇩🇪", "🇫", "\u001b[31m", "\u001b]52;c;SGk=\u0007",
  "\u202e", "\ud83d", "\ude00", "😀", "👍🏽", "x".repeat(30), " word", "\u0600",
];
const text = fc.array(fc.constantFrom(...PIECES), { maxLength: 200 }).map((a) => a.join(""));

/** Lines of the text not shown in full by the first `maxRows` rows of its whole wrap. */
function hiddenLines(t: string, width: number, maxRows: number): number {
  const lines = sanitize(t).split("\n");
  let used = 0;
  let whole = 0;
  for (const l of lines) {
    const r = wrap(l, width).length;
    if (used + r > maxRows) break;
    used += r;
    whole++;
  }
  return lines.length - whole;
}

describe("excerpts of long text", () => {
  it("[ui.excerpt.exact-rows] the first and last rows are exactly those of wrapping the whole sanitized text", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 15 }), (t, width, maxRows) => {
        const full = wrap(sanitize(t), width);
        const head = wrapHead(t, width, maxRows);
        expect(head.rows).toEqual(full.slice(0, maxRows));
        expect(head.hiddenLines).toBe(hiddenLines(t, width, maxRows));
        const tail = wrapTail(t, width, maxRows);
        expect(tail.rows).toEqual(full.slice(Math.max(0, full.length - maxRows)));
        expect(tail.more).toBe(full.length > maxRows);
      }),
      { numRuns: 3000 },
    );
  });

  it("[ui.excerpt.exact-rows] cuts fall on grapheme boundaries, never inside a surrogate pair", () => {
    fc.assert(
      fc.property(text, fc.nat(), fc.nat(), (t, a, b) => {
        fc.pre(t.length > 2);
        const boundaries = new Set<number>([0]);
        let pos = 0;
        for (const g of graphemes(t)) boundaries.add((pos += g.length));
        const start = [...boundaries].filter((x) => x < t.length)[a % boundaries.size] ?? 0;
        const limit = start + 1 + (b % (t.length - start));
        const before = graphemeCutBefore(t, start, limit);
        expect(before).toBeGreaterThan(start);
        // A boundary in range is always found; only a cluster longer than the range is cut inside.
        if ([...boundaries].some((x) => x > start && x <= limit)) {
          expect(boundaries.has(before)).toBe(true);
          expect(before).toBeLessThanOrEqual(limit);
        }
        const after = graphemeCutAfter(t, limit, t.length);
        expect(after).toBeGreaterThanOrEqual(limit);
        for (const cut of [before, after]) {
          const c = t.charCodeAt(cut);
          const p = t.charCodeAt(cut - 1);
          expect(c >= 0xdc00 && c <= 0xdfff && p >= 0xd800 && p <= 0xdbff, `cut ${cut} splits a surrogate pair`).toBe(false);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("[ui.excerpt.bounded] of a 5 MB line only a bounded part is looked at, from the start or from the end", () => {
    const huge = 5_000_000;
    // Wrapped whole, a run of 5 MB of spaces before a word is dropped as one line break and the word
    // shows; looked at only as far as its rows need, the word lies beyond the bound.
    const head = wrapHead(`${" ".repeat(huge)}END`, 80, 12);
    expect(wrap(sanitize(`${" ".repeat(10_000)}END`), 80)).toEqual(["END"]);
    expect(head.rows).toEqual([""]);
    expect(head.hiddenLines).toBe(1);
    // From the end: the word before the run would be a row of its own; the bound never reaches it.
    const tail = wrapTail(`START${" ".repeat(huge)}x`, 80, 2);
    expect(wrap(sanitize(`START${" ".repeat(10_000)}x`), 80)).toEqual(["START", "x"]);
    expect(tail).toEqual({ rows: ["x"], more: true });
    // Within the bound the rows are exact: 12 rows of a 5 MB word, hard-broken at 80 columns.
    const word = "0123456789".repeat(huge / 10);
    expect(wrapHead(word, 80, 12)).toEqual({ rows: Array.from({ length: 12 }, (_, i) => word.slice(i * 80, i * 80 + 80)), hiddenLines: 1 });
    expect(wrapTail(word, 80, 2)).toEqual({ rows: [word.slice(-160, -80), word.slice(-80)], more: true });
    expect(EXCERPT_UNITS_PER_CELL * 12 * 80).toBeLessThan(huge / 100);
    // Past the bound, the cut is a whole number of widths from the line's start: a word whose length
    // is no multiple of the width keeps its breaks.
    expect(wrapTail(`${word}abc`, 80, 2)).toEqual({ rows: [word.slice(-80), "abc"], more: true });
    // Where breaks depend on the hidden start (words of varying length), the rows still show the
    // line's last characters, each within the width.
    const words = Array.from({ length: 200_000 }, (_, i) => "w".repeat(1 + (i % 13))).join(" ");
    const wordsTail = wrapTail(words, 80, 3);
    expect(wordsTail.rows.length).toBe(3);
    for (const r of wordsTail.rows) expect(r.length).toBeLessThanOrEqual(80);
    expect(words.endsWith(wordsTail.rows.join(" "))).toBe(true);
  });

  it("[ui.excerpt.exact-rows] a line within the exact-tail bound keeps the whole line's breaks (seed 161980008)", () => {
    const t = `${"x".repeat(30)}\u001b[31m${"x".repeat(30)}`;
    expect(wrapTail(t, 2, 1)).toEqual({ rows: ["x"], more: true });
    const long = "y".repeat(EXCERPT_EXACT_TAIL_UNITS - 1);
    expect(wrapTail(long, 2, 1)).toEqual({ rows: ["y"], more: true });
  });
});
