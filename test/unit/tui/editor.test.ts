import { describe, expect, it } from "vitest";
import { Editor, EDITOR_MAX_CHARS } from "../../../handwritten/cli/tui/editor.js";
import type { Key } from "../../../handwritten/cli/tui/keys.js";

const text = (t: string): Key => ({ kind: "text", text: t });
const k = (kind: string): Key => ({ kind }) as Key;
const ctrl = (key: string): Key => ({ kind: "ctrl", key });

describe("Editor", () => {
  it("edits by grapheme: backspace removes a whole emoji or combined letter", () => {
    const e = new Editor();
    e.apply(text("ae\u0301👩‍👩‍👧"));
    e.apply(k("backspace"));
    expect(e.text).toBe("ae\u0301");
    e.apply(k("left"));
    e.apply(k("backspace"));
    expect(e.text).toBe("e\u0301");
  });

  it("holds several lines; Enter submits all of them and clears", () => {
    const e = new Editor();
    e.apply(text("one"));
    e.apply(k("newline"));
    e.apply(text("two"));
    e.apply(k("up"));
    e.apply(k("end"));
    e.apply(text("!"));
    expect(e.text).toBe("one!\ntwo");
    expect(e.apply(k("enter"))).toEqual({ kind: "submit", text: "one!\ntwo" });
    expect(e.text).toBe("");
    expect(e.apply(k("enter"))).toEqual({ kind: "none" });
  });

  it("browses history with up/down and brings the unsent draft back", () => {
    const e = new Editor();
    e.setHistory(["first", "second"]);
    e.apply(text("draft"));
    e.apply(k("up"));
    expect(e.text).toBe("second");
    e.apply(k("up"));
    expect(e.text).toBe("first");
    e.apply(k("up"));
    expect(e.text).toBe("first");
    e.apply(k("down"));
    e.apply(k("down"));
    expect(e.text).toBe("draft");
  });

  it("searches history backwards with Ctrl-R; again for older matches; Esc gives up", () => {
    const e = new Editor();
    e.setHistory(["make test", "git status", "make lint"]);
    e.apply(ctrl("r"));
    e.apply(text("make"));
    expect(e.search).toEqual({ query: "make", match: "make lint" });
    e.apply(ctrl("r"));
    expect(e.search?.match).toBe("make test");
    e.apply(k("enter"));
    expect(e.search).toBeUndefined();
    expect(e.text).toBe("make test");
    e.clear();
    e.apply(ctrl("r"));
    e.apply(text("nothing"));
    expect(e.search?.match).toBeUndefined();
    e.apply(k("escape"));
    expect(e.text).toBe("");
  });

  it("kills to line start/end and deletes a word back", () => {
    const e = new Editor();
    e.apply(text("alpha beta gamma"));
    e.apply(ctrl("w"));
    expect(e.text).toBe("alpha beta ");
    e.apply(ctrl("a"));
    e.apply(k("word-right"));
    e.apply(ctrl("k"));
    expect(e.text).toBe("alpha");
    e.apply(ctrl("u"));
    expect(e.text).toBe("");
  });

  it("refuses input past EDITOR_MAX_CHARS and keeps what it had", () => {
    const e = new Editor();
    e.apply({ kind: "paste", text: "x".repeat(EDITOR_MAX_CHARS) });
    expect(e.apply(text("y"))).toEqual({ kind: "refused" });
    expect(e.text.length).toBe(EDITOR_MAX_CHARS);
  });
});

describe("a long paste", () => {
  const paste = (t: string): Key => ({ kind: "paste", text: t });
  it("[tui.paste.collapsed] shows as one placeholder and is sent whole where it stands; a short one is text; backspace removes a placeholder whole; an edited one stays as typed", () => {
    const e = new Editor();
    const file = Array.from({ length: 300 }, (_, i) => `line ${i + 1}`).join("\n");
    e.apply(text("summarize: "));
    e.apply(paste(file));
    e.apply(text(" thanks"));
    expect(e.text).toBe("summarize: [Pasted text #1 +300 lines] thanks");
    expect(e.apply(k("enter"))).toEqual({ kind: "submit", text: `summarize: ${file} thanks` });
    expect(e.text).toBe("");
    // Ten lines or fewer go in as they are.
    const short = "a\nb\nc";
    e.apply(paste(short));
    expect(e.text).toBe(short);
    e.apply(k("enter"));
    // Backspace after a placeholder removes all of it.
    e.apply(paste(file));
    e.apply(k("backspace"));
    expect(e.text).toBe("");
    // A placeholder broken by an edit is no longer one: what is on screen is what is sent.
    e.apply(paste(file));
    e.apply(k("left"));
    e.apply(k("backspace"));
    expect(e.text).toBe("[Pasted text #1 +300 line]");
    expect(e.apply(k("enter"))).toEqual({ kind: "submit", text: "[Pasted text #1 +300 line]" });
  });
});
