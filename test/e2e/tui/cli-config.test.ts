// cli.yaml, the interactive UI's settings: validated at start like harness.yaml (file, line and
// key; unknown keys and unknown themes refused), and every key effective (SPEC-configuration).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { spawnTau, type PtyTau } from "../../support/pty.js";
import { textResponse, type FakeOpenAI } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(cliYaml: string): Workspace {
  const w = workspaceIn(cleanups);
  writeFileSync(join(w.home, "config", "cli.yaml"), cliYaml);
  return { ...w, env: { ...process.env, ...w.env, TERM: "xterm-256color", OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "fake-model" } };
}

function start(w: Workspace): PtyTau {
  // Wide enough that an error naming a temporary folder is not wrapped.
  const t = spawnTau([], { env: w.env, cwd: w.project, cols: 250, rows: 24 });
  cleanups.push(() => t.kill());
  return t;
}

const has = (text: string) => (screen: string[]) => screen.some((l) => l.includes(text));
const seen = (text: string) => (_screen: string[], all: string[]) => all.some((l) => l.includes(text));

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
});
