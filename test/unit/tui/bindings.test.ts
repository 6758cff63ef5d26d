import { describe, expect, it } from "vitest";
import { DEFAULT_BINDINGS, KEY_ACTIONS, RESERVED_KEYS, keyLabel, keyName, resolveBindings } from "../../../handwritten/cli/tui/bindings.js";
import { KeyDecoder } from "../../../handwritten/cli/tui/keys.js";
import { helpText } from "../../../handwritten/cli/tui/command-mode.js";

describe("key bindings", () => {
  it("[tui.keys.resolve] defaults, rebinding, unbinding, and every refusal with the key path it belongs to", () => {
    expect(DEFAULT_BINDINGS.byAction).toEqual({ interrupt: "escape", expand_tool_output: "ctrl-o", redraw: "ctrl-l", history_page: "alt-h", next_agent: "alt-n", previous_agent: "alt-p", pick_agent: "alt-a" });
    for (const a of KEY_ACTIONS) expect(RESERVED_KEYS.some((r) => r.key === a.default), a.action).toBe(false);
    const moved = resolveBindings({ interrupt: "ctrl-x", expand_tool_output: "escape", next_agent: "none" });
    expect("path" in moved).toBe(false);
    if (!("path" in moved)) {
      expect(moved.byKey.get("ctrl-x")).toBe("interrupt");
      expect(moved.byKey.get("escape")).toBe("expand_tool_output");
      expect(moved.byKey.has("alt-n")).toBe(false);
      expect(moved.byAction.next_agent).toBe("none");
    }
    expect(resolveBindings({ interrupt: "ctrl+shift+x" })).toEqual({ path: ["keys", "interrupt"], message: 'cannot read "ctrl+shift+x" as a key; write escape, ctrl-LETTER, alt-LETTER or none' });
    expect(resolveBindings({ redraw: "ctrl-a" })).toEqual({ path: ["keys", "redraw"], message: "ctrl-a is not free: it goes to the start of the line; choose another key" });
    expect(resolveBindings({ redraw: "ctrl-c" })).toMatchObject({ path: ["keys", "redraw"] });
    expect(resolveBindings({ redraw: "alt-b" })).toMatchObject({ path: ["keys", "redraw"] });
    // A collision with a default is reported at the configured key, before or after the default's action.
    expect(resolveBindings({ redraw: "ctrl-o" })).toEqual({ path: ["keys", "redraw"], message: "ctrl-o is already bound to expand_tool_output (its default; bind expand_tool_output to another key or none first)" });
    expect(resolveBindings({ interrupt: "ctrl-l" })).toEqual({ path: ["keys", "interrupt"], message: "ctrl-l is the default key of redraw; bind redraw to another key or none first" });
    expect(resolveBindings({ interrupt: "ctrl-x", redraw: "ctrl-x" })).toEqual({ path: ["keys", "redraw"], message: "ctrl-x is already bound to interrupt" });
    expect("path" in resolveBindings({ redraw: "ctrl-o", expand_tool_output: "none" })).toBe(false);
  });

  it("[tui.keys.alt] Alt-letter arrives as a key of its own and names itself as cli.yaml writes it", () => {
    const d = new KeyDecoder();
    const keys = d.feed("\x1bh\x1bn\x0f\x1bb");
    expect(keys).toEqual([{ kind: "alt", key: "h" }, { kind: "alt", key: "n" }, { kind: "ctrl", key: "o" }, { kind: "word-left" }]);
    expect(keys.map(keyName)).toEqual(["alt-h", "alt-n", "ctrl-o", undefined]);
    expect([keyLabel("escape"), keyLabel("ctrl-o"), keyLabel("alt-h")]).toEqual(["Esc", "Ctrl-O", "Alt-H"]);
    // :help names the keys as bound.
    const moved = resolveBindings({ interrupt: "ctrl-x" });
    if ("path" in moved) throw new Error(moved.message);
    expect(helpText(undefined, undefined, moved)).toContain("Ctrl-X — interrupt the running turn");
    expect(helpText()).toContain("Esc — interrupt the running turn");
  });
});
