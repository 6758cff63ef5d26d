// grep with the JS engine, and with ripgrep against it, over the same real trees; find and ls bounds
// (SPEC-shell-tools, GATE-shell-tools).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createGrepTool, findRipgrep, findTool, limits, lsTool } from "../../../handwritten/extensions/shell/tools/index.js";
import type { Tool } from "../../../handwritten/extensions/shell/tools/index.js";
import { context, failure, run, tempDir } from "../../unit/shell/helpers.js";

const rgGrep = createGrepTool({ engine: "rg" });
const jsGrep = createGrepTool({ engine: "js" });

// ripgrep cannot come from npm (its wrappers download the binary at install), so the tests that need
// it skip where it is missing; .ci/run installs it, so CI runs them.
const noRipgrep = (await findRipgrep()) === undefined;
if (noRipgrep) console.warn("skipped: ripgrep (rg) is not on PATH; .ci/run installs it");

function tree(files: Record<string, string | Buffer>): string {
  const dir = tempDir();
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

/** Searches a folder with some engine(s) and returns the output. */
type Search = (dir: string, args: Record<string, unknown>) => Promise<string>;

/** The JS engine alone: what tau runs where ripgrep is not installed. */
const jsOnly: Search = async (dir, args) => (await run(jsGrep, args, dir)).output;

/** Runs both engines with the same arguments and requires identical results; returns the output. */
const agreed: Search = async (dir, args) => {
  const [rg, js] = await Promise.all([run(rgGrep, args, dir), run(jsGrep, args, dir)]);
  expect(js.output, JSON.stringify(args)).toBe(rg.output);
  expect(js.display).toEqual(rg.display);
  return rg.output;
};

// Each check below runs on the JS engine alone (every machine) and on both engines required to agree
// (where rg is installed). The expected outputs are ripgrep's.

async function selectsAndPrints(search: Search, engines: Tool[]): Promise<void> {
  const dir = tree({
    "src/a.ts": "const alpha = 1;\nfunction Beta() {}\n// ALPHA in caps\r\n",
    "src/b/c.ts": "alpha();\nnothing\n",
    "src/b/c.js": "alpha js\n",
    "src/long.txt": `${"w".repeat(600)} alpha\n`,
    "README.md": "Alpha and alpha\n",
    ".hidden/h.txt": "alpha hidden\n",
    ".gitignore": "ignored/\n*.log\n",
    "ignored/x.ts": "alpha ignored\n",
    "debug.log": "alpha log\n",
    "node_modules/m/index.js": "alpha module\n",
    ".git/HEAD": "alpha git\n",
    "bin.dat": Buffer.from("alpha\0binary\n"),
    "sub/.gitignore": "*.tmp\n!keep.tmp\n",
    "sub/x.tmp": "alpha tmp\n",
    "sub/keep.tmp": "alpha keep\n",
    "unicode.txt": "naïve alpha ünïcode\n",
  });
  const all = await search(dir, { pattern: "alpha" });
  expect(all.split("\n")).toEqual([
    ".hidden/h.txt:1:alpha hidden",
    "README.md:1:Alpha and alpha",
    "src/a.ts:1:const alpha = 1;",
    "src/b/c.js:1:alpha js",
    "src/b/c.ts:1:alpha();",
    `src/long.txt:1:${"w".repeat(limits.GREP_MAX_LINE_CHARS)}…`,
    "sub/keep.tmp:1:alpha keep",
    "unicode.txt:1:naïve alpha ünïcode",
  ]);
  expect(await search(dir, { pattern: "alpha", ignore_case: true, glob: "*.ts" })).toBe(
    "src/a.ts:1:const alpha = 1;\nsrc/a.ts:3:// ALPHA in caps\nsrc/b/c.ts:1:alpha();",
  );
  expect(await search(dir, { pattern: "alpha", glob: "src/b/*" })).toBe("src/b/c.js:1:alpha js\nsrc/b/c.ts:1:alpha();");
  // A glob overrides .gitignore, as in ripgrep.
  expect(await search(dir, { pattern: "alpha", glob: "*.log" })).toBe("debug.log:1:alpha log");
  expect(await search(dir, { pattern: "f[a-z]+ction \\w+\\(" })).toBe("src/a.ts:2:function Beta() {}");
  expect(await search(dir, { pattern: "alpha()", literal: true })).toBe("src/b/c.ts:1:alpha();");
  expect(await search(dir, { pattern: "alpha", path: "src/b" })).toBe("src/b/c.js:1:alpha js\nsrc/b/c.ts:1:alpha();");
  expect(await search(dir, { pattern: "alpha", path: "src/a.ts" })).toBe("src/a.ts:1:const alpha = 1;");
  expect(await search(dir, { pattern: "zzz-none" })).toBe("No matches.");
  expect(await search(dir, { pattern: "alpha", limit: 2 })).toBe(
    ".hidden/h.txt:1:alpha hidden\nREADME.md:1:Alpha and alpha\n\n" +
      `[Showing the first 2 matching lines; there are more. Narrow the pattern, path or glob, or raise limit (at most ${limits.GREP_MAX_MATCHES}).]`,
  );
  for (const engine of engines) {
    expect((await failure(engine, { pattern: "alpha", path: "missing" }, dir)).message).toBe("Cannot search missing: does not exist.");
    expect((await failure(engine, { pattern: "alpha", path: "bin.dat" }, dir)).message).toBe("Cannot search bin.dat: it is a binary file.");
    expect((await failure(engine, { pattern: "(" }, dir)).message).toMatch(/^grep failed: /);
  }
}

async function matchAndLineBounds(search: Search): Promise<void> {
  const max = limits.GREP_MAX_MATCHES;
  for (const n of [max - 1, max, max + 1]) {
    const dir = tree({ "f.txt": "hit\n".repeat(n) });
    const output = await search(dir, { pattern: "hit" });
    const lines = output.split("\n").filter((l) => l.startsWith("f.txt:"));
    expect(lines).toHaveLength(Math.min(n, max));
    expect(output.includes("[Showing the first"), String(n)).toBe(n > max);
    if (n > max) expect(output.endsWith(`[Showing the first ${max} matching lines; there are more. Narrow the pattern, path or glob.]`)).toBe(true);
  }
  const width = limits.GREP_MAX_LINE_CHARS;
  const dir = tree({ "f.txt": `${"a".repeat(width - 2)}Z\n${"b".repeat(width - 1)}Z\n${"c".repeat(width)}Z\n` });
  expect((await search(dir, { pattern: "Z" })).split("\n")).toEqual([
    `f.txt:1:${"a".repeat(width - 2)}Z`,
    `f.txt:2:${"b".repeat(width - 1)}Z`,
    `f.txt:3:${"c".repeat(width)}…`,
  ]);
}

async function fileSizeBound(search: Search): Promise<void> {
  const max = limits.GREP_MAX_FILE_BYTES;
  const file = (size: number) => Buffer.concat([Buffer.from("needle\n"), Buffer.alloc(size - 8, 0x61), Buffer.from("\n")]);
  const dir = tree({ "below.txt": file(max - 1), "at.txt": file(max), "above.txt": file(max + 1) });
  expect(await search(dir, { pattern: "needle" })).toBe("at.txt:1:needle\nbelow.txt:1:needle");
}

describe("grep", () => {
  it("the JS engine selects the files and prints the lines ripgrep does", () => selectsAndPrints(jsOnly, [jsGrep]));
  it("the JS engine: GREP_MAX_MATCHES and GREP_MAX_LINE_CHARS: at, below and above", () => matchAndLineBounds(jsOnly));
  it("the JS engine skips files over GREP_MAX_FILE_BYTES: at, below and above", () => fileSizeBound(jsOnly));

  // Checked before an engine is chosen, so it needs no rg.
  it("cancellation stops a search", async () => {
    const dir = tree({ "f.txt": "x\n" });
    const controller = new AbortController();
    controller.abort();
    for (const engine of [rgGrep, jsGrep]) {
      await expect(engine.run({ pattern: "x" }, context(dir, { signal: controller.signal }))).rejects.toMatchObject({ code: "cancelled" });
    }
  });
});

describe.skipIf(noRipgrep)("grep, ripgrep against the JS engine", () => {
  it("[shell.grep.rg-and-fallback-agree] both engines select the same files and print the same lines", () =>
    selectsAndPrints(agreed, [rgGrep, jsGrep]));
  it("[shell.grep.rg-and-fallback-agree] GREP_MAX_MATCHES and GREP_MAX_LINE_CHARS: at, below and above", () => matchAndLineBounds(agreed));
  it("[shell.grep.rg-and-fallback-agree] files over GREP_MAX_FILE_BYTES are skipped by both engines: at, below and above", () =>
    fileSizeBound(agreed));
});

describe("find and ls", () => {
  it("find lists matching files sorted, relative to the working directory, skipping ignored paths", async () => {
    const dir = tree({ "b.ts": "", "a/c.ts": "", "a/d.js": "", "node_modules/x.ts": "", ".gitignore": "gen/\n", "gen/g.ts": "", "z/q.ts": "" });
    expect((await run(findTool, { pattern: "*.ts" }, dir)).output).toBe("a/c.ts\nb.ts\nz/q.ts");
    expect((await run(findTool, { pattern: "a/*" }, dir)).output).toBe("a/c.ts\na/d.js");
    expect((await run(findTool, { pattern: "*.ts", path: "a" }, dir)).output).toBe("a/c.ts");
    expect((await run(findTool, { pattern: "*.rs" }, dir)).output).toBe("No files found.");
    expect((await run(findTool, { pattern: "*.ts" }, join(dir, "a"))).output).toBe("c.ts");
    expect((await run(findTool, { pattern: "*.ts", path: ".." }, join(dir, "a"))).output).toBe(`c.ts\n${join(dir, "b.ts")}\n${join(dir, "z/q.ts")}`);
    expect((await failure(findTool, { pattern: "*", path: "b.ts" }, dir)).message).toBe("Cannot search b.ts: it is not a folder.");
    expect((await failure(findTool, { pattern: "{a" }, dir)).message).toMatch(/argument "pattern" is not a valid glob/);
  });

  async function bounded(tool: Tool, args: Record<string, unknown>, max: number, note: (shown: number, total: number) => string): Promise<void> {
    for (const n of [max - 1, max, max + 1]) {
      const dir = tempDir();
      for (let i = 0; i < n; i++) writeFileSync(join(dir, `f${String(i).padStart(5, "0")}.txt`), "");
      const { output } = await run(tool, args, dir);
      const names = output.split("\n").filter((l) => l.startsWith("f"));
      expect(names).toHaveLength(Math.min(n, max));
      expect(names[0]).toBe("f00000.txt");
      if (n > max) expect(output.endsWith(note(max, n))).toBe(true);
      else expect(output).not.toContain("[");
    }
  }

  it("[shell.find.results-bounded] FIND_MAX_RESULTS: at, below and above", async () => {
    await bounded(findTool, { pattern: "*.txt" }, limits.FIND_MAX_RESULTS, (shown) => `[Showing the first ${shown} files; there are more. Use a narrower pattern or path.]`);
  });

  it("[shell.ls.entries-bounded] ls lists one folder sorted with / for folders; LS_MAX_ENTRIES: at, below and above", async () => {
    const dir = tree({ "b.txt": "", "a/x": "", ".dot": "", "C": "" });
    mkdirSync(join(dir, "empty"));
    expect((await run(lsTool, {}, dir)).output).toBe(".dot\nC\na/\nb.txt\nempty/");
    expect((await run(lsTool, { path: "empty" }, dir)).output).toBe("(empty folder)");
    expect((await failure(lsTool, { path: "b.txt" }, dir)).message).toBe("Cannot list b.txt: it is not a folder.");
    expect((await failure(lsTool, { path: "nope" }, dir)).message).toBe("Cannot list nope: does not exist.");
    await bounded(lsTool, {}, limits.LS_MAX_ENTRIES, (shown, total) => `[${total - shown} more entries not shown (${total} in total). Use find or shell to filter.]`);
  });
});
