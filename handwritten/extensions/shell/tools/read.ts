// The `read` tool: a line range of a text file with line numbers, bounded per line and in total,
// read in chunks so neither a huge file nor a huge line is ever held whole (SPEC-shell-tools).
import type { FileHandle } from "node:fs/promises";
import {
  BINARY_SNIFF_BYTES,
  MAX_PATH_CHARS,
  READ_MAX_LINE_CHARS,
  READ_MAX_LINES,
  READ_MAX_OFFSET,
  READ_MAX_OUTPUT_BYTES,
} from "./limits.js";
import { ToolError, throwIfCancelled } from "./errors.js";
import { looksBinary, openForRead } from "./files.js";
import { resolvePath } from "./paths.js";
import { defineParameters, validateArgs } from "./schema.js";
import type { EditorFiles, FileAccess, Tool, ToolContext, ToolResult } from "./types.js";

const CHUNK_BYTES = 64 * 1024;
/** Bytes of one line kept before it is known to be too long (a code point is at most 4 bytes). */
const LINE_KEEP_BYTES = READ_MAX_LINE_CHARS * 4;

export interface ReadLine {
  number: number;
  text: string;
  /** The line was longer than `READ_MAX_LINE_CHARS` and `text` is cut. */
  cut: boolean;
}

export interface ReadRange {
  lines: ReadLine[];
  /** Lines exist after the last one returned. */
  more: boolean;
  /** The output byte budget ended the range before `limit` lines. */
  budgetReached: boolean;
  /** Lines in the file, when the end of the file was reached. */
  totalLines: number | undefined;
}

function finishLine(pieces: Buffer[], totalBytes: number): { text: string; cut: boolean } {
  let text = Buffer.concat(pieces).toString("utf8");
  let length = totalBytes;
  if (totalBytes <= LINE_KEEP_BYTES && text.endsWith("\r")) {
    text = text.slice(0, -1);
    length--;
  }
  if (totalBytes <= LINE_KEEP_BYTES && text.length <= READ_MAX_LINE_CHARS) return { text, cut: false };
  let end = READ_MAX_LINE_CHARS;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return { text: `${text.slice(0, end)} … [line cut: ${length} bytes in total]`, cut: true };
}

/** Reads lines `offset` … `offset + limit - 1` (1-based) of a regular file. */
/** Refuses a binary file, judged by its first BINARY_SNIFF_BYTES (read again when the first chunk was shorter). */
async function refuseBinary(handle: FileHandle, chunk: Buffer, size: number, shown: string): Promise<void> {
  let sniff = chunk;
  if (chunk.length < BINARY_SNIFF_BYTES && chunk.length < size) {
    const more = Buffer.alloc(BINARY_SNIFF_BYTES);
    const { bytesRead: n } = await handle.read(more, 0, BINARY_SNIFF_BYTES, 0);
    sniff = more.subarray(0, n);
  }
  if (looksBinary(sniff)) throw new ToolError("failed", `Cannot read ${shown}: it is a binary file.`);
}

export async function readRange(absolute: string, shown: string, offset: number, limit: number, signal: AbortSignal, access?: FileAccess): Promise<ReadRange> {
  const { handle } = await openForRead(absolute, shown, "read", access);
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw new ToolError("failed", `Cannot read ${shown}: it is a directory (use ls to list it).`);
    if (!info.isFile()) throw new ToolError("failed", `Cannot read ${shown}: it is not a regular file.`);
    const buffer = Buffer.alloc(CHUNK_BYTES);
    const lines: ReadLine[] = [];
    let outputBytes = 0;
    let lineNumber = 1;
    let lineBytes = 0;
    let pieces: Buffer[] = [];
    let keptBytes = 0;
    let sniffed = false;
    let position = 0;
    let done = false;
    let budgetReached = false;

    // Completes the current line; returns false when reading can stop.
    const complete = (): boolean => {
      if (lineNumber >= offset) {
        const { text, cut } = finishLine(pieces, lineBytes);
        const bytes = Buffer.byteLength(text);
        if (outputBytes + bytes > READ_MAX_OUTPUT_BYTES && lines.length > 0) {
          budgetReached = true;
          return false;
        }
        outputBytes += bytes;
        lines.push({ number: lineNumber, text, cut });
      }
      lineNumber++;
      lineBytes = 0;
      pieces = [];
      keptBytes = 0;
      return lines.length < limit;
    };

    for (;;) {
      throwIfCancelled(signal);
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      if (!sniffed) {
        sniffed = true;
        await refuseBinary(handle, chunk, info.size, shown);
      }
      position += bytesRead;
      let start = 0;
      while (start < chunk.length) {
        const newline = chunk.indexOf(10, start);
        const end = newline === -1 ? chunk.length : newline;
        if (lineNumber >= offset && keptBytes < LINE_KEEP_BYTES + 1) {
          const take = Math.min(end - start, LINE_KEEP_BYTES + 1 - keptBytes);
          pieces.push(Buffer.from(chunk.subarray(start, start + take)));
          keptBytes += take;
        }
        lineBytes += end - start;
        if (newline === -1) break;
        start = newline + 1;
        if (!complete()) {
          done = true;
          // Is there anything after this line? Either later in this chunk, or later in the file.
          const more = budgetReached || start < chunk.length || position < info.size;
          return { lines, more, budgetReached, totalLines: undefined, ...(more ? {} : { totalLines: lineNumber - 1 }) };
        }
      }
    }
    if (!done && lineBytes > 0) {
      // A last line without a newline.
      if (!complete() && budgetReached) return { lines, more: true, budgetReached, totalLines: undefined };
    }
    return { lines, more: false, budgetReached: false, totalLines: lineNumber - 1 };
  } finally {
    await handle.close();
  }
}

const parameters = defineParameters({
  type: "object",
  properties: {
    path: { type: "string", description: "The file to read, relative to the working directory.", minLength: 1, maxLength: MAX_PATH_CHARS },
    offset: {
      type: "integer",
      description: "First line to show, 1-based (default 1).",
      minimum: 1,
      maximum: READ_MAX_OFFSET,
      default: 1,
    },
    limit: {
      type: "integer",
      description: `Most lines to show (default and maximum ${READ_MAX_LINES}).`,
      minimum: 1,
      maximum: READ_MAX_LINES,
      default: READ_MAX_LINES,
    },
  },
  required: ["path"],
  additionalProperties: false,
});

interface ReadArgs {
  path: string;
  offset?: number;
  limit?: number;
}

/**
 * Lines `offset` … of the editor's text of the file, unsaved changes included (SPEC-acp, "The editor's
 * files"), or undefined to read the disk instead. The policy judges the file as for a disk read,
 * and the editor's answer counts only when the path still lands on the same file afterwards (a
 * path swapped meanwhile may have let the editor read another one).
 */
async function fromEditor(editor: EditorFiles, absolute: string, shown: string, offset: number, limit: number, ctx: ToolContext): Promise<ReadRange | undefined> {
  const landing = async (): Promise<{ real: string; dev: number; ino: number } | undefined> => {
    const { handle, real } = await openForRead(absolute, shown, "read", ctx.access);
    try {
      const info = await handle.stat();
      return info.isFile() ? { real, dev: info.dev, ino: info.ino } : undefined;
    } finally {
      await handle.close();
    }
  };
  const before = await landing();
  if (before === undefined) return undefined;
  // One line more than wanted tells whether more follow.
  const text = await editor.read(before.real, offset, limit + 1, ctx.signal);
  throwIfCancelled(ctx.signal);
  if (text === undefined) return undefined;
  const after = await landing().catch(() => undefined);
  if (after === undefined || after.real !== before.real || after.dev !== before.dev || after.ino !== before.ino) return undefined;
  const all = text.split("\n");
  if (text.endsWith("\n")) all.pop();
  if (all.length === 0 && offset > 1) return undefined;
  const lines: ReadLine[] = [];
  let outputBytes = 0;
  for (const [i, raw] of all.slice(0, limit).entries()) {
    const { text: line, cut } = finishLine([Buffer.from(raw)], Buffer.byteLength(raw));
    const bytes = Buffer.byteLength(line);
    if (outputBytes + bytes > READ_MAX_OUTPUT_BYTES && lines.length > 0) return { lines, more: true, budgetReached: true, totalLines: undefined };
    outputBytes += bytes;
    lines.push({ number: offset + i, text: line, cut });
  }
  const more = all.length > limit;
  return { lines, more, budgetReached: false, totalLines: more ? undefined : offset - 1 + lines.length };
}

/** `cat -n` style: the line number right-aligned in six columns, a tab, the text. */
export function numberLine(number: number, text: string): string {
  return `${String(number).padStart(6)}\t${text}`;
}

export const readTool: Tool = {
  name: "read",
  description:
    `Read a text file with line numbers (a tab separates the number from the text). Shows at most ${READ_MAX_LINES} lines ` +
    `and ${READ_MAX_OUTPUT_BYTES} bytes per call; use offset and limit to page. Lines over ${READ_MAX_LINE_CHARS} characters are cut. ` +
    "Binary files are refused.",
  parameters,
  async run(args: unknown, ctx: ToolContext): Promise<ToolResult> {
    const { path, offset = 1, limit = READ_MAX_LINES } = validateArgs<ReadArgs>("read", parameters, args);
    throwIfCancelled(ctx.signal);
    const absolute = resolvePath(ctx.cwd, path);
    const editor = ctx.editor === undefined ? undefined : await fromEditor(ctx.editor, absolute, path, offset, limit, ctx);
    const range = editor ?? (await readRange(absolute, path, offset, limit, ctx.signal, ctx.access));
    if (range.lines.length === 0) {
      if (range.totalLines === 0 && offset === 1) return { output: `(${path} is empty)`, display: { title: `read ${path}`, summary: "empty file" } };
      throw new ToolError(
        "failed",
        `Cannot read ${path} from line ${offset}: the file has only ${range.totalLines ?? 0} lines.`,
      );
    }
    const first = range.lines[0] as ReadLine;
    const last = range.lines[range.lines.length - 1] as ReadLine;
    const out = range.lines.map((line) => numberLine(line.number, line.text));
    const notes: string[] = [];
    if (range.budgetReached) {
      notes.push(`[Showing lines ${first.number}-${last.number}: the ${READ_MAX_OUTPUT_BYTES}-byte output limit was reached. Use offset=${last.number + 1} to continue.]`);
    } else if (range.more) {
      notes.push(`[Showing lines ${first.number}-${last.number}. More lines follow: use offset=${last.number + 1} to continue.]`);
    }
    if (range.lines.some((line) => line.cut)) {
      notes.push(`[Lines longer than ${READ_MAX_LINE_CHARS} characters were cut; use grep or shell (for example cut -c) to see them in full.]`);
    }
    const output = [...out, ...(notes.length > 0 ? ["", ...notes] : [])].join("\n");
    return { output, display: { title: `read ${path}`, summary: `lines ${first.number}-${last.number}${editor !== undefined ? " (the editor's text)" : ""}` } };
  },
};
