// The prompt editor as rows of the live region: its lines wrapped by grapheme at the width, a `› `
// lead on the first row, and where the cursor is; or the history search line while one is open.
import type { Editor } from "./editor.js";
import { keyLabel } from "./bindings.js";
import { clusterWidth, columns, graphemes, sanitize, truncateEnd, truncateMiddle } from "../ui/index.js";
import type { CursorPosition, SafeText, StyledLine, Theme } from "../ui/index.js";

/** What the empty prompt shows, naming the key bound to `interrupt` (none: not mentioned). */
export function emptyPromptHint(interruptKey: string): string {
  return `type a prompt · :help for commands${interruptKey === "none" ? "" : ` · ${keyLabel(interruptKey)} interrupts`}`;
}

/**
 * The editor's rows at `width`; past `maxRows` (cli.yaml `editor.max_lines`) only a window of that
 * many rows around the cursor shows, so a long draft never pushes the transcript off the screen.
 */
export function editorRows(editor: Editor, width: number, theme: Theme, maxRows = Infinity, hint = emptyPromptHint("escape")): { rows: StyledLine[]; cursor: CursorPosition } {
  const all = allEditorRows(editor, width, theme, hint);
  if (all.rows.length <= maxRows) return all;
  const first = Math.max(0, Math.min(all.cursor.row - maxRows + 1, all.rows.length - maxRows));
  return { rows: all.rows.slice(first, first + maxRows), cursor: { row: all.cursor.row - first, col: all.cursor.col } };
}

function allEditorRows(editor: Editor, width: number, theme: Theme, emptyHint: string): { rows: StyledLine[]; cursor: CursorPosition } {
  const t = theme.styles;
  const search = editor.search;
  if (search) {
    const text = sanitize(`(history search) ${search.query}: ${search.match ?? "no match"}`, { newlines: "escape" });
    return { rows: [[{ text: truncateMiddle(text, width), style: t.accent }]], cursor: { row: 0, col: Math.min(width - 1, columns(truncateMiddle(text, width))) } };
  }
  const prefix = width >= 4 ? 2 : 0;
  // The empty prompt says how to get help, in muted text behind the cursor.
  const lines = editor.lineTexts;
  if (lines.length === 1 && lines[0] === "" && prefix > 0) {
    const hint = truncateEnd(emptyHint as SafeText, width - prefix);
    return { rows: [[{ text: "› " as SafeText, style: t.prompt }, ...(hint !== "" ? [{ text: hint, style: t.muted }] : [])]], cursor: { row: 0, col: prefix } };
  }
  const avail = Math.max(1, width - prefix);
  const rows: StyledLine[] = [];
  let cursor: CursorPosition = { row: 0, col: prefix };
  const { row: cr, col: cc } = editor.cursor;
  editor.lineTexts.forEach((text, li) => {
    let line = "";
    let w = 0;
    let offset = 0;
    const pushRow = () => {
      const lead = rows.length === 0 ? "› " : "  ";
      rows.push([...(prefix > 0 ? [{ text: lead as SafeText, style: t.prompt }] : []), { text: sanitize(line, { newlines: "escape" }), style: t.text }]);
      line = "";
      w = 0;
    };
    for (const g of graphemes(text)) {
      const gw = clusterWidth(g);
      if (w + gw > avail) pushRow();
      if (li === cr && offset === cc) cursor = { row: rows.length, col: prefix + w };
      line += g;
      w += gw;
      offset += g.length;
    }
    if (li === cr && offset <= cc) {
      if (w >= avail) pushRow();
      cursor = { row: rows.length, col: prefix + w };
    }
    pushRow();
  });
  return { rows, cursor };
}
