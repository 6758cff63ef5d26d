// Untrusted text (tool, provider, extension and user output) → text that is safe to hand to the
// terminal renderer. Nothing here writes to a terminal; the renderer accepts only `SafeText`.
//
// Rules (SPEC-terminal-presentation):
// - `\n` is kept: the layout (wrap / rows) decides line breaks; `\r\n` becomes `\n`;
// - `\t` expands to spaces up to the next multiple of the tab width (default 8) on its line;
// - every other C0 control, DEL and a lone `\r` become their Unicode control pictures (`␛`, `␍`, `␇`);
// - C1 controls (U+0080–U+009F) become the literal text `\x9b`;
// - bidi embeddings/overrides/isolates/marks and other invisible structural format characters become
//   the literal text `\u202e` (tag characters only survive inside an emoji tag sequence);
// - lone surrogates become U+FFFD; a cluster that starts with a combining mark gets a `◌` base.
// The result is idempotent: sanitizing safe text again returns it unchanged.
import { clusterWidth, graphemes } from "./width.js";

declare const safeTextBrand: unique symbol;
/** Text that went through `sanitize` or `escapeLabel`: no terminal control can be inside it. */
export type SafeText = string & { readonly [safeTextBrand]: true };

/** Default tab stop interval in columns. */
export const TAB_WIDTH = 8;
/** Default byte bound of an escaped label (UTF-8, after escaping, ellipsis included). */
export const LABEL_MAX_BYTES = 256;
/** Default column bound of an escaped label (after escaping, ellipsis included). */
export const LABEL_MAX_COLUMNS = 64;

/** Characters that delimit labels in tau's layouts and are escaped inside a label. */
const LABEL_DELIMITERS = new Set(["[", "]", "(", ")", "<", ">", "{", "}", "|"]);
const LABEL_QUOTES = new Set(['"', "'", "`", "\\"]);

const BIDI_AND_STRUCTURAL = new Set<number>([
  0x00ad, 0x061c, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x180e, 0x200b, 0x200e, 0x200f, 0x2028, 0x2029,
  0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x3164, 0xfeff, 0xffa0, 0xfff9,
  0xfffa, 0xfffb, 0xfffe, 0xffff,
]);

function isStructural(cp: number): boolean {
  return (
    BIDI_AND_STRUCTURAL.has(cp) ||
    (cp >= 0x2060 && cp <= 0x206f) || // word joiner, invisible operators, bidi isolates, deprecated format controls, and U+2065 (unassigned, default-ignorable)
    (cp >= 0x1d173 && cp <= 0x1d17a) ||
    (cp >= 0xe0000 && cp <= 0xe007f) ||
    (cp >= 0xd800 && cp <= 0xdfff)
  );
}

function hex(cp: number, digits: number): string {
  return cp.toString(16).padStart(digits, "0");
}

/** `\u202e`, or `\u{e0001}` above the BMP. */
function unicodeEscape(cp: number): string {
  return cp > 0xffff ? `\\u{${hex(cp, 5)}}` : `\\u${hex(cp, 4)}`;
}

/** Printable ASCII needs no change (a `\n` does unless it is escaped, so it is not included). */
const SAFE_ASCII = /^[\x20-\x7e]*$/;

const ZERO_WIDTH_START = /^[\p{M}\u200c\u200d\ufe00-\ufe0f]/u;
const EMOJI_TAG_BASE = 0x1f3f4;

/** Whether a cluster is an emoji tag sequence (🏴 + tags + cancel tag), whose tags are kept. */
function isEmojiTagSequence(cluster: string): boolean {
  if (cluster.codePointAt(0) !== EMOJI_TAG_BASE) return false;
  let first = true;
  for (const ch of cluster) {
    if (first) {
      first = false;
      continue;
    }
    const cp = ch.codePointAt(0) as number;
    if (cp < 0xe0020 || cp > 0xe007f) return false;
  }
  return cluster.endsWith("\u{e007f}");
}

/** Maps one code point of body text to its safe visible form. */
function safeCodePoint(cp: number, ch: string, keepTags: boolean): string {
  if (cp < 0x20) return String.fromCodePoint(0x2400 + cp);
  if (cp === 0x7f) return "\u2421";
  if (cp >= 0x80 && cp <= 0x9f) return `\\x${hex(cp, 2)}`;
  if (cp >= 0xd800 && cp <= 0xdfff) return "\ufffd";
  if (keepTags && cp >= 0xe0020 && cp <= 0xe007f) return ch;
  if (isStructural(cp)) return unicodeEscape(cp);
  return ch;
}

export interface SanitizeOptions {
  /** Tab stop interval (default `TAB_WIDTH`). */
  tabWidth?: number;
  /** Column at which the text starts on its first line, for tab stops (default 0). */
  startColumn?: number;
  /** `keep` (default) leaves `\n` for the layout; `escape` shows it as `␊` (one-row text). */
  newlines?: "keep" | "escape";
}

/** Turns untrusted text into `SafeText`: no control character or invisible structure survives. */
export function sanitize(input: string, options: SanitizeOptions = {}): SafeText {
  const tabWidth = Math.max(1, options.tabWidth ?? TAB_WIDTH);
  const escapeNewlines = options.newlines === "escape";
  if (SAFE_ASCII.test(input)) return input as SafeText;
  let col = options.startColumn ?? 0;
  let out = "";
  for (const cluster of graphemes(input)) {
    if (cluster === "\n" || cluster === "\r\n") {
      if (escapeNewlines) {
        out += "\u240a";
        col += 1;
      } else {
        out += "\n";
        col = 0;
      }
      continue;
    }
    if (cluster === "\t") {
      const n = tabWidth - (col % tabWidth);
      out += " ".repeat(n);
      col += n;
      continue;
    }
    const keepTags = isEmojiTagSequence(cluster);
    let mapped = "";
    for (const ch of cluster) mapped += safeCodePoint(ch.codePointAt(0) as number, ch, keepTags);
    // A cluster starting with a mark gets a `◌` base, unless it already follows one: some marks stay
    // separate clusters even after `◌`, and a second base would make sanitizing not idempotent.
    if (ZERO_WIDTH_START.test(mapped) && !out.endsWith("\u25cc")) mapped = "\u25cc" + mapped;
    out += mapped;
    if (mapped === cluster) col += clusterWidth(cluster);
    else for (const c of graphemes(mapped)) col += clusterWidth(c);
  }
  return out as SafeText;
}

/** Whether text is already safe (sanitizing it would change nothing). */
export function isSafeText(text: string): text is SafeText {
  return sanitize(text) === text;
}

/** The escape for one label cluster, or the cluster itself. */
function labelToken(cluster: string): string {
  if (cluster.length === 1) {
    if (cluster === "\n") return "\\n";
    if (cluster === "\t") return "\\t";
    if (cluster === "\r") return "\\r";
    if (LABEL_QUOTES.has(cluster) || LABEL_DELIMITERS.has(cluster)) return "\\" + cluster;
  }
  let out = "";
  for (const ch of cluster) {
    const cp = ch.codePointAt(0) as number;
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) out += `\\x${hex(cp, 2)}`;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += "\ufffd";
    else if (isStructural(cp)) out += unicodeEscape(cp);
    else if (LABEL_QUOTES.has(ch) || LABEL_DELIMITERS.has(ch)) out += "\\" + ch;
    else out += ch;
  }
  const first = out.codePointAt(0);
  if (first !== undefined && ZERO_WIDTH_START.test(out)) {
    out = unicodeEscape(first) + out.slice(String.fromCodePoint(first).length);
  }
  return out;
}

export interface LabelBounds {
  /** UTF-8 bytes after escaping, ellipsis included (default `LABEL_MAX_BYTES`). */
  maxBytes?: number;
  /** Terminal columns after escaping, ellipsis included (default `LABEL_MAX_COLUMNS`). */
  maxColumns?: number;
}

/**
 * Escapes a one-line label (agent name, title): controls, bidi/structural characters, delimiters,
 * quotes and backslashes become visible escapes; then the byte and column bounds apply to the
 * escaped text. An escape is never cut in half; a cut label ends with `…`.
 */
export function escapeLabel(input: string, bounds: LabelBounds = {}): SafeText {
  const maxBytes = bounds.maxBytes ?? LABEL_MAX_BYTES;
  const maxColumns = bounds.maxColumns ?? LABEL_MAX_COLUMNS;
  const tokens = graphemes(input).map(labelToken);
  let bytes = 0;
  let cols = 0;
  const fits: string[] = [];
  let cut = false;
  for (const t of tokens) {
    const b = Buffer.byteLength(t, "utf8");
    let w = 0;
    for (const c of graphemes(t)) w += clusterWidth(c);
    if (bytes + b > maxBytes || cols + w > maxColumns) {
      cut = true;
      break;
    }
    fits.push(t);
    bytes += b;
    cols += w;
  }
  if (!cut) return fits.join("") as SafeText;
  // Make room for the ellipsis (3 bytes, 1 column).
  while (fits.length > 0 && (bytes + 3 > maxBytes || cols + 1 > maxColumns)) {
    const t = fits.pop() as string;
    bytes -= Buffer.byteLength(t, "utf8");
    for (const c of graphemes(t)) cols -= clusterWidth(c);
  }
  if (bytes + 3 > maxBytes || cols + 1 > maxColumns) return "" as SafeText;
  return (fits.join("") + "…") as SafeText;
}

/** Column bound of the name part of an agent label; the id is never truncated. */
export const AGENT_NAME_MAX_COLUMNS = 32;

/**
 * An agent's label: `name [id]`, or just `[id]` when unnamed or too narrow. The stable id stays
 * visible; only the escaped name is shortened to fit `maxColumns`.
 */
export function agentLabel(id: string, name: string | undefined, maxColumns = LABEL_MAX_COLUMNS): SafeText {
  const idText = `[${escapeLabel(id, { maxColumns: Number.MAX_SAFE_INTEGER, maxBytes: LABEL_MAX_BYTES })}]`;
  if (name === undefined || name === "") return idText as SafeText;
  let idW = 0;
  for (const c of graphemes(idText)) idW += clusterWidth(c);
  const room = Math.min(AGENT_NAME_MAX_COLUMNS, maxColumns - idW - 1);
  if (room < 2) return idText as SafeText;
  const escaped = escapeLabel(name, { maxColumns: room });
  return (escaped === "" ? idText : `${escaped} ${idText}`) as SafeText;
}
