// The build makes every bundle pure ASCII by escaping what esbuild leaves (comments and regular
// expression literals). The escaped code must behave exactly as the source: a regular expression
// without the `u` flag once came to match the letters of `\u{2018}` instead of `‘`, so the sandbox
// read a path like /tmp/tau-home-X1u/outside/f as "/o" (SPEC-sandbox, "Approvals").
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asciiEscaped } from "../../../build.js";

/** Evaluates a JavaScript expression. */
const evaluate = (code: string): unknown => new Function(`return (${code});`)();

describe("asciiEscaped", () => {
  it("keeps a quote class in a regular expression without the u flag meaning the quotes", () => {
    const source = "(s) => [...s.matchAll(/['‘\"`]([^'’\"`\\n]{1,64})['’\"`]/g)].map((m) => m[1])";
    const escaped = asciiEscaped(source);
    expect(escaped).toMatch(/^[\x00-\x7f]*$/);
    const find = evaluate(escaped) as (s: string) => string[];
    expect(find("bash: line 1: /tmp/tau-home-X1u/outside/f: Read-only file system")).toEqual([]);
    expect(find("mkdir: cannot create directory ‘.git/hooks’: Read-only file system")).toEqual([".git/hooks"]);
  });

  it("means the same in strings, templates, identifiers and regular expressions with and without u", () => {
    fc.assert(
      // Line terminators cannot stand in a regular expression literal.
      fc.property(fc.string({ unit: "grapheme", minLength: 1, maxLength: 6 }).filter((w) => !/[\n\r\u2028\u2029]/.test(w)), (word) => {
        const literal = word.replace(/[/[\]\\^$.*+?(){}|]/g, "\\$&");
        const source = `[${JSON.stringify(word)}, \`${word.replace(/[`\\$]/g, "\\$&")}\`, /^${literal}$/.test(${JSON.stringify(word)}), /^${literal}$/u.test(${JSON.stringify(word)}), /^(?:${literal})$/.test("u{2018}")]`;
        expect(evaluate(asciiEscaped(source))).toEqual(evaluate(source));
      }),
    );
    const ident = "(() => { const naïve = 1; return naïve + 1; })()";
    expect(evaluate(asciiEscaped(ident))).toBe(2);
  });
});
