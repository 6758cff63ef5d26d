import { describe, expect, it } from "vitest";
import { Grid, Screen, render, sanitize } from "../../../handwritten/cli/ui/index.js";
import type { SafeText } from "../../../handwritten/cli/ui/index.js";
import { emulator, withoutRendererSequences } from "./emulator.js";

function fill(grid: Grid, seed: string): void {
  for (let y = 0; y < grid.rows; y++) grid.write(y, 0, sanitize(`${seed}${y} `.repeat(grid.cols)));
}

function expectScreenMatches(emu: ReturnType<typeof emulator>, grid: Grid): void {
  for (let y = 0; y < grid.rows; y++) {
    let text = "";
    for (let x = 0; x < grid.cols; x++) text += grid.cell(y, x).char;
    expect(emu.row(y), `row ${y}`).toBe(text.trimEnd());
  }
}

describe("diffing renderer", () => {
  it("[ui.screen.diff-minimal] a one-cell change writes only that cell plus cursor moves", async () => {
    const emu = emulator(40, 10);
    const screen = new Screen();
    const a = new Grid(40, 10);
    fill(a, "row");
    await emu.write(screen.frame(a, { row: 9, col: 0 }));
    const b = a.clone();
    b.write(5, 10, sanitize("X"));
    const out = screen.frame(b, { row: 9, col: 0 });
    expect(out).toBe("\x1b[6;11HX\x1b[10;1H");
    await emu.write(out);
    expectScreenMatches(emu, b);
    expect(emu.cursor()).toEqual({ row: 9, col: 0 });
    // An unchanged frame writes nothing but the cursor, which is already in place.
    expect(screen.frame(b.clone(), { row: 9, col: 0 })).toBe("\x1b[10;1H");
  });

  it("[ui.screen.diff-minimal] a styled one-cell change sets the style, writes the cell and resets", () => {
    const screen = new Screen();
    const a = new Grid(10, 2);
    screen.frame(a);
    const b = a.clone();
    b.write(1, 3, sanitize("!"), { fg: "red", bold: true });
    expect(screen.frame(b)).toBe("\x1b[2;4H\x1b[0;1;31m!\x1b[0m\x1b[1;1H");
  });

  it("[ui.screen.diff-minimal] replacing a wide cluster by narrow ones redraws both halves", async () => {
    const emu = emulator(10, 2);
    const screen = new Screen();
    const a = new Grid(10, 2);
    a.write(0, 2, sanitize("字"));
    await emu.write(screen.frame(a));
    const b = a.clone();
    b.write(0, 2, sanitize("ab"));
    await emu.write(screen.frame(b));
    expect(emu.row(0)).toBe("  ab");
    const c = b.clone();
    c.write(0, 3, sanitize("字"));
    await emu.write(screen.frame(c));
    expect(emu.row(0)).toBe("  a字");
    expect(c.cell(0, 4).width).toBe(0);
  });

  it("[ui.screen.diff-minimal] a resize repaints the whole new size correctly in the emulator", async () => {
    const emu = emulator(40, 10);
    const screen = new Screen();
    const a = new Grid(40, 10);
    fill(a, "old");
    await emu.write(screen.enter() + screen.frame(a));
    emu.term.resize(25, 6);
    const b = new Grid(25, 6);
    fill(b, "new");
    b.write(2, 23, sanitize("字")); // fits exactly in the last two columns
    const out = screen.frame(b, { row: 5, col: 24 });
    await emu.write(out);
    expectScreenMatches(emu, b);
    expect(emu.cursor()).toEqual({ row: 5, col: 24 });
    // Growing again repaints as well.
    emu.term.resize(30, 8);
    const c = new Grid(30, 8);
    fill(c, "big");
    await emu.write(screen.frame(c));
    expectScreenMatches(emu, c);
  });

  it("[ui.screen.diff-minimal] invalidate makes the next frame a full repaint", () => {
    const screen = new Screen();
    const a = new Grid(5, 2);
    a.write(0, 0, sanitize("hello"));
    screen.frame(a);
    screen.invalidate();
    const out = screen.frame(a.clone());
    expect(out).toContain("\x1b[2K");
    expect(out).toContain("hello");
  });

  it("[ui.screen.diff-minimal] nothing is written past the right edge, even with autowrap left on", async () => {
    const cols = 12;
    const emu = emulator(cols, 4);
    const grid = new Grid(cols, 4);
    expect(grid.write(0, 0, sanitize("abcdefghijklmnop"))).toBe(cols);
    expect(grid.write(1, 0, sanitize("字字字字字字字"))).toBe(cols);
    expect(grid.write(2, 0, sanitize("abcdefghijk字"))).toBe(cols); // wide cluster at the last column → padding
    expect(grid.cell(2, 11)).toMatchObject({ char: " ", width: 1 });
    grid.write(3, 0, sanitize("x".repeat(cols)));
    const out = render(undefined, grid, { cursor: { row: 3, col: 11 } });
    await emu.write(out); // no enter(): autowrap stays on
    expect(emu.term.buffer.active.baseY).toBe(0); // nothing scrolled
    expect(emu.row(0)).toBe("abcdefghijkl");
    expect(emu.row(1)).toBe("字字字字字字");
    expect(emu.row(2)).toBe("abcdefghijk");
    expect(emu.row(3)).toBe("x".repeat(cols));
    expect(emu.cursor()).toEqual({ row: 3, col: 11 });
    expect(withoutRendererSequences(out)).not.toMatch(/[\u0000-\u001f]/);
    // A diff touching the last column does not wrap either.
    const next = grid.clone();
    next.write(0, 11, sanitize("Z"));
    next.write(1, 0, sanitize("y"));
    await emu.write(render(grid, next, { cursor: { row: 0, col: 0 } }));
    expect(emu.row(0)).toBe("abcdefghijkZ");
    expect(emu.row(1)).toBe("y 字字字字字");
    expect(emu.term.buffer.active.baseY).toBe(0);
  });

  it("[ui.screen.diff-minimal] a forged unsafe cell is replaced, never written raw", () => {
    const grid = new Grid(6, 1);
    grid.write(0, 0, "a\x1b[2Jb" as SafeText);
    const out = render(undefined, grid);
    expect(withoutRendererSequences(out)).not.toMatch(/[\u0000-\u001f]/);
  });
});
