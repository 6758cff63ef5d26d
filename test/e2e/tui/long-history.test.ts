// The real `tau resume` of a saved session with a long history of user shell commands, in a
// pseudo-terminal read by a real terminal emulator. The history is written by the real harness
// into the workspace's journals; the daemon `tau resume` starts replays it to the UI.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { spawnTau } from "../../support/pty.js";
import { HarnessKit } from "../../support/harness-kit.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";

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
    await t.settled();
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
});
