// The compact TOON projection (SPEC-trace-export, "toon"): the same records as compact JSONL, as
// one TOON document whose root is the list of them, encoded by @toon-format/toon (loaded only
// when this format runs). Each record is encoded on its own and indented as a list item, so memory
// holds one record at a time; the list's `[N]:` header is known only at the end and written first.
//
// TOON escapes only C0 controls inside quotes. DEL, the C1 controls and U+2028/U+2029 are written
// here as `\uXXXX` inside a quoted string (which the decoder reads back to the same character), so
// no control character is ever written raw. TOON cannot hold a lone surrogate (a CBOR text string
// is UTF-8, so only a malformed one decodes to one); it becomes U+FFFD.

/** What this projection needs of @toon-format/toon. */
export interface ToonLib {
  encode(input: unknown, options?: { replacer?: (key: string, value: unknown) => unknown }): string;
  rawString(value: string): unknown;
  escapeString(value: string): string;
}

export async function loadToon(): Promise<ToonLib> {
  const m = await import("@toon-format/toon");
  return { encode: m.encode as ToonLib["encode"], rawString: m.rawString, escapeString: m.escapeString };
}

const UNSAFE = /[\u007f-\u009f\u2028\u2029]/;
const UNSAFE_ALL = /[\u007f-\u009f\u2028\u2029]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const escapeUnsafe = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/** `v` with every lone surrogate in its strings and keys replaced by U+FFFD (a copy only when needed). */
function wellFormed(v: unknown): unknown {
  if (typeof v === "string") return v.replace(LONE_SURROGATE, "\ufffd");
  if (Array.isArray(v)) return v.map(wellFormed);
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k.replace(LONE_SURROGATE, "\ufffd")] = wellFormed(x);
    return out;
  }
  return v;
}

/** The list header that precedes `n` items. */
export function toonHeader(n: number): string {
  return `[${n}]:\n`;
}

/**
 * One record as the lines of a TOON root-list item, each ending in `\n`. The record is encoded as a
 * root object and indented as a list item: its first line (always `seq: N`) after `  - `, every
 * other line four spaces in, which is how TOON writes an object inside a list.
 */
export function toonItem(lib: ToonLib, record: Record<string, unknown>): string {
  const replacer = (_key: string, value: unknown) => (typeof value === "string" && UNSAFE.test(value) ? lib.rawString(`"${lib.escapeString(value).replace(UNSAFE_ALL, escapeUnsafe)}"`) : value);
  const text = lib.encode(wellFormed(record), { replacer });
  if (!text.startsWith("seq: ")) throw new Error(`unexpected TOON record form: ${JSON.stringify(text.slice(0, 40))}`);
  // Only a quoted key can still hold such a character here; inside quotes the escape reads back the same.
  return `  - ${text.replace(/\n/g, "\n    ").replace(UNSAFE_ALL, escapeUnsafe)}\n`;
}
