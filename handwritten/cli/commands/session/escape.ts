// Escaping untrusted text (daemon-reported ids and paths) for line-oriented terminal output and JSON.

/** Bidirectional formatting and other invisible reordering characters. */
const BIDI = new Set([0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]);

const NAMED: Record<number, string> = { 0x09: "\\t", 0x0a: "\\n", 0x0d: "\\r", 0x5c: "\\\\" };

function hex4(code: number): string {
  return "\\u" + code.toString(16).padStart(4, "0");
}

/** Whether a code point must never reach a terminal raw (besides the backslash, escaped for clarity). */
function isUnsafe(code: number): boolean {
  return (
    code < 0x20 || // C0 controls, tab, newline
    code === 0x7f || // DEL
    (code >= 0x80 && code <= 0x9f) || // C1 controls (CSI, NEL, …)
    code === 0x2028 || // line separator
    code === 0x2029 || // paragraph separator
    BIDI.has(code) ||
    (code >= 0xd800 && code <= 0xdfff) // a lone surrogate
  );
}

/**
 * One line's worth of text: C0/C1 controls, DEL, line/paragraph separators, bidi controls and lone
 * surrogates become visible escapes (`\x1b`, `\n`, `\u202e`), and a backslash is doubled so an
 * escape in the output is never ambiguous with text.
 */
export function escapeForLine(text: string): string {
  let out = "";
  for (const ch of text) {
    const code = ch.codePointAt(0) as number;
    const named = NAMED[code];
    if (named !== undefined) out += named;
    else if (code < 0x20 || code === 0x7f) out += "\\x" + code.toString(16).padStart(2, "0");
    else if (isUnsafe(code)) out += hex4(code);
    else out += ch;
  }
  return out;
}

/**
 * JSON text whose strings use JSON escaping for everything unsafe on a terminal: `JSON.stringify`
 * already escapes C0 controls and lone surrogates; DEL, C1 controls, separators and bidi controls
 * are turned into `\uXXXX` too (they can only occur inside strings, so this stays valid JSON).
 */
export function toSafeJson(value: unknown, indent = 2): string {
  return JSON.stringify(value, null, indent).replace(/[\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) =>
    hex4(c.charCodeAt(0)),
  );
}
