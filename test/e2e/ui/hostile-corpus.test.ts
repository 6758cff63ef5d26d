import { describe, expect, it } from "vitest";
import { Grid, Screen, columns, sanitize } from "../../../handwritten/cli/ui/index.js";
import type { Style } from "../../../handwritten/cli/ui/index.js";
import { emulator, withoutRendererSequences } from "./emulator.js";
import { HOSTILE } from "../../support/hostile.js";



const STYLED: Style = { fg: "red", bold: true };
const COLS = 60;
const ROWS = 34;

function modesOf(term: import("@xterm/headless").Terminal): Record<string, unknown> {
  return { ...term.modes };
}

describe("hostile text through sanitize → grid → renderer → xterm.js", () => {
  const entries = Object.entries(HOSTILE);

  it("[ui.sanitize.hostile-corpus] every corpus entry leaves the emulator untouched apart from visible characters", async () => {
    const emu = emulator(COLS, ROWS);
    const modesBefore = modesOf(emu.term);
    const screen = new Screen();
    const grid = new Grid(COLS, ROWS);
    const safe: string[] = [];
    entries.forEach(([, text], y) => {
      const s = sanitize(text, { newlines: "escape" });
      safe.push(s);
      grid.write(y, 0, s);
    });
    // One styled row: its cells carry the style, nothing else does.
    const styledRow = entries.length;
    grid.write(styledRow, 2, sanitize("styled \x1b[0m text"), STYLED);
    const cursor = { row: ROWS - 1, col: 7 };
    const out = screen.enter() + screen.frame(grid, cursor) + screen.leave();
    await emu.write(out);

    // No control character reaches the terminal except the renderer's own sequences.
    expect(withoutRendererSequences(out)).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(emu.fired).toEqual([]);
    expect(emu.term.buffer.active.type).toBe("normal");
    expect(emu.term.buffer.active.baseY).toBe(0);
    expect(emu.cursor()).toEqual(cursor);
    expect(modesOf(emu.term)).toEqual(modesBefore);
    entries.forEach(([name], y) => {
      const expected = safe[y] as string;
      expect(columns(expected), name).toBeLessThanOrEqual(COLS);
      expect(emu.row(y), name).toBe(expected.trimEnd());
    });
    // Default SGR everywhere except the styled cells.
    for (let y = 0; y < ROWS; y++) {
      const line = emu.term.buffer.active.getLine(y);
      for (let x = 0; x < COLS; x++) {
        const cell = line?.getCell(x);
        if (cell === undefined) throw new Error("missing cell");
        const styled = y === styledRow && x >= 2 && x < 2 + columns(sanitize("styled \x1b[0m text"));
        expect(cell.isBold() !== 0, `bold at ${y},${x}`).toBe(styled);
        if (styled) {
          expect(cell.isFgPalette(), `fg at ${y},${x}`).toBe(true);
          expect(cell.getFgColor(), `fg at ${y},${x}`).toBe(1);
        } else {
          expect(cell.isFgDefault(), `fg at ${y},${x}`).toBe(true);
        }
        expect(cell.isBgDefault()).toBe(true);
        expect(cell.isItalic() + cell.isUnderline() + cell.isInverse() + cell.isDim() + cell.isBlink()).toBe(0);
      }
    }
  });

  for (const [name, text] of entries) {
    it(`[ui.sanitize.hostile-corpus] ${name}: only visible characters, cursor where the renderer put it`, async () => {
      const emu = emulator(40, 4);
      const modesBefore = modesOf(emu.term);
      const screen = new Screen();
      const grid = new Grid(40, 4);
      const s = sanitize(text);
      const lines = s.split("\n");
      lines.forEach((line, y) => grid.write(y, 0, line as typeof s));
      const out = screen.frame(grid, { row: 2, col: 3 });
      await emu.write(out);
      expect(withoutRendererSequences(out)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
      expect(emu.fired).toEqual([]);
      expect(emu.term.buffer.active.type).toBe("normal");
      expect(emu.cursor()).toEqual({ row: 2, col: 3 });
      expect(modesOf(emu.term)).toEqual(modesBefore);
      lines.forEach((line, y) => expect(emu.row(y)).toBe(line.slice(0, 40).trimEnd()));
    });
  }

  it("[ui.sanitize.hostile-corpus] raw (unsanitized) corpus would have changed the emulator — the checks can fail", async () => {
    const emu = emulator(40, 4);
    await emu.write(HOSTILE.osc52_bel as string);
    await emu.write(HOSTILE.alt_screen as string);
    expect(emu.fired).toContain("osc52");
    expect(emu.term.buffer.active.type).toBe("alternate");
  });
});
