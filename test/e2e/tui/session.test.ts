// The real `tau` interactive UI in a pseudo-terminal, read by a real terminal emulator, against a
// loopback OpenAI-compatible server: what the user sees, and what reaches the model and the journals.
import { describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { emulate, has, quitTau, ready, seen, startTau, tuiWorkspace, type PtyTau } from "../../support/pty.js";
import { waitFor } from "../../support/wait.js";
import { HOSTILE } from "../../support/hostile.js";
import { FakeOpenAI, textResponse, toolCallResponse } from "../../support/fake-openai.js";
import { openPromptHistory, replayJournal, validateJournalRecord, type JournalRecord } from "../../../handwritten/store/index.js";
import { listSessions } from "../../../handwritten/transport/index.js";

// One loopback server per test, so a failing test cannot leave scripted answers for the next.
let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(): Workspace {
  return tuiWorkspace(workspaceIn(cleanups), fake);
}

const start = (w: Workspace, args: string[] = [], size: { cols?: number; rows?: number } = {}): PtyTau => startTau(cleanups, w, args, size);

/** Every agent journal of a workspace, read strictly. */
function agentJournals(home: string): Array<Array<{ name: string; data: Record<string, unknown> }>> {
  const agents = join(home, "state", "agents");
  return readdirSync(agents).map((id) => replayJournal<JournalRecord>(join(agents, id, "events.cbor"), { validate: validateJournalRecord }).records.map((r) => ({ name: r.event.name, data: r.event.data })));
}

/** The column where `marker` is drawn on the emulator row containing it. */
function columnOf(t: PtyTau, marker: string): { row: number; col: number } {
  const b = t.term.buffer.active;
  for (let y = 0; y < b.length; y++) {
    const line = b.getLine(y);
    if (!line) continue;
    for (let x = 0; x < t.term.cols; x++) if (line.getCell(x)?.getChars() === marker) return { row: y, col: x };
  }
  throw new Error(`${marker} is not on the screen`);
}

describe("tau interactive UI in a pseudo-terminal", () => {
  it("[tui.pty.session] starts, takes a prompt, shows the tool row and the streamed answer, and quits cleanly", async () => {
    const w = workspace();
    writeFileSync(join(w.project, "notes.txt"), "remember the milk\n");
    const requestsBefore = fake.chatRequests.length;
    fake.enqueue(
      toolCallResponse([{ id: "call_read_1", name: "read", arguments: ['{"path":', '"notes.txt"}'] }]),
      textResponse(["The notes ", "say: remember ", "the milk."], { delayMs: 30, usage: { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129 } }),
    );
    w.env.TAU_UI_TRACE = "1";
    const t = start(w, [], { cols: 70, rows: 20 });
    await t.waitFor((s) => s.some((l) => l.startsWith("› ")), "the prompt");
    await t.waitFor(ready, "the session to be ready");
    t.type("what do my notes say?\r");
    await t.waitFor(has("the milk."), "the streamed answer");
    await t.waitFor(ready, "the turn to finish");
    const screen = t.screen();
    expect(screen.some((l) => l.startsWith("› what do my notes say?"))).toBe(true);
    expect(screen.some((l) => /^read ok {2}notes\.txt$/.test(l)), screen.join("\n")).toBe(true);
    expect(screen.some((l) => l.includes("The notes say: remember the milk."))).toBe(true);
    expect(screen.some((l) => l.includes("fake-model") && l.includes("↑120 ↓9"))).toBe(true);
    expect(fake.chatRequests.length - requestsBefore).toBe(2);
    expect(await quitTau(t)).toBe(0);
    // The live region is erased on exit; the transcript stays.
    expect(t.screen().some((l) => l.includes(" · ready"))).toBe(false);
    expect(t.all().some((l) => l.includes("The notes say: remember the milk."))).toBe(true);
    // Progress diagnostics went to their file, with stage names and durations but no bodies.
    const diagnostics = readFileSync(join(w.home, "state", "ui-diagnostics.jsonl"), "utf8");
    expect(diagnostics).toContain('"component":"renderer"');
    expect(diagnostics).not.toMatch(/milk|notes/);
    // The session is durable: the agent journal holds the prompt and the answer.
    const [journal] = agentJournals(w.home);
    expect(journal?.map((r) => r.name)).toEqual(expect.arrayContaining(["agent.prompt_submitted", "provider.response_finished", "agent.outer_turn_finished"]));
  });

  it("shows an edit's diff inline under its tool row", async () => {
    const w = workspace();
    writeFileSync(join(w.project, "greeting.txt"), "hello world\nsecond line\n");
    fake.enqueue(
      toolCallResponse([{ id: "call_edit_01", name: "edit", arguments: JSON.stringify({ path: "greeting.txt", edits: [{ old_text: "hello world", new_text: "hello tau" }] }) }]),
      textResponse("edited"),
    );
    const t = start(w, [], { cols: 80, rows: 24 });
    await t.waitFor(ready, "ready");
    t.type("change it\r");
    await t.waitFor(has("edited"), "the answer");
    // The outcome and diff come with the tool's display, which may land after the answer on a busy machine.
    await t.waitFor((_s, all) => all.includes("edit ok  greeting.txt") && all.includes("+hello tau"), "the edit's outcome and diff");
    const all = t.all();
    const header = all.findIndex((l) => l === "edit ok  greeting.txt");
    expect(header, all.join("\n")).toBeGreaterThanOrEqual(0);
    const body = all.slice(header + 1, header + 12);
    expect(body).toContain("-hello world");
    expect(body).toContain("+hello tau");
    // The diff is styled: added lines green, removed lines red (SGR from the theme, not from the text).
    const b = t.term.buffer.active;
    const added = all.indexOf("+hello tau");
    expect(b.getLine(added)?.getCell(0)?.getFgColor()).toBe(2);
    expect(await quitTau(t)).toBe(0);
  });

  it("drives agents, models, cancellation, multi-line prompts and new sessions from the keyboard", async () => {
    const w = workspace();
    const t = start(w, [], { cols: 90, rows: 30 });
    await t.waitFor(ready, "ready");
    t.type(":agent new helper\r");
    await t.waitFor(has("helper [a-"), "the new agent in the status line");
    t.type(":agent name reviewer\r");
    await t.waitFor(has("reviewer [a-"), "the renamed agent");
    t.type(":agent list\r");
    await t.waitFor(seen("* reviewer [a-"), "the focused agent marked in the list");
    t.type(":model provider/fake-model\r");
    await t.waitFor(has("provider/fake-model"), "the selected model");
    // Alt-Enter adds a line; both lines reach the model as one prompt. The slow answer is cancelled.
    const before = fake.requests.length;
    fake.enqueue(textResponse(["slow ", "answer ", "never ", "finishes"], { delayMs: 1500 }));
    t.type("first line\x1b\rsecond line\r");
    await t.waitFor(has("working…"), "the agent at work");
    // Cancelled once its request has reached the model (a cancel before that would send nothing).
    const request = () => fake.requests.slice(before).find((r) => r.path.endsWith("/chat/completions"));
    await waitFor(() => request() !== undefined, "the prompt's request to reach the model");
    t.type(":cancel\r");
    await t.waitFor(seen("the prompt was cancelled"), "the cancellation");
    await t.waitFor(ready, "ready again");
    expect(request()?.rawBody ?? "").toContain("first line\\nsecond line");
    // Ctrl-R finds the multi-line prompt in history.
    t.type("\x12second");
    await t.waitFor(has("(history search) second: first line␊second line"), "the history search");
    t.type("\x07");
    // :new leaves this session for a fresh one.
    const first = t.all().find((l) => l.startsWith("session s-")) as string;
    t.type(":new\r");
    await t.waitFor((_s, all) => all.filter((l) => l.startsWith("session s-")).length === 2, "a second session");
    expect(t.all().filter((l) => l.startsWith("session s-"))[1]).not.toBe(first);
    await t.waitFor(ready, "the new session ready");
    expect(await quitTau(t)).toBe(0);
  });

  it(":theme loads structured themes from the config root and refuses escape bytes; :set changes terminal settings", async () => {
    const w = workspace();
    mkdirSync(join(w.home, "config", "themes"));
    writeFileSync(join(w.home, "config", "themes", "calm.yaml"), "name: calm\nstyles:\n  status: { fg: blue, inverse: true }\n");
    writeFileSync(join(w.home, "config", "themes", "evil.yaml"), 'name: evil\nstyles:\n  status: { fg: "\\e[5m" }\n');
    const t = start(w, [], { cols: 100, rows: 30 });
    await t.waitFor(ready, "ready");
    t.type(":theme\r");
    await t.waitFor(seen("themes: default, calm, evil (current: default)"), "the theme list");
    t.type(":theme evil\r");
    await t.waitFor(seen("evil.yaml"), "the refusal naming the file");
    expect(t.all().join("\n")).toMatch(/evil\.yaml.*styles\.status\.fg/);
    t.type(":theme calm\r");
    await t.waitFor(seen("theme calm"), "the switch");
    const b = t.term.buffer.active;
    const statusY = [...Array(t.term.rows).keys()].find((y) => b.getLine(b.viewportY + y)?.getCell(0)?.isInverse());
    expect(b.getLine(b.viewportY + (statusY as number))?.getCell(0)?.getFgColor()).toBe(4);
    t.type(":set mode queue\r");
    await t.waitFor(seen("mode queue"), "the setting");
    t.type(":set colour red\r");
    await t.waitFor(seen("cannot set colour to red"), "the refusal");
    expect(await quitTau(t)).toBe(0);
  });

  it("[tui.pty.resize] redraws the finished rows and the live region at the new width", async () => {
    const w = workspace();
    fake.enqueue(textResponse("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu"));
    const t = start(w, [], { cols: 80, rows: 16 });
    await t.waitFor(ready, "ready");
    t.type("greek\r");
    await t.waitFor(has("lambda mu"), "the answer");
    await t.waitFor(ready, "the turn to finish");
    t.resize(24, 16);
    await t.waitFor((s) => s.some((l) => l === "alpha beta gamma delta"), "the answer rewrapped at 24 columns");
    const narrow = t.screen();
    expect(narrow.some((l) => l.startsWith("tau ·") || l.includes("ready"))).toBe(true);
    const status = narrow.find((l) => l.includes("ready")) as string;
    expect(status.length).toBeLessThanOrEqual(24);
    t.resize(100, 16);
    await t.waitFor(has("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu"), "the answer on one row again");
    expect(t.screen().some((l) => l.startsWith("› "))).toBe(true);
    // The editor still works after resizes.
    t.type("abc");
    await t.waitFor((s) => s.some((l) => l === "› abc"), "typed text echoed");
    t.type("\x15");
    expect(await quitTau(t)).toBe(0);
  });

  it("[tui.pty.narrow-widths] stays consistent at every width from 1 to 12 columns and restores on widening", async () => {
    const w = workspace();
    fake.enqueue(toolCallResponse([{ id: "call_ls_000001", name: "ls", arguments: '{"path":"."}' }]), textResponse("done listing"));
    const t = start(w, [], { cols: 60, rows: 12 });
    await t.waitFor(ready, "ready");
    t.type("list\r");
    await t.waitFor(has("done listing"), "the answer");
    await t.waitFor(ready, "the turn to finish");
    // A full redraw (after a resize, or Ctrl-L) begins by homing the cursor and clearing the screen.
    const CLEAR = "\x1b[H\x1b[2J";
    for (let cols = 1; cols <= 12; cols++) {
      const from = t.output().length;
      const redraws = () => t.output().slice(from).split(CLEAR);
      t.resize(cols, 12);
      await waitFor(() => redraws().length > 1, `the redraw at ${cols} columns`);
      // Ctrl-L redraws again: once that second redraw begins, every byte of the first has arrived.
      t.type("\x0c");
      await waitFor(() => redraws().length > 2, `the second redraw at ${cols} columns`);
      const term = await emulate(CLEAR + (redraws()[1] as string), cols, 12);
      const rows = [...Array(term.rows).keys()].map((y) => term.buffer.active.getLine(term.buffer.active.viewportY + y));
      const screen = rows.map((line) => line?.translateToString(true) ?? "");
      // Every width draws a status row of exactly that width (inverse cells) and never a tool row
      // without its status: the header "ls ok" needs 5 columns; narrower, neither header nor body.
      for (const l of screen) expect(l.length, `a row at ${cols} columns: ${JSON.stringify(l)}`).toBeLessThanOrEqual(cols);
      if (cols < 5) expect(screen.some((l) => /^ls\b/.test(l)), `no tool header at ${cols}`).toBe(false);
      for (const l of screen.filter((x) => /^ls\b/.test(x))) expect(l, `the tool row at ${cols}`).toMatch(/^ls ok/);
      expect(rows.some((line) => line?.getCell(0)?.isInverse()), `a status row at ${cols} columns:\n${screen.join("\n")}`).toBe(true);
    }
    t.resize(60, 12);
    await t.waitFor((s) => s.some((l) => /^ls ok {2}\.$/.test(l)), "the tool row restored at 60 columns");
    expect(t.screen().some((l) => l.includes("done listing"))).toBe(true);
    expect(await quitTau(t)).toBe(0);
  });

  it("[tui.pty.hostile-output] hostile model and tool output changes nothing in the terminal but visible characters", async () => {
    const w = workspace();
    const entries = Object.entries(HOSTILE);
    const modelText = entries.map(([k, v]) => `${k}: ${v}`).join("\n");
    const script = join(w.project, "hostile.sh");
    writeFileSync(script, `printf '%s\\n' ${entries.map(([, v]) => `'${v.replaceAll("'", "'\\''")}'`).join(" ")}\n`);
    fake.enqueue(toolCallResponse([{ id: "call_sh_1", name: "shell", arguments: JSON.stringify({ command: "sh hostile.sh" }) }]), textResponse(["model says:\n", modelText, "\nEND-OF-ANSWER"]));
    const t = start(w, [], { cols: 100, rows: 50 });
    await t.waitFor(ready, "ready");
    const modesBefore = JSON.stringify(t.term.modes);
    const titleBefore = t.fired.length;
    t.type("show me\r");
    await t.waitFor(has("END-OF-ANSWER"), "the hostile answer", 30_000);
    await t.waitFor(ready, "the turn to finish");
    // A user shell command with hostile output too (!! stays in the UI).
    t.type(`!!sh hostile.sh; echo USER-SHELL-DONE\r`);
    await t.waitFor(has("USER-SHELL-DONE"), "the user shell command");
    // Its last line shows before it has ended; the status line says ready once it has.
    await t.waitFor(ready, "the user shell command to end");
    expect(t.fired.slice(titleBefore)).toEqual([]);
    expect(JSON.stringify(t.term.modes)).toBe(modesBefore);
    expect(t.term.buffer.active.type).toBe("normal");
    // The transcript is intact: the prompt line and the status line are where the UI put them.
    const all = t.all();
    expect(all.some((l) => l.startsWith("› show me"))).toBe(true);
    expect(all.some((l) => l.includes("osc52_bel: copy␛]52;c;SGVsbG8gY2xpcGJvYXJk␇done"))).toBe(true);
    expect(all.some((l) => l === "shell ok  sh hostile.sh")).toBe(true);
    expect(t.screen().filter((l) => l.includes(" · ready"))).toHaveLength(1);
    // No control character reached the terminal outside the UI's own sequences.
    const raw = t.output();
    expect(raw).not.toMatch(/\x1b\](?!$)/);
    expect(raw).not.toMatch(/\x1bP|[\x90\x9b\x9d]|\x07|\u202e/);
    expect(await quitTau(t)).toBe(0);
  });

  it("[tui.pty.graphemes-align] CJK, emoji ZWJ sequences and combining marks line up in the emulator", async () => {
    const w = workspace();
    fake.enqueue(textResponse(["漢字かな|1\n", "👩‍👩‍👧👍🏽|2\n", "e\u0301a\u0308o\u0303|3\n", "ab|4"]));
    const t = start(w, [], { cols: 60, rows: 16 });
    await t.waitFor(ready, "ready");
    t.type("widths\r");
    await t.waitFor(has("|4"), "the answer");
    await t.waitFor(ready, "the turn to finish");
    // 4 wide characters = 8 columns; two emoji clusters = 4 columns; three combined letters = 3.
    expect(columnOf(t, "|").col).toBe(8);
    const marks = ["1", "2", "3", "4"].map((n) => {
      const b = t.term.buffer.active;
      for (let y = 0; y < b.length; y++) {
        const text = (b.getLine(y)?.translateToString(true) ?? "").trimEnd();
        if (text.endsWith(`|${n}`)) {
          for (let x = 0; x < t.term.cols; x++) if (b.getLine(y)?.getCell(x)?.getChars() === "|") return x;
        }
      }
      return -1;
    });
    expect(marks).toEqual([8, 4, 3, 2]);
    expect(await quitTau(t)).toBe(0);
  });

  it("[cli.command-mode.never-reaches-model] unknown, malformed and local commands never reach the model", async () => {
    const w = workspace();
    const before = fake.requests.length;
    fake.enqueue(textResponse("only this one"));
    const t = start(w);
    await t.waitFor(ready, "ready");
    for (const line of [":frobnicate the secret plan", ":quit now please", ":agent fly", ":sandbox fly", ":set", ":help", ":model", ":"]) t.type(`${line}\r`);
    await t.waitFor(seen("unknown command :frobnicate"), "the local error");
    await t.waitFor(seen("usage: :quit"), "the usage error");
    await t.waitFor(seen("usage: :sandbox"), "the sub-command error");
    await t.waitFor(seen("no agent is called fly"), "the unknown agent error");
    await t.waitFor(seen("an empty command"), "the empty command error");
    t.type("/frobnicate is prompt text\r");
    await t.waitFor(has("only this one"), "the answer to the one prompt");
    await t.waitFor(ready, "the turn to finish");
    const sent = fake.requests.slice(before).filter((r) => r.path.endsWith("/chat/completions"));
    expect(sent).toHaveLength(1);
    expect(sent[0]?.rawBody).toContain("/frobnicate is prompt text");
    expect(sent[0]?.rawBody).not.toMatch(/frobnicate the secret|quit now|agent fly/);
    const prompts = agentJournals(w.home).flat().filter((r) => r.name === "agent.prompt_submitted");
    expect(prompts.map((p) => p.data.text)).toEqual(["/frobnicate is prompt text"]);
    expect(await quitTau(t)).toBe(0);
  });

  it("[cli.command-mode.colon-escape] '::text' reaches the model as ':text', marked literal, and history keeps '::text'", async () => {
    const w = workspace();
    const before = fake.requests.length;
    fake.enqueue(textResponse("got it"));
    const t = start(w);
    await t.waitFor(ready, "ready");
    t.type("::quit is a vim command\r");
    await t.waitFor(has("got it"), "the answer");
    await t.waitFor(ready, "the turn to finish");
    const body = JSON.stringify((fake.requests.slice(before).find((r) => r.path.endsWith("/chat/completions"))?.body as { messages: unknown[] }).messages);
    expect(body).toContain(":quit is a vim command");
    expect(body).not.toContain("::quit");
    const prompts = agentJournals(w.home).flat().filter((r) => r.name === "agent.prompt_submitted");
    expect(prompts.map((p) => [p.data.text, p.data.literal])).toEqual([[":quit is a vim command", true]]);
    expect(await quitTau(t)).toBe(0);
    const history = openPromptHistory(join(w.home, "state"));
    history.refresh();
    expect(history.entries().map((e) => e.text)).toContain("::quit is a vim command");
    // Recalled from history, it is still literal text, never a command.
    fake.enqueue(textResponse("again"));
    const t2 = start(w);
    await t2.waitFor(ready, "ready");
    // The newest entry is the `:quit` that ended the first run; the one before it is the prompt.
    t2.type("\x1b[A");
    await t2.waitFor(has("› :quit"), "the newest entry");
    t2.type("\x1b[A");
    await t2.waitFor(has("› ::quit is a vim command"), "the recalled line");
    t2.type("\r");
    await t2.waitFor(has("again"), "the second answer");
    expect(await quitTau(t2)).toBe(0);
  });

  it(":skill loads a skill into the focused agent; an unknown one fails locally and sends nothing", async () => {
    const w = workspace();
    const dir = join(w.home, "config", "skills", "review");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "SKILL.md"), "---\nname: review\ndescription: Review a change carefully\n---\nREVIEW-BODY: read every diff hunk twice.\n");
    const before = fake.requests.length;
    fake.enqueue(textResponse("reviewed"));
    const t = start(w);
    await t.waitFor(ready, "ready");
    t.type(":skill nosuch\r");
    await t.waitFor(seen("nosuch"), "the refusal");
    t.type(":skill review look at src/\r");
    await t.waitFor(has("reviewed"), "the answer");
    const sent = fake.requests.slice(before).filter((r) => r.path.endsWith("/chat/completions"));
    expect(sent).toHaveLength(1);
    expect(sent[0]?.rawBody).toContain("REVIEW-BODY: read every diff hunk twice.");
    expect(sent[0]?.rawBody).toContain("look at src/");
    expect(await quitTau(t)).toBe(0);
  });

  it("detaches, re-attaches with the transcript replayed, and ends the session for everyone with :quit-session", async () => {
    const w = workspace();
    fake.enqueue(textResponse("first answer"));
    const t = start(w);
    await t.waitFor(ready, "ready");
    t.type("hello\r");
    await t.waitFor(has("first answer"), "the answer");
    await t.waitFor(ready, "the turn to finish");
    t.type(":detach\r");
    expect((await t.exited).exitCode).toBe(0);
    await t.settled();
    expect(t.all().join("")).toMatch(/keeps running; attach again with: tau attach s-/);
    const runtime = join(w.home, "runtime");
    // A probe of a busy daemon can miss its 1.5 s deadline on a loaded machine: the session is
    // still running, so it is listed once a probe gets through.
    let rows = (await listSessions(runtime)).rows;
    await waitFor(async () => (rows = (await listSessions(runtime)).rows).length === 1, "the detached session in the listing", { timeoutMs: 15_000, pollMs: 200 });
    expect(rows).toHaveLength(1);
    const a = start(w, ["attach"]);
    await a.waitFor(has("first answer"), "the replayed transcript");
    await a.waitFor(ready, "ready");
    a.type(":quit-session\r");
    expect((await a.exited).exitCode).toBe(0);
    await a.settled();
    // Leaving says how to come back.
    expect(a.all().join("")).toContain(`session ${rows[0]?.session_id} ended; continue it with: tau resume ${rows[0]?.session_id}`);
    await waitFor(async () => (await listSessions(runtime)).rows.length === 0, "the ended session to leave the listing", { pollMs: 50 });
    // The saved session can be resumed, with its transcript.
    const r = start(w, ["resume", rows[0]?.session_id as string]);
    await r.waitFor(has("first answer"), "the resumed transcript");
    await r.waitFor(ready, "ready");
    expect(await quitTau(r)).toBe(0);
  });

  it("reports a configuration mistake with file, line and key, and leaves no session behind", async () => {
    const w = workspace();
    writeFileSync(join(w.home, "config", "harness.yaml"), "model: fake-model\nbogus_key: 1\n");
    const t = start(w);
    const { exitCode } = await t.exited;
    await t.settled();
    expect(exitCode).toBe(2);
    expect(t.all().join("")).toMatch(/harness\.yaml:2.*bogus_key/);
    await waitFor(async () => (await listSessions(join(w.home, "runtime"))).rows.length === 0, "no session left in the listing", { pollMs: 50 });
    expect(readdirSync(join(w.home, "state", "sessions"))).toEqual([]);
  });

  it("refuses to run without a terminal and points at tau run", async () => {
    const w = workspace();
    const { runTau } = await import("../../support/run-tau.js");
    const r = await runTau([], { env: w.env, cwd: w.project });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("needs a terminal");
    expect(r.stderr).toContain("tau run");
  });
});
