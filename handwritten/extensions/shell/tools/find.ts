// The `find` and `ls` tools: file names by glob under a folder, and one folder's listing
// (SPEC-shell-tools).
import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { FIND_MAX_RESULTS, LS_MAX_ENTRIES, MAX_PATH_CHARS, MAX_PATTERN_CHARS } from "./limits.js";
import { ToolError, describeFsError, errnoCode, throwIfCancelled } from "./errors.js";
import { compileGlob } from "./glob.js";
import { displayPath, resolvePath } from "./paths.js";
import { defineParameters, validateArgs } from "./schema.js";
import { opener, type Landed } from "./landing.js";
import type { FileAccess, Tool, ToolContext, ToolResult } from "./types.js";
import { walkFiles } from "./walk.js";

async function requireFolder(absolute: string, shown: string, verb: string): Promise<void> {
  let info;
  try {
    info = await stat(absolute);
  } catch (error) {
    throw new ToolError("failed", `Cannot ${verb} ${shown}: ${describeFsError(error)}.`);
  }
  if (!info.isDirectory()) throw new ToolError("failed", `Cannot ${verb} ${shown}: it is not a folder.`);
}

// ---- find --------------------------------------------------------------------------------------

const findParameters = defineParameters({
  type: "object",
  properties: {
    pattern: {
      type: "string",
      description: "Glob of the files to find, e.g. *.ts (matches file names at any depth) or src/**/index.ts (matches paths).",
      minLength: 1,
      maxLength: MAX_PATTERN_CHARS,
    },
    path: { type: "string", description: "Folder to search (default: the working directory).", minLength: 1, maxLength: MAX_PATH_CHARS },
    limit: {
      type: "integer",
      description: `Most paths to return (default and maximum ${FIND_MAX_RESULTS}).`,
      minimum: 1,
      maximum: FIND_MAX_RESULTS,
      default: FIND_MAX_RESULTS,
    },
  },
  required: ["pattern"],
  additionalProperties: false,
});

interface FindArgs {
  pattern: string;
  path?: string;
  limit?: number;
}

export interface FindOutcome {
  /** Absolute paths, in sorted depth-first order. */
  paths: string[];
  truncated: boolean;
}

/** Files under the folder `root` whose path relative to it matches `pattern`, at most `limit`. */
export async function findFiles(root: string, pattern: string, limit: number, signal: AbortSignal, access?: FileAccess): Promise<FindOutcome> {
  let matches;
  try {
    matches = compileGlob(pattern);
  } catch (error) {
    throw new ToolError("invalid_arguments", `Invalid arguments for find: argument "pattern" is not a valid glob (${(error as Error).message}).`);
  }
  const paths: string[] = [];
  for await (const entry of walkFiles(root, { signal, ...(access ? { access } : {}) })) {
    if (!matches(entry.relative)) continue;
    if (paths.length >= limit) return { paths, truncated: true };
    paths.push(entry.absolute);
  }
  return { paths, truncated: false };
}

export const findTool: Tool = {
  name: "find",
  description:
    "Find files by glob under a folder. Paths are listed sorted, relative to the working directory. " +
    `Skips .git, node_modules and .gitignore'd paths; at most ${FIND_MAX_RESULTS} results.`,
  parameters: findParameters,
  async run(args: unknown, ctx: ToolContext): Promise<ToolResult> {
    const { pattern, path = ".", limit = FIND_MAX_RESULTS } = validateArgs<FindArgs>("find", findParameters, args);
    throwIfCancelled(ctx.signal);
    const root = resolvePath(ctx.cwd, path);
    await requireFolder(root, path, "search");
    const outcome = await findFiles(root, pattern, limit, ctx.signal, ctx.access);
    const lines = outcome.paths.map((absolute) => displayPath(ctx.cwd, absolute));
    if (lines.length === 0) lines.push("No files found.");
    if (outcome.truncated) {
      lines.push("", `[Showing the first ${limit} files; there are more. Use a narrower pattern or path.]`);
    }
    const count = outcome.paths.length;
    return {
      output: lines.join("\n"),
      display: { title: `find ${pattern}`, summary: `${count}${outcome.truncated ? "+" : ""} file${count === 1 ? "" : "s"}` },
    };
  },
};

// ---- ls ----------------------------------------------------------------------------------------

const lsParameters = defineParameters({
  type: "object",
  properties: {
    path: { type: "string", description: "Folder to list (default: the working directory).", minLength: 1, maxLength: MAX_PATH_CHARS },
    limit: {
      type: "integer",
      description: `Most entries to return (default and maximum ${LS_MAX_ENTRIES}).`,
      minimum: 1,
      maximum: LS_MAX_ENTRIES,
      default: LS_MAX_ENTRIES,
    },
  },
  required: [],
  additionalProperties: false,
});

interface LsArgs {
  path?: string;
  limit?: number;
}

async function isFolder(folder: Landed, entry: Dirent): Promise<boolean> {
  if (entry.isDirectory()) return true;
  if (!entry.isSymbolicLink()) return false;
  return stat(opener().at(folder, entry.name)).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

export interface Listing {
  /** The names, sorted, folders (and links to folders) with a trailing `/`. */
  names: string[];
  /** Entries left out because the policy denies reading them. */
  hidden: boolean;
}

/**
 * The entries of the folder `absolute` (opened where it lands), sorted; an entry the policy denies
 * reading is left out, so a listing never names a denied file.
 */
export async function listFolder(absolute: string, shown: string, access?: FileAccess): Promise<Listing> {
  const open = opener();
  const folder = await open.openFolder(absolute).catch((error: unknown) => {
    throw new ToolError("failed", `Cannot list ${shown}: ${errnoCode(error) === "ENOTDIR" ? "it is not a folder" : describeFsError(error)}.`);
  });
  try {
    let entries: Dirent[];
    try {
      entries = await open.list(folder);
    } catch (error) {
      throw new ToolError("failed", `Cannot list ${shown}: ${describeFsError(error)}.`);
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const names: string[] = [];
    let hidden = false;
    for (const entry of entries) {
      if (access?.readRefusal(join(folder.real, entry.name)) !== undefined) {
        hidden = true;
        continue;
      }
      names.push((await isFolder(folder, entry)) ? `${entry.name}/` : entry.name);
    }
    return { names, hidden };
  } finally {
    await folder.handle.close();
  }
}

export const lsTool: Tool = {
  name: "ls",
  description: `List one folder: entry names sorted, folders end with /, hidden entries included. At most ${LS_MAX_ENTRIES} entries.`,
  parameters: lsParameters,
  async run(args: unknown, ctx: ToolContext): Promise<ToolResult> {
    const { path = ".", limit = LS_MAX_ENTRIES } = validateArgs<LsArgs>("ls", lsParameters, args);
    throwIfCancelled(ctx.signal);
    const folder = resolvePath(ctx.cwd, path);
    await requireFolder(folder, path, "list");
    const { names, hidden } = await listFolder(folder, path, ctx.access);
    const shownNames = names.slice(0, limit);
    const lines = shownNames.length === 0 ? ["(empty folder)"] : [...shownNames];
    if (names.length > limit) {
      lines.push("", `[${names.length - limit} more entries not shown (${names.length} in total). Use find or shell to filter.]`);
    }
    if (hidden) lines.push("", "[Some entries are not shown: the filesystem policy denies reading them.]");
    return { output: lines.join("\n"), display: { title: `ls ${path}`, summary: `${names.length} entr${names.length === 1 ? "y" : "ies"}` } };
  },
};
