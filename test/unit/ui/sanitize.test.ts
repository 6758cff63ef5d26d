import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  AGENT_NAME_MAX_COLUMNS,
  LABEL_MAX_BYTES,
  LABEL_MAX_COLUMNS,
  agentLabel,
  columns,
  escapeLabel,
  isSafeText,
  sanitize,
} from "../../../handwritten/cli/ui/index.js";

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]/u;

describe("sanitize", () => {
  it("maps controls to visible text", () => {
    expect(sanitize("\x1b]52;c;QUJD\x07")).toBe("␛]52;c;QUJD␇");
    expect(sanitize("\x9b31m")).toBe("\\x9b31m");
    expect(sanitize("a\u202eb\u2066c\u2069")).toBe("a\\u202eb\\u2066c\\u2069");
    expect(sanitize("\x00\x08\x7f")).toBe("␀␈␡");
    expect(sanitize("a\rb")).toBe("a␍b");
    expect(sanitize("a\r\nb")).toBe("a\nb");
    expect(sanitize("\ud800x")).toBe("\ufffdx");
    expect(sanitize("\u0301x")).toBe("◌\u0301x");
    expect(sanitize("a\nb", { newlines: "escape" })).toBe("a␊b");
  });

  it("expands tabs to the next tab stop on the current line", () => {
    expect(sanitize("a\tb")).toBe("a       b");
    expect(sanitize("ab\tc", { tabWidth: 4 })).toBe("ab  c");
    expect(sanitize("字\tc", { tabWidth: 4 })).toBe("字  c");
    expect(sanitize("x\n\ty", { tabWidth: 4 })).toBe("x\n    y");
    expect(sanitize("\t", { tabWidth: 4, startColumn: 3 })).toBe(" ");
  });

  it("keeps legitimate clusters: ZWJ emoji, flags, tag sequences, combining marks", () => {
    for (const s of ["👩‍👩‍👧‍👦", "🇯🇵", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "e\u0301", "字", "ｱ", "❤️"]) expect(sanitize(s)).toBe(s);
    expect(sanitize("a\u{e0041}b")).toBe("a\\u{e0041}b"); // a stray tag character is escaped
  });

  it("gives a leading mark one dotted-circle base, also for marks that stay separate after it (idempotent)", () => {
    // U+1087 is a spacing mark that Intl.Segmenter keeps apart from a preceding U+25CC.
    expect(sanitize("\u1087")).toBe("\u25cc\u1087");
    expect(sanitize(sanitize("\u1087"))).toBe("\u25cc\u1087");
    expect(sanitize("\u1087\u1087")).toBe(sanitize(sanitize("\u1087\u1087")));
    expect(sanitize("\u0301")).toBe("\u25cc\u0301");
    expect(sanitize("a\u0301")).toBe("a\u0301");
  });

  it("escapes every invisible format character from U+2060 to U+206F, U+2065 (unassigned) included", () => {
    for (let cp = 0x2060; cp <= 0x206f; cp++) {
      const out = sanitize(`a${String.fromCodePoint(cp)}b`);
      expect(out, cp.toString(16)).toBe(`a\\u${cp.toString(16)}b`);
    }
  });

  it("[ui.sanitize.hostile-corpus] arbitrary input never yields a control character, and sanitizing is idempotent", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 80 }), (s) => {
        const out = sanitize(s);
        expect(out).not.toMatch(CONTROL);
        expect(sanitize(out)).toBe(out);
        expect(isSafeText(out)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });
});

describe("escapeLabel", () => {
  it("escapes controls, bidi, delimiters, quotes and backslashes", () => {
    expect(escapeLabel('a"b\'c`d\\e')).toBe('a\\"b\\\'c\\`d\\\\e');
    expect(escapeLabel("[x](y)<z>{w}|v")).toBe("\\[x\\]\\(y\\)\\<z\\>\\{w\\}\\|v");
    expect(escapeLabel("a\nb\tc\rd\x1be\x9bf")).toBe("a\\nb\\tc\\rd\\x1be\\x9bf");
    expect(escapeLabel("evil\u202etxt")).toBe("evil\\u202etxt");
    expect(escapeLabel("\u0301x")).toBe("\\u0301x");
  });

  it("applies the column bound after escaping: exactly at, one below, one above", () => {
    const s = "ab\\cd"; // escapes to 6 columns: ab\\cd
    expect(columns(escapeLabel(s))).toBe(6);
    expect(escapeLabel(s, { maxColumns: 6 })).toBe("ab\\\\cd");
    expect(escapeLabel(s, { maxColumns: 7 })).toBe("ab\\\\cd");
    expect(escapeLabel(s, { maxColumns: 5 })).toBe("ab\\\\…");
    // An escape is never cut in half.
    expect(escapeLabel(s, { maxColumns: 4 })).toBe("ab…");
    expect(escapeLabel("\u202e", { maxColumns: 5 })).toBe("…");
  });

  it("applies the byte bound after escaping: exactly at, one below, one above", () => {
    const s = "字字x"; // 7 bytes
    expect(escapeLabel(s, { maxBytes: 7 })).toBe("字字x");
    expect(escapeLabel(s, { maxBytes: 8 })).toBe("字字x");
    expect(escapeLabel(s, { maxBytes: 6 })).toBe("字…");
    const long = "n".repeat(LABEL_MAX_BYTES * 2);
    expect(Buffer.byteLength(escapeLabel(long, { maxColumns: 10_000 }))).toBeLessThanOrEqual(LABEL_MAX_BYTES);
    expect(columns(escapeLabel(long))).toBe(LABEL_MAX_COLUMNS);
  });

  it("agent labels keep the stable id visible and shorten only the name", () => {
    expect(agentLabel("a1", undefined)).toBe("[a1]");
    expect(agentLabel("a1", "builder")).toBe("builder [a1]");
    expect(agentLabel("a1", "x]\u202e")).toBe("x\\]\\u202e [a1]");
    expect(agentLabel("a1", "a-very-long-name", 10)).toBe("a-ve… [a1]".slice(0, 10));
    expect(agentLabel("a1", "name", 5)).toBe("[a1]");
    expect(columns(agentLabel("a1", "n".repeat(100), 1000))).toBe(AGENT_NAME_MAX_COLUMNS + 5);
  });
});
