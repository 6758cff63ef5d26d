// The interactive UI a user works in, through the real `tau` in a pseudo-terminal read by a real
// terminal emulator: markdown answers, tools in view (live output, timer, Ctrl-O), Esc, the empty
// prompt's hint and the status line (GATE-tui-experience).
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { has, quitTau, ready, seen, startTau, tuiWorkspace, type PtyTau } from "../../support/pty.js";
import { waitFor } from "../../support/wait.js";
import { FakeOpenAI, jsonResponse, textResponse, toolCallResponse } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(harnessYaml?: string): Workspace {
  const w = harnessYaml === undefined ? workspaceIn(cleanups) : workspaceIn(cleanups, harnessYaml);
  return tuiWorkspace(w, fake);
}

const start = (w: Workspace, args: string[] = [], size: { cols?: number; rows?: number } = {}): PtyTau => startTau(cleanups, w, args, size);

/** The emulator's cell at the first occurrence of `text` (scrollback included). */
function cellOf(t: PtyTau, text: string) {
  const b = t.term.buffer.active;
  for (let y = 0; y < b.length; y++) {
    const line = b.getLine(y)?.translateToString(true) ?? "";
    const x = line.indexOf(text);
    if (x >= 0) return b.getLine(y)?.getCell(x);
  }
  throw new Error(`${text} is not in the terminal`);
}

const ANSWER = [
  "## Summary\n\n",
  "The fix is **small** and *safe*; see ",
  "[the docs](https://example.com/docs).\n\n",
  "- first point\n- second point\n\n",
  "```ts\nconst limit: number = 42;\n```\n\n",
  "| option | default |\n|---|---:|\n| retries | 3 |\n| timeout | 30 |\n\n",
  "Done.",
];

describe("the interactive UI a user works in", () => {
  it("[tui.pty.markdown] a streamed markdown answer is drawn styled, with no markup left", async () => {
    const w = workspace();
    fake.enqueue(textResponse(ANSWER, { delayMs: 40 }));
    const t = start(w, [], { cols: 80, rows: 40 });
    await t.waitFor(ready, "ready");
    t.type("explain\r");
    await t.waitFor(has("Done."), "the answer");
    await t.waitFor(ready, "the turn to finish");
    const all = t.all();
    const text = all.join("\n");
    for (const raw of ["**", "## ", "```", "](", "|---"]) expect(text, raw).not.toContain(raw);
    expect(all).toContain("Summary");
    expect(cellOf(t, "Summary")?.isBold()).toBeTruthy();
    expect(cellOf(t, "small")?.isBold()).toBeTruthy();
    expect(cellOf(t, "safe")?.isItalic()).toBeTruthy();
    expect(text).toContain("the docs (https://example.com/docs)");
    expect(all).toEqual(expect.arrayContaining(["• first point", "• second point", "  const limit: number = 42;", "option  │ default", "retries │       3"]));
    // Highlighted code: the keyword and the number in the theme's colours (magenta 5, yellow 3).
    expect(cellOf(t, "const limit")?.getFgColor()).toBe(5);
    expect(cellOf(t, "42;")?.getFgColor()).toBe(3);
    // Each row of the answer was written once: the streamed rows were not written again when it ended.
    expect(all.filter((l) => l === "• first point")).toHaveLength(1);
    expect(await quitTau(t)).toBe(0);
  });

  it("[tui.pty.tool-live] a slow tool shows its live output and a timer; Ctrl-O shows all of it; a blank row sets the answer apart", async () => {
    const w = workspace();
    const command = "seq 1 20; for i in 1 2 3; do echo tick-$i; sleep 1; done";
    fake.enqueue(toolCallResponse([{ id: "call_slow_1", name: "shell", arguments: JSON.stringify({ command }) }]), textResponse("all ticks seen"));
    const t = start(w, [], { cols: 100, rows: 40 });
    await t.waitFor(ready, "ready");
    t.type("tick\r");
    // Running: the command (not an id, not JSON), its elapsed time, and the tail of its output.
    await t.waitFor(has("tick-1"), "live output while the tool runs");
    const row = () => t.screen().find((l) => l.startsWith("shell running ")) ?? "";
    expect(row()).toMatch(/^shell running \d+s {2}seq 1 20; for i in 1 2 3; do echo tick-\$i; sleep 1; done$/);
    expect(t.screen()).toContain("… earlier output not shown");
    expect(t.screen()).not.toContain("1");
    await t.waitFor(() => /^shell running [2-9]s/.test(row()), "the timer to count up");
    // Ctrl-O while it runs: all of its output so far; again: back to the tail.
    t.type("\x0f");
    await t.waitFor((s) => s.includes("1") && s.includes("20") && !s.includes("… earlier output not shown"), "the whole output");
    t.type("\x0f");
    await t.waitFor(has("… earlier output not shown"), "the tail again");
    await t.waitFor(seen("all ticks seen"), "the answer", 30_000);
    await t.waitFor(ready, "the turn to finish");
    const all = t.all();
    const header = all.indexOf(`shell ok  ${command}`);
    expect(header, all.join("\n")).toBeGreaterThanOrEqual(0);
    expect(all.slice(header + 1, header + 14)).toEqual([...Array.from({ length: 12 }, (_, i) => String(i + 1)), "… 12 more lines"]);
    // A blank row between the tool's output and the answer.
    const answer = all.indexOf("all ticks seen");
    expect(all[answer - 1]).toBe("");
    expect(all[answer - 2]).toBe("… 12 more lines");
    // Ctrl-O after it finished: its whole output is written below.
    t.type("\x0f");
    await t.waitFor(seen("tick-3"), "the whole output written below");
    const after = t.all();
    expect(after.filter((l) => l === `shell ok  ${command}`)).toHaveLength(2);
    expect(after.slice(after.lastIndexOf(`shell ok  ${command}`) + 1).slice(0, 23)).toEqual([...Array.from({ length: 20 }, (_, i) => String(i + 1)), "tick-1", "tick-2", "tick-3"]);
    expect(await quitTau(t)).toBe(0);
  });

  it("[tui.pty.esc-interrupts] Esc interrupts the running turn; Ctrl-C still clears the prompt; the empty prompt says how to get help", async () => {
    const w = workspace();
    const t = start(w, [], { cols: 90, rows: 24 });
    await t.waitFor(ready, "ready");
    expect(t.screen()).toContain("› type a prompt · :help for commands · Esc interrupts");
    const before = fake.requests.length;
    fake.enqueue(textResponse(["slow ", "answer ", "never ", "finishes"], { delayMs: 1500 }));
    t.type("take your time\r");
    await t.waitFor(has("working…"), "the agent at work");
    await waitFor(() => fake.requests.slice(before).some((r) => r.path.endsWith("/chat/completions")), "the request to reach the model");
    t.type("\x1b");
    await t.waitFor(seen("the prompt was cancelled"), "the cancellation");
    await t.waitFor(ready, "ready again");
    // Ctrl-C keeps its meaning: it clears typed text, and the hint comes back.
    t.type("draft");
    await t.waitFor((s) => s.includes("› draft"), "the typed draft");
    t.type("\x03");
    await t.waitFor(has("› type a prompt"), "the cleared prompt");
    // Esc with nothing running changes nothing.
    t.type("\x1b");
    // A key within 30 ms of a lone ESC would make it an Alt chord, as in any terminal.
    // timing-under-test: the pause that makes the ESC a key of its own
    await new Promise((r) => setTimeout(r, 150));
    t.type("x");
    await t.waitFor((s) => s.includes("› x"), "the editor still takes keys");
    t.type("\x15");
    expect(await quitTau(t)).toBe(0);
  });

  it("[tui.pty.esc-keeps-tool-output] Esc during a running command keeps what it printed, under a row that says it was cancelled", async () => {
    const w = workspace();
    const command = "echo partial-one; echo partial-two; sleep 30; echo never-printed";
    fake.enqueue(toolCallResponse([{ id: "call_cut_1", name: "shell", arguments: JSON.stringify({ command }) }]));
    const t = start(w, [], { cols: 100, rows: 30 });
    await t.waitFor(ready, "ready");
    t.type("run it\r");
    // Its output, not its command line (which names the same words).
    await t.waitFor((s) => s.includes("partial-two"), "live output while the command runs");
    t.type("\x1b");
    await t.waitFor(seen("the prompt was cancelled"), "the cancellation");
    const header = () => t.all().findIndex((l) => l.startsWith("shell cancelled") && l.includes("echo partial-one"));
    await t.waitFor(() => header() >= 0, "the command's row to say it was cancelled");
    await t.waitFor(ready, "ready again");
    const all = t.all();
    expect(all.slice(header() + 1, header() + 3)).toEqual(["partial-one", "partial-two"]);
    expect(all[header() + 3]).toBe("[cancelled; the command's process group was killed]");
    expect(all).not.toContain("never-printed");
    expect(await quitTau(t)).toBe(0);
  });

  it("[tui.pty.key-refused] a refused key is said before the first prompt, and the status line marks the model until it answers again", async () => {
    const w = workspace();
    const refused = () => jsonResponse(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } });
    fake.setModels(refused());
    const t = start(w, [], { cols: 120, rows: 24 });
    await t.waitFor(ready, "ready");
    const base = new URL(fake.baseUrl);
    const where = `${base.origin}${base.pathname.replace(/\/+$/, "")}`;
    await t.waitFor((_s, all) => all.some((l) => l.includes(`${where} refused the API key (HTTP 401)`)), "the start-up warning");
    const status = () => t.screen().find((l) => l.startsWith("tau · ")) ?? "";
    expect(status()).not.toContain("⚠");
    fake.enqueue(refused());
    t.type("hello\r");
    await t.waitFor(seen("the model request failed"), "the failed prompt");
    await t.waitFor(() => /· fake-model · ⚠ key refused · ready/.test(status()), "the model marked in the status line");
    // The key fixed (the server takes it now): the next answer clears the mark.
    fake.enqueue(textResponse("fine now"));
    t.type("again\r");
    await t.waitFor(seen("fine now"), "the answer");
    await t.waitFor(() => /· fake-model · ready$/.test(status()), "the mark gone");
    expect(await quitTau(t)).toBe(0);
  });

  it("[tui.pty.status-model] the status line shows the model before the first prompt, usage after a resume, and fits 40 columns", async () => {
    const w = workspace();
    const t = start(w, [], { cols: 100, rows: 20 });
    await t.waitFor(ready, "ready");
    const status = () => t.screen().find((l) => l.startsWith("tau · ")) ?? "";
    // No prompt was sent: the model comes from the session's default.
    expect(status()).toMatch(/^tau · \[a-[^\]]+\] · fake-model · ready$/);
    expect(fake.chatRequests.length).toBe(0);
    t.type(":agent name reviewer\r");
    await t.waitFor(() => /^tau · reviewer \[a-[^\]]+\] · fake-model · ready$/.test(status()), "the name before the id");
    fake.enqueue(textResponse("counted", { usage: { prompt_tokens: 1200, completion_tokens: 34, total_tokens: 1234 } }));
    t.type("count\r");
    await t.waitFor(has("↑1200 ↓34"), "the usage");
    await t.waitFor(ready, "the turn to finish");
    // At 40 columns the state and the model stay; the line never overflows.
    t.resize(40, 20);
    await t.waitFor((s) => s.some((l) => l.includes("ready") && l.includes("fake-model")), "the status at 40 columns");
    for (const l of t.screen()) expect(l.length).toBeLessThanOrEqual(40);
    const sessionId = (t.all().find((l) => l.startsWith("session s-")) as string).slice("session ".length);
    expect(await quitTau(t)).toBe(0);
    // Resumed: the usage so far is shown before any new prompt.
    const r = start(w, ["resume", sessionId], { cols: 100, rows: 20 });
    await r.waitFor(ready, "the resumed session ready");
    await r.waitFor(has("↑1200 ↓34"), "the usage after the resume");
    expect(r.screen().find((l) => l.startsWith("tau · "))).toMatch(/^tau · reviewer \[a-[^\]]+\] · fake-model · ready · ↑1200 ↓34$/);
    expect(await quitTau(r)).toBe(0);
  });
});
