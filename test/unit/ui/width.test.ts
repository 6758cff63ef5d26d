import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ELLIPSIS, clusterWidth, columns, graphemes, truncateEnd, truncateMiddle, wrap } from "../../../handwritten/cli/ui/index.js";
import { graphemesBySegmenter } from "../../../handwritten/cli/ui/width.js";

const MIXED = [
  "hello world",
  "漢字かなカナ混じり",
  "ab👩‍👩‍👧‍👦cd🇯🇵ef",
  "e\u0301e\u0301e\u0301 café",
  "👍🏽👍🏿 thumbs",
  "x\u200dy\u200dz wide字 end",
  "🏳️‍🌈 flag ❤️ heart #️⃣",
  "ｱｲｳｴｵ ａｂｃ",
];

const CLUSTER_POOL = ["a", "b", " ", "字", "e\u0301", "👩‍👩‍👧‍👦", "🇯🇵", "👍🏽", "ｱ", "❤️", "x\u200d", "\u0600", "1"];

describe("widths", () => {
  it("measures clusters in terminal columns", () => {
    expect(clusterWidth("a")).toBe(1);
    expect(clusterWidth("字")).toBe(2);
    expect(clusterWidth("e\u0301")).toBe(1);
    expect(clusterWidth("\u0301")).toBe(0);
    expect(clusterWidth("\u200d")).toBe(0);
    expect(clusterWidth("\ufe0f")).toBe(0);
    expect(clusterWidth("👩‍👩‍👧‍👦")).toBe(2);
    expect(clusterWidth("🇯🇵")).toBe(2);
    expect(clusterWidth("🇯")).toBe(1);
    expect(clusterWidth("👍🏽")).toBe(2);
    expect(clusterWidth("❤")).toBe(1);
    expect(clusterWidth("❤️")).toBe(2);
    expect(clusterWidth("…")).toBe(1); // ambiguous → narrow
    expect(columns("ab字e\u0301🇯🇵")).toBe(7);
  });

  it("the ASCII fast path segments exactly like Intl.Segmenter", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...CLUSTER_POOL), fc.string({ unit: "binary", maxLength: 3 })), { maxLength: 20 }), (parts) => {
        const s = parts.join("");
        expect(graphemes(s)).toEqual(graphemesBySegmenter(s));
      }),
      { numRuns: 150 },
    );
  });
});

describe("truncation", () => {
  it("[ui.truncate.middle-at-graphemes] widths 1 to 12: never exceeds the width, never splits a cluster", () => {
    for (const text of MIXED) {
      const clusters = new Set(graphemes(text));
      const total = columns(text);
      for (let w = 1; w <= 12; w++) {
        const out = truncateMiddle(text, w);
        expect(columns(out), `${text} @${w}`).toBeLessThanOrEqual(w);
        if (total <= w) {
          expect(out).toBe(text);
        } else {
          expect(columns(out), `${text} @${w}`).toBe(w);
          expect(out).toContain(ELLIPSIS);
          for (const c of graphemes(out)) {
            if (c !== ELLIPSIS && c !== " ") expect(clusters.has(c), `${JSON.stringify(c)} from ${text} @${w}`).toBe(true);
          }
          // Both ends of the text survive in order, when there is room for them.
          const [first] = graphemes(text);
          if (w >= 3 && first !== undefined && clusterWidth(first) <= Math.ceil((w - 1) / 2)) expect(out.startsWith(first)).toBe(true);
        }
      }
    }
  });

  it("[ui.truncate.middle-at-graphemes] exactly at, one below and one above the text's width", () => {
    const text = "ab字cd"; // 6 columns
    expect(truncateMiddle(text, 6)).toBe(text);
    expect(truncateMiddle(text, 7)).toBe(text);
    expect(truncateMiddle(text, 5)).toBe("ab…cd");
    expect(truncateMiddle(text, 0)).toBe("");
    expect(truncateMiddle(text, 1)).toBe("…");
    // A wide cluster that does not fit becomes padding.
    expect(truncateMiddle("字字字字", 4)).toBe("字… ");
  });

  it("[ui.truncate.middle-at-graphemes] random cluster strings at every width 1 to 12", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...CLUSTER_POOL), { maxLength: 16 }), fc.integer({ min: 1, max: 12 }), (parts, w) => {
        const text = parts.join("");
        const out = truncateMiddle(text, w);
        expect(columns(out)).toBeLessThanOrEqual(w);
        expect(columns(out)).toBe(Math.min(w, columns(text)));
        const end = truncateEnd(text, w);
        expect(columns(end)).toBe(Math.min(w, columns(text)));
      }),
      { numRuns: 500 },
    );
  });

  it("truncateEnd keeps the front", () => {
    expect(truncateEnd("abcdef", 6)).toBe("abcdef");
    expect(truncateEnd("abcdef", 5)).toBe("abcd…");
    expect(truncateEnd("字字字", 4)).toBe("字 …");
  });
});

describe("wrap", () => {
  it("wraps at spaces, hard-breaks long words at grapheme boundaries, keeps within width", () => {
    expect(wrap("hello world", 5)).toEqual(["hello", "world"]);
    expect(wrap("abcdefgh", 3)).toEqual(["abc", "def", "gh"]);
    expect(wrap("a\nb", 10)).toEqual(["a", "b"]);
    expect(wrap("字字字", 3)).toEqual(["字", "字", "字"]);
    expect(wrap("字", 1)).toEqual([" "]);
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...CLUSTER_POOL, " ", " "), { maxLength: 30 }), fc.integer({ min: 1, max: 12 }), (parts, w) => {
        const text = parts.join("");
        for (const line of wrap(text, w)) expect(columns(line)).toBeLessThanOrEqual(w);
        if (w >= 2) expect(wrap(text, w).join("").replace(/ /g, "")).toBe(text.replace(/ /g, ""));
      }),
      { numRuns: 300 },
    );
  });
});
