import { describe, expect, it } from "vitest";
import {
  ARGS_MIN_COLUMNS,
  ARGS_SEPARATOR,
  DEFAULT_THEME,
  Grid,
  TOOL_NAME_MAX_COLUMNS,
  TOOL_STATUSES,
  columns,
  essentialSet,
  layoutToolHeader,
  renderDiffBody,
  renderToolRow,
} from "../../../handwritten/cli/ui/index.js";
import type { StyledLine, ToolRowInput } from "../../../handwritten/cli/ui/index.js";

const text = (line: StyledLine): string => line.map((s) => s.text).join("");

const DIFF = ["--- a/x.ts", "+++ b/x.ts", "@@ -1,2 +1,2 @@", " keep", "-old line", "+new line \x1b[2J", ""].join("\n");

describe("tool rows", () => {
  const input: ToolRowInput = { toolName: "edit", callId: "call_0123456789abcdef", status: "ok", args: "path=src/some/long/file/name.ts mode=replace" };

  it("[ui.tool-row.essential-set] below the essential set's width neither header nor body is shown", () => {
    const set = essentialSet(input);
    expect(set.width).toBe("edit 89abcdef ok".length);
    for (const w of [0, 1, set.width - 2, set.width - 1]) {
      expect(layoutToolHeader(input, w)).toBeUndefined();
      expect(renderToolRow({ ...input, diff: DIFF }, w)).toEqual([]);
      expect(renderToolRow({ ...input, payload: "body text" }, w)).toEqual([]);
    }
  });

  it("[ui.tool-row.essential-set] at exactly the width the whole set is shown, without optional parts", () => {
    const set = essentialSet(input);
    const block = renderToolRow({ ...input, diff: DIFF }, set.width);
    expect(text(block[0] as StyledLine)).toBe("edit 89abcdef ok");
    expect(block.length).toBeGreaterThan(1); // the body comes with its header
    for (const line of block) expect(columns(text(line))).toBeLessThanOrEqual(set.width);
    // Up to one below the optional threshold: still no arguments.
    const threshold = set.width + ARGS_SEPARATOR.length + ARGS_MIN_COLUMNS;
    expect(text(layoutToolHeader(input, threshold - 1) as StyledLine)).toBe("edit 89abcdef ok");
  });

  it("[ui.tool-row.essential-set] above it the optional arguments appear, truncated in the middle", () => {
    const set = essentialSet(input);
    const threshold = set.width + ARGS_SEPARATOR.length + ARGS_MIN_COLUMNS;
    expect(text(layoutToolHeader(input, threshold) as StyledLine)).toBe("edit 89abcdef ok  p…");
    expect(text(layoutToolHeader(input, threshold + 1) as StyledLine)).toBe("edit 89abcdef ok  p…e");
    const wide = layoutToolHeader(input, 200) as StyledLine;
    expect(text(wide)).toBe(`edit 89abcdef ok  ${input.args}`);
    for (let w = threshold; w < 80; w++) expect(columns(text(layoutToolHeader(input, w) as StyledLine))).toBeLessThanOrEqual(w);
  });

  it("[ui.tool-row.essential-set] every status is part of the set and styled by the theme", () => {
    for (const status of TOOL_STATUSES) {
      const row = { ...input, status };
      const set = essentialSet(row);
      expect(layoutToolHeader(row, set.width - 1)).toBeUndefined();
      const header = layoutToolHeader(row, set.width) as StyledLine;
      expect(text(header).endsWith(status)).toBe(true);
      const statusKey = { running: "toolRunning", ok: "toolOk", error: "toolError", cancelled: "toolCancelled" } as const;
      expect(header.at(-1)?.style).toBe(DEFAULT_THEME.styles[statusKey[status]]);
    }
  });

  it("[ui.tool-row.essential-set] hostile and overlong tool names are escaped and bounded", () => {
    const row: ToolRowInput = { toolName: "x\x1b]52;c;AA\x07" + "n".repeat(100), callId: "id\u202e", status: "error" };
    const set = essentialSet(row);
    expect(columns(set.name)).toBe(TOOL_NAME_MAX_COLUMNS);
    expect(set.name.startsWith("x\\x1b\\]52;c;AA\\x07")).toBe(true);
    expect(set.id).toBe("id\\u202e");
    expect(text(layoutToolHeader(row, set.width) as StyledLine)).not.toMatch(/[\u0000-\u001f\u202e]/);
  });

  it("renders an inline unified diff styled per line, wrapped or truncated to the width", () => {
    const lines = renderDiffBody(DIFF, 12);
    const th = DEFAULT_THEME.styles;
    expect(lines.map(text)).toEqual(["--- a/x.ts", "+++ b/x.ts", "@@ -1,2 +1,2", "@@", " keep", "-old line", "+new line", "␛[2J"]);
    expect(lines.map((l) => l[0]?.style)).toEqual([th.diffMeta, th.diffMeta, th.diffHunk, th.diffHunk, th.diffContext, th.diffRemoved, th.diffAdded, th.diffAdded]);
    const cut = renderDiffBody(DIFF, 8, DEFAULT_THEME, { mode: "truncate" });
    expect(cut.map(text)).toEqual(["--- a/x…", "+++ b/x…", "@@ -1,2…", " keep", "-old li…", "+new li…"]);
    const few = renderDiffBody(DIFF, 40, DEFAULT_THEME, { maxLines: 2 });
    expect(few.map(text)).toEqual(["--- a/x.ts", "+++ b/x.ts", "… 4 more lines"]);
  });

  it("a rendered row fits a grid of its width", () => {
    for (let w = 1; w <= 40; w++) {
      const block = renderToolRow({ ...input, diff: DIFF }, w);
      const grid = new Grid(w, 20);
      grid.writeBlock(0, 0, block);
      for (const line of block) expect(columns(text(line))).toBeLessThanOrEqual(w);
    }
  });
});
