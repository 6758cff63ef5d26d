// The `grep` tool: a regular-expression search with ripgrep when it is on PATH and a JS walk
// otherwise; both engines select the same files and print the same lines (SPEC-shell-tools).
import { constants } from "node:fs";
import { access, stat, type FileHandle } from "node:fs/promises";
import { basename, delimiter, dirname, join, resolve as resolveFrom } from "node:path";
import { BINARY_SNIFF_BYTES, GREP_MAX_FILE_BYTES, GREP_MAX_LINE_CHARS, GREP_MAX_MATCHES, MAX_PATH_CHARS, MAX_PATTERN_CHARS, SKIPPED_DIRECTORY_NAMES } from "./limits.js";
import { ToolError, describeFsError, throwIfCancelled } from "./errors.js";
import { looksBinary, openForRead } from "./files.js";
import { opener, type Landed } from "./landing.js";
import { compileGlob } from "./glob.js";
import { displayPath, resolvePath } from "./paths.js";
import { defineParameters, validateArgs } from "./schema.js";
import { withoutSecrets } from "../../../config/index.js";
import type { FileAccess, Tool, ToolContext, ToolResult } from "./types.js";
import { walkFiles } from "./walk.js";
import { builtin } from "../../../startup/builtin.js";

/** node:child_process, loaded at the first command (the extension preloads it once it is ready). */
const childProcess = (): typeof import("node:child_process") => builtin("child_process");

export type GrepEngine = "rg" | "js";

export interface GrepMatch {
  /** Absolute path of the file. */
  path: string;
  line: number;
  /** The matching line without its line end, cut at `GREP_MAX_LINE_CHARS`. */
  text: string;
}

export interface GrepQuery {
  pattern: string;
  /** Absolute file or folder to search. */
  root: string;
  /** How messages name the root (default: `root`). */
  shown?: string;
  glob?: string;
  ignoreCase?: boolean;
  literal?: boolean;
  /** Most matches to return; one more is looked for to know whether the list is complete. */
  limit: number;
  signal: AbortSignal;
  /** The policy: files it denies reading are not searched, and never named. */
  access?: FileAccess;
}

export interface GrepOutcome {
  matches: GrepMatch[];
  /** More matches exist beyond `limit`. */
  truncated: boolean;
  engine: GrepEngine;
}

/** Cuts a matching line to `GREP_MAX_LINE_CHARS` UTF-16 units, never inside a surrogate pair. */
export function cutLine(text: string): string {
  const line = text.replace(/\r?\n$/, "").replace(/\r$/, "");
  if (line.length <= GREP_MAX_LINE_CHARS) return line;
  let end = GREP_MAX_LINE_CHARS;
  const last = line.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${line.slice(0, end)}…`;
}

// ---- ripgrep -----------------------------------------------------------------------------------

let rgPathCache: string | null | undefined;

/** The absolute path of `rg` on PATH, or undefined (looked up once per process). */
export async function findRipgrep(): Promise<string | undefined> {
  if (rgPathCache !== undefined) return rgPathCache ?? undefined;
  rgPathCache = null;
  for (const folder of (process.env.PATH ?? "").split(delimiter)) {
    if (folder === "") continue;
    const candidate = join(folder, "rg");
    try {
      await access(candidate, constants.X_OK);
      rgPathCache = candidate;
      break;
    } catch {
      // not here
    }
  }
  return rgPathCache ?? undefined;
}

function jsonText(value: unknown): string {
  if (typeof value !== "object" || value === null) return "";
  const record = value as { text?: unknown; bytes?: unknown };
  if (typeof record.text === "string") return record.text;
  if (typeof record.bytes === "string") return Buffer.from(record.bytes, "base64").toString("utf8");
  return "";
}

/** ripgrep's arguments for a query of `target`: no configuration or ignore files but the project's, JSON out. */
function ripgrepArgs(query: GrepQuery, target: string): string[] {
  const args = [
    "--no-config",
    "--json",
    "--sort=path",
    "--hidden",
    "--no-require-git",
    "--no-ignore-parent",
    "--no-ignore-global",
    "--no-ignore-exclude",
    "--no-ignore-dot",
    `--max-filesize=${GREP_MAX_FILE_BYTES}`,
  ];
  if (query.glob !== undefined) args.push(`--glob=${query.glob}`);
  for (const name of SKIPPED_DIRECTORY_NAMES) args.push(`--glob=!${name}/`);
  if (query.ignoreCase === true) args.push("--ignore-case");
  else args.push("--case-sensitive");
  if (query.literal === true) args.push("--fixed-strings");
  args.push("--regexp", query.pattern, "--", target);
  return args;
}

async function searchWithRipgrep(rg: string, query: GrepQuery, rootIsFile: boolean): Promise<GrepOutcome> {
  // ripgrep matches --glob relative to its own working directory: run it in the searched folder.
  const cwd = rootIsFile ? dirname(query.root) : query.root;
  const target = rootIsFile ? `./${basename(query.root)}` : ".";
  const args = ripgrepArgs(query, target);
  const env = withoutSecrets();
  delete env.RIPGREP_CONFIG_PATH;
  return new Promise<GrepOutcome>((resolve, reject) => {
    const child = childProcess().spawn(rg, args, { cwd, stdio: ["ignore", "pipe", "pipe"], env });
    const matches: GrepMatch[] = [];
    let truncated = false;
    let pending = "";
    let stderr = "";
    const stop = (): void => {
      if (!child.killed) child.kill("SIGKILL");
    };
    const onAbort = (): void => stop();
    query.signal.addEventListener("abort", onAbort, { once: true });
    const handleLine = (line: string): void => {
      if (truncated || line === "") return;
      let event: { type?: unknown; data?: { path?: unknown; lines?: unknown; line_number?: unknown } };
      try {
        event = JSON.parse(line) as typeof event;
      } catch {
        return;
      }
      if (event.type !== "match" || event.data === undefined) return;
      if (matches.length >= query.limit) {
        truncated = true;
        stop();
        return;
      }
      const lineNumber = typeof event.data.line_number === "number" ? event.data.line_number : 0;
      matches.push({ path: resolveFrom(cwd, jsonText(event.data.path)), line: lineNumber, text: cutLine(jsonText(event.data.lines)) });
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      pending += chunk;
      let newline = pending.indexOf("\n");
      while (newline !== -1) {
        handleLine(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
        newline = pending.indexOf("\n");
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      if (stderr.length < 4096) stderr += chunk;
    });
    child.once("error", (error) => {
      query.signal.removeEventListener("abort", onAbort);
      reject(new ToolError("failed", `Cannot run ripgrep: ${error.message}.`));
    });
    child.once("close", (code) => {
      query.signal.removeEventListener("abort", onAbort);
      handleLine(pending);
      if (query.signal.aborted) {
        reject(new ToolError("cancelled", "The search was cancelled."));
        return;
      }
      if (code === 2 && matches.length === 0 && !truncated) {
        const detail = stderr.trim().split("\n").slice(0, 5).join("\n");
        reject(new ToolError("failed", `grep failed: ${detail || "ripgrep exited with status 2"}`));
        return;
      }
      resolve({ matches, truncated, engine: "rg" });
    });
  });
}

// ---- JS engine ---------------------------------------------------------------------------------

function compilePattern(query: GrepQuery): RegExp {
  const source = query.literal === true ? query.pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : query.pattern;
  const flags = query.ignoreCase === true ? "i" : "";
  try {
    return new RegExp(source, `${flags}u`);
  } catch {
    try {
      return new RegExp(source, flags);
    } catch (error) {
      throw new ToolError("failed", `grep failed: invalid regular expression: ${(error as Error).message}`);
    }
  }
}

/** Searches an open file; `absolute` names it in matches. True when more than `limit` lines match. */
async function searchFile(handle: FileHandle, absolute: string, regex: RegExp, query: GrepQuery, matches: GrepMatch[]): Promise<boolean> {
  let bytes: Buffer;
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > GREP_MAX_FILE_BYTES) return false;
    bytes = await handle.readFile();
  } catch {
    return false;
  }
  if (looksBinary(bytes)) return false;
  const text = bytes.toString("utf8");
  let line = 1;
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    const content = text.slice(start, end).replace(/\r$/, "");
    if (regex.test(content)) {
      if (matches.length >= query.limit) return true;
      matches.push({ path: absolute, line, text: cutLine(content) });
    }
    line++;
    start = end + 1;
  }
  return false;
}

async function searchWithJs(query: GrepQuery, root: Landed | undefined): Promise<GrepOutcome> {
  const regex = compilePattern(query);
  const matches: GrepMatch[] = [];
  if (root !== undefined) {
    const truncated = await searchFile(root.handle, query.root, regex, query, matches);
    return { matches, truncated, engine: "js" };
  }
  const glob = query.glob === undefined ? undefined : compileGlob(query.glob);
  // As in ripgrep, a `glob` overrides .gitignore: files must match it, and matching folders are
  // entered even when ignored.
  const accept =
    glob === undefined
      ? undefined
      : (entry: { relative: string; isDirectory: boolean; gitignored: boolean }): boolean =>
          entry.isDirectory ? glob(entry.relative) || !entry.gitignored : glob(entry.relative);
  const walk = walkFiles(query.root, { signal: query.signal, ...(accept === undefined ? {} : { accept }), ...(query.access ? { access: query.access } : {}) });
  for await (const entry of walk) {
    // Opened through its folder, never through a link; judged where it landed.
    const file = await opener().openChild(entry.folder, entry.name, "file");
    if (file === undefined) continue;
    try {
      if (query.access?.readRefusal(file.real) !== undefined) continue;
      if (await searchFile(file.handle, entry.absolute, regex, query, matches)) return { matches, truncated: true, engine: "js" };
    } finally {
      await file.handle.close();
    }
  }
  return { matches, truncated: false, engine: "js" };
}

/**
 * ripgrep opens files by name, so a folder swapped for a link while it searches could make it read
 * a file the policy denies. Under a policy, each match it reports is kept only when the same line,
 * read again where the file lands now and allowed there, says the same: what came from anywhere
 * else is dropped, so nothing of a denied file can reach the output.
 */
async function confirmMatches(outcome: GrepOutcome, access: FileAccess): Promise<GrepOutcome> {
  const byPath = new Map<string, GrepMatch[]>();
  for (const m of outcome.matches) byPath.set(m.path, [...(byPath.get(m.path) ?? []), m]);
  const kept = new Set<GrepMatch>();
  for (const [path, found] of byPath) {
    let lines: string[];
    try {
      const { handle } = await openForRead(path, path, "search", access);
      try {
        const info = await handle.stat();
        if (!info.isFile() || info.size > GREP_MAX_FILE_BYTES) continue;
        const bytes = await handle.readFile();
        if (looksBinary(bytes)) continue;
        lines = bytes.toString("utf8").split("\n");
      } finally {
        await handle.close();
      }
    } catch {
      continue;
    }
    for (const m of found) if (m.line >= 1 && cutLine(lines[m.line - 1] ?? "") === m.text) kept.add(m);
  }
  return { ...outcome, matches: outcome.matches.filter((m) => kept.has(m)) };
}

/** Searches with the chosen engine ("auto": ripgrep when on PATH, the JS engine otherwise). */
export async function grepSearch(query: GrepQuery, engine: GrepEngine | "auto" = "auto"): Promise<GrepOutcome> {
  const shown = query.shown ?? query.root;
  let info;
  try {
    info = await stat(query.root);
  } catch (error) {
    throw new ToolError("failed", `Cannot search ${shown}: ${describeFsError(error)}.`);
  }
  if (!info.isFile() && !info.isDirectory()) throw new ToolError("failed", `Cannot search ${shown}: it is not a file or folder.`);
  // An explicitly named file is opened where it lands and judged there; a binary one is refused the
  // same way by both engines.
  const file = info.isFile() ? await openForRead(query.root, shown, "search", query.access) : undefined;
  try {
    if (file !== undefined) {
      const head = Buffer.alloc(BINARY_SNIFF_BYTES);
      const { bytesRead } = await file.handle.read(head, 0, head.length, 0);
      if (looksBinary(head.subarray(0, bytesRead))) throw new ToolError("failed", `Cannot search ${shown}: it is a binary file.`);
    }
    throwIfCancelled(query.signal);
    const rg = engine === "js" ? undefined : await findRipgrep();
    if (engine === "rg" && rg === undefined) throw new ToolError("failed", "ripgrep (rg) is not installed.");
    if (rg === undefined) return await searchWithJs(query, file);
    const outcome = await searchWithRipgrep(rg, query, file !== undefined);
    return query.access === undefined ? outcome : await confirmMatches(outcome, query.access);
  } finally {
    await file?.handle.close();
  }
}

// ---- the tool ----------------------------------------------------------------------------------

const parameters = defineParameters({
  type: "object",
  properties: {
    pattern: { type: "string", description: "Regular expression to search for (or plain text with literal: true).", minLength: 1, maxLength: MAX_PATTERN_CHARS },
    path: { type: "string", description: "File or folder to search (default: the working directory).", minLength: 1, maxLength: MAX_PATH_CHARS },
    glob: {
      type: "string",
      description: "Only search files matching this glob, e.g. *.ts or src/**/*.test.ts (without / it matches file names).",
      minLength: 1,
      maxLength: MAX_PATTERN_CHARS,
    },
    ignore_case: { type: "boolean", description: "Match case-insensitively (default false).", default: false },
    literal: { type: "boolean", description: "Treat pattern as plain text, not a regular expression (default false).", default: false },
    limit: {
      type: "integer",
      description: `Most matching lines to return (default and maximum ${GREP_MAX_MATCHES}).`,
      minimum: 1,
      maximum: GREP_MAX_MATCHES,
      default: GREP_MAX_MATCHES,
    },
  },
  required: ["pattern"],
  additionalProperties: false,
});

interface GrepArgs {
  pattern: string;
  path?: string;
  glob?: string;
  ignore_case?: boolean;
  literal?: boolean;
  limit?: number;
}

/** Formats matches as `path:line:text`, paths relative to `cwd` when inside it. */
export function formatMatches(cwd: string, outcome: GrepOutcome, limit: number): string {
  if (outcome.matches.length === 0) return "No matches.";
  const lines = outcome.matches.map((match) => `${displayPath(cwd, match.path)}:${match.line}:${match.text}`);
  if (outcome.truncated) {
    lines.push(
      "",
      `[Showing the first ${limit} matching lines; there are more. Narrow the pattern, path or glob` +
        (limit < GREP_MAX_MATCHES ? `, or raise limit (at most ${GREP_MAX_MATCHES}).]` : ".]"),
    );
  }
  return lines.join("\n");
}

export interface GrepToolOptions {
  /** "auto" (default): ripgrep when on PATH; "js" forces the JS engine; "rg" requires ripgrep. */
  engine?: GrepEngine | "auto";
}

export function createGrepTool(options: GrepToolOptions = {}): Tool {
  const engine = options.engine ?? "auto";
  return {
    name: "grep",
    description:
      "Search file contents for a regular expression and list matching lines as path:line:text. Searches hidden files, " +
      `skips .git, node_modules, .gitignore'd paths, binary files and files over ${GREP_MAX_FILE_BYTES} bytes. ` +
      `At most ${GREP_MAX_MATCHES} lines; lines over ${GREP_MAX_LINE_CHARS} characters are cut.`,
    parameters,
    async run(args: unknown, ctx: ToolContext): Promise<ToolResult> {
      const { pattern, path, glob, ignore_case, literal, limit = GREP_MAX_MATCHES } = validateArgs<GrepArgs>("grep", parameters, args);
      if (glob !== undefined && glob.startsWith("!")) {
        throw new ToolError("invalid_arguments", 'Invalid arguments for grep: argument "glob" cannot be a negated (!) pattern.');
      }
      if (glob !== undefined) {
        try {
          compileGlob(glob);
        } catch (error) {
          throw new ToolError("invalid_arguments", `Invalid arguments for grep: argument "glob" is not a valid glob (${(error as Error).message}).`);
        }
      }
      throwIfCancelled(ctx.signal);
      const root = resolvePath(ctx.cwd, path ?? ".");
      const outcome = await grepSearch(
        {
          pattern,
          root,
          shown: path ?? ".",
          limit,
          signal: ctx.signal,
          ...(ctx.access === undefined ? {} : { access: ctx.access }),
          ...(glob === undefined ? {} : { glob }),
          ...(ignore_case === undefined ? {} : { ignoreCase: ignore_case }),
          ...(literal === undefined ? {} : { literal }),
        },
        engine,
      );
      const count = outcome.matches.length;
      return {
        output: formatMatches(ctx.cwd, outcome, limit),
        display: { title: `grep ${pattern}`, summary: `${count}${outcome.truncated ? "+" : ""} matching line${count === 1 ? "" : "s"}` },
      };
    },
  };
}

export const grepTool: Tool = createGrepTool();
