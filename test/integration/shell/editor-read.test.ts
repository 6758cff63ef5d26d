// `read` with an editor's text (SPEC-acp, "The editor's files"): the real read tool on real files;
// the editor is a stand-in answering with its own text (an external party, as an ACP client is).
import { mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readTool, type EditorFiles } from "../../../handwritten/extensions/shell/tools/index.js";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

function folder(): string {
  const d = mkdtempSync(join(tmpdir(), "tau-editor-read-"));
  made.push(d);
  return d;
}

const run = (cwd: string, editor: EditorFiles, args: object) => readTool.run(args, { cwd, signal: new AbortController().signal, editor });

describe("read with the editor's text", () => {
  it("[acp.files.editor-read-pinned] the editor's answer counts only while the path lands on the file it was asked about: a path swapped during the editor's read is read from disk", async () => {
    const cwd = folder();
    writeFileSync(join(cwd, "a.txt"), "disk a\n");
    writeFileSync(join(cwd, "other.txt"), "the other file\n");
    const asked: string[] = [];
    const steady: EditorFiles = { read: async (path) => (asked.push(path), "editor a\n") };
    expect((await run(cwd, steady, { path: "a.txt" })).output).toContain("editor a");
    // While the editor reads, the path is swapped for another file (as a racing command would).
    const swapping: EditorFiles = {
      read: async () => {
        renameSync(join(cwd, "other.txt"), join(cwd, "a.txt"));
        return "editor a\n";
      },
    };
    const swapped = await run(cwd, swapping, { path: "a.txt" });
    expect(swapped.output).toContain("the other file");
    expect(swapped.output).not.toContain("editor a");
    expect(asked).toEqual([join(cwd, "a.txt")]);
  });

  it("[acp.files.editor-read-bounds] the editor is asked about where the file really is, for one line more than shown; its lines are numbered from the offset and paged like the disk's", async () => {
    const cwd = folder();
    writeFileSync(join(cwd, "real.txt"), "1\n2\n3\n4\n");
    symlinkSync(join(cwd, "real.txt"), join(cwd, "link.txt"));
    const asked: Array<[string, number, number]> = [];
    const editor: EditorFiles = { read: async (path, line, limit) => (asked.push([path, line, limit]), "two\nthree\nfour\n") };
    const r = await run(cwd, editor, { path: "link.txt", offset: 2, limit: 2 });
    expect(asked).toEqual([[join(cwd, "real.txt"), 2, 3]]);
    expect(r.output.split("\n").slice(0, 2)).toEqual(["     2\ttwo", "     3\tthree"]);
    expect(r.output).toContain("More lines follow: use offset=4 to continue.");
    expect(r.display?.summary).toBe("lines 2-3 (the editor's text)");
    // No answer: the disk.
    const silent: EditorFiles = { read: async () => undefined };
    expect((await run(cwd, silent, { path: "real.txt" })).output).toContain("     4\t4");
  });
});
