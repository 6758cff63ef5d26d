// Markdown answers as styled rows: markdown-it parses (raw HTML off, loaded the first time an
// answer is rendered), this module lays the tokens out for a width — headings, emphasis, lists,
// quotes, links as text + URL, fenced code highlighted (highlight.ts), tables fitted to the width.
// Every piece of text goes through `sanitize`; styles come from the theme. See
// SPEC-terminal-presentation, "Markdown answers".
//
// A streamed answer is cut into chunks at blank lines followed by an unindented line outside a
// fence (`MarkdownStream`): a chunk once followed by another never changes, so its rows are
// rendered once and are final; only the open (last) chunk is rendered again as text arrives.
import { createRequire } from "node:module";
import type MarkdownIt from "markdown-it";
import type Token from "markdown-it/lib/token.mjs";
import { highlightLines } from "./highlight.js";
import { sanitize, type SafeText } from "./sanitize.js";
import type { Span, StyledLine } from "./screen.js";
import { styleKey, type Style } from "./style.js";
import type { Theme, ThemeKey } from "./theme.js";
import { clusterWidth, columns, graphemes } from "./width.js";

/** A chunk longer than this is shown as plain wrapped text: parsing costs about its length. */
export const MARKDOWN_MAX_CHUNK_CHARS = 256 * 1024;
/** An open chunk longer than this is not highlighted while it grows (it is once it is final). */
export const OPEN_CHUNK_HIGHLIGHT_CHARS = 16 * 1024;
/** Narrowest column of a fitted table; narrower than that for every column, rows are listed instead. */
export const TABLE_MIN_COLUMN = 3;

let parser: MarkdownIt | undefined;
function md(): MarkdownIt {
  // Loaded on first use: the UI's first frame must not wait for it.
  if (parser === undefined) {
    const Ctor = createRequire(import.meta.url)("markdown-it") as typeof MarkdownIt;
    parser = new Ctor({ html: false, linkify: false, typographer: false });
  }
  return parser;
}

/** Loads the parser now (the UI calls it once idle, so the first answer does not wait for it). */
export function preloadMarkdown(): void {
  md();
}

// ── styled words and wrapping ───────────────────────────────────────────────────────────────

type Piece = { readonly text: SafeText; readonly style: Style } | { readonly br: true };

const merged = new Map<string, Style>();
/** `over` on top of `base` (one object per pair, so styles stay cheap to compare). */
function mergeStyle(base: Style, over: Style): Style {
  const k = `${styleKey(base)}|${styleKey(over)}`;
  let s = merged.get(k);
  if (s === undefined) merged.set(k, (s = Object.freeze({ ...base, ...over })));
  return s;
}

/** Widths of the short non-ASCII strings layouts repeat (markers, rules, prefixes). */
const shortWidths = new Map<string, number>();
function width(text: string): number {
  if (text.length > 8) return columns(text);
  let w = shortWidths.get(text);
  if (w === undefined) {
    w = columns(text);
    if (shortWidths.size < 4096) shortWidths.set(text, w);
  }
  return w;
}

/** Pushes a span, joining it to the previous one when the style is the same. */
function pushSpan(line: Span[], text: string, style: Style): void {
  if (text === "") return;
  const last = line[line.length - 1];
  if (last !== undefined && last.style === style) line[line.length - 1] = { text: (last.text + text) as SafeText, style };
  else line.push({ text: text as SafeText, style });
}

type Atom = { kind: "space"; w: number; text: string; style: Style } | { kind: "word"; w: number; parts: { text: string; style: Style }[] } | { kind: "br" };

function atoms(pieces: readonly Piece[]): Atom[] {
  const out: Atom[] = [];
  for (const p of pieces) {
    if ("br" in p) {
      out.push({ kind: "br" });
      continue;
    }
    for (const m of p.text.matchAll(/ +|[^ ]+/g)) {
      const t = m[0];
      if (t.startsWith(" ")) out.push({ kind: "space", w: t.length, text: t, style: p.style });
      else {
        const last = out[out.length - 1];
        // Text in two styles with no space between is one word: it is never broken there.
        if (last?.kind === "word" && m.index === 0) {
          last.parts.push({ text: t, style: p.style });
          last.w += width(t);
        } else out.push({ kind: "word", w: width(t), parts: [{ text: t, style: p.style }] });
      }
    }
  }
  return out;
}

/** Styled text wrapped at spaces to `avail` columns; a word longer than a row is cut at clusters. */
export function wrapPieces(pieces: readonly Piece[], avail: number): Span[][] {
  const rows: Span[][] = [];
  let cur: Span[] = [];
  let w = 0;
  let space: Extract<Atom, { kind: "space" }> | undefined;
  const newRow = () => {
    rows.push(cur);
    cur = [];
    w = 0;
  };
  for (const a of atoms(pieces)) {
    if (a.kind === "br") {
      newRow();
      space = undefined;
      continue;
    }
    if (a.kind === "space") {
      if (w > 0) space = a;
      continue;
    }
    const gap = space !== undefined ? space.w : 0;
    if (w + gap + a.w <= avail) {
      if (space !== undefined) pushSpan(cur, space.text, space.style);
      for (const p of a.parts) pushSpan(cur, p.text, p.style);
      w += gap + a.w;
    } else if (a.w <= avail) {
      newRow();
      for (const p of a.parts) pushSpan(cur, p.text, p.style);
      w = a.w;
    } else {
      if (w > 0) newRow();
      for (const p of a.parts) {
        for (const g of graphemes(p.text)) {
          const gw = clusterWidth(g);
          if (w + gw > avail && w > 0) newRow();
          pushSpan(cur, g, p.style);
          w += gw;
        }
      }
    }
    space = undefined;
  }
  if (cur.length > 0 || rows.length === 0) rows.push(cur);
  return rows;
}

/** Cuts styled spans into rows of at most `avail` columns, at clusters (code keeps its spaces). */
function hardWrap(spans: readonly Span[], avail: number): Span[][] {
  let total = 0;
  for (const s of spans) total += width(s.text);
  if (total <= avail) return [[...spans]];
  const rows: Span[][] = [[]];
  let w = 0;
  for (const s of spans) {
    for (const g of graphemes(s.text)) {
      const gw = clusterWidth(g);
      if (w + gw > avail && w > 0) {
        rows.push([]);
        w = 0;
      }
      pushSpan(rows[rows.length - 1] as Span[], g, s.style);
      w += gw;
    }
  }
  return rows;
}

// ── inline tokens ───────────────────────────────────────────────────────────────────────────

/** The pieces of an inline token's children, over `base`. */
function inlinePieces(children: readonly Token[] | null, base: Style, theme: Theme): Piece[] {
  const out: Piece[] = [];
  const stack: Style[] = [base];
  const top = () => stack[stack.length - 1] as Style;
  const open = (key: ThemeKey | Style) => stack.push(mergeStyle(top(), typeof key === "string" ? theme.styles[key] : key));
  const links: { href: string; start: number }[] = [];
  const text = (t: string, style = top()) => {
    if (t !== "") out.push({ text: sanitize(t, { newlines: "escape" }), style });
  };
  for (const t of children ?? []) {
    switch (t.type) {
      case "text":
        text(t.content);
        break;
      case "softbreak":
        // A line break in an answer stays one: models write line by line (lists without markers,
        // verse, output they quote), and a terminal shows it as they wrote it.
        out.push({ br: true });
        break;
      case "hardbreak":
        out.push({ br: true });
        break;
      case "code_inline":
        text(t.content, mergeStyle(top(), theme.styles.mdCode));
        break;
      case "strong_open":
        open("mdStrong");
        break;
      case "em_open":
        open("mdEmphasis");
        break;
      case "s_open":
        open({ dim: true });
        break;
      case "link_open":
        links.push({ href: t.attrGet("href") ?? "", start: out.length });
        open("mdLink");
        break;
      case "link_close": {
        stack.pop();
        const link = links.pop();
        if (link === undefined) break;
        const shown = out
          .slice(link.start)
          .map((p) => ("br" in p ? " " : p.text))
          .join("");
        // The URL follows its text, unless the text is the URL (an autolink, or a bare address).
        const bare = link.href.replace(/^mailto:/, "");
        if (link.href !== "" && shown !== link.href && shown !== bare) text(` (${link.href})`, mergeStyle(base, theme.styles.muted));
        break;
      }
      case "image": {
        const alt = (t.children ?? []).map((c) => c.content).join("");
        text(`[image${alt !== "" ? `: ${alt}` : ""}]`, mergeStyle(top(), theme.styles.mdLink));
        const src = t.attrGet("src") ?? "";
        if (src !== "") text(` (${src})`, mergeStyle(base, theme.styles.muted));
        break;
      }
      case "html_inline":
        text(t.content);
        break;
      case "strong_close":
      case "em_close":
      case "s_close":
        if (stack.length > 1) stack.pop();
        break;
      default:
        if (t.content !== "") text(t.content);
    }
  }
  return out;
}

// ── blocks ──────────────────────────────────────────────────────────────────────────────────

/** A container's line prefixes: `first` for its next row (once), then `rest`. */
interface Frame {
  first: Span[] | undefined;
  rest: Span[];
  blocks: number;
  tight: boolean;
  ordered?: boolean;
  next?: number;
  depth?: number;
}

const BULLETS = ["•", "◦", "▪"];

interface TableCell {
  pieces: Piece[];
  align: "left" | "right" | "center";
}

class BlockWriter {
  readonly rows: StyledLine[] = [];
  private readonly frames: Frame[] = [{ first: undefined, rest: [], blocks: 0, tight: false }];
  private table: { rows: TableCell[][]; header: number; cell?: TableCell } | undefined;
  private listDepth = 0;

  constructor(
    private readonly width: number,
    private readonly theme: Theme,
    private readonly highlight: boolean,
  ) {}

  private get frame(): Frame {
    return this.frames[this.frames.length - 1] as Frame;
  }

  private prefixWidth(spans: readonly Span[]): number {
    let w = 0;
    for (const s of spans) w += width(s.text);
    return w;
  }

  /** Columns left for content after the current prefix (at least 1). */
  private get avail(): number {
    const f = this.frame;
    return Math.max(1, this.width - this.prefixWidth(f.first ?? f.rest));
  }

  private emit(spans: readonly Span[]): void {
    const f = this.frame;
    const prefix = f.first ?? f.rest;
    f.first = undefined;
    const row = [...prefix];
    for (const s of spans) pushSpan(row, s.text, s.style);
    this.rows.push(this.fit(row));
  }

  /** A row never wider than the width (prefixes of deep nesting can be). */
  private fit(row: Span[]): StyledLine {
    let w = 0;
    const out: Span[] = [];
    for (const s of row) {
      const sw = width(s.text);
      if (w + sw <= this.width) {
        out.push(s);
        w += sw;
        continue;
      }
      let t = "";
      for (const g of graphemes(s.text)) {
        const gw = clusterWidth(g);
        if (w + gw > this.width) break;
        t += g;
        w += gw;
      }
      if (t !== "") out.push({ text: t as SafeText, style: s.style });
      break;
    }
    return out;
  }

  /** A blank row between blocks of a container (not in a tight list item). */
  private separate(): void {
    const f = this.frame;
    if (f.blocks > 0 && !f.tight) this.emit([]);
    f.blocks++;
  }

  private push(first: Span[], rest: Span[], extra: Partial<Frame> = {}): void {
    const f = this.frame;
    const base = f.first ?? f.rest;
    f.first = undefined;
    this.frames.push({ first: [...base, ...first], rest: [...f.rest, ...rest], blocks: 0, tight: false, ...extra });
  }

  private pop(): void {
    const f = this.frames.pop() as Frame;
    // An empty list item still shows its marker.
    if (f.first !== undefined && f.depth === undefined && f.blocks === 0) {
      this.frames.push(f);
      this.emit([]);
      this.frames.pop();
    }
  }

  private paragraph(pieces: Piece[]): void {
    for (const row of wrapPieces(pieces, this.avail)) this.emit(row);
  }

  write(tokens: readonly Token[]): void {
    const t = this.theme.styles;
    for (let i = 0; i < tokens.length; i++) {
      const tok = tokens[i] as Token;
      if (this.table !== undefined && this.tableToken(tok)) continue;
      switch (tok.type) {
        case "paragraph_open":
          if (!tok.hidden || this.frame.blocks === 0 || !this.frame.tight) this.separate();
          else this.frame.blocks++;
          break;
        case "inline":
          this.paragraph(inlinePieces(tok.children, t.text, this.theme));
          break;
        case "heading_open": {
          this.separate();
          const inline = tokens[i + 1];
          const style = tok.tag === "h1" ? mergeStyle(t.mdHeading, { underline: true }) : t.mdHeading;
          this.paragraph(inlinePieces(inline?.children ?? null, style, this.theme));
          i += 2;
          break;
        }
        case "bullet_list_open":
        case "ordered_list_open": {
          this.separate();
          const tight = tokens[i + 2]?.type === "paragraph_open" && tokens[i + 2]?.hidden === true;
          const start = Number(tok.attrGet("start") ?? "1");
          this.push([], [], { tight, ordered: tok.type === "ordered_list_open", next: Number.isFinite(start) ? start : 1, depth: this.listDepth++ });
          break;
        }
        case "bullet_list_close":
        case "ordered_list_close":
          this.listDepth--;
          this.frames.pop();
          break;
        case "list_item_open":
          this.listItem(tok);
          break;
        case "list_item_close":
          this.pop();
          break;
        case "blockquote_open":
          this.separate();
          this.push([{ text: "│ " as SafeText, style: t.mdQuote }], [{ text: "│ " as SafeText, style: t.mdQuote }], { depth: -1 });
          break;
        case "blockquote_close":
          this.frames.pop();
          break;
        case "fence":
        case "code_block":
          this.codeBlock(tok);
          break;
        case "hr":
          this.separate();
          this.emit([{ text: "─".repeat(Math.min(this.avail, 40)) as SafeText, style: t.mdRule }]);
          break;
        case "html_block":
          this.separate();
          for (const line of tok.content.replace(/\n$/, "").split("\n")) this.paragraph([{ text: sanitize(line, { newlines: "escape" }), style: t.text }]);
          break;
        case "table_open":
          this.separate();
          this.table = { rows: [], header: 0 };
          break;
        default:
          break;
      }
    }
  }

  /** A list item: its marker (a number or a bullet by depth), then its blocks indented under it. */
  private listItem(tok: Token): void {
    const t = this.theme.styles;
    const list = this.frame;
    if (list.blocks > 0 && !list.tight) this.emit([]);
    list.blocks++;
    const marker = list.ordered ? `${list.next ?? 1}${tok.markup || "."} ` : `${BULLETS[(list.depth ?? 0) % BULLETS.length]} `;
    if (list.ordered) list.next = (list.next ?? 1) + 1;
    this.push([{ text: sanitize(marker), style: t.accent }], [{ text: " ".repeat(width(marker)) as SafeText, style: t.text }], { tight: list.tight });
  }

  /** A fenced or indented code block: highlighted by its language, indented where there is room, hard-wrapped. */
  private codeBlock(tok: Token): void {
    this.separate();
    const lines = this.highlight ? highlightLines(tok.content, tok.type === "fence" ? tok.info : "", this.theme) : highlightLines(tok.content, "", this.theme);
    const indent: Span[] = this.width >= 24 ? [{ text: "  " as SafeText, style: this.theme.styles.text }] : [];
    for (const line of lines) {
      const avail = Math.max(1, this.avail - indent.length * 2);
      for (const row of line.length === 0 ? [[]] : hardWrap(line, avail)) this.emit([...indent, ...row]);
    }
  }

  /** Collects a table's cells; draws it at `table_close`. True when the token was the table's. */
  private tableToken(tok: Token): boolean {
    const table = this.table;
    if (table === undefined) return false;
    switch (tok.type) {
      case "tr_open":
        table.rows.push([]);
        return true;
      case "th_open":
      case "td_open": {
        const style = tok.attrGet("style") ?? "";
        const align = /text-align:\s*right/.test(style) ? "right" : /text-align:\s*center/.test(style) ? "center" : "left";
        table.cell = { pieces: [], align };
        (table.rows[table.rows.length - 1] as TableCell[]).push(table.cell);
        if (tok.type === "th_open") table.header = table.rows.length;
        return true;
      }
      case "inline":
        if (table.cell !== undefined) table.cell.pieces = inlinePieces(tok.children, table.header === table.rows.length ? this.theme.styles.mdStrong : this.theme.styles.text, this.theme);
        return true;
      case "table_close":
        this.table = undefined;
        this.drawTable(table.rows, table.header);
        return true;
      default:
        return true;
    }
  }

  private drawTable(rows: TableCell[][], headerRows: number): void {
    const t = this.theme.styles;
    const n = Math.max(0, ...rows.map((r) => r.length));
    if (n === 0) return;
    const avail = this.avail;
    const natural = Array.from({ length: n }, (_, c) => Math.max(1, ...rows.map((r) => pieceWidth(r[c]?.pieces ?? []))));
    const room = avail - 3 * (n - 1);
    if (room < n * TABLE_MIN_COLUMN) {
      // Too narrow for columns: each row as its cells, one after another.
      rows.forEach((r, ri) => {
        const pieces: Piece[] = [];
        r.forEach((cell, ci) => {
          if (ci > 0) pieces.push({ text: " │ " as SafeText, style: t.mdTable });
          pieces.push(...cell.pieces);
        });
        this.paragraph(pieces);
        if (ri + 1 === headerRows) this.emit([{ text: "─".repeat(Math.min(avail, 20)) as SafeText, style: t.mdTable }]);
      });
      return;
    }
    const widths = fitColumns(natural, room);
    const sep: Span = { text: " │ " as SafeText, style: t.mdTable };
    rows.forEach((r, ri) => {
      const cells = widths.map((w, c) => wrapPieces(r[c]?.pieces ?? [], w));
      const height = Math.max(1, ...cells.map((c) => c.length));
      for (let y = 0; y < height; y++) {
        const line: Span[] = [];
        widths.forEach((w, c) => {
          if (c > 0) line.push(sep);
          const cell = cells[c]?.[y] ?? [];
          const pad = w - cell.reduce((s, x) => s + width(x.text), 0);
          const align = r[c]?.align ?? "left";
          const left = align === "right" ? pad : align === "center" ? Math.floor(pad / 2) : 0;
          if (left > 0) line.push({ text: " ".repeat(left) as SafeText, style: t.text });
          line.push(...cell);
          // The last column is not padded: no trailing blanks.
          if (c < n - 1 && pad - left > 0) line.push({ text: " ".repeat(pad - left) as SafeText, style: t.text });
        });
        this.emit(line);
      }
      if (ri + 1 === headerRows) this.emit([{ text: widths.map((w) => "─".repeat(w)).join("─┼─") as SafeText, style: t.mdTable }]);
    });
  }
}

function pieceWidth(pieces: readonly Piece[]): number {
  let w = 0;
  for (const p of pieces) if (!("br" in p)) w += width(p.text);
  return w;
}

/**
 * Column widths that fit `room`: columns narrower than a common cap keep their width, the others
 * get the cap (the largest that fits), and what is left goes to the widest, one column each.
 */
export function fitColumns(natural: readonly number[], room: number): number[] {
  const total = natural.reduce((s, w) => s + w, 0);
  if (total <= room) return [...natural];
  let lo = TABLE_MIN_COLUMN;
  let hi = Math.max(...natural);
  while (lo < hi) {
    const cap = Math.ceil((lo + hi) / 2);
    if (natural.reduce((s, w) => s + Math.min(w, cap), 0) <= room) lo = cap;
    else hi = cap - 1;
  }
  const widths = natural.map((w) => Math.min(w, Math.max(TABLE_MIN_COLUMN, lo)));
  let left = room - widths.reduce((s, w) => s + w, 0);
  for (let c = 0; left > 0 && c < widths.length; c++) {
    if ((natural[c] as number) > (widths[c] as number)) {
      widths[c] = (widths[c] as number) + 1;
      left--;
    }
  }
  return widths;
}

/** One chunk of markdown as rows of `width` columns (no trailing blank rows). */
export function renderMarkdown(text: string, width: number, theme: Theme, options: { highlight?: boolean } = {}): StyledLine[] {
  if (width <= 0) return [];
  if (text.length > MARKDOWN_MAX_CHUNK_CHARS) return plainRows(text, width, theme);
  const w = new BlockWriter(width, theme, options.highlight !== false);
  w.write(md().parse(text, {}));
  const rows = w.rows;
  while (rows.length > 0 && (rows[rows.length - 1] as StyledLine).every((s) => s.text.trim() === "")) rows.pop();
  return rows;
}

function plainRows(text: string, width: number, theme: Theme): StyledLine[] {
  return wrapPieces(
    text.split("\n").flatMap((l, i) => [...(i > 0 ? [{ br: true } as const] : []), { text: sanitize(l, { newlines: "escape" }), style: theme.styles.text }]),
    width,
  );
}

// ── streaming ───────────────────────────────────────────────────────────────────────────────

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/**
 * A growing markdown text cut into chunks at blank lines outside fences that an unindented line
 * follows. Boundaries depend only on complete lines before them, so a text's chunks are the chunks
 * of any longer text it begins, but the last; rendered rows are cached per chunk for a width and theme.
 */
export class MarkdownStream {
  private text = "";
  /** Start offsets of the chunks. */
  private readonly starts: number[] = [0];
  /** Offset of the first line not yet scanned. */
  private scanned = 0;
  private fence: { char: string; length: number } | undefined;
  private blank = false;
  private cache: { width: number; theme: Theme; rows: StyledLine[][] } | undefined;

  /** Takes the current text (which normally begins with the previous one). */
  update(text: string): void {
    if (text === this.text) return;
    if (!text.startsWith(this.text)) {
      this.text = "";
      this.starts.splice(1);
      this.scanned = 0;
      this.fence = undefined;
      this.blank = false;
      this.cache = undefined;
    }
    this.text = text;
    for (let nl = text.indexOf("\n", this.scanned); nl >= 0; nl = text.indexOf("\n", this.scanned)) {
      this.scanLine(text.slice(this.scanned, nl), this.scanned);
      this.scanned = nl + 1;
    }
  }

  private scanLine(line: string, at: number): void {
    if (this.fence !== undefined) {
      const close = new RegExp(`^ {0,3}${this.fence.char === "`" ? "`" : "~"}{${this.fence.length},}\\s*$`);
      if (close.test(line)) this.fence = undefined;
      return;
    }
    if (line.trim() === "") {
      this.blank = true;
      return;
    }
    if (this.blank && !/^[ \t]/.test(line) && at > (this.starts[this.starts.length - 1] as number)) this.starts.push(at);
    this.blank = false;
    const f = FENCE_OPEN.exec(line);
    if (f !== null && !(f[1]?.startsWith("`") === true && f[2]?.includes("`") === true)) this.fence = { char: (f[1] as string)[0] as string, length: (f[1] as string).length };
  }

  /** How many chunks the text has (the last one open while the text grows). */
  get chunks(): number {
    return this.starts.length;
  }

  /** The source of chunk `i`. */
  chunk(i: number): string {
    return this.text.slice(this.starts[i] as number, this.starts[i + 1] ?? this.text.length);
  }

  /**
   * Rows of chunk `i` (a chunk after the first starts with the blank row that separates it);
   * `open` marks the last chunk of a text still growing: it is rendered again on each call.
   */
  rows(i: number, width: number, theme: Theme, open: boolean): StyledLine[] {
    if (this.cache === undefined || this.cache.width !== width || this.cache.theme !== theme) this.cache = { width, theme, rows: [] };
    const cached = this.cache.rows[i];
    if (cached !== undefined && !(open && i === this.starts.length - 1)) return cached;
    const src = this.chunk(i);
    const body = renderMarkdown(src, width, theme, { highlight: !open || src.length <= OPEN_CHUNK_HIGHLIGHT_CHARS });
    const rows = i > 0 && body.length > 0 ? [[], ...body] : body;
    if (!open || i < this.starts.length - 1) this.cache.rows[i] = rows;
    return rows;
  }
}
