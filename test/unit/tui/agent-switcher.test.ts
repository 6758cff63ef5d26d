// The agent switcher's parts (SPEC-agent-navigation): the tree, the cycle order, the PATH lookup
// and the picker's bounds, run against real stub executables.
import { afterAll, describe, expect, it } from "vitest";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PICKER_MAX_OUTPUT_BYTES, agentTree, cycleAgent, escapeTitle, findOnPath, mainAgent, numberedTree, pickerInput, runFzf } from "../../../handwritten/cli/tui/agent-switcher.js";
import { Navigation } from "../../../handwritten/harness/navigation.js";
import type { RosterRow } from "../../../generated/index.js";

const dir = mkdtempSync(join(tmpdir(), "tau-switcher-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function stub(name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

const row = (agent_id: string, extra: Partial<RosterRow> = {}): RosterRow => ({ agent_id, loaded: true, ephemeral: false, created_at: 0, status: "idle", ...extra });

describe("the agent switcher", () => {
  it("[tui.agents.tree] children sit under their parents; a parent not listed makes a root; roster strings are sanitized, not escaped twice", () => {
    const rows = [
      row("a-3", { parent_id: "a-1", display_name: "kid\\u{3c}", work_phase: "working", work_title: "x\u001b[31m" }),
      row("a-1", { navigation: "active" }),
      row("a-2", { parent_id: "a-gone", navigation: "suspended" }),
      row("a-4", { parent_id: "a-3", status: "running", navigation: "active_auto" }),
    ];
    expect(agentTree(rows, "a-3")).toEqual([
      "  [a-1] idle",
      "*   └ kid\\u{3c} [a-3] idle · working: x␛[31m",
      "      └ [a-4] running",
      "  [a-2] idle (suspended)",
    ]);
    const input = pickerInput(rows, "a-1").split("\n").filter(Boolean);
    expect(input.map((l) => l.split("\t")[0])).toEqual(["a-1", "a-3", "a-4", "a-2"]);
    expect(input.every((l) => l.split("\t").length === 2)).toBe(true);
  });

  it("[tui.agents.numbered-and-main] :agents numbers its rows for `:agent N`; `main` is the session's oldest agent no agent started", () => {
    const rows = [
      row("a-3", { parent_id: "a-1", created_at: 30 }),
      row("a-1", { created_at: 10 }),
      row("a-0", { parent_id: "a-1", created_at: 5 }),
      row("a-2", { parent_id: "a-gone", created_at: 20 }),
    ];
    const tree = numberedTree(rows, "a-3");
    expect(tree.ids).toEqual(["a-1", "a-0", "a-3", "a-2"]);
    expect(tree.lines).toEqual(["1.   [a-1] idle", "2.     └ [a-0] idle", "3. *   └ [a-3] idle", "4.   [a-2] idle"]);
    // Ten rows or more: the numbers are aligned.
    const many = numberedTree(Array.from({ length: 10 }, (_, i) => row(`a-${String(i).padStart(2, "0")}`)), "");
    expect([many.lines[0], many.lines[9]]).toEqual([" 1.   [a-00] idle", "10.   [a-09] idle"]);
    expect(mainAgent(rows)).toBe("a-1");
    expect(mainAgent([row("a-5", { created_at: 1, parent_id: "a-6" }), row("a-6", { created_at: 2, parent_id: "a-5" })])).toBe(undefined);
    expect(mainAgent([])).toBe(undefined);
  });

  it("[tui.agents.cycle] cycling goes in id order both ways, skips suspended agents, and says when no other is left", () => {
    const modes: Record<string, "suspended" | undefined> = { "a-2": "suspended" };
    const modeOf = (id: string) => modes[id];
    expect(cycleAgent(["a-3", "a-1", "a-2"], "a-1", 1, modeOf)).toBe("a-3");
    expect(cycleAgent(["a-3", "a-1", "a-2"], "a-3", 1, modeOf)).toBe("a-1");
    expect(cycleAgent(["a-3", "a-1", "a-2"], "a-1", -1, modeOf)).toBe("a-3");
    expect(cycleAgent(["a-1", "a-2"], "a-1", 1, modeOf)).toBeUndefined();
    expect(cycleAgent(["a-1", "a-2"], "", 1, () => undefined)).toBe("a-1");
  });

  it("[tui.agents.title-escape] a title from an event is escaped as the roster escapes it", () => {
    expect(escapeTitle('a <b> "c" \\ \u202e\u0007')).toBe('a \\u{3c}b\\u{3e} \\u{22}c\\u{22} \\u{5c} \\u{202e}\\u{7}');
  });

  it("[tui.agents.fzf-bounds] fzf is found on PATH only as an executable file; exit 0 chooses, 1 and 130 cancel, other exits, a long answer and a timeout are errors", async () => {
    const ok = stub("fzf", 'cat > /dev/null\nprintf "a-7\\tthe line\\n"');
    expect(findOnPath("fzf", `relative:${join(dir, "none")}:${dir}`)).toBe(ok);
    expect(findOnPath("fzf", "relative/dir")).toBeUndefined();
    writeFileSync(join(dir, "plain"), "not executable");
    expect(findOnPath("plain", dir)).toBeUndefined();
    expect(await runFzf(ok, "a-7\tx\n")).toEqual({ kind: "chosen", agentId: "a-7" });
    expect(await runFzf(stub("cancel", "exit 130"), "a-7\tx\n")).toEqual({ kind: "cancelled" });
    expect(await runFzf(stub("nomatch", "cat >/dev/null; exit 1"), "a-7\tx\n")).toEqual({ kind: "cancelled" });
    expect(await runFzf(stub("broken", "exit 2"), "")).toMatchObject({ kind: "error", message: expect.stringContaining("exit 2") });
    const long = stub("long", `head -c ${PICKER_MAX_OUTPUT_BYTES + 1} /dev/zero | tr '\\0' 'x'`);
    expect(await runFzf(long, "")).toMatchObject({ kind: "error", message: expect.stringContaining("too long") });
    // timing-under-test: the picker's time bound is what is checked
    expect(await runFzf(stub("slow", "exec sleep 30"), "", 200)).toMatchObject({ kind: "error", message: expect.stringContaining("longer than") });
    expect(await runFzf(join(dir, "missing"), "")).toMatchObject({ kind: "error" });
  });

  it("[harness.navigation.defaults] UI-created agents start active, others active_auto; a set mode holds until the agent is gone; a human prompt makes it active", () => {
    const creators = new Map<string, string | undefined>([["a-ui", "ui"], ["a-kid", "agent"], ["a-old", undefined]]);
    const nav = new Navigation((id) => (creators.has(id) ? creators.get(id) : null));
    expect(nav.modeOf("a-ui")).toBe("active");
    expect(nav.modeOf("a-kid")).toBe("active_auto");
    expect(nav.modeOf("a-old")).toBe("active_auto");
    expect(nav.modeOf("a-none")).toBeUndefined();
    expect(nav.request("a-none", "active")).toBeUndefined();
    expect(nav.request("a-kid", "suspended")).toBe("suspended");
    expect(nav.modeOf("a-kid")).toBe("suspended");
    nav.humanPromptAdmitted("a-kid");
    expect(nav.modeOf("a-kid")).toBe("active");
    nav.request("a-kid", "suspended");
    creators.delete("a-kid");
    expect(nav.modeOf("a-kid")).toBeUndefined();
    creators.set("a-kid", "agent");
    expect(nav.modeOf("a-kid")).toBe("active_auto");
  });
});
