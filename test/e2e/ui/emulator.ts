// A real terminal emulator (xterm.js headless) for asserting on what the renderer's bytes do.
import xterm from "@xterm/headless";
import type { Terminal as TerminalType } from "@xterm/headless";

const { Terminal } = xterm;

export interface Emulator {
  term: TerminalType;
  write(data: string): Promise<void>;
  /** OSC / DCS identifiers whose handlers ran, titles set, bells rung. */
  fired: string[];
  /** The visible text of a row, right-trimmed. */
  row(y: number): string;
  /** The characters of the cell at (row, col). */
  cellChars(y: number, x: number): string;
  cursor(): { row: number; col: number };
}

export function emulator(cols: number, rows: number): Emulator {
  const term = new Terminal({ cols, rows, allowProposedApi: true, scrollback: 100 });
  const fired: string[] = [];
  for (const id of [0, 1, 2, 4, 7, 8, 10, 11, 12, 52, 104, 133, 1337]) {
    term.parser.registerOscHandler(id, () => {
      fired.push(`osc${id}`);
      return true;
    });
  }
  for (const final of ["q", "p", "|", "$q", "+q"]) {
    const f = final.length === 2 ? { intermediates: final[0] as string, final: final[1] as string } : { final };
    term.parser.registerDcsHandler(f, () => {
      fired.push(`dcs${final}`);
      return true;
    });
  }
  term.onTitleChange(() => fired.push("title"));
  term.onBell(() => fired.push("bell"));
  return {
    term,
    fired,
    write: (data) => new Promise<void>((resolve) => term.write(data, resolve)),
    row: (y) => term.buffer.active.getLine(term.buffer.active.viewportY + y)?.translateToString(true) ?? "",
    cellChars: (y, x) => term.buffer.active.getLine(term.buffer.active.viewportY + y)?.getCell(x)?.getChars() ?? "",
    cursor: () => ({ row: term.buffer.active.cursorY, col: term.buffer.active.cursorX }),
  };
}

/** Escape sequences the renderer is allowed to construct. */
export const RENDERER_SEQUENCE = /\x1b\[\d+;\d+H|\x1b\[[\d;]*m|\x1b\[2K|\x1b\[\?7[lh]|\x1b\[\?2026[hl]/g;

/** Output with the renderer's own sequences removed: must hold no control character at all. */
export function withoutRendererSequences(out: string): string {
  return out.replace(RENDERER_SEQUENCE, "");
}
