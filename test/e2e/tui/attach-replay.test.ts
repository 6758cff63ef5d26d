// What the live UI showed of a session's tool calls, `tau attach` and `tau resume` show again, in the
// real `tau` in a pseudo-terminal read by a real terminal emulator (GATE-faithful-replay): a shell
// call that succeeded is `ok` with its output, never `cancelled`, and an edit keeps its diff.
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { has, ready, startTau, tuiWorkspace, type PtyTau } from "../../support/pty.js";
import { waitFor } from "../../support/wait.js";
import { FakeOpenAI, textResponse, toolCallResponse } from "../../support/fake-openai.js";
import { listSessions } from "../../../handwritten/transport/index.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(): Workspace {
  return tuiWorkspace(workspaceIn(cleanups), fake);
}

const COLS = 100;
const ROWS = 40;

const start = (w: Workspace, args: string[] = []): PtyTau => startTau(cleanups, w, args, { cols: COLS, rows: ROWS });

const PROMPT = "run the check and fix the greeting";
const ANSWER = "both steps are done";

/** The rows from the prompt to the answer, as the emulator shows them (scrollback included). */
function turnRows(t: PtyTau): string[] {
  const all = t.all();
  const from = all.findIndex((l) => l === `› ${PROMPT}`);
  const to = all.findIndex((l, i) => i > from && l.includes(ANSWER));
  return from >= 0 && to > from ? all.slice(from, to + 1) : [];
}

/** Both tool rows are complete: the shell call `ok` with its output, the edit `ok` with its diff. */
function complete(rows: string[]): boolean {
  return rows.includes("shell ok  echo attached-ok") && rows.includes("attached-ok") && rows.includes("edit ok  greeting.txt") && rows.includes("+hello tau");
}

/** The emulator's foreground colour of the first cell of the row `text` (scrollback included). */
function colourOf(t: PtyTau, text: string): number | undefined {
  const b = t.term.buffer.active;
  const y = t.all().indexOf(text);
  return y < 0 ? undefined : b.getLine(y)?.getCell(0)?.getFgColor();
}

describe("tool outcomes after an attach and a resume", () => {
  it("[tui.pty.attach-shows-outcomes] a successful shell call and an edit show ok, the output and the diff after tau attach and tau resume, as they did live", async () => {
    const w = workspace();
    writeFileSync(join(w.project, "greeting.txt"), "hello world\nsecond line\n");
    fake.enqueue(
      toolCallResponse([{ id: "call_shell_1", name: "shell", arguments: JSON.stringify({ command: "echo attached-ok" }) }]),
      toolCallResponse([{ id: "call_edit_1", name: "edit", arguments: JSON.stringify({ path: "greeting.txt", edits: [{ old_text: "hello world", new_text: "hello tau" }] }) }]),
      textResponse(ANSWER, { usage: { prompt_tokens: 300, completion_tokens: 12, total_tokens: 312 } }),
    );
    const t = start(w);
    await t.waitFor(ready, "ready");
    t.type(`${PROMPT}\r`);
    await t.waitFor(has(ANSWER), "the answer");
    await t.waitFor(ready, "the turn to finish");
    // The outcome and diff come with each tool's display, which may land after the answer.
    await t.waitFor(() => complete(turnRows(t)), "both tool rows complete live");
    const live = turnRows(t);
    expect(live.some((l) => l.includes("cancelled"))).toBe(false);
    const liveOk = colourOf(t, "+hello tau");
    const sessionId = (t.all().find((l) => l.startsWith("session s-")) as string).slice("session ".length);

    // The UI leaves; the daemon keeps the session running.
    t.type(":detach\r");
    expect((await t.exited).exitCode).toBe(0);
    const runtime = join(w.home, "runtime");
    expect((await listSessions(runtime)).rows.map((r) => r.session_id)).toEqual([sessionId]);

    const a = start(w, ["attach", sessionId]);
    await a.waitFor(ready, "the attached UI ready");
    await a.waitFor(() => complete(turnRows(a)), "the tool rows replayed on attach");
    expect(turnRows(a)).toEqual(live);
    expect(colourOf(a, "+hello tau")).toBe(liveOk);
    expect(a.screen().some((l) => l.includes("↑300 ↓12"))).toBe(true);

    // The session ends; resumed in a new daemon, it is replayed from the journals alone.
    a.type(":quit-session\r");
    expect((await a.exited).exitCode).toBe(0);
    await waitFor(async () => (await listSessions(runtime)).rows.length === 0, "the ended session to leave the listing", { pollMs: 50 });
    const r = start(w, ["resume", sessionId]);
    await r.waitFor(ready, "the resumed UI ready");
    await r.waitFor(() => complete(turnRows(r)), "the tool rows replayed on resume");
    expect(turnRows(r)).toEqual(live);
    expect(colourOf(r, "+hello tau")).toBe(liveOk);
    r.type(":quit\r");
    expect((await r.exited).exitCode).toBe(0);
  });
});
