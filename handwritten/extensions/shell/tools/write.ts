// The `write` tool: replaces or creates a whole file atomically (SPEC-shell-tools).
import { EDIT_MAX_FILE_BYTES, MAX_PATH_CHARS, WRITE_MAX_CONTENT_CHARS } from "./limits.js";
import { throwIfCancelled } from "./errors.js";
import { readTextFile, writeFileAtomic } from "./files.js";
import { unifiedDiff } from "./diff.js";
import { resolvePath } from "./paths.js";
import { defineParameters, validateArgs } from "./schema.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";

const parameters = defineParameters({
  type: "object",
  properties: {
    path: { type: "string", description: "The file to write, relative to the working directory.", minLength: 1, maxLength: MAX_PATH_CHARS },
    content: { type: "string", description: "The complete new content of the file.", maxLength: WRITE_MAX_CONTENT_CHARS },
  },
  required: ["path", "content"],
  additionalProperties: false,
});

interface WriteArgs {
  path: string;
  content: string;
}

/** Lines of a text: newline count, plus one for a last line without a newline. */
export function countLines(text: string): number {
  if (text === "") return 0;
  let count = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) count++;
  return text.endsWith("\n") ? count : count + 1;
}

export const writeTool: Tool = {
  name: "write",
  description:
    "Write a whole file (create it, with missing parent folders, or replace it). The file is replaced atomically and keeps its permissions. " +
    "Prefer edit for changes to part of an existing file.",
  parameters,
  async run(args: unknown, ctx: ToolContext): Promise<ToolResult> {
    const { path, content } = validateArgs<WriteArgs>("write", parameters, args);
    throwIfCancelled(ctx.signal);
    const absolute = resolvePath(ctx.cwd, path);
    // The previous content, for the display diff only; an unreadable old file (one the policy
    // denies reading included) just has no diff.
    const before = await readTextFile(absolute, path, EDIT_MAX_FILE_BYTES, "read", ctx.access).then(
      (file) => file.text,
      () => undefined,
    );
    throwIfCancelled(ctx.signal);
    const { existed } = await writeFileAtomic(absolute, path, content, { signal: ctx.signal, ...(ctx.access ? { access: ctx.access } : {}) });
    const lines = countLines(content);
    const bytes = Buffer.byteLength(content);
    const output = `${existed ? "Replaced" : "Created"} ${path} (${lines} line${lines === 1 ? "" : "s"}, ${bytes} byte${bytes === 1 ? "" : "s"}).`;
    if (before === undefined && existed) return { output, display: { title: `write ${path}`, summary: output } };
    const { diff, added, removed } = unifiedDiff(path, before ?? "", content);
    return { output, display: { title: `write ${path}`, diff, summary: `+${added} -${removed}` } };
  },
};
