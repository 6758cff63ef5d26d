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
});
