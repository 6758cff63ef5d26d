// Escaping daemon-reported text for `tau session list` line and JSON output.
import { describe, expect, it } from "vitest";
import { escapeForLine, toSafeJson } from "../../../handwritten/cli/commands/session/escape.js";
import { formatRows } from "../../../handwritten/cli/commands/session/list.js";

const UNSAFE_RAW = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe("session list escaping", () => {
  it("shows controls, separators and bidi overrides as visible escapes", () => {
    expect(escapeForLine("a\u001b[31mb")).toBe("a\\x1b[31mb");
    expect(escapeForLine("l1\nl2\r\tz")).toBe("l1\\nl2\\r\\tz");
    expect(escapeForLine("\u0000\u0007\u007f")).toBe("\\x00\\x07\\x7f");
    expect(escapeForLine("\u0085\u009b")).toBe("\\u0085\\u009b");
    expect(escapeForLine("x\u202ey\u2066\u2069\u200f")).toBe("x\\u202ey\\u2066\\u2069\\u200f");
    expect(escapeForLine("\u2028\u2029")).toBe("\\u2028\\u2029");
    expect(escapeForLine("\ud800")).toBe("\\ud800");
    expect(escapeForLine("back\\slash")).toBe("back\\\\slash");
    expect(escapeForLine("/home/ünï 😀 中文")).toBe("/home/ünï 😀 中文");
  });

  it("every code point below 0xa0 and every listed format character is escaped; the output has no raw unsafe character", () => {
    let all = "";
    for (let c = 0; c < 0xa0; c++) all += String.fromCharCode(c);
    all += "\u2028\u2029\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069";
    expect(escapeForLine(all)).not.toMatch(UNSAFE_RAW);
    const json = toSafeJson([{ project_root: all }]);
    expect(json).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
    expect(JSON.parse(json)).toEqual([{ project_root: all }]);
  });

  it("formats one row per daemon with the project root last", () => {
    const text = formatRows([
      { session_id: "s-1", pid: 12, project_root: "/a\nb", socket: "/r/12-0000000000000001.sock" },
      { session_id: "session-two", pid: 3456, project_root: "/c d", socket: "/r/3456-0000000000000002.sock" },
    ]);
    expect(text.split("\n")).toEqual([
      "SESSION      PID   PROJECT ROOT",
      "s-1          12    /a\\nb",
      "session-two  3456  /c d",
    ]);
  });
});
