// cli.yaml, the interactive UI's settings: validated at start like harness.yaml (file, line and
// key; unknown keys and unknown themes refused), and every key effective (SPEC-configuration).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { has, seen, startTau, tuiWorkspace, type PtyTau } from "../../support/pty.js";
import { textResponse, toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { waitFor } from "../../support/wait.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(cliYaml: string): Workspace {
  const w = workspaceIn(cleanups);
  writeFileSync(join(w.home, "config", "cli.yaml"), cliYaml);
  return tuiWorkspace(w, fake);
}

// Wide enough that an error naming a temporary folder is not wrapped.
const start = (w: Workspace): PtyTau => startTau(cleanups, w, [], { cols: 250, rows: 24 });

describe("cli.yaml", () => {
  it("[tui.config.cli-yaml-validated] a broken file, an unknown key and an unknown theme each stop tau with file, line and key", async () => {
    const cases: Array<[string, RegExp]> = [
      ["editor:\n  max_lines: [1\n", /cli\.yaml:\d+: invalid YAML/],
      ["editor:\n  max_lines: 5\nbogus: 1\n", /cli\.yaml:3: bogus: unknown key/],
      ["editor:\n  max_lines: 0\n", /cli\.yaml:2: editor\.max_lines: must be >= 1/],
      ["# the theme\ntheme: nosuch\n", /cli\.yaml:2: theme: no theme "nosuch"; themes: default \(theme files live in .*themes\)/],
    ];
    for (const [yaml, message] of cases) {
      const w = workspace(yaml);
      const t = start(w);
      const { exitCode } = await t.exited;
      await t.settled();
      expect(exitCode, yaml).toBe(2);
      expect(t.all().join(""), yaml).toMatch(message);
      expect(t.all().join("")).toContain("[TAU-E0201]");
    }
  });

  it("[tui.config.cli-yaml-effective] the theme, the editor's row limit and the history size take effect", async () => {
    const w = workspace("theme: calm\neditor:\n  max_lines: 2\n  history_size: 1\n");
    mkdirSync(join(w.home, "config", "themes"));
    writeFileSync(join(w.home, "config", "themes", "calm.yaml"), "name: calm\nstyles:\n  status: { fg: blue, inverse: true }\n");
    const t = start(w);
    await t.waitFor(has(" · ready"), "ready");
    t.type(":theme\r");
    await t.waitFor(seen("(current: calm)"), "the configured theme in use");
    // Two prompts; with history_size 1 only the newest is offered.
    fake.enqueue(textResponse("one"), textResponse("two"));
    t.type("first prompt\r");
    await t.waitFor(has("one"), "the first answer");
    await t.waitFor(has(" · ready"), "ready");
    t.type("second prompt\r");
    await t.waitFor(has("two"), "the second answer");
    await t.waitFor(has(" · ready"), "ready");
    // The transcript shows each prompt once; the editor, recalling, shows a second copy.
    const count = (s: string[], text: string) => s.filter((l) => l.startsWith(`› ${text}`)).length;
    t.type("\x1b[A");
    await t.waitFor((s) => count(s, "second prompt") === 2, "the newest history entry in the editor");
    t.type("\x1b[A");
    t.type("!");
    await t.waitFor((s) => s.some((l) => l.startsWith("› second prompt!")), "still the newest entry, edited");
    expect(count(t.screen(), "first prompt")).toBe(1);
    // A five-line draft takes two rows: the last two, where the cursor is.
    t.type("\x15"); // Ctrl-U: clear the line
    for (const line of ["l1", "l2", "l3", "l4"]) t.type(`${line}\x1b\r`);
    t.type("l5");
    await t.waitFor((s) => s.some((l) => l.trim() === "l5"), "the draft's last line");
    const screen = t.screen();
    expect(screen.some((l) => /^\s+l4$/.test(l))).toBe(true);
    for (const hidden of ["l1", "l2", "l3"]) expect(screen.some((l) => new RegExp(`^(› |\\s+)${hidden}$`).test(l)), screen.join("\n")).toBe(false);
  });

  it("[tui.config.keys-validated] an unknown action, an unreadable key, a key bound twice and a key the editor uses each stop tau with file, line and key", async () => {
    const cases: Array<[string, RegExp]> = [
      ["keys:\n  interrupt: ctrl-x\n  scroll_up: ctrl-y\n", /cli\.yaml:3: keys\.scroll_up: unknown key/],
      ["theme: default\nkeys:\n  interrupt: hyper-q\n", /cli\.yaml:3: keys\.interrupt: cannot read "hyper-q" as a key; write escape, ctrl-LETTER, alt-LETTER or none/],
      ["keys:\n  interrupt: ctrl-x\n  redraw: ctrl-x\n", /cli\.yaml:3: keys\.redraw: ctrl-x is already bound to interrupt/],
      ["keys:\n\n  redraw: ctrl-o\n", /cli\.yaml:3: keys\.redraw: ctrl-o is already bound to expand_tool_output \(its default; bind expand_tool_output to another key or none first\)/],
      ["keys:\n  history_page: ctrl-r\n", /cli\.yaml:2: keys\.history_page: ctrl-r is not free: it searches the prompt history/],
    ];
    for (const [yaml, message] of cases) {
      const w = workspace(yaml);
      const t = start(w);
      const { exitCode } = await t.exited;
      await t.settled();
      expect(exitCode, yaml).toBe(2);
      expect(t.all().join(""), yaml).toMatch(message);
      expect(t.all().join("")).toContain("[TAU-E0201]");
    }
  });

  it("[tui.config.keys-effective] rebound keys interrupt, expand tool output (walking back to older tools), page history and switch agents", async () => {
    const w = workspace("keys:\n  interrupt: ctrl-x\n  expand_tool_output: alt-o\n  history_page: ctrl-t\n");
    // The tools' sandbox is not what this test is about (its helpers need not be installed).
    writeFileSync(join(w.home, "config", "sandbox.yaml"), "enabled: false\n");
    const t = start(w);
    await t.waitFor(has(" · ready"), "ready");
    // The empty prompt and :help name the keys as bound.
    expect(t.screen()).toContain("› type a prompt · :help for commands · Ctrl-X interrupts");
    t.type(":help\r");
    await t.waitFor(seen("Alt-O — show a tool's whole output"), ":help with the bound keys");
    expect(t.all()).toEqual(expect.arrayContaining(["Ctrl-X — interrupt the running turn (Ctrl-C keeps its meaning)", "Alt-N — switch to the next agent of the session"]));
    // Interrupt.
    const before = fake.requests.length;
    fake.enqueue(textResponse(["slow ", "answer ", "never ", "finishes"], { delayMs: 1500 }));
    t.type("take your time\r");
    await t.waitFor(has("working…"), "the agent at work");
    await waitFor(() => fake.requests.slice(before).some((r) => r.path.endsWith("/chat/completions")), "the request to reach the model");
    t.type("\x18"); // Ctrl-X
    await t.waitFor(seen("the prompt was cancelled"), "the cancellation");
    await t.waitFor(has(" · ready"), "ready again");
    // Two finished tools: the bound key writes the newer one's whole output, then the older one's.
    fake.enqueue(
      toolCallResponse([{ id: "call_first_1", name: "shell", arguments: JSON.stringify({ command: "seq 101 130" }) }]),
      toolCallResponse([{ id: "call_second_1", name: "shell", arguments: JSON.stringify({ command: "seq 201 230" }) }]),
      textResponse("both listed"),
    );
    t.type("list\r");
    await t.waitFor(seen("both listed"), "the answer");
    await t.waitFor(has(" · ready"), "ready");
    expect(t.all()).not.toContain("230");
    t.type("\x1bo");
    const line = (text: string) => (_screen: string[], all: string[]) => all.includes(text);
    await t.waitFor(line("230"), "the newer tool's whole output");
    expect(t.all()).not.toContain("130");
    t.type("\x1bo");
    await t.waitFor(line("130"), "the older tool's whole output");
    expect(t.all().filter((l) => l === "shell ok  seq 101 130")).toHaveLength(2);
    expect(t.all().filter((l) => l === "shell ok  seq 201 230")).toHaveLength(2);
    // History paging on its key.
    t.type("\x14"); // Ctrl-T
    await t.waitFor(seen("── "), "a page of history, or its start");
    // The next agent on the default Alt-N.
    t.type(":agent new helper\r");
    await t.waitFor(seen("agent helper"), "the new agent");
    const notes = () => t.all().filter((l) => l.startsWith("agent [")).length;
    const had = notes();
    t.type("\x1bn");
    await t.waitFor(() => notes() > had, "the switch back to the first agent");
    expect(t.all().filter((l) => l.startsWith("agent [")).at(-1)).not.toContain("helper");
  });

  it("[tui.config.theme-keys-effective] a theme file's styles are the colours the terminal shows", async () => {
    const w = workspace("theme: loud\n");
    mkdirSync(join(w.home, "config", "themes"));
    writeFileSync(
      join(w.home, "config", "themes", "loud.yaml"),
      "name: loud\nstyles:\n  status: { fg: blue }\n  prompt: { fg: green }\n  muted: { fg: magenta }\n  mdStrong: { fg: red, bold: true }\n  mdHeading: { fg: yellow }\n  toolOk: { fg: cyan }\n",
    );
    writeFileSync(join(w.home, "config", "sandbox.yaml"), "enabled: false\n");
    const t = start(w);
    await t.waitFor(has(" · ready"), "ready");
    fake.enqueue(
      toolCallResponse([{ id: "call_show_1", name: "shell", arguments: JSON.stringify({ command: "echo shown" }) }]),
      textResponse("# Heading\n\nA **strong** word."),
    );
    t.type("go\r");
    await t.waitFor(seen("strong word."), "the answer");
    await t.waitFor(has(" · ready"), "ready");
    const cell = (text: string, at = 0) => {
      const b = t.term.buffer.active;
      for (let y = b.length - 1; y >= 0; y--) {
        const x = (b.getLine(y)?.translateToString(true) ?? "").indexOf(text);
        if (x >= 0) return b.getLine(y)?.getCell(x + at);
      }
      throw new Error(`${text} is not in the terminal`);
    };
    // Palette indexes: red 1, green 2, yellow 3, blue 4, magenta 5, cyan 6.
    expect(cell(" · ready")?.getFgColor()).toBe(4);
    expect(cell("› type a prompt")?.getFgColor()).toBe(2);
    expect(cell("type a prompt")?.getFgColor()).toBe(5);
    expect(cell("strong")?.getFgColor()).toBe(1);
    expect(cell("strong")?.isBold()).toBeTruthy();
    expect(cell("Heading")?.getFgColor()).toBe(3);
    expect(cell("shell ok", 6)?.getFgColor()).toBe(6);
  });
});
