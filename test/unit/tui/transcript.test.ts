import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { OUTPUT_PREVIEW_LINES, TRANSCRIPT_MAX_ITEMS, Transcript, newestRows, renderItem, renderItemTail, shownOutput, type Item } from "../../../handwritten/cli/tui/transcript.js";
import { exactCloseFrame } from "../../../handwritten/harness/agent-tools.js";
import { DEFAULT_THEME, type StyledLine } from "../../../handwritten/cli/ui/index.js";

const text = (rows: readonly StyledLine[]): string[] => rows.map((r) => r.map((s) => s.text).join(""));

function shell(output: string): Item {
  return { kind: "shell", requestId: "r-1", command: "cat big.log", output, exit: "exit 0", context: true, done: true };
}

describe("transcript rendering of long output", () => {
  it("[tui.preview.bounded] a 50,000-line output shows its first 12 lines, then how many lines it leaves out", () => {
    // Some lines are wider than the row: the note counts lines, not the rows they would wrap to.
    const lines = Array.from({ length: 50_000 }, (_, i) => `line ${i + 1}: ${"x".repeat(i % 150)}`);
    const rows = text(renderItem(shell(`${lines.join("\n")}\n`), 80));
    expect(rows).toEqual(["! cat big.log  exit 0", ...lines.slice(0, OUTPUT_PREVIEW_LINES), "… 49988 more lines"]);
  });

  it("[tui.preview.bounded] one 5 MB line shows its first 12 rows and counts as one more line", () => {
    const line = '{"k":"v",'.repeat(560_000);
    expect(line.length).toBeGreaterThan(5_000_000);
    const rows = text(renderItem(shell(line), 80));
    expect(rows).toEqual(["! cat big.log  exit 0", ...Array.from({ length: OUTPUT_PREVIEW_LINES }, (_, i) => line.slice(i * 80, i * 80 + 80)), "… 1 more line"]);
    // A tool's output is previewed the same way, in the error style when the call failed.
    const tool: Item = { kind: "tool", callId: "call_1", tool: "shell", args: "", status: "error", output: `${line}\nsecond\n`, done: true };
    const toolRows = renderItem(tool, 80);
    expect(text(toolRows).slice(1)).toEqual([...Array.from({ length: OUTPUT_PREVIEW_LINES }, (_, i) => line.slice(i * 80, i * 80 + 80)), "… 2 more lines"]);
    expect(toolRows[1]?.[0]?.style).toBe(DEFAULT_THEME.styles.error);
  });

  it("a short output is shown whole: CR LF is a line break, trailing line breaks are dropped", () => {
    expect(text(renderItem(shell("one\r\ntwo\tx\n\n\n"), 30))).toEqual(["! cat big.log  exit 0", "one", "two     x"]);
    expect(text(renderItem(shell(""), 30))).toEqual(["! cat big.log  exit 0", ""]);
  });

  it("the last rows of an item are the end of its whole rendering", () => {
    const pieces = ["a", " ", "\n", "\r\n", "\t", "字", "e\u0301", "\u0301", "👩‍👩‍👧", "\u001b[2J", "word ", "x".repeat(25)];
    const body = fc.array(fc.constantFrom(...pieces), { maxLength: 60 }).map((a) => a.join(""));
    const item: fc.Arbitrary<Item> = fc.oneof(
      body.map((t) => ({ kind: "user", text: t, done: true }) as const),
      fc.tuple(body, body).map(([t, r]) => ({ kind: "assistant", key: "p#1", text: t, reasoning: r, done: true }) as const),
      fc.tuple(body, fc.constantFrom("info", "warning", "error")).map(([t, level]) => ({ kind: "notice", level, text: t, done: true }) as const),
      body.map((t) => shell(t)),
      body.map((t) => ({ kind: "tool", callId: "call_abc", tool: "read", args: "path=x", status: "ok", output: t, done: true }) as const),
    );
    fc.assert(
      fc.property(item, fc.integer({ min: 1, max: 30 }), fc.integer({ min: 0, max: 20 }), fc.boolean(), (it, width, maxRows, reasoning) => {
        const full = renderItem(it, width, DEFAULT_THEME, reasoning);
        const tail = renderItemTail(it, width, DEFAULT_THEME, reasoning, maxRows);
        expect(tail.rows).toEqual(full.slice(Math.max(0, full.length - maxRows)));
        expect(tail.cut).toBe(full.length > maxRows);
      }),
      { numRuns: 2000 },
    );
  });

  it("the newest rows of a history are whole items within the budget, and nothing older is rendered", () => {
    const notes: Item[] = Array.from({ length: 10 }, (_, i) => ({ kind: "notice", level: "info", text: `note ${i}\nsecond row`, done: true }));
    const whole = newestRows(notes, 0, notes.length, 40, DEFAULT_THEME, false, 5, false);
    expect(text(whole.rows)).toEqual(["note 8", "second row", "note 9", "second row"]);
    expect(whole).toMatchObject({ first: 8, cut: false });
    const filled = newestRows(notes, 0, notes.length, 40, DEFAULT_THEME, false, 5, true);
    expect(text(filled.rows)).toEqual(["second row", "note 8", "second row", "note 9", "second row"]);
    expect(filled).toMatchObject({ first: 7, cut: true });
    // An item that is never reached is never rendered (a getter would throw if it were read).
    const poisoned = [{ get kind(): never { throw new Error("rendered") } } as unknown as Item, ...notes];
    expect(newestRows(poisoned, 0, poisoned.length, 40, DEFAULT_THEME, false, 6, false).first).toBe(8);
  });
});

/** A prompt of agent a-1, as the harness records it. */
const submitted = (text: string) => ({ name: "agent.prompt_submitted" as const, data: { agent_id: "a-1", prompt_id: `p-${text}`, source: "human_ui" as const, mode: "queue" as const, text } });

describe("the transcript in memory", () => {
  it("counts the items that leave it, and takes older ones back before the ones it holds", () => {
    const t = new Transcript();
    for (let i = 0; i < TRANSCRIPT_MAX_ITEMS + 5; i++) t.apply(submitted(`p${i}`));
    const a = t.agent("a-1");
    expect(a.items).toHaveLength(TRANSCRIPT_MAX_ITEMS);
    expect(a.earlier).toBe(5);
    expect(a.items[0]).toMatchObject({ text: "p5" });
    t.prepend("a-1", [{ kind: "user", text: "p4", done: true }]);
    // The transcript is full: older items are not taken.
    expect(a.items[0]).toMatchObject({ text: "p5" });
    expect(a.earlier).toBe(5);
    a.items.splice(0, 3);
    t.prepend("a-1", [
      { kind: "user", text: "p3", done: true },
      { kind: "user", text: "p4", done: true },
    ]);
    expect(a.items.slice(0, 3).map((i) => (i as { text: string }).text)).toEqual(["p3", "p4", "p8"]);
    expect(a.earlier).toBe(3);
  });

  it("finds a tool call's row by its id however many items came after it, and forgets rows that left", () => {
    const t = new Transcript();
    t.apply({ name: "tool.started", data: { agent_id: "a-1", call_id: "call_old", tool: "read", owner: "shell", arguments_json: "{}" } });
    for (let i = 0; i < 100; i++) t.apply(submitted(`p${i}`));
    t.apply({ name: "tool.result", data: { agent_id: "a-1", call_id: "call_old", tool: "read", outcome: "ok", output: "done" } });
    // The outcome is shown at once; the row ends with its display.
    expect(t.agent("a-1").items[0]).toMatchObject({ status: "ok", output: "done", done: false });
    t.apply({ name: "tool.result_display", data: { agent_id: "a-1", call_id: "call_old", tool: "read", outcome: "ok", display: { summary: "done" } } });
    expect(t.agent("a-1").items[0]).toMatchObject({ status: "ok", output: "done", done: true });
    for (let i = 0; i < TRANSCRIPT_MAX_ITEMS; i++) t.apply(submitted(`q${i}`));
    // The row left the transcript: a late result makes a new one rather than changing a lost one.
    t.apply({ name: "tool.result", data: { agent_id: "a-1", call_id: "call_old", tool: "read", outcome: "error", output: "late" } });
    expect(t.agent("a-1").items.at(-1)).toMatchObject({ kind: "tool", callId: "call_old", status: "error", output: "late" });
  });

  it("a tool row ends with its display, whichever of its outcome events comes first, so the diff is never lost", () => {
    for (const order of [
      ["tool.result", "provider.tool_result", "tool.result_display"],
      ["provider.tool_result", "tool.result", "tool.result_display"],
    ]) {
      const t = new Transcript();
      t.apply({ name: "tool.started", data: { agent_id: "a-1", call_id: "c1", tool: "edit", owner: "shell", arguments_json: "{}" } });
      const events = {
        "tool.result": { name: "tool.result", data: { agent_id: "a-1", call_id: "c1", tool: "edit", outcome: "ok", output: "edited" } },
        "provider.tool_result": { name: "provider.tool_result", data: { agent_id: "a-1", prompt_id: "p", call_id: "c1", tool: "edit", output: "edited" } },
        "tool.result_display": { name: "tool.result_display", data: { agent_id: "a-1", call_id: "c1", tool: "edit", outcome: "ok", display: { summary: "done", diff: "-a\n+b\n" } } },
      } as const;
      for (const name of order.slice(0, 2)) {
        t.apply(events[name as keyof typeof events]);
        expect(t.agent("a-1").items[0]).toMatchObject({ status: "ok", done: false });
      }
      // Progress after the outcome is not shown (the call is over).
      expect(t.apply({ name: "tool.progress", data: { agent_id: "a-1", call_id: "c1", text: "late" } })).toBe(false);
      t.apply(events["tool.result_display"]);
      expect(t.agent("a-1").items[0]).toMatchObject({ status: "ok", done: true, diff: "-a\n+b\n" });
    }
  });

  it("a cancel closes the streams and the rows of calls never requested; a requested call's row waits for its display", () => {
    const t = new Transcript();
    t.apply({ name: "provider.response_updated", data: { agent_id: "a-1", prompt_id: "p", round: 1, text_delta: "partial", reasoning_delta: "" } });
    t.apply({ name: "tool.started", data: { agent_id: "a-1", call_id: "c1", tool: "read", owner: "shell", arguments_json: "{}" } });
    t.apply({ name: "tool.started", data: { agent_id: "a-1", call_id: "c2", tool: "read", owner: "shell", arguments_json: "{}" } });
    t.apply({ name: "tool.result", data: { agent_id: "a-1", call_id: "c2", tool: "read", outcome: "ok", output: "x" } });
    // Named by a response (its tool call cut short by the output limit), never requested.
    t.apply({
      name: "provider.response_finished",
      data: { agent_id: "a-1", prompt_id: "p", round: 2, model: "m", text: "", tool_calls: [{ call_id: "c3", tool: "read", arguments_json: "{}" }], finish_reason: "length" },
    });
    t.apply({ name: "agent.prompt_cancelled", data: { agent_id: "a-1", prompt_id: "p" } });
    t.apply({ name: "agent.outer_turn_finished", data: { agent_id: "a-1", prompt_id: "p", outcome: "cancelled", rounds: 3 } });
    const [answer, c1, c2, , c3] = t.agent("a-1").items;
    expect(answer).toMatchObject({ kind: "assistant", text: "partial", done: true });
    expect(c3).toMatchObject({ status: "cancelled", done: true });
    expect(c1).toMatchObject({ status: "running", done: false });
    // A call with its outcome ends with the turn, display or not (an older journal has none), so it
    // never holds the rows after it in view.
    expect(c2).toMatchObject({ status: "ok", done: true });
    // The cancelled call's outcome may be `ok` after all: its display says so.
    t.apply({ name: "tool.result_display", data: { agent_id: "a-1", call_id: "c1", tool: "read", outcome: "ok", display: { summary: "done" } } });
    expect(c1).toMatchObject({ status: "ok", done: true });
    // A turn a resume closes after the session stopped: no outcome is coming.
    t.apply({ name: "tool.started", data: { agent_id: "a-1", call_id: "c4", tool: "read", owner: "shell", arguments_json: "{}" } });
    t.apply({ name: "agent.prompt_cancelled", data: { agent_id: "a-1", prompt_id: "q" } });
    expect(t.agent("a-1").items.find((i) => i.kind === "tool" && i.callId === "c4")).toMatchObject({ status: "running", done: false });
    t.apply({ name: "agent.outer_turn_finished", data: { agent_id: "a-1", prompt_id: "q", outcome: "dispatch_uncertain", rounds: 1 } });
    expect(t.agent("a-1").items.find((i) => i.kind === "tool" && i.callId === "c4")).toMatchObject({ status: "cancelled", done: true });
  });

  it.each([
    ["failure", { name: "provider.response_failed", data: { agent_id: "a-1", prompt_id: "p", round: 0, error_class: "network", diagnostic: "the connection was reset", shown_text: "half an ans", shown_reasoning: "hmm" } }],
    ["cancel", { name: "agent.prompt_cancelled", data: { agent_id: "a-1", prompt_id: "p", round: 0, shown_text: "half an ans", shown_reasoning: "hmm" } }],
  ] as const)("a %s's shown answer makes the answer an attached UI did not see stream, and matches the one it did", (_kind, ended) => {
    const live = new Transcript();
    live.apply({ name: "provider.response_updated", data: { agent_id: "a-1", prompt_id: "p", round: 0, text_delta: "half an ans", reasoning_delta: "hmm" } });
    live.apply(ended);
    const replayed = new Transcript();
    replayed.apply(ended);
    expect(replayed.agent("a-1").items).toEqual(live.agent("a-1").items);
    expect(replayed.agent("a-1").items[0]).toMatchObject({ kind: "assistant", text: "half an ans", reasoning: "hmm", done: true });
    expect(replayed.agent("a-1").items[1]).toMatchObject({ kind: "notice" });
  });
});

describe("compaction and alerts in the transcript", () => {
  it("shows a context-size alert as a harness notice, never as the user's prompt, and the compaction's steps", () => {
    const t = new Transcript();
    const agent_id = "a1";
    t.apply({ name: "agent.started", data: { agent_id, session_id: "s1", creator: "ui", cwd: "/p", ephemeral: false } });
    t.apply({ name: "agent.prompt_submitted", data: { agent_id, prompt_id: "p1", source: "harness_internal", mode: "steer", text: "context is full", internal_kind: "context_size_alert", alert: "high" } });
    t.apply({ name: "agent.compaction_started", data: { agent_id, compaction_id: "c1", cut_seq: 3, trigger: "auto", model: "m" } });
    t.apply({ name: "agent.compaction_failed", data: { agent_id, compaction_id: "c1", watermark: 3, reason: "boom" } });
    const items = t.agent(agent_id).items;
    expect(items.map((i) => i.kind)).toEqual(["notice", "notice", "notice"]);
    expect(items.map((i) => ("text" in i ? i.text : ""))).toEqual([
      "context-size alert high: context is full",
      "compacting the conversation (auto)…",
      "compaction failed, the conversation is unchanged: boom",
    ]);
  });
});

describe("the agent tools' answers on screen", () => {
  it("[tui.agents.results-readable] agent_wait's frames and agent_start's JSON are shown as words; a body cannot end its frame; other tools' output is untouched", () => {
    const answer = [
      exactCloseFrame("agent_result", { agent: "a-1", name: 'help"er', outcome: "completed" }, "the report\nends </agent_result> here"),
      exactCloseFrame("agent_result", { agent: "a-2", outcome: "running" }, "(still working)"),
    ].join("\n");
    expect(shownOutput("agent_wait", answer)).toBe("help\\u{22}er [a-1] completed:\nthe report\nends </ agent_result> here\n[a-2] running:\n(still working)");
    expect(shownOutput("agent_start", JSON.stringify({ agent_id: "a-9", role: "reviewer", status: "started" }))).toBe("started a-9 (role reviewer)");
    expect(shownOutput("agent_start", JSON.stringify({ agent_id: "a-9", status: "started" }))).toBe("started a-9");
    expect(shownOutput("agent_start", "not json")).toBe("not json");
    expect(shownOutput("agent_wait", "the wait ended")).toBe("the wait ended");
    expect(shownOutput("read", answer)).toBe(answer);
  });
});

describe("extension notices in the transcript", () => {
  it("shows an extension's notice as a session notice naming the extension; a debug one is not shown", () => {
    const t = new Transcript();
    expect(t.apply({ name: "extension.notice", data: { instance: "gmail", level: "info", text: "signed in as someone@example.com" } })).toBe(true);
    expect(t.apply({ name: "extension.notice", data: { instance: "gmail", level: "debug", text: "token refreshed" } })).toBe(false);
    expect(t.notices).toEqual([{ kind: "notice", level: "info", text: "gmail: signed in as someone@example.com", done: true }]);
  });
});
