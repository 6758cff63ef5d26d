// `tau resume` with several saved sessions: a picker on the real terminal that shows each session's
// title, age and project, filters as the user types, and resumes exactly the one chosen; Esc gives
// up and changes nothing (SPEC-session-lifecycle, GATE-saved-sessions).
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { has, startTau, tuiWorkspace, type PtyTau } from "../../support/pty.js";
import { runTau } from "../../support/run-tau.js";
import { waitForOwnedDaemons } from "../../support/daemon.js";
import { textResponse, type FakeOpenAI } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(): Workspace {
  return tuiWorkspace(workspaceIn(cleanups), fake);
}

const start = (w: Workspace, args: string[]): PtyTau => startTau(cleanups, w, args, { cols: 100, rows: 24 });

/** Every file of the state folder with its size: what "nothing changed" compares. */
function stateSizes(w: Workspace): Record<string, number> {
  const out: Record<string, number> = {};
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (!e.name.endsWith(".lock") && e.name !== "daemon.log") out[p] = statSync(p).size;
    }
  };
  walk(join(w.home, "state"));
  return out;
}

describe("the resume picker", () => {
  it("[sessions.resume.picker-filters] shows titles, filters as you type, resumes the chosen session and keeps its title; Esc changes nothing", async () => {
    const w = workspace();
    for (const prompt of ["alpha: tidy the imports", "beta: write the changelog", "gamma: profile the parser"]) {
      fake.enqueue(textResponse(`answer to ${prompt.split(":")[0]}`));
      const r = await runTau(["run", prompt], { env: w.env, cwd: w.project });
      expect(r.code, r.stderr).toBe(0);
      waitForOwnedDaemons(w.home);
    }

    // Esc gives up: the exit is clean and the state folder is as it was.
    const before = stateSizes(w);
    const esc = start(w, ["resume"]);
    await esc.waitFor(has("Resume which session? 3 of 3"), "the picker");
    const shown = esc.screen();
    for (const title of ["alpha: tidy the imports", "beta: write the changelog", "gamma: profile the parser"]) {
      expect(shown.some((l) => l.includes(title) && l.includes(w.project) && /\d+[smhd]? ?ago|just now/.test(l)), shown.join("\n")).toBe(true);
    }
    esc.type("\x1b");
    expect((await esc.exited).exitCode).toBe(0);
    expect(stateSizes(w)).toEqual(before);

    // Typing filters; Enter resumes the one left.
    const t = start(w, ["resume"]);
    await t.waitFor(has("Resume which session? 3 of 3"), "the picker");
    t.type("chang");
    await t.waitFor(has("1 of 3"), "the filtered picker");
    expect(t.screen().some((l) => l.includes("alpha") || l.includes("gamma"))).toBe(false);
    t.type("\r");
    await t.waitFor(has("answer to beta"), "the resumed transcript");
    await t.waitFor(has(" · ready"), "ready");
    fake.enqueue(textResponse("second answer"));
    t.type("a later prompt\r");
    await t.waitFor(has("second answer"), "the answer");
    await t.waitFor(has(" · ready"), "ready again");
    t.type(":quit\r");
    expect((await t.exited).exitCode).toBe(0);
    waitForOwnedDaemons(w.home);
    const list = await runTau(["session", "list", "--all", "--json"], { env: w.env });
    const rows = JSON.parse(list.stdout) as Array<{ title: string; running: boolean }>;
    // The resumed session is the newest now, and kept the title its first prompt gave it.
    expect(rows.map((r) => r.title)).toEqual(["beta: write the changelog", "gamma: profile the parser", "alpha: tidy the imports"]);
    expect(rows.every((r) => !r.running)).toBe(true);
  });

  it("[sessions.tui.list] :sessions lists the saved sessions by title, age and project, and filters by words", async () => {
    const w = workspace();
    for (const prompt of ["alpha: tidy the imports", "beta: write the changelog"]) {
      fake.enqueue(textResponse("ok"));
      const r = await runTau(["run", prompt], { env: w.env, cwd: w.project });
      expect(r.code, r.stderr).toBe(0);
      waitForOwnedDaemons(w.home);
    }
    const t = start(w, []);
    await t.waitFor(has(" · ready"), "ready");
    t.type(":sessions\r");
    await t.waitFor(has("saved sessions (tau resume ID continues one):"), "the list");
    const screen = t.screen();
    const row = (title: string) => screen.find((l) => l.startsWith(title));
    expect(row("beta: write the changelog")).toMatch(new RegExp(`^beta: write the changelog {2}· {2}(just now|\\d+[sm] ago) {2}· {2}${w.project.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} {2}· {2}s-`));
    expect(row("alpha: tidy the imports")).toBeDefined();
    // This session has no title yet, and says it is this one.
    expect(screen.some((l) => l.startsWith("(untitled)") && l.endsWith("(this one)"))).toBe(true);
    t.type(":sessions changelog\r");
    await t.waitFor((s) => s.filter((l) => l.startsWith("saved sessions")).length === 2, "the filtered list");
    const after = t.screen();
    const last = after.lastIndexOf(after.filter((l) => l.startsWith("saved sessions")).pop() as string);
    expect(after.slice(last + 1).filter((l) => l.includes("  ·  "))).toHaveLength(1);
    t.type(":quit\r");
    expect((await t.exited).exitCode).toBe(0);
  });
});
