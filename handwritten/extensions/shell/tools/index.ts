// The tools of the first-party shell extension, free of any protocol (SPEC-shell-tools).
// `tau ext shell` wraps these into tool registrations and reports.
import { editTool } from "./edit.js";
import { findTool, lsTool } from "./find.js";
import { createGrepTool, grepTool } from "./grep.js";
import type { GrepToolOptions } from "./grep.js";
import { readTool } from "./read.js";
import { shellTool } from "./shell.js";
import type { Tool } from "./types.js";
import { writeTool } from "./write.js";

export type { EditorFiles, FileAccess, JsonSchema, Tool, ToolContext, ToolDisplay, ToolResult } from "./types.js";
export { ToolError } from "./errors.js";
export type { ToolErrorCode } from "./errors.js";
export * as limits from "./limits.js";
export { shellTool, runShell, HeadTailBuffer, ProgressDelta, shellArgs, shellBody, shellResult, shellStatus } from "./shell.js";
export type { ShellOutcome, ShellRunOptions } from "./shell.js";
export { endStartedGroups } from "./process-groups.js";
export { processStart, reapIfOrphaned, unrefPipe, type Guarded } from "./reaper.js";
export { readTool } from "./read.js";
export { writeTool } from "./write.js";
export { editTool, applyEdits } from "./edit.js";
export type { TextEdit } from "./edit.js";
export { grepTool, createGrepTool, grepSearch, findRipgrep } from "./grep.js";
export type { GrepEngine, GrepMatch, GrepOutcome, GrepQuery, GrepToolOptions } from "./grep.js";
export { findTool, lsTool } from "./find.js";
export { resolveWorkdir, changeWorkdir, workdirFormProblem } from "./workdir.js";
export { resolvePath, displayPath } from "./paths.js";

/** Every tool of the shell extension, in a stable order. */
export function shellTools(options: { grep?: GrepToolOptions } = {}): Tool[] {
  const grep = options.grep === undefined ? grepTool : createGrepTool(options.grep);
  return [shellTool, readTool, writeTool, editTool, grep, findTool, lsTool];
}
