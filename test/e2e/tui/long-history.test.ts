// The real `tau resume` of a saved session with a long history of user shell commands, in a
// pseudo-terminal read by a real terminal emulator. The history is written by the real harness
// into the workspace's journals; the daemon `tau resume` starts replays it to the UI.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { roundTrip, spawnTau } from "../../support/pty.js";
import { HarnessKit } from "../../support/harness-kit.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { generateSession } from "../../support/session-generator.js";
import { HISTORY_PAGE_RECORDS, REPLAY_RECENT_RECORDS } from "../../../handwritten/cli/tui/app.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s));
const cleanups = useCleanups();

const COMMANDS = 600;
const ROWS = 24;

describe("tau resume of a long session in a pseudo-terminal", () => {
  it("[tui.pty.long-history] writes the newest screens of the history under one summary line, not all of it", async () => {
    const w = workspaceIn(cleanups);
    const env = { ...process.env, ...w.env, TERM: "xterm-256color", OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "fake-model" };
    const kit = await HarnessKit.open({ stateDir: join(w.home, "state"), projectRoot: w.project });
    const agent = await kit.createAgent();
    for (let i = 0; i < COMMANDS; i++) {
      const output = `${Array.from({ length: 30 }, (_, l) => `line ${l} of command ${i}`).join("\n")}\n`;
      const out = await kit.h.publishHarness("shell.command_finished", { agent_id: agent, request_id: `r-${i}`, command: `make step-${i}`, output, exit_code: 0, include_in_context: true });
      expect(out.status).toBe("committed");
    }
    const sessionId = kit.h.sessionId;
    await kit.close();

    const t = spawnTau(["resume", sessionId], { env, cwd: w.project, cols: 80, rows: ROWS });
    cleanups.push(() => t.kill());
    await t.waitFor((s) => s.some((l) => l.includes(" · ready")), "the resumed session to be ready");
    await roundTrip(t); // anything tau wrote after the ready frame is on the emulator too
    const all = t.all();
    // The newest command is on the screen, the oldest was never written.
    expect(t.screen()).toContain(`! make step-${COMMANDS - 1}  exit 0`);
    expect(all.some((l) => l.startsWith("! make step-0 "))).toBe(false);
    const summary = all.find((l) => /^… [\d,]+ earlier entries not shown$/.test(l));
    expect(summary, all.join("\n")).toBeDefined();
    const shown = all.filter((l) => /^! make step-\d+ {2}exit 0$/.test(l)).length;
    expect(Number(summary?.replace(/\D/g, "")) + shown).toBeGreaterThanOrEqual(COMMANDS);
    // Bounded: three screens of history and the live region, where all of it would be 600 × 14 rows.
    expect(all.filter((l) => l !== "").length).toBeLessThanOrEqual(3 * ROWS + ROWS + 4);
    expect(t.output().length).toBeLessThan(64 * 1024);
    t.type(":quit\r");
    expect((await t.exited).exitCode).toBe(0);
  });

  it("[tui.pty.history-pages-back] an attach replays only the newest records; :history pages back, a page at a time, to the first turn", async () => {
    const w = workspaceIn(cleanups);
    const env = { ...process.env, ...w.env, TERM: "xterm-256color", OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "fake-model" };
    // About 3,000 records: more than an attach replays (REPLAY_RECENT_RECORDS).
    const g = generateSession(join(w.home, "state"), { targetBytes: 1_200_000, outputBytes: 200, shellEvery: 3, projectRoot: w.project });
    expect(g.records).toBeGreaterThan(REPLAY_RECENT_RECORDS + HISTORY_PAGE_RECORDS);
    // A page shows each tool call's row and output preview: the first page alone is over the default
    // scrollback, and the test reads it back whole.
    const t = spawnTau(["resume", g.sessionId], { env, cwd: w.project, cols: 100, rows: ROWS, scrollback: 10_000 });
    cleanups.push(() => t.kill());
    await t.waitFor((s) => s.some((l) => l.includes(" · ready")), "the resumed session to be ready");
    await t.waitFor((s) => s.some((l) => l.includes(":history shows it")), "the note about earlier history", 20_000);
    expect(t.all().some((l) => l.includes(g.firstPrompt))).toBe(false);
    const pages = Math.ceil((g.records - REPLAY_RECENT_RECORDS) / HISTORY_PAGE_RECORDS);
    // Each page ends with a marker line (counted in what was written: scrollback keeps only so much).
    const pagesWritten = () => t.output().split("── end of that page").length - 1 + t.output().split("── the start of this agent's history ──").length - 1;
    for (let i = 1; i <= pages; i++) {
      t.type(":history\r");
      await t.waitFor(() => pagesWritten() >= i, `page ${i}`, 20_000);
    }
    await t.waitFor((_s, all) => all.some((l) => l.includes("── the start of this agent's history ──")), "the first turn", 20_000);
    const all = t.all();
    expect(all.some((l) => l.includes("── earlier history: records 1–"))).toBe(true);
    expect(all.some((l) => l.includes(g.firstPrompt)), "the first prompt on screen").toBe(true);
    t.type(":history\r");
    await t.waitFor((_s, all) => all.filter((l) => l.includes("this is the start of this agent's history")).length === 1, "nothing further back");
    t.type(":quit\r");
    expect((await t.exited).exitCode).toBe(0);
  }, 120_000);
});

