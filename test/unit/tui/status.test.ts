import { describe, expect, it } from "vitest";
import { columns } from "../../../handwritten/cli/ui/index.js";
import { compactCount, fitStatus, statusParts } from "../../../handwritten/cli/tui/status.js";
import { callSummary, elapsed, renderItem, type AgentView, type Item } from "../../../handwritten/cli/tui/transcript.js";

const agent = (over: Partial<AgentView> = {}): AgentView => ({ id: "a-mx4duamh-70bb3730976b", items: [], earlier: 0, busy: false, inputTokens: 0, outputTokens: 0, costUsd: 0, contextTokens: 0, ...over });

describe("the status line", () => {
  it("[tui.status.fits] shows name before id, the model before any prompt, context, tokens and cost, and fits every width", () => {
    const a = agent({ name: "reviewer", inputTokens: 123_456, outputTokens: 789, costUsd: 0.01234, contextTokens: 50_000, contextWindow: 200_000 });
    const other = agent({ id: "a-2", inputTokens: 1000, outputTokens: 11, costUsd: 0.001 });
    const parts = statusParts({ agent: a, agents: [a, other], defaultModel: "provider-default/very-long-model-name-2026-01", state: "ready" });
    expect(fitStatus(parts, 200)).toBe("tau · reviewer [a-mx4duamh-70bb3730976b] · provider-default/very-long-model-name-2026-01 · ready · ctx 25% · ↑124456 ↓800 · $0.0133");
    // 40 columns: the state, the model (shortened) and the context stay; the rest goes first.
    const at40 = fitStatus(parts, 40);
    expect(columns(at40)).toBeLessThanOrEqual(40);
    expect(at40).toContain("ready");
    expect(at40).toContain("provider…");
    expect(at40).toContain("ctx 25%");
    for (let w = 1; w <= 200; w++) expect(columns(fitStatus(parts, w)), `width ${w}`).toBeLessThanOrEqual(w);
    // The agent's own model wins over the session's default.
    expect(fitStatus(statusParts({ agent: agent({ model: "mine" }), agents: [], defaultModel: "default-m", state: "ready" }), 80)).toBe("tau · [a-mx4duamh-70bb3730976b] · mine · ready");
    expect([compactCount(999), compactCount(1234), compactCount(56_789), compactCount(2_500_000)]).toEqual(["999", "1.2k", "57k", "2.5M"]);
  });
});

describe("tool rows in the interactive UI", () => {
  it("[tui.tool-row.summary] a row names the command or path, never the call id or raw JSON", () => {
    expect(callSummary(JSON.stringify({ command: "npm test -- --run", timeout: 60 }))).toBe("npm test -- --run");
    expect(callSummary(JSON.stringify({ path: "src/a.ts", offset: 40, limit: 20 }))).toBe("src/a.ts:40");
    expect(callSummary(JSON.stringify({ path: "src/a.ts", edits: [{ old_text: "a", new_text: "b" }] }))).toBe("src/a.ts");
    expect(callSummary(JSON.stringify({ pattern: "TODO", path: "src" }))).toBe("TODO  in src");
    expect(callSummary(JSON.stringify({ city: "Oslo", days: 3, options: { units: "metric" } }))).toBe("city=Oslo days=3");
    expect(callSummary('{"command": "ls')).toBe("");
    const item: Item = { kind: "tool", callId: "call_0123456789abcdef", tool: "shell", args: callSummary('{"command":"make"}'), status: "ok", output: "built\n", done: true };
    const rows = renderItem(item, 60).map((r) => r.map((s) => s.text).join(""));
    expect(rows).toEqual(["shell ok  make", "built"]);
    expect(rows.join("\n")).not.toMatch(/89abcdef|[{}"]/);
    const running: Item = { kind: "tool", callId: item.callId, tool: "shell", args: "make", status: "running", done: false, startedAt: Date.now() - 65_000, progress: Array.from({ length: 20 }, (_, i) => `line ${i}`).join("\n") };
    const live = renderItem(running, 60).map((r) => r.map((s) => s.text).join(""));
    expect(live).toEqual(["shell running 1m05s  make", "… earlier output not shown", "line 14", "line 15", "line 16", "line 17", "line 18", "line 19"]);
    expect(renderItem({ ...running, expanded: true }, 60)).toHaveLength(21);
    expect([elapsed(0), elapsed(59_999), elapsed(61_000)]).toEqual(["0s", "59s", "1m01s"]);
  });
});
