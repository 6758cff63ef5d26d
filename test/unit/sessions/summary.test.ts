// The session summary's parts that need no process: titles from prompts, the fold, and reading a
// summary back from a checkpoint's fold (SPEC-session-lifecycle, GATE-saved-sessions).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SessionSummaryFold, TITLE_MAX_CHARS, parseSessionSummary, titleFromPrompt } from "../../../handwritten/sessions/index.js";
import { PickerModel } from "../../../handwritten/cli/tui/session-picker.js";

describe("titles from prompts", () => {
  it("[sessions.title.first-prompt] the first line with text, controls dropped, white space collapsed, bounded with …", () => {
    expect(titleFromPrompt("\n\n  fix the   flaky test\nand more")).toBe("fix the flaky test");
    expect(titleFromPrompt("colour \x1b[31mred\x1b[0m\u202eevil")).toBe("colour [31mred [0m evil");
    expect(titleFromPrompt(" \n\t\n")).toBeUndefined();
    const long = "x".repeat(TITLE_MAX_CHARS + 5);
    expect(titleFromPrompt(long)).toBe(`${"x".repeat(TITLE_MAX_CHARS - 1)}…`);
    expect(titleFromPrompt("x".repeat(TITLE_MAX_CHARS))).toBe("x".repeat(TITLE_MAX_CHARS));
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 400 }), (text) => {
        const t = titleFromPrompt(text);
        if (t === undefined) return;
        expect([...t].length).toBeLessThanOrEqual(TITLE_MAX_CHARS);
        expect(t).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/);
        expect(t).toBe(t.trim());
        expect(t).not.toBe("");
      }),
    );
  });

  it("folds membership and the last title, and reads back only a well-formed summary", () => {
    const f = new SessionSummaryFold("/p");
    f.fold("session.started", { session_id: "s-1" }, 1000);
    f.fold("session.agent_loaded", { agent_id: "a-2" }, 2000);
    f.fold("session.agent_loaded", { agent_id: "a-1" }, 3000);
    f.fold("session.agent_unloaded", { agent_id: "a-2", reason: "x" }, 4000);
    f.fold("session.title_set", { title: "one", origin: "first_prompt" }, 5000);
    f.fold("session.title_set", { title: "two", origin: "user" }, 6000);
    const v = f.value(9999);
    expect(v).toEqual({ summary: 1, project_root: "/p", created_at: 1000, title: "two", agents: ["a-1"] });
    expect(parseSessionSummary({ ...v })).toEqual(v);
    expect(parseSessionSummary(undefined)).toBeUndefined();
    expect(parseSessionSummary({ ...v, summary: 2 })).toBeUndefined();
    expect(parseSessionSummary({ ...v, agents: [1] })).toBeUndefined();
    expect(parseSessionSummary({ ...v, created_at: -1 })).toBeUndefined();
    expect(parseSessionSummary({ ...v, title: 5 })).toBeUndefined();
  });
});

describe("the resume picker's model", () => {
  const now = Date.UTC(2026, 0, 10);
  const entries = [
    { id: "s-aaa", title: "fix the flaky sandbox test", project: "/src/tau", lastActive: now - 5 * 60_000 },
    { id: "s-bbb", title: "write the release notes", project: "/src/site", lastActive: now - 3 * 3600_000 },
    { id: "s-ccc", project: "/src/tau", lastActive: now - 2 * 86400_000 },
  ];

  it("filters by every typed word over title, project and id, and moves within the matches", () => {
    const m = new PickerModel(entries, now);
    expect(m.matches().map((e) => e.id)).toEqual(["s-aaa", "s-bbb", "s-ccc"]);
    for (const ch of "tau") expect(m.key({ kind: "text", text: ch })).toBeUndefined();
    expect(m.matches().map((e) => e.id)).toEqual(["s-aaa", "s-ccc"]);
    m.key({ kind: "down" });
    m.key({ kind: "down" });
    expect(m.key({ kind: "enter" })?.id).toBe("s-ccc");
    m.key({ kind: "text", text: " flaky" });
    expect(m.matches().map((e) => e.id)).toEqual(["s-aaa"]);
    expect(m.key({ kind: "enter" })?.id).toBe("s-aaa");
    m.key({ kind: "ctrl", key: "u" });
    m.key({ kind: "text", text: "nothing-matches" });
    expect(m.key({ kind: "enter" })).toBeUndefined();
    expect(m.key({ kind: "escape" })).toBeNull();
    expect(m.key({ kind: "ctrl", key: "c" })).toBeNull();
  });

  it("shows title, age and project, escapes what it shows, and fits the width", () => {
    const m = new PickerModel([...entries, { id: "s-ddd", title: "evil \x1b[2J title", project: "/x", lastActive: now }], now);
    const lines = m.lines(60);
    expect(lines[0]?.text).toMatch(/^Resume which session\? 4 of 4/);
    expect(lines.some((l) => l.text.startsWith("› fix the flaky sandbox test  ·  5m ago  ·  /src/tau"))).toBe(true);
    expect(lines.some((l) => l.text.includes("(untitled)  ·  2d ago"))).toBe(true);
    for (const l of lines) {
      expect(l.text).not.toContain("\x1b");
      expect([...l.text].length).toBeLessThanOrEqual(60);
    }
    expect(lines.filter((l) => l.selected)).toHaveLength(1);
  });
});
