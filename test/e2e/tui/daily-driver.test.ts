// What a new user trips on in the first hour (issue 40), seen through a real terminal emulator.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { spawnTau, type PtyTau } from "../../support/pty.js";
import { textResponse, toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(): Workspace {
  const w = workspaceIn(cleanups);
  writeFileSync(join(w.home, "config", "sandbox.yaml"), "enabled: false\n");
  return { ...w, env: { ...process.env, ...w.env, TERM: "xterm-256color", OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "fake-model" } };
}

function start(w: Workspace): PtyTau {
  const t = spawnTau([], { env: w.env, cwd: w.project, cols: 120, rows: 30 });
  cleanups.push(() => t.kill());
  return t;
}

const has = (text: string) => (screen: string[]) => screen.some((l) => l.includes(text));
const seen = (text: string) => (_screen: string[], all: string[]) => all.some((l) => l.includes(text));

/** The cell `at` columns into the last row showing `text`. */
function cell(t: PtyTau, text: string, at = 0) {
  const b = t.term.buffer.active;
  for (let y = b.length - 1; y >= 0; y--) {
    const x = (b.getLine(y)?.translateToString(true) ?? "").indexOf(text);
    if (x >= 0) return b.getLine(y)?.getCell(x + at);
  }
  throw new Error(`${text} is not in the terminal`);
}

describe("the daily driver", () => {
  it("[tui.daily.failed-command-row] a command that exits non-zero shows as `shell error` in red, never `shell ok` in green", async () => {
    const w = workspace();
    const t = start(w);
    await t.waitFor(has(" · ready"), "ready");
    fake.enqueue(toolCallResponse([{ id: "call_fail_1", name: "shell", arguments: JSON.stringify({ command: "exit 56" }) }]), textResponse("It failed."));
    t.type("go\r");
    await t.waitFor(seen("It failed."), "the answer");
    await t.waitFor(has(" · ready"), "ready");
    expect(t.all().some((l) => l.startsWith("shell ok"))).toBe(false);
    expect(t.all()).toContain("shell error  exit 56");
    // Palette index 1 is red.
    expect(cell(t, "shell error", 6)?.getFgColor()).toBe(1);
    expect(t.all().some((l) => l.includes("[exit code 56]"))).toBe(true);
  });

  it("[tui.daily.slash-commands] `/help` and `/model` run as `:help` and `:model` do, `//text` sends the literal `/text`, an unknown `/word` is sent unchanged", async () => {
    const w = workspace();
    const t = start(w);
    await t.waitFor(has(" · ready"), "ready");
    const before = fake.requests.length;
    t.type("/help\r");
    await t.waitFor(seen("/COMMAND — the same as :COMMAND"), ":help's text");
    t.type("/model\r");
    await t.waitFor(seen("models: provider/fake-model"), ":model's list");
    fake.enqueue(textResponse("first answer"), textResponse("second answer"));
    t.type("//help is a path\r");
    await t.waitFor(seen("first answer"), "the first answer");
    await t.waitFor(has(" · ready"), "ready");
    t.type("/frobnicate the plan\r");
    await t.waitFor(seen("second answer"), "the second answer");
    await t.waitFor(has(" · ready"), "ready");
    const sent = fake.requests.slice(before).filter((r) => r.path.endsWith("/chat/completions"));
    expect(sent).toHaveLength(2);
    const last = (i: number) => {
      const messages = (sent[i]?.body as { messages: Array<{ role: string; content: string }> }).messages;
      return messages.filter((m) => m.role === "user").at(-1)?.content;
    };
    expect(last(0)).toBe("<user>\n/help is a path\n</user>");
    expect(last(1)).toBe("<user>\n/frobnicate the plan\n</user>");
  });

  it("[tui.daily.live-output-once] a running command's live output shows each line once (1 2 3, never 1 / 1 2 / 1 2 3), for a tool call and a `!` command", async () => {
    const w = workspace();
    const t = start(w);
    await t.waitFor(has(" · ready"), "ready");
    const command = "for i in 1 2 3 4; do echo line-$i; sleep 0.4; done; sleep 2";
    fake.enqueue(toolCallResponse([{ id: "call_live_1", name: "shell", arguments: JSON.stringify({ command }) }]), textResponse("Counted."));
    t.type("count\r");
    await t.waitFor(has("line-4"), "the live output's fourth line while the command runs");
    const running = t.screen();
    expect(running.some((l) => l.startsWith("shell running "))).toBe(true);
    for (const n of [1, 2, 3, 4]) expect(running.filter((l) => l === `line-${n}`), running.join("\n")).toHaveLength(1);
    await t.waitFor(seen("Counted."), "the answer");
    await t.waitFor(has(" · ready"), "ready");
    t.type("!for i in 1 2 3 4; do echo bang-$i; sleep 0.4; done; sleep 2\r");
    await t.waitFor(has("bang-4"), "the `!` command's fourth line while it runs");
    const bang = t.screen();
    for (const n of [1, 2, 3, 4]) expect(bang.filter((l) => l === `bang-${n}`), bang.join("\n")).toHaveLength(1);
  });
  it("[tui.paste.collapsed] a 300-line paste is one placeholder in the editor, reaches the model whole, and takes a few rows of the scrollback", async () => {
    const w = workspace();
    fake.enqueue(textResponse("got them all"));
    const t = start(w);
    await t.waitFor(has(" · ready"), "the session to be ready");
    const file = Array.from({ length: 300 }, (_, i) => `line ${i + 1}`).join("\n");
    t.type("summarize ");
    t.type(`\x1b[200~${file}\x1b[201~`);
    await t.waitFor(has("summarize [Pasted text #1 +300 lines]"), "the placeholder");
    t.type("\r");
    await t.waitFor(seen("got them all"), "the answer");
    const sent = (fake.chatRequests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> }).messages.filter((m) => m.role === "user").map((m) => JSON.stringify(m.content));
    expect(sent.some((c) => c.includes("summarize line 1\\nline 2") && c.includes("line 300"))).toBe(true);
    // The scrollback shows the prompt's first lines and how many more there were.
    await t.waitFor(seen("… 292 more lines"), "the collapsed prompt");
    expect(t.all().some((l) => l.includes("line 9"))).toBe(false);
    t.kill();
  });
  it("[tui.new.usage-reset] after :new the status line counts the new session's tokens only", async () => {
    const w = workspace();
    fake.enqueue(textResponse("first", { usage: { prompt_tokens: 1234, completion_tokens: 56 } }));
    const t = start(w);
    await t.waitFor(has(" · ready"), "the session to be ready");
    t.type("hello\r");
    await t.waitFor(has("↑1234 ↓56"), "the first session's usage");
    t.type(":new\r");
    await t.waitFor((_s, all) => all.filter((l) => l.startsWith("session s-")).length === 2, "a second session");
    await t.waitFor(has(" · ready"), "the new session ready");
    expect(t.screen().some((l) => l.includes("↑1234"))).toBe(false);
    fake.enqueue(textResponse("second", { usage: { prompt_tokens: 7, completion_tokens: 3 } }));
    t.type("again\r");
    await t.waitFor(has("↑7 ↓3"), "the new session's usage alone");
    t.kill();
  });
});
