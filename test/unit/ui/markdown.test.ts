import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { DEFAULT_THEME, MarkdownStream, columns, fitColumns, renderMarkdown, isSafeText } from "../../../handwritten/cli/ui/index.js";
import type { StyledLine } from "../../../handwritten/cli/ui/index.js";
import { finalRows, renderItem, type Item } from "../../../handwritten/cli/tui/transcript.js";
import { HOSTILE } from "../../support/hostile.js";

const text = (rows: readonly StyledLine[]): string[] => rows.map((r) => r.map((s) => s.text).join(""));
const t = DEFAULT_THEME.styles;

const SAMPLE = [
  "# Plan",
  "",
  "Some **bold**, *italic* and `code`, a [link](https://example.com/docs) and <https://tau.dev>.",
  "",
  "- one",
  "- two",
  "  - nested",
  "",
  "3. third",
  "4. fourth",
  "",
  "> quoted words",
  "",
  "```ts",
  "const answer: number = 42; // the answer",
  "```",
  "",
  "| name | count |",
  "|------|------:|",
  "| alpha | 1 |",
  "| beta | 22 |",
].join("\n");

describe("markdown answers", () => {
  it("[ui.markdown.styled] headings, emphasis, lists, quotes, links and code are styled, with no markup left", () => {
    const rows = renderMarkdown(SAMPLE, 60, DEFAULT_THEME);
    const lines = text(rows);
    const all = lines.join(" ");
    for (const raw of ["**", "# ", "```", "`code`", "](", "|---", "> quoted"]) expect(all).not.toContain(raw);
    expect(lines[0]).toBe("Plan");
    expect(rows[0]?.[0]?.style).toMatchObject({ ...t.mdHeading, underline: true });
    const para = rows.find((r) => r.some((s) => s.text === "bold")) as StyledLine;
    expect(para.find((s) => s.text === "bold")?.style).toMatchObject(t.mdStrong);
    expect(para.find((s) => s.text === "italic")?.style).toMatchObject(t.mdEmphasis);
    expect(para.find((s) => s.text === "code")?.style).toMatchObject(t.mdCode);
    // A link is its text, then its URL; a bare address is shown once.
    expect(all).toContain("a link (https://example.com/docs)");
    expect(all).toContain("and https://tau.dev.");
    expect(all).not.toContain("https://tau.dev (https://tau.dev)");
    expect(lines).toEqual(expect.arrayContaining(["• one", "• two", "  ◦ nested", "3. third", "4. fourth", "│ quoted words"]));
    // Fenced code: highlighted by its language, in theme styles.
    const code = rows.find((r) => r.some((s) => s.text === "const")) as StyledLine;
    expect(code.find((s) => s.text === "const")?.style).toEqual(t.synKeyword);
    expect(code.find((s) => s.text === "42")?.style).toEqual(t.synNumber);
    expect(code.find((s) => s.text.startsWith("//"))?.style).toEqual(t.synComment);
    // The table: a header rule, right-aligned numbers.
    expect(lines).toEqual(expect.arrayContaining(["name  │ count", "──────┼──────", "alpha │     1", "beta  │    22"]));
  });

  it("[ui.markdown.tables-fit] a table is fitted to every width, wrapping cells, and never overflows", () => {
    const table = ["| file | what it does | lines |", "|---|---|---:|", "| handwritten/cli/ui/markdown.ts | lays markdown tokens out as styled rows for a width | 400 |", "| b.ts | short | 3 |"].join("\n");
    for (let w = 1; w <= 120; w++) {
      const rows = renderMarkdown(table, w, DEFAULT_THEME);
      for (const r of text(rows)) expect(columns(r), `width ${w}: ${r}`).toBeLessThanOrEqual(w);
      if (w >= 30) {
        const joined = text(rows).join(" ");
        for (const word of ["lays", "markdown", "tokens", "styled", "400", "short"]) expect(joined, `width ${w}`).toContain(word);
      }
    }
    expect(fitColumns([10, 50, 3], 40)).toEqual([10, 27, 3]);
    expect(fitColumns([10, 5], 40)).toEqual([10, 5]);
  });

  it("[ui.markdown.inert] hostile text in prose, code, links and tables stays visible characters", () => {
    for (const h of Object.values(HOSTILE)) {
      const doc = `# ${h}\n\n${h} **${h}** [${h}](http://x/${encodeURIComponent(h)})\n\n\`\`\`js\n${h}\n\`\`\`\n\n| a | b |\n|---|---|\n| ${h.replace(/\|/g, "")} | x |\n`;
      for (const row of renderMarkdown(doc, 40, DEFAULT_THEME)) for (const s of row) expect(isSafeText(s.text), JSON.stringify(s.text)).toBe(true);
    }
  });

  const block = fc.constantFrom(
    "A paragraph of **words** that wraps across rows at a narrow width.",
    "# Heading",
    "- item one\n- item two",
    "1. first\n2. second",
    "> a quote",
    "```py\nprint('x')\n\nprint('y')\n```",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "    indented code",
    "---",
    "text with `code` and [a](http://a)",
  );
  const doc = fc.array(block, { minLength: 1, maxLength: 8 }).map((bs) => bs.join("\n\n"));

  it("[ui.markdown.streaming] while an answer streams, only its open chunk changes: the rows before it are final", () => {
    fc.assert(
      fc.property(doc, fc.integer({ min: 8, max: 70 }), fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 12 }), (full, width, steps) => {
        const done: Item = { kind: "assistant", key: "p#1", text: full, reasoning: "", done: true };
        const final = renderItem(done, width, DEFAULT_THEME);
        const live: Item = { kind: "assistant", key: "p#1", text: "", reasoning: "", done: false };
        let at = 0;
        for (const step of steps) {
          at = Math.min(full.length, at + step);
          live.text = full.slice(0, at);
          const rows = renderItem(live, width, DEFAULT_THEME);
          const n = finalRows(live, width, DEFAULT_THEME, false);
          expect(n).toBeLessThanOrEqual(rows.length);
          expect(rows.slice(0, n)).toEqual(final.slice(0, n));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("[ui.markdown.streaming] a closed chunk is rendered once; the open one again as text arrives", () => {
    const s = new MarkdownStream();
    s.update("First paragraph.\n\nSecond");
    expect(s.chunks).toBe(1); // the line after the blank is not complete yet
    s.update("First paragraph.\n\nSecond paragraph.\n");
    expect(s.chunks).toBe(2);
    const first = s.rows(0, 40, DEFAULT_THEME, false);
    const open = s.rows(1, 40, DEFAULT_THEME, true);
    s.update("First paragraph.\n\nSecond paragraph.\nmore words\n");
    expect(s.rows(0, 40, DEFAULT_THEME, false)).toBe(first);
    expect(s.rows(1, 40, DEFAULT_THEME, true)).not.toBe(open);
    // A blank line inside a fence does not cut.
    const f = new MarkdownStream();
    f.update("```\na\n\nb\n```\n\nafter\n");
    expect(f.chunks).toBe(2);
    expect(f.chunk(1)).toBe("after\n");
  });
});
