// Terminal UI: rendering and diffing a full 120×40 frame, and a one-cell change, beside a baseline
// of writing the same full frame as plain strings (one CUP per row + the row text), same run.
import { Grid, Screen, render, sanitize } from "../handwritten/cli/ui/index.js";
import type { Style } from "../handwritten/cli/ui/index.js";
import { fmt, opsPerSecond, report } from "./support.js";

const COLS = 120;
const ROWS = 40;
const STYLES: Style[] = [{}, { fg: "green" }, { fg: "red", bold: true }, { dim: true }];

function frame(seed: number): Grid {
  const g = new Grid(COLS, ROWS);
  for (let y = 0; y < ROWS; y++) {
    const text = sanitize(`${String(y + seed).padStart(3, "0")} const value = compute(input, options); // 字 e\u0301 line text `.repeat(2));
    g.write(y, 0, text, STYLES[y % STYLES.length]);
  }
  return g;
}

export async function run(): Promise<void> {
  const a = frame(0);
  const rows: string[] = [];
  for (let y = 0; y < ROWS; y++) {
    let s = "";
    for (let x = 0; x < COLS; x++) s += a.cell(y, x).char;
    rows.push(s);
  }
  let sink = 0;
  const baseline = opsPerSecond(() => {
    let out = "";
    for (let y = 0; y < ROWS; y++) out += `\x1b[${y + 1};1H` + rows[y];
    sink += out.length;
  });

  const fullBytes = render(undefined, a).length;
  const full = opsPerSecond(() => {
    sink += render(undefined, a).length;
  });

  const b = a.clone();
  b.write(20, 60, sanitize("X"));
  const oneCellBytes = render(a, b).length;
  const oneCell = opsPerSecond(() => {
    sink += render(a, b).length;
  });

  // Steady state through Screen: alternate two frames that differ in one cell (includes the clone).
  const screen = new Screen();
  screen.frame(a);
  let flip = false;
  const steady = opsPerSecond(() => {
    flip = !flip;
    sink += screen.frame(flip ? b : a).length;
  });

  const us = (ops: number): string => `${fmt(1e6 / ops, 1)} µs`;
  report("full 120×40 frame render", us(full), "plain-string frame", us(baseline), baseline / full);
  report("one-cell diff of 120×40", us(oneCell), "plain-string frame", us(baseline), baseline / oneCell);
  report("Screen.frame one-cell (with clone)", us(steady), "plain-string frame", us(baseline), baseline / steady);
  console.log(`bytes: full frame ${fullBytes}, one-cell diff ${oneCellBytes}, plain frame ${rows.join("").length + ROWS * 8} (sink ${sink > 0 ? "ok" : "?"})`);
}
