// Tests wait on events, never for a fixed time (GATE-honest-tests): a sleep that waits for
// something becomes a wait on that thing (test/support/wait.ts), and a sleep that gives something
// the chance to wrongly happen becomes a barrier, a later event ordered after it. Where a time
// window is itself the behaviour under test (a deadline, a pace, a random kill moment), the sleep
// says so on its line or the comment just above it: `// timing-under-test: why`.
import { describe, expect, it } from "vitest";
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { REPO_ROOT } from "../../support/paths.js";

const SOURCE = /\.(?:[cm]?ts|[cm]?js)$/;
const ALLOW = /\/\/\s*timing-under-test:\s*\S/;

/** The forms of a fixed sleep; a zero delay is a turn of the event loop, not a sleep. */
const FORMS: ReadonlyArray<{ what: string; re: RegExp; delay?: (m: RegExpExecArray) => number }> = [
  {
    what: "a timer that resolves a promise after a fixed delay",
    re: /\bsetTimeout\(\s*(?:[A-Za-z_$][\w$]*|\(\)\s*=>\s*[A-Za-z_$][\w$]*\(\))\s*,\s*(\d[\d_]*(?:\.\d+)?)\s*\)/,
    delay: (m) => Number((m[1] ?? "0").replaceAll("_", "")),
  },
  {
    what: "a promise timer (node:timers/promises) with a fixed delay",
    re: /\bsetTimeout\(\s*(\d[\d_]*(?:\.\d+)?)\s*[,)]/,
    delay: (m) => Number((m[1] ?? "0").replaceAll("_", "")),
  },
  { what: "a call to a sleep helper", re: /(?<![\w$.]|function\s+)\b(?:sleep|pause|delay|wait)\(\s*[^)\s]/ },
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" ? [] : sources(p);
    return SOURCE.test(e.name) ? [p] : [];
  });
}

/** `name:line: what: code` for every fixed sleep in `text` not marked as timing under test. */
function fixedSleeps(name: string, text: string): string[] {
  const lines = text.split("\n");
  const found: string[] = [];
  lines.forEach((line, i) => {
    const code = line.trim();
    if (code.startsWith("//") || code.startsWith("*") || code.startsWith("/*")) return;
    for (const form of FORMS) {
      const m = form.re.exec(line);
      if (!m || (form.delay !== undefined && form.delay(m) === 0)) continue;
      // The mark is on the line itself or in the comment lines just above it.
      let allowed = ALLOW.test(line);
      for (let j = i - 1; !allowed && j >= 0 && (lines[j] ?? "").trim().startsWith("//"); j--) allowed = ALLOW.test(lines[j] ?? "");
      if (!allowed) found.push(`${name}:${i + 1}: ${form.what}: ${code}`);
    }
  });
  return found;
}

describe("tests wait on events", () => {
  it("[tests.no-fixed-sleeps] no file under test/ sleeps for a fixed time unless it marks the time as the behaviour under test", () => {
    const root = join(REPO_ROOT, "test");
    const self = join(root, "unit", "contracts", "no-fixed-sleeps.test.ts"); // it names the forms it forbids
    const found = sources(root)
      .filter((file) => file !== self)
      .flatMap((file) => fixedSleeps(`test/${relative(root, file)}`, readFileSync(file, "utf8")));
    expect(found).toEqual([]);
  });

  it("[tests.no-fixed-sleeps] the check finds each form of a fixed sleep and honours only a reasoned mark", () => {
    const flagged = (code: string) => fixedSleeps("sample.ts", code).length;
    expect(
      [
        "await new Promise((r) => setTimeout(r, 50));",
        "await new Promise((resolve) => setTimeout(() => resolve(), 1_500));",
        "await setTimeout(100);",
        "await sleep(20);",
        "for (let i = 0; i < 9 && !done(); i++) await pause(5);",
        "await delay(rand() * 60);",
        "await wait(10);",
        "// timing-under-test:\nawait sleep(20);",
      ].map(flagged),
    ).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
    expect(
      [
        "await new Promise((r) => setTimeout(r, 0));",
        "const t = setTimeout(() => child.kill(\"SIGKILL\"), 10_000);",
        "await new Promise((r) => setTimeout(r, pollMs));",
        "socket.pause();",
        "function sleep(ms: number) {",
        "await waitFor(() => ready(), \"ready\");",
        "await sleep(20); // timing-under-test: the debounce window is the behaviour",
        "// timing-under-test: a random kill moment is what the crash test explores\nawait sleep(rand() * 12);",
      ].map(flagged),
    ).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });
});
