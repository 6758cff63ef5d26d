// The `edit` tool: exact, unique text replacements, all or nothing, written atomically
// (SPEC-shell-tools).
import { EDIT_MAX_EDITS, EDIT_MAX_FILE_BYTES, EDIT_MAX_LISTED_MATCHES, MAX_PATH_CHARS, WRITE_MAX_CONTENT_CHARS } from "./limits.js";
import { ToolError, throwIfCancelled } from "./errors.js";
import { readTextFile, writeFileAtomic } from "./files.js";
import { unifiedDiff } from "./diff.js";
import { resolvePath } from "./paths.js";
import { defineParameters, validateArgs } from "./schema.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";

const parameters = defineParameters({
  type: "object",
  properties: {
    path: { type: "string", description: "The file to edit, relative to the working directory.", minLength: 1, maxLength: MAX_PATH_CHARS },
    edits: {
      type: "array",
      description:
        "Replacements applied in order. Each old_text must occur exactly once in the file as it is after the previous replacements.",
      minItems: 1,
      maxItems: EDIT_MAX_EDITS,
      items: {
        type: "object",
        properties: {
          old_text: { type: "string", description: "The exact text to replace (including whitespace).", minLength: 1, maxLength: WRITE_MAX_CONTENT_CHARS },
          new_text: { type: "string", description: "The replacement text.", maxLength: WRITE_MAX_CONTENT_CHARS },
        },
        required: ["old_text", "new_text"],
        additionalProperties: false,
      },
    },
  },
  required: ["path", "edits"],
  additionalProperties: false,
});

export interface TextEdit {
  old_text: string;
  new_text: string;
}

interface EditArgs {
  path: string;
  edits: TextEdit[];
}

/** Start offsets of every (possibly overlapping) occurrence of `needle`, at most `max + 1` of them. */
function occurrences(haystack: string, needle: string, max: number): number[] {
  const found: number[] = [];
  for (let i = haystack.indexOf(needle); i !== -1 && found.length <= max; i = haystack.indexOf(needle, i + 1)) found.push(i);
  return found;
}

/** 1-based line numbers of sorted offsets. */
function lineNumbers(text: string, offsets: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let at = 0;
  for (const offset of offsets) {
    for (let i = text.indexOf("\n", at); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
      line++;
      at = i + 1;
    }
    lines.push(line);
  }
  return lines;
}

const normalize = (text: string): string => text.trim().replace(/\s+/g, " ");

function bigrams(text: string): Map<string, number> {
  const grams = new Map<string, number>();
  for (let i = 0; i + 1 < text.length; i++) {
    const gram = text.slice(i, i + 2);
    grams.set(gram, (grams.get(gram) ?? 0) + 1);
  }
  return grams;
}

/** Sørensen–Dice similarity of two strings' character bigrams, 0…1. */
function similarity(a: Map<string, number>, aSize: number, b: string): number {
  if (aSize === 0 || b.length < 2) return 0;
  const seen = new Map<string, number>();
  let shared = 0;
  for (let i = 0; i + 1 < b.length; i++) {
    const gram = b.slice(i, i + 2);
    const used = seen.get(gram) ?? 0;
    if (used < (a.get(gram) ?? 0)) shared++;
    seen.set(gram, used + 1);
  }
  return (2 * shared) / (aSize + b.length - 1);
}

const CLOSEST_SCAN_CHARS = 500;
const CLOSEST_MIN_SIMILARITY = 0.4;
const CLOSEST_SHOWN_CHARS = 200;

/** The line of `content` most similar to the first non-blank line of `oldText`, described. */
export function closestLine(content: string, oldText: string): string {
  const first = oldText.split("\n").find((line) => line.trim() !== "") ?? oldText;
  const needle = normalize(first).slice(0, CLOSEST_SCAN_CHARS);
  const grams = bigrams(needle);
  let best = { score: 0, line: 0, text: "" };
  const lines = content.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const candidate = normalize(lines[i] as string).slice(0, CLOSEST_SCAN_CHARS);
    const score = candidate === needle ? 1 : similarity(grams, Math.max(0, needle.length - 1), candidate);
    if (score > best.score) best = { score, line: i + 1, text: lines[i] as string };
    if (score === 1) break;
  }
  if (best.score < CLOSEST_MIN_SIMILARITY) return "No line of the file resembles its first line.";
  const shown = best.text.length > CLOSEST_SHOWN_CHARS ? `${best.text.slice(0, CLOSEST_SHOWN_CHARS)}…` : best.text;
  const hint = best.score === 1 ? " (it matches when whitespace is ignored: check indentation and line breaks)" : "";
  return `The closest line is ${best.line}: ${JSON.stringify(shown.replace(/\r$/, ""))}${hint}.`;
}

/**
 * Applies the edits in order to `content`; each `old_text` must occur exactly once in the text as
 * it is after the previous edits. Throws `ToolError` naming the edit; returns the new content.
 * When the file uses CRLF line ends and an `old_text` with plain LF does not match, the LF form is
 * tried with CRLF (and `new_text` converted the same way).
 */
export function applyEdits(content: string, edits: readonly TextEdit[], shown: string): string {
  let current = content;
  const usesCrlf = content.includes("\r\n");
  edits.forEach((edit, index) => {
    const label = `edits[${index}]`;
    const after = index > 0 ? " (after the earlier edits of this call)" : "";
    if (edit.old_text === edit.new_text) {
      throw new ToolError("failed", `${label}: old_text and new_text are identical. Nothing was changed.`);
    }
    let { old_text: oldText, new_text: newText } = edit;
    let found = occurrences(current, oldText, EDIT_MAX_LISTED_MATCHES);
    if (found.length === 0 && usesCrlf && oldText.includes("\n") && !oldText.includes("\r")) {
      const crlfOld = oldText.replace(/\n/g, "\r\n");
      const crlfFound = occurrences(current, crlfOld, EDIT_MAX_LISTED_MATCHES);
      if (crlfFound.length > 0) {
        oldText = crlfOld;
        newText = newText.replace(/\r?\n/g, "\r\n");
        found = crlfFound;
      }
    }
    if (found.length === 0) {
      throw new ToolError(
        "failed",
        `${label}: old_text was not found in ${shown}${after}. ${closestLine(current, edit.old_text)} ` +
          "Nothing was changed; read the file again and copy old_text exactly.",
      );
    }
    if (found.length > 1) {
      let total = found.length;
      if (total > EDIT_MAX_LISTED_MATCHES) {
        total = EDIT_MAX_LISTED_MATCHES;
        for (let i = current.indexOf(oldText, (found[found.length - 1] as number) + 1); i !== -1; i = current.indexOf(oldText, i + 1)) total++;
        total++;
      }
      const listed = lineNumbers(current, found.slice(0, EDIT_MAX_LISTED_MATCHES));
      const more = total > listed.length ? ", …" : "";
      throw new ToolError(
        "failed",
        `${label}: old_text matches ${total} times in ${shown}${after} (lines ${listed.join(", ")}${more}). ` +
          "Nothing was changed; include more surrounding text in old_text so it matches exactly once.",
      );
    }
    const at = found[0] as number;
    current = current.slice(0, at) + newText + current.slice(at + oldText.length);
  });
  return current;
}

export const editTool: Tool = {
  name: "edit",
  description:
    "Edit a text file by exact replacements. Each edits[i].old_text must match the file exactly once (whitespace included), " +
    "as it is after the previous edits of the same call; otherwise nothing is written. Several edits in one call are applied together.",
  parameters,
  async run(args: unknown, ctx: ToolContext): Promise<ToolResult> {
    const { path, edits } = validateArgs<EditArgs>("edit", parameters, args);
    throwIfCancelled(ctx.signal);
    const absolute = resolvePath(ctx.cwd, path);
    const { text, real } = await readTextFile(absolute, path, EDIT_MAX_FILE_BYTES, "edit", ctx.access);
    const updated = applyEdits(text, edits, path);
    throwIfCancelled(ctx.signal);
    // Written where it was read (the real path, no link left to swap), judged again there.
    await writeFileAtomic(real, path, updated, { signal: ctx.signal, ...(ctx.access ? { access: ctx.access } : {}) });
    const { diff, added, removed } = unifiedDiff(path, text, updated);
    const count = edits.length;
    const output = `Edited ${path}: ${count} replacement${count === 1 ? "" : "s"} (+${added} -${removed} lines).`;
    return { output, display: { title: `edit ${path}`, diff, summary: `+${added} -${removed}` } };
  },
};
