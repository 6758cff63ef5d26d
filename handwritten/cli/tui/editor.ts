// The multi-line prompt editor: a text buffer with a grapheme-aware cursor, prompt history
// (up/down at the first/last line) and an incremental reverse history search (Ctrl-R).
import type { Key } from "./keys.js";
import { graphemes } from "../ui/index.js";

/** Largest text the editor holds; input past it is refused (the status line says so). */
export const EDITOR_MAX_CHARS = 1024 * 1024;

/**
 * A paste of more lines than this is held aside and shown in the editor as one placeholder,
 * `[Pasted text #N +L lines]`; sending puts the text back in its place (other coding agents do the same).
 */
export const PASTE_COLLAPSE_LINES = 10;

export type EditorAction = { readonly kind: "submit"; readonly text: string } | { readonly kind: "none" } | { readonly kind: "refused" };

export interface SearchState {
  readonly query: string;
  /** The matching history entry, if any. */
  readonly match: string | undefined;
}

function graphemeStarts(line: string): number[] {
  const starts: number[] = [];
  let at = 0;
  for (const g of graphemes(line)) {
    starts.push(at);
    at += g.length;
  }
  starts.push(at);
  return starts;
}

export class Editor {
  private lines: string[] = [""];
  private row = 0;
  private col = 0;
  private history: readonly string[] = [];
  /** Position in history while browsing: history.length means "the draft". */
  private historyAt = 0;
  private draft: string | undefined;
  private searchQuery: string | undefined;
  private searchFrom = 0;
  /** Collapsed pastes by their placeholder, until the text is sent or cleared. */
  private readonly pastes = new Map<string, string>();

  /** Replaces the history (oldest first); browsing restarts at the draft. */
  setHistory(entries: readonly string[]): void {
    this.history = entries;
    this.historyAt = entries.length;
    this.draft = undefined;
  }

  get text(): string {
    return this.lines.join("\n");
  }

  get cursor(): { readonly row: number; readonly col: number } {
    return { row: this.row, col: this.col };
  }

  get lineTexts(): readonly string[] {
    return this.lines;
  }

  get search(): SearchState | undefined {
    if (this.searchQuery === undefined) return undefined;
    return { query: this.searchQuery, match: this.findMatch(this.searchQuery, this.searchFrom)?.text };
  }

  setText(text: string): void {
    this.lines = text.split("\n");
    this.row = this.lines.length - 1;
    this.col = (this.lines[this.row] as string).length;
  }

  clear(): void {
    this.setText("");
    this.pastes.clear();
    this.historyAt = this.history.length;
    this.draft = undefined;
  }

  /** Applies one key; `submit` hands the text over and clears the editor. */
  apply(key: Key): EditorAction {
    if (this.searchQuery !== undefined) return this.applySearch(key);
    switch (key.kind) {
      case "text":
        return this.insert(key.text);
      case "paste":
        return this.insertPaste(key.text);
      case "newline":
        return this.insert("\n");
      case "enter": {
        const text = this.expanded();
        if (text.trim() === "") return { kind: "none" };
        this.clear();
        return { kind: "submit", text };
      }
      case "backspace":
        if (!this.removePlaceholderBefore()) this.backspace();
        break;
      case "delete":
        this.deleteForward();
        break;
      case "left":
        this.moveLeft();
        break;
      case "right":
        this.moveRight();
        break;
      case "word-left":
        this.wordLeft();
        break;
      case "word-right":
        this.wordRight();
        break;
      case "home":
        this.col = 0;
        break;
      case "end":
        this.col = this.line.length;
        break;
      case "up":
        if (this.row > 0) this.moveVertical(-1);
        else this.browse(-1);
        break;
      case "down":
        if (this.row < this.lines.length - 1) this.moveVertical(1);
        else this.browse(1);
        break;
      case "ctrl":
        return this.ctrl(key.key);
      default:
        break;
    }
    return { kind: "none" };
  }

  private get line(): string {
    return this.lines[this.row] as string;
  }

  private set line(v: string) {
    this.lines[this.row] = v;
  }

  /** A long paste goes in as its placeholder; a short one as text. */
  private insertPaste(text: string): EditorAction {
    const lines = text.split("\n").length;
    if (lines <= PASTE_COLLAPSE_LINES) return this.insert(text);
    if (this.expanded().length + text.length > EDITOR_MAX_CHARS) return { kind: "refused" };
    const placeholder = `[Pasted text #${this.pastes.size + 1} +${lines} lines]`;
    this.pastes.set(placeholder, text);
    return this.insert(placeholder);
  }

  /** Backspace just after a placeholder removes all of it, and its paste. */
  private removePlaceholderBefore(): boolean {
    const before = this.line.slice(0, this.col);
    for (const placeholder of this.pastes.keys()) {
      if (!before.endsWith(placeholder)) continue;
      this.line = before.slice(0, -placeholder.length) + this.line.slice(this.col);
      this.col -= placeholder.length;
      this.pastes.delete(placeholder);
      return true;
    }
    return false;
  }

  /** The text with each placeholder still whole replaced by its paste (an edited one stays as typed). */
  expanded(): string {
    let text = this.text;
    for (const [placeholder, paste] of this.pastes) text = text.split(placeholder).join(paste);
    return text;
  }

  private insert(text: string): EditorAction {
    if (this.text.length + text.length > EDITOR_MAX_CHARS) return { kind: "refused" };
    const parts = text.split("\n");
    const before = this.line.slice(0, this.col);
    const after = this.line.slice(this.col);
    if (parts.length === 1) {
      this.line = before + text + after;
      this.col += text.length;
    } else {
      const middle = parts.slice(1, -1);
      const last = parts[parts.length - 1] as string;
      this.lines.splice(this.row, 1, before + (parts[0] as string), ...middle, last + after);
      this.row += parts.length - 1;
      this.col = last.length;
    }
    return { kind: "none" };
  }

  private backspace(): void {
    if (this.col > 0) {
      const starts = graphemeStarts(this.line);
      const prev = starts.filter((s) => s < this.col).pop() ?? 0;
      this.line = this.line.slice(0, prev) + this.line.slice(this.col);
      this.col = prev;
    } else if (this.row > 0) {
      const prevLine = this.lines[this.row - 1] as string;
      this.lines.splice(this.row - 1, 2, prevLine + this.line);
      this.row--;
      this.col = prevLine.length;
    }
  }

  private deleteForward(): void {
    if (this.col < this.line.length) {
      const next = graphemeStarts(this.line).find((s) => s > this.col) ?? this.line.length;
      this.line = this.line.slice(0, this.col) + this.line.slice(next);
    } else if (this.row < this.lines.length - 1) {
      this.lines.splice(this.row, 2, this.line + (this.lines[this.row + 1] as string));
    }
  }

  private moveLeft(): void {
    if (this.col > 0) this.col = graphemeStarts(this.line).filter((s) => s < this.col).pop() ?? 0;
    else if (this.row > 0) {
      this.row--;
      this.col = this.line.length;
    }
  }

  private moveRight(): void {
    if (this.col < this.line.length) this.col = graphemeStarts(this.line).find((s) => s > this.col) ?? this.line.length;
    else if (this.row < this.lines.length - 1) {
      this.row++;
      this.col = 0;
    }
  }

  private wordLeft(): void {
    const l = this.line;
    let c = this.col;
    while (c > 0 && /\s/.test(l[c - 1] as string)) c--;
    while (c > 0 && !/\s/.test(l[c - 1] as string)) c--;
    this.col = c;
  }

  private wordRight(): void {
    const l = this.line;
    let c = this.col;
    while (c < l.length && /\s/.test(l[c] as string)) c++;
    while (c < l.length && !/\s/.test(l[c] as string)) c++;
    this.col = c;
  }

  private moveVertical(delta: number): void {
    const target = graphemeStarts(this.line).indexOf(this.col);
    this.row += delta;
    const starts = graphemeStarts(this.line);
    this.col = starts[Math.min(Math.max(target, 0), starts.length - 1)] as number;
  }

  /** Up/down through history; the unsent draft is kept and comes back past the newest entry. */
  private browse(delta: number): void {
    const next = this.historyAt + delta;
    if (next < 0 || next > this.history.length) return;
    if (this.historyAt === this.history.length) this.draft = this.text;
    this.historyAt = next;
    this.setText(next === this.history.length ? (this.draft ?? "") : (this.history[next] as string));
  }

  private ctrl(k: string): EditorAction {
    switch (k) {
      case "a":
        this.col = 0;
        break;
      case "e":
        this.col = this.line.length;
        break;
      case "u":
        this.line = this.line.slice(this.col);
        this.col = 0;
        break;
      case "k":
        this.line = this.line.slice(0, this.col);
        break;
      case "w": {
        const end = this.col;
        this.wordLeft();
        this.line = this.line.slice(0, this.col) + this.line.slice(end);
        break;
      }
      case "j":
        return this.insert("\n");
      case "r":
        this.searchQuery = "";
        this.searchFrom = this.history.length - 1;
        break;
      default:
        break;
    }
    return { kind: "none" };
  }

  private findMatch(query: string, from: number): { text: string; index: number } | undefined {
    for (let i = Math.min(from, this.history.length - 1); i >= 0; i--) {
      const text = this.history[i] as string;
      if (text.includes(query)) return { text, index: i };
    }
    return undefined;
  }

  private applySearch(key: Key): EditorAction {
    const query = this.searchQuery as string;
    if (key.kind === "text" || key.kind === "paste") {
      this.searchQuery = query + key.text.replace(/\n/g, " ");
      this.searchFrom = this.history.length - 1;
    } else if (key.kind === "backspace") {
      const g = graphemes(query);
      g.pop();
      this.searchQuery = g.join("");
      this.searchFrom = this.history.length - 1;
    } else if (key.kind === "ctrl" && key.key === "r") {
      const m = this.findMatch(query, this.searchFrom);
      if (m) {
        const older = this.findMatch(query, m.index - 1);
        if (older) this.searchFrom = older.index;
      }
    } else if (key.kind === "escape" || (key.kind === "ctrl" && (key.key === "g" || key.key === "c"))) {
      this.searchQuery = undefined;
    } else {
      // Enter and movement keys accept the match into the editor (Enter does not send it).
      const m = this.findMatch(query, this.searchFrom);
      this.searchQuery = undefined;
      if (m) {
        this.setText(m.text);
        this.historyAt = m.index;
      }
    }
    return { kind: "none" };
  }
}
