import { describe, expect, it } from "vitest";
import { Grid, Screen, clusterWidth, columns, graphemes, isUncertainWidth, sanitize } from "../../../handwritten/cli/ui/index.js";
import { emulator } from "./emulator.js";

// Clusters whose width every terminal model agrees on: xterm.js places the cursor exactly where our
// width says after writing the raw cluster.
const AGREED: Array<[string, string, number]> = [
  ["ascii", "a", 1],
  ["CJK ideograph", "字", 2],
  ["CJK run", "漢字かな", 8],
  ["hangul syllable", "한", 2],
  ["fullwidth latin", "ａ", 2],
  ["halfwidth katakana", "ｱ", 1],
  ["combining acute (e + U+0301)", "e\u0301", 1],
  ["stacked combining marks", "a\u0301\u0323\u0308", 1],
  ["zero-width joiner between letters", "x\u200dy", 2],
  ["flag (regional-indicator pair)", "🇯🇵", 2],
  ["skin-tone modifier", "👍🏽", 2],
  ["mixed line", "ab字e\u0301🇯🇵", 7],
];

// Emoji sequences: terminals disagree (xterm.js's default tables predate emoji widths and count
// each pictograph of a ZWJ sequence). tau's grid says 2; the renderer re-anchors after the
// cluster, so whatever follows still lines up where the grid put it.
const EMOJI_SEQUENCES: Array<[string, string]> = [
  ["family ZWJ sequence", "👩‍👩‍👧‍👦"],
  ["technologist ZWJ", "👨‍💻"],
  ["rainbow flag (VS16 + ZWJ)", "🏳️‍🌈"],
  ["red heart with VS16", "❤️"],
  ["keycap", "#️⃣"],
  ["woman (emoji presentation)", "👩"],
  ["skin tone + ZWJ", "👩🏽‍💻"],
  ["tag sequence (Scotland)", "🏴󠁧󠁢󠁳󠁣󠁴󠁿"],
];

describe("grapheme widths against xterm.js", () => {
  for (const [name, text, width] of AGREED) {
    it(`[ui.width.graphemes] ${name}: our width equals xterm.js's cursor advance`, async () => {
      const emu = emulator(40, 3);
      await emu.write(`\x1b[1;1H${text}`);
      expect(columns(text)).toBe(width);
      expect(emu.cursor().col).toBe(width);
    });
  }

  for (const [name, cluster] of EMOJI_SEQUENCES) {
    it(`[ui.width.graphemes] ${name}: one cluster of width 2 that lines up in the emulator`, async () => {
      expect(graphemes(cluster)).toHaveLength(1);
      expect(clusterWidth(cluster)).toBe(2);
      expect(isUncertainWidth(cluster)).toBe(true);
      const emu = emulator(20, 3);
      const grid = new Grid(20, 3);
      const x = grid.write(0, 0, sanitize(`ab${cluster}`));
      grid.write(0, x, sanitize("|end"));
      grid.write(1, 0, sanitize("ab..|end"));
      await emu.write(new Screen().enter() + new Screen().frame(grid, { row: 2, col: 0 }));
      expect(x).toBe(4);
      expect(emu.cellChars(0, 4)).toBe("|");
      expect(emu.cellChars(1, 4)).toBe("|");
      expect(emu.row(0).trimEnd().endsWith("|end")).toBe(true);
    });
  }

  it("[ui.width.graphemes] a column of mixed clusters lines up row by row", async () => {
    const samples = ["字字", "e\u0301e\u0301ab", "🇯🇵🇯🇵", "👩‍👩‍👧‍👦ab", "ab👍🏽", "ｱｲｳｴ", "x\u200dyzw"];
    const emu = emulator(30, samples.length + 1);
    const grid = new Grid(30, samples.length + 1);
    samples.forEach((s, y) => {
      const x = grid.write(y, 0, sanitize(s));
      expect(x).toBe(4);
      grid.write(y, 10, sanitize("|"));
    });
    await emu.write(new Screen().enter() + new Screen().frame(grid));
    samples.forEach((s, y) => expect(emu.cellChars(y, 10), s).toBe("|"));
  });
});
