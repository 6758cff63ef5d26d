import { describe, expect, it } from "vitest";
import { KeyDecoder, PASTE_MAX_CHARS } from "../../../handwritten/cli/tui/keys.js";

describe("KeyDecoder", () => {
  it("decodes text, control keys and cursor sequences", () => {
    const d = new KeyDecoder();
    expect(d.feed("hé\r\x7f\x1b[A\x1b[1;5C\x1bOB\x1b[3~\x01\x1b\r")).toEqual([
      { kind: "text", text: "hé" },
      { kind: "enter" },
      { kind: "backspace" },
      { kind: "up" },
      { kind: "word-right" },
      { kind: "down" },
      { kind: "delete" },
      { kind: "ctrl", key: "a" },
      { kind: "newline" },
    ]);
  });

  it("reassembles an escape sequence split across reads, and a lone ESC only after flush", () => {
    const d = new KeyDecoder();
    expect(d.feed("a\x1b")).toEqual([{ kind: "text", text: "a" }]);
    expect(d.waiting).toBe(true);
    expect(d.feed("[D")).toEqual([{ kind: "left" }]);
    expect(d.feed("\x1b")).toEqual([]);
    expect(d.flush()).toEqual([{ kind: "escape" }]);
    expect(d.waiting).toBe(false);
  });

  it("drops unknown sequences and control characters from typed text", () => {
    const d = new KeyDecoder();
    expect(d.feed("x\x1b[99zy\x1b]52;c;AAAA\x07z\u202e!")).toEqual([
      { kind: "text", text: "x" },
      { kind: "text", text: "y" },
      // ESC is dropped with the "]" after it; the rest of the would-be OSC is inert text.
      { kind: "text", text: "52;c;AAAA" },
      { kind: "ctrl", key: "g" },
      { kind: "text", text: "z!" },
    ]);
  });

  it("keeps a bracketed paste whole, split anywhere, with line breaks normalised and controls removed", () => {
    const whole = "\x1b[200~line 1\r\nline\t2\x1b[31m\rend\x1b[201~";
    for (let cut = 1; cut < whole.length; cut++) {
      const d = new KeyDecoder();
      const keys = [...d.feed(whole.slice(0, cut)), ...d.feed(whole.slice(cut))];
      expect(keys, `cut at ${cut}`).toEqual([{ kind: "paste", text: "line 1\nline\t2[31m\nend" }]);
    }
  });

  it("bounds a paste at PASTE_MAX_CHARS and counts what it dropped", () => {
    const d = new KeyDecoder();
    const keys = d.feed(`\x1b[200~${"x".repeat(PASTE_MAX_CHARS + 5)}\x1b[201~`);
    expect(keys).toHaveLength(1);
    expect((keys[0] as { text: string }).text.length).toBe(PASTE_MAX_CHARS);
    expect(d.droppedPasteChars).toBe(5);
  });
});
