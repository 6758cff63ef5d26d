// Terminal input bytes → key events. Handles escape sequences split across reads, bracketed
// paste (bounded), and drops every control character it does not understand: input text reaches
// the editor without any control character except the line breaks and tabs of a paste.

export type Key =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "paste"; readonly text: string }
  | {
      readonly kind:
        | "enter"
        | "newline"
        | "backspace"
        | "delete"
        | "left"
        | "right"
        | "up"
        | "down"
        | "home"
        | "end"
        | "word-left"
        | "word-right"
        | "tab"
        | "escape";
    }
  | { readonly kind: "ctrl"; readonly key: string }
  /** Alt (Meta) with a lower-case letter or a digit, as ESC followed by it: bindable, never text. */
  | { readonly kind: "alt"; readonly key: string };

/** Largest bracketed paste kept; the rest of a larger paste is dropped (and said so). */
export const PASTE_MAX_CHARS = 1024 * 1024;

const PASTE_END = "\x1b[201~";

const CSI_KEYS: Record<string, Key["kind"]> = {
  A: "up",
  B: "down",
  C: "right",
  D: "left",
  H: "home",
  F: "end",
};
const TILDE_KEYS: Record<string, Key["kind"]> = { "1": "home", "7": "home", "4": "end", "8": "end", "3": "delete" };

/** Printable text only: C0, DEL, C1 and the bidi/line-separator controls are removed. */
const UNSAFE_INPUT = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;
/** In a paste, line breaks and tabs are kept (a CR/LF pair or a lone CR becomes LF). */
const UNSAFE_PASTE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

export function cleanPaste(text: string): string {
  return text.replace(/\r\n?/g, "\n").replace(UNSAFE_PASTE, "");
}

export class KeyDecoder {
  private pending = "";
  private paste: string[] | undefined;
  private pasteChars = 0;
  /** Characters of pastes dropped because a paste went over PASTE_MAX_CHARS. */
  droppedPasteChars = 0;

  /** Decodes a chunk; an incomplete escape sequence at the end waits for the next chunk or `flush`. */
  feed(chunk: string): Key[] {
    const out: Key[] = [];
    let s = this.pending + chunk;
    this.pending = "";
    let text = "";
    const flushText = () => {
      const clean = text.replace(UNSAFE_INPUT, "");
      if (clean !== "") out.push({ kind: "text", text: clean });
      text = "";
    };
    let i = 0;
    while (i < s.length) {
      if (this.paste !== undefined) {
        const end = s.indexOf(PASTE_END, i);
        const upto = end < 0 ? this.keepPartial(s, i, PASTE_END) : end;
        this.addPaste(s.slice(i, upto));
        if (end < 0) {
          this.pending = s.slice(upto);
          break;
        }
        out.push({ kind: "paste", text: cleanPaste(this.paste.join("")) });
        this.paste = undefined;
        this.pasteChars = 0;
        i = end + PASTE_END.length;
        continue;
      }
      const c = s[i] as string;
      if (c === "\x1b") {
        const seq = parseEscape(s, i);
        if (seq === "incomplete") {
          flushText();
          this.pending = s.slice(i);
          break;
        }
        flushText();
        if (seq.paste) {
          this.paste = [];
          this.pasteChars = 0;
        } else if (seq.key) out.push(seq.key);
        i += seq.length;
        continue;
      }
      const code = c.charCodeAt(0);
      if (code < 0x20 || code === 0x7f) {
        flushText();
        const key = controlKey(code);
        if (key) out.push(key);
        i++;
        continue;
      }
      text += c;
      i++;
    }
    flushText();
    s = "";
    return out;
  }

  /** True when a lone ESC (or a partial sequence) is waiting: call `flush` after a short pause. */
  get waiting(): boolean {
    return this.pending !== "" && this.paste === undefined;
  }

  /** Ends a waiting partial sequence: a lone ESC is the Escape key; anything else is dropped. */
  flush(): Key[] {
    if (this.paste !== undefined || this.pending === "") return [];
    const p = this.pending;
    this.pending = "";
    return p === "\x1b" ? [{ kind: "escape" }] : [];
  }

  private addPaste(part: string): void {
    if (this.paste === undefined || part === "") return;
    const room = PASTE_MAX_CHARS - this.pasteChars;
    if (room <= 0) {
      this.droppedPasteChars += part.length;
      return;
    }
    const kept = part.length > room ? part.slice(0, room) : part;
    this.droppedPasteChars += part.length - kept.length;
    this.paste.push(kept);
    this.pasteChars += kept.length;
  }

  /** Where to stop consuming so that a marker split across chunks is not swallowed as text. */
  private keepPartial(s: string, from: number, marker: string): number {
    for (let k = Math.min(marker.length - 1, s.length - from); k > 0; k--) {
      if (marker.startsWith(s.slice(s.length - k))) return s.length - k;
    }
    return s.length;
  }
}

function controlKey(code: number): Key | undefined {
  if (code === 0x0d) return { kind: "enter" };
  if (code === 0x0a) return { kind: "newline" };
  if (code === 0x09) return { kind: "tab" };
  if (code === 0x7f || code === 0x08) return { kind: "backspace" };
  if (code >= 0x01 && code <= 0x1a) return { kind: "ctrl", key: String.fromCharCode(code + 0x60) };
  return undefined;
}

type Parsed = { length: number; key?: Key; paste?: boolean } | "incomplete";

/** Parses the escape sequence starting at `s[i]` (an ESC). Unknown sequences are consumed silently. */
function parseEscape(s: string, i: number): Parsed {
  if (i + 1 >= s.length) return "incomplete";
  const next = s[i + 1] as string;
  if (next === "[") {
    // CSI: parameters 0x30–0x3f, intermediates 0x20–0x2f, final 0x40–0x7e.
    let j = i + 2;
    while (j < s.length && s.charCodeAt(j) >= 0x20 && s.charCodeAt(j) <= 0x3f) j++;
    if (j >= s.length) return j - i > 32 ? { length: j - i } : "incomplete";
    const final = s[j] as string;
    const code = s.charCodeAt(j);
    const length = j - i + 1;
    if (code < 0x40 || code > 0x7e) return { length: j - i };
    const params = s.slice(i + 2, j);
    if (final === "~") {
      if (params === "200") return { length, paste: true };
      const kind = TILDE_KEYS[params.split(";")[0] ?? ""];
      return kind ? { length, key: { kind } as Key } : { length };
    }
    if (final === "u" && (params === "13;2" || params === "13;3")) return { length, key: { kind: "newline" } };
    const kind = CSI_KEYS[final];
    if (!kind) return { length };
    const modifier = params.split(";")[1];
    if ((kind === "left" || kind === "right") && (modifier === "5" || modifier === "3")) {
      return { length, key: { kind: kind === "left" ? "word-left" : "word-right" } };
    }
    return { length, key: { kind } as Key };
  }
  if (next === "O") {
    if (i + 2 >= s.length) return "incomplete";
    const kind = CSI_KEYS[s[i + 2] as string];
    return kind ? { length: 3, key: { kind } as Key } : { length: 3 };
  }
  if (next === "\r" || next === "\n") return { length: 2, key: { kind: "newline" } };
  if (next === "b") return { length: 2, key: { kind: "word-left" } };
  if (next === "f") return { length: 2, key: { kind: "word-right" } };
  if (next === "\x7f") return { length: 2, key: { kind: "ctrl", key: "w" } };
  if (next === "\x1b") return { length: 1, key: { kind: "escape" } };
  if (/^[a-z0-9]$/.test(next)) return { length: 2, key: { kind: "alt", key: next } };
  // ESC + anything else (another Alt chord, or an OSC/DCS string a terminal would never send as
  // input): drop the ESC and its next character.
  return { length: 2 };
}
