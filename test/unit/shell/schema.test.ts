// Argument validation and the argument bounds of every tool (SPEC-shell-tools).
import { describe, expect, it } from "vitest";
import {
  ToolError,
  editTool,
  findTool,
  grepTool,
  limits,
  lsTool,
  readTool,
  shellTool,
  shellTools,
  writeTool,
} from "../../../handwritten/extensions/shell/tools/index.js";
import type { Tool } from "../../../handwritten/extensions/shell/tools/index.js";
import { codePointLength, defineParameters, findProblem } from "../../../handwritten/extensions/shell/tools/schema.js";

const problem = (tool: Tool, args: unknown): string | undefined => findProblem(tool.parameters, args, undefined);

describe("tool parameters", () => {
  it("every tool has a sealed, bounded object schema and a unique name", () => {
    const tools = shellTools();
    expect(tools.map((t) => t.name)).toEqual(["shell", "read", "write", "edit", "grep", "find", "ls"]);
    for (const tool of tools) {
      expect(tool.parameters.type).toBe("object");
      expect(tool.parameters.additionalProperties).toBe(false);
      expect(() => defineParameters(tool.parameters)).not.toThrow();
      expect(tool.description.length).toBeGreaterThan(20);
    }
  });

  it("defineParameters refuses unsealed objects, unbounded strings and unknown keywords", () => {
    expect(() => defineParameters({ type: "object", properties: {} })).toThrow(/sealed/);
    expect(() => defineParameters({ type: "object", additionalProperties: false, properties: { a: { type: "string" } } })).toThrow(/maxLength/);
    expect(() => defineParameters({ type: "object", additionalProperties: false, pattern: "x" })).toThrow(/keyword/);
  });

  it("messages name the argument", async () => {
    expect(problem(shellTool, {})).toBe('missing required argument "command"');
    expect(problem(shellTool, { command: "ls", extra: 1 })).toMatch(/^unknown argument "extra"/);
    expect(problem(shellTool, { command: 5 })).toBe('argument "command" must be a string, not a number');
    expect(problem(shellTool, { command: "" })).toBe('argument "command" must not be empty');
    expect(problem(shellTool, { command: "x", timeout_seconds: 1.5 })).toMatch(/"timeout_seconds" must be an integer/);
    expect(problem(shellTool, null)).toMatch(/must be an object/);
    expect(problem(editTool, { path: "a", edits: [{ old_text: "x" }] })).toBe('missing required argument "edits[0].new_text"');
    expect(problem(editTool, { path: "a", edits: [{ old_text: "", new_text: "y" }] })).toBe('argument "edits[0].old_text" must not be empty');
    expect(problem(grepTool, { pattern: "x", ignore_case: "yes" })).toMatch(/"ignore_case" must be true or false/);
    const error = await shellTool.run({ command: "ls", timeout_seconds: 0 }, { cwd: "/", signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).code).toBe("invalid_arguments");
    expect((error as ToolError).message).toBe('Invalid arguments for shell: argument "timeout_seconds" must be between 1 and 3600 (got 0).');
  });

  it("string lengths count code points, as JSON Schema does", () => {
    expect(codePointLength("a😀b")).toBe(3);
    const max = limits.MAX_PATTERN_CHARS;
    expect(problem(grepTool, { pattern: "😀".repeat(max) })).toBeUndefined();
    expect(problem(grepTool, { pattern: "😀".repeat(max + 1) })).toMatch(/at most 1024 characters/);
  });

  // Exactly at, one below and one above each argument bound.
  const integerBounds: [string, Tool, Record<string, unknown>, string, number, number][] = [
    ["shell timeout_seconds", shellTool, { command: "true" }, "timeout_seconds", limits.SHELL_MIN_TIMEOUT_SECONDS, limits.SHELL_MAX_TIMEOUT_SECONDS],
    ["read limit", readTool, { path: "a" }, "limit", 1, limits.READ_MAX_LINES],
    ["read offset", readTool, { path: "a" }, "offset", 1, limits.READ_MAX_OFFSET],
    ["grep limit", grepTool, { pattern: "a" }, "limit", 1, limits.GREP_MAX_MATCHES],
    ["find limit", findTool, { pattern: "*" }, "limit", 1, limits.FIND_MAX_RESULTS],
    ["ls limit", lsTool, {}, "limit", 1, limits.LS_MAX_ENTRIES],
  ];
  it.each(integerBounds)("[shell.tools.argument-bounds] %s", (_label, tool, base, key, min, max) => {
    for (const [value, ok] of [
      [min - 1, false],
      [min, true],
      [min + 1, true],
      [max - 1, true],
      [max, true],
      [max + 1, false],
    ] as const) {
      expect(problem(tool, { ...base, [key]: value }) === undefined, `${key}=${value}`).toBe(ok);
    }
  });

  const lengthBounds: [string, Tool, Record<string, unknown>, string, number][] = [
    ["shell command", shellTool, {}, "command", limits.SHELL_MAX_COMMAND_CHARS],
    ["read path", readTool, {}, "path", limits.MAX_PATH_CHARS],
    ["write content", writeTool, { path: "a" }, "content", limits.WRITE_MAX_CONTENT_CHARS],
    ["grep pattern", grepTool, {}, "pattern", limits.MAX_PATTERN_CHARS],
    ["find pattern", findTool, {}, "pattern", limits.MAX_PATTERN_CHARS],
    ["ls path", lsTool, {}, "path", limits.MAX_PATH_CHARS],
  ];
  it.each(lengthBounds)("[shell.tools.argument-bounds] %s length", (_label, tool, base, key, max) => {
    expect(problem(tool, { ...base, [key]: "x".repeat(max - 1) })).toBeUndefined();
    expect(problem(tool, { ...base, [key]: "x".repeat(max) })).toBeUndefined();
    expect(problem(tool, { ...base, [key]: "x".repeat(max + 1) })).toMatch(new RegExp(`"${key}" must be at most ${max} characters`));
  });

  it("[shell.tools.argument-bounds] edit takes 1 to EDIT_MAX_EDITS edits, each old_text/new_text bounded", () => {
    const edit = { old_text: "a", new_text: "b" };
    const edits = (n: number) => ({ path: "f", edits: Array.from({ length: n }, () => edit) });
    expect(problem(editTool, edits(0))).toMatch(/at least 1 item/);
    expect(problem(editTool, edits(1))).toBeUndefined();
    expect(problem(editTool, edits(limits.EDIT_MAX_EDITS - 1))).toBeUndefined();
    expect(problem(editTool, edits(limits.EDIT_MAX_EDITS))).toBeUndefined();
    expect(problem(editTool, edits(limits.EDIT_MAX_EDITS + 1))).toMatch(/at most 64 items/);
    const max = limits.WRITE_MAX_CONTENT_CHARS;
    expect(problem(editTool, { path: "f", edits: [{ old_text: "a", new_text: "x".repeat(max) }] })).toBeUndefined();
    expect(problem(editTool, { path: "f", edits: [{ old_text: "a", new_text: "x".repeat(max + 1) }] })).toMatch(/edits\[0\].new_text/);
  });
});
