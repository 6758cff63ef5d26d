// Per-agent working directories (SPEC-shell-tools). The remembered path is agent metadata owned by
// the shell instance; a malformed or vanished one fails closed until it is explicitly repaired —
// it is never silently replaced by the project root.
import { statSync } from "node:fs";
import { isAbsolute, normalize } from "node:path";
import { MAX_PATH_CHARS } from "./limits.js";
import { ToolError, describeFsError } from "./errors.js";
import { codePointLength } from "./schema.js";
import { resolvePath } from "./paths.js";

/** Why a path cannot be a remembered working directory, or undefined when its form is valid. */
export function workdirFormProblem(path: unknown): string | undefined {
  if (typeof path !== "string") return "it is not a string";
  if (path === "") return "it is empty";
  if (path.includes("\0")) return "it contains a NUL character";
  if (codePointLength(path) > MAX_PATH_CHARS) return `it is longer than ${MAX_PATH_CHARS} characters`;
  if (!isAbsolute(path)) return "it is not an absolute path";
  if (normalize(path) !== path || (path.length > 1 && path.endsWith("/"))) return "it is not a normalised path";
  return undefined;
}

/**
 * Synchronous on purpose: one stat of a local folder costs microseconds, while the first
 * asynchronous fs call of the process starts libuv's thread pool (milliseconds, on the path of the
 * first tool call). `shell` then spawns with this folder as cwd, which blocks on it the same way.
 */
function requireDirectory(path: string, what: string): void {
  let info;
  try {
    info = statSync(path);
  } catch (error) {
    throw new ToolError("failed", `${what} ${JSON.stringify(path)} is unavailable (${describeFsError(error)}). Set it again explicitly.`);
  }
  if (!info.isDirectory()) throw new ToolError("failed", `${what} ${JSON.stringify(path)} is no longer a directory. Set it again explicitly.`);
}

/**
 * The working directory of an agent: its remembered one when it has one, else the project root.
 * A remembered value that is malformed, missing or not a directory is an error (fail closed).
 */
export async function resolveWorkdir(remembered: string | undefined, projectRoot: string): Promise<string> {
  if (remembered === undefined) {
    const problem = workdirFormProblem(projectRoot);
    if (problem !== undefined) throw new ToolError("failed", `The project root ${JSON.stringify(projectRoot)} cannot be a working directory: ${problem}.`);
    requireDirectory(projectRoot, "The project root");
    return projectRoot;
  }
  const problem = workdirFormProblem(remembered);
  if (problem !== undefined) {
    throw new ToolError(
      "failed",
      `The remembered working directory ${JSON.stringify(remembered.slice(0, 200))} is malformed: ${problem}. Set it again explicitly.`,
    );
  }
  requireDirectory(remembered, "The remembered working directory");
  return remembered;
}

/** A new working directory from a user/agent request, relative to the current one; must exist. */
export async function changeWorkdir(current: string, requested: string): Promise<string> {
  const next = resolvePath(current, requested);
  const problem = workdirFormProblem(next);
  if (problem !== undefined) throw new ToolError("failed", `Cannot use ${JSON.stringify(requested.slice(0, 200))} as the working directory: ${problem}.`);
  requireDirectory(next, "The requested working directory");
  return next;
}
