// Temp folders and a tool context for the shell-tool tests.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import type { Tool, ToolContext, ToolResult } from "../../../handwritten/extensions/shell/tools/index.js";
import { ToolError } from "../../../handwritten/extensions/shell/tools/index.js";

const made: string[] = [];

/** A fresh temp folder, removed after the current test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "tau-shell-tools-"));
  made.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export function context(cwd: string, extra: Partial<ToolContext> = {}): ToolContext {
  return { cwd, signal: new AbortController().signal, ...extra };
}

export async function run(tool: Tool, args: unknown, cwd: string): Promise<ToolResult> {
  return tool.run(args, context(cwd));
}

/** Runs a tool expecting a ToolError; returns it. */
export async function failure(tool: Tool, args: unknown, cwd: string): Promise<ToolError> {
  try {
    await tool.run(args, context(cwd));
  } catch (error) {
    if (error instanceof ToolError) return error;
    throw error;
  }
  throw new Error(`${tool.name} succeeded unexpectedly`);
}
