// Unified diffs for display (jsdiff), bounded in time and size.
import { createTwoFilesPatch } from "diff";
import { DIFF_MAX_CHARS, DIFF_TIMEOUT_MS } from "./limits.js";

export interface DisplayDiff {
  /** The unified diff (cut at `DIFF_MAX_CHARS` with a marker), or a note when it was too costly. */
  diff: string;
  added: number;
  removed: number;
}

/** Cuts `text` to `DIFF_MAX_CHARS` characters at a line end, adding a marker line. */
export function boundDiff(text: string): string {
  if (text.length <= DIFF_MAX_CHARS) return text;
  let cut = text.lastIndexOf("\n", DIFF_MAX_CHARS - 1) + 1;
  if (cut === 0) cut = DIFF_MAX_CHARS;
  const omitted = text.slice(cut).split("\n").filter((line, i, all) => i < all.length - 1 || line !== "").length;
  return `${text.slice(0, cut)}[… diff cut: ${omitted} more lines not shown]\n`;
}

export function unifiedDiff(name: string, before: string, after: string): DisplayDiff {
  const patch = createTwoFilesPatch(`a/${name}`, `b/${name}`, before, after, undefined, undefined, {
    context: 3,
    timeout: DIFF_TIMEOUT_MS,
  });
  if (patch === undefined) return { diff: "[diff too large to compute]\n", added: 0, removed: 0 };
  const lines = patch.split("\n");
  // jsdiff starts with a "====…" separator line; a plain unified diff starts at "---".
  const body = lines[0]?.startsWith("=") ? lines.slice(1) : lines;
  let added = 0;
  let removed = 0;
  let inHeader = true;
  for (const line of body) {
    if (line.startsWith("@@")) inHeader = false;
    else if (!inHeader && line.startsWith("+")) added++;
    else if (!inHeader && line.startsWith("-")) removed++;
  }
  return { diff: boundDiff(body.join("\n")), added, removed };
}
