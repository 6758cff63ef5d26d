// Globs and the sorted, .gitignore-aware walk behind grep and find (SPEC-shell-tools).
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileGlob, globToRegExp } from "../../../handwritten/extensions/shell/tools/glob.js";
import { walkFiles } from "../../../handwritten/extensions/shell/tools/walk.js";
import { tempDir } from "./helpers.js";

describe("globs", () => {
  it("follow the ripgrep/gitignore dialect", () => {
    const t = (glob: string, path: string) => compileGlob(glob)(path);
    expect(t("*.ts", "a/b/c.ts")).toBe(true);
    expect(t("*.ts", "a/b/c.tsx")).toBe(false);
    expect(t("src/*.ts", "src/a.ts")).toBe(true);
    expect(t("src/*.ts", "src/x/a.ts")).toBe(false);
    expect(t("src/**/*.ts", "src/a.ts")).toBe(true);
    expect(t("src/**/*.ts", "src/x/y/a.ts")).toBe(true);
    expect(t("**/test/*.ts", "test/a.ts")).toBe(true);
    expect(t("*.{ts,js}", "a.js")).toBe(true);
    expect(t("file?.[ch]", "file1.c")).toBe(true);
    expect(t("file[!0-9].c", "file1.c")).toBe(false);
    expect(t("a\\*b", "a*b")).toBe(true);
    expect(t("a.b", "aXb")).toBe(false);
    expect(() => globToRegExp("{a,b")).toThrow(/unclosed/);
  });
});

describe("walkFiles", () => {
  it("walks in name order, skips .git, node_modules, links and .gitignore'd paths", async () => {
    const dir = tempDir();
    const files = ["b.txt", "a/z.txt", "a/y.log", "a-b.txt", ".hidden", ".git/config", "node_modules/m/i.js", "build/out.js", "sub/keep.log", "sub/deep/x.tmp", "sub/deep/x.txt"];
    for (const file of files) {
      mkdirSync(join(dir, file, ".."), { recursive: true });
      writeFileSync(join(dir, file), "x");
    }
    writeFileSync(join(dir, ".gitignore"), "# comment\n*.log\nbuild/\n/sub/deep/*.tmp\n");
    writeFileSync(join(dir, "sub/.gitignore"), "!keep.log\n");
    symlinkSync("b.txt", join(dir, "link.txt"));
    const seen: string[] = [];
    for await (const entry of walkFiles(dir, { signal: new AbortController().signal })) seen.push(entry.relative);
    expect(seen).toEqual([".gitignore", ".hidden", "a/z.txt", "a-b.txt", "b.txt", "sub/.gitignore", "sub/deep/x.txt", "sub/keep.log"]);
  });
});
