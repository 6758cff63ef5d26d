import { describe, expect, it } from "vitest";
import { Grid, Screen, columns, sanitize } from "../../../handwritten/cli/ui/index.js";
import type { Style } from "../../../handwritten/cli/ui/index.js";
import { emulator, withoutRendererSequences } from "./emulator.js";

const HOSTILE: Record<string, string> = {
  osc52_bel: "copy\x1b]52;c;SGVsbG8gY2xpcGJvYXJk\x07done",
  osc52_st: "copy\x1b]52;p;SGVsbG8=\x1b\\done",
  osc8_link: "\x1b]8;;https://evil.example/\x07click me\x1b]8;;\x07",
  osc_title: "\x1b]0;pwned title\x07\x1b]2;pwned\x1b\\",
  csi_cursor_move: "a\x1b[10;10Hb\x1b[5Ac\x1b[H",
  csi_clear: "x\x1b[2Jy\x1b[3J\x1b[K",
  alt_screen: "\x1b[?1049hinside\x1b[?47h\x1b[?1047h",
  dcs: "\x1bPq#0;2;0;0;0#0~~@@vv@@~~$-\x1b\\after",
  dcs_decrqss: "\x1bP$qm\x1b\\",
  c1_csi: "\x9b31mred\x9b2J",
  c1_osc: "\x9d52;c;SGVsbG8=\x9c",
  c1_dcs: "\x90q\x9c",
  bidi_override: "user\u202etxt.exe\u202c and \u2066iso\u2069 \u200f",
  lone_esc: "before\x1bafter \x1b",
  bel: "ding\x07ding",
  backspace: "abc\x08\x08\x08XYZ",
  nul: "a\x00b\x00",
  carriage_return: "visible\roverwrite",
  sgr_inject: "\x1b[31;1;5mred blink\x1b[0m",
  reset_terminal: "\x1bc\x1b[!p",
  save_restore: "\x1b7\x1b[20;1Hmoved\x1b8",
  modes: "\x1b[?25l\x1b[?1000h\x1b[?2004h\x1b[4h\x1b[?6h\x1b[20h",
  del: "a\x7fb",
  keypad: "\x1b=\x1b>",
  charset: "\x1b(0lqqk\x1b(B\x0e\x0f",
  scroll_region: "\x1b[2;3r\x1bD\x1bM\x1bE",
  tabs: "a\tb\x1bH\x1b[3g",
};

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
