// The edit and write tools: exact unique replacements, all or nothing, atomic writes that keep the
// mode (SPEC-shell-tools).
import { chmodSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, lstatSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applyEdits, editTool, limits, writeTool } from "../../../handwritten/extensions/shell/tools/index.js";
import { boundDiff } from "../../../handwritten/extensions/shell/tools/diff.js";
import { failure, run, tempDir } from "./helpers.js";

describe("edit", () => {
  it("[shell.edit.exact-unique] no match names the edit and shows the closest line; nothing is written", async () => {
    const dir = tempDir();
    const file = join(dir, "a.ts");
    writeFileSync(file, "function alpha() {\n  return 1;\n}\n");
    const error = await failure(editTool, { path: "a.ts", edits: [{ old_text: "function alfa() {", new_text: "x" }] }, dir);
    expect(error.code).toBe("failed");
    expect(error.message).toBe(
      'edits[0]: old_text was not found in a.ts. The closest line is 1: "function alpha() {". ' +
        "Nothing was changed; read the file again and copy old_text exactly.",
    );
    const ws = await failure(editTool, { path: "a.ts", edits: [{ old_text: "return  1;", new_text: "x" }] }, dir);
    expect(ws.message).toContain('The closest line is 2: "  return 1;" (it matches when whitespace is ignored');
    const none = await failure(editTool, { path: "a.ts", edits: [{ old_text: "zzzz qqqq", new_text: "x" }] }, dir);
    expect(none.message).toContain("No line of the file resembles its first line.");
    expect(readFileSync(file, "utf8")).toBe("function alpha() {\n  return 1;\n}\n");
  });

  it("[shell.edit.exact-unique] several matches give the count and line numbers", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "a.txt"), "x = 1\ny = 2\nx = 1\n\nx = 1\n");
    const error = await failure(editTool, { path: "a.txt", edits: [{ old_text: "x = 1", new_text: "x = 2" }] }, dir);
    expect(error.message).toBe(
      "edits[0]: old_text matches 3 times in a.txt (lines 1, 3, 5). Nothing was changed; include more surrounding text in old_text so it matches exactly once.",
    );
  });

  it("[shell.edit.exact-unique] EDIT_MAX_LISTED_MATCHES line numbers at most: at, below and above", () => {
    const max = limits.EDIT_MAX_LISTED_MATCHES;
    const message = (n: number): string => {
      try {
        applyEdits("hit\n".repeat(n), [{ old_text: "hit", new_text: "miss" }], "f");
      } catch (error) {
        return (error as Error).message;
      }
      return "";
    };
    const numbers = (n: number) => Array.from({ length: n }, (_, i) => i + 1).join(", ");
    expect(message(max - 1)).toContain(`matches ${max - 1} times in f (lines ${numbers(max - 1)})`);
    expect(message(max)).toContain(`matches ${max} times in f (lines ${numbers(max)})`);
    expect(message(max + 1)).toContain(`matches ${max + 1} times in f (lines ${numbers(max)}, …)`);
    expect(message(100)).toContain(`matches 100 times in f (lines ${numbers(max)}, …)`);
  });

  it("[shell.edit.exact-unique] several edits apply in order to the current content, all or nothing", async () => {
    const dir = tempDir();
    const file = join(dir, "a.txt");
    writeFileSync(file, "one\ntwo\nthree\n");
    const ok = await run(
      editTool,
      {
        path: "a.txt",
        edits: [
          { old_text: "one", new_text: "ONE\nuno" },
          { old_text: "ONE\nuno\ntwo", new_text: "two" }, // sees the first edit's result
          { old_text: "three", new_text: "3" },
        ],
      },
      dir,
    );
    expect(readFileSync(file, "utf8")).toBe("two\n3\n");
    expect(ok.output).toBe("Edited a.txt: 3 replacements (+1 -2 lines).");
    expect(ok.display?.diff).toBe("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,2 @@\n-one\n two\n-three\n+3\n");

    // The second edit fails: the first is not written either.
    const error = await failure(
      editTool,
      { path: "a.txt", edits: [{ old_text: "two", new_text: "2" }, { old_text: "two", new_text: "deux" }] },
      dir,
    );
    expect(error.message).toMatch(/^edits\[1\]: old_text was not found in a.txt \(after the earlier edits of this call\)\./);
    expect(readFileSync(file, "utf8")).toBe("two\n3\n");
    expect(readdirSync(dir)).toEqual(["a.txt"]);

    const same = await failure(editTool, { path: "a.txt", edits: [{ old_text: "two", new_text: "two" }] }, dir);
    expect(same.message).toBe("edits[0]: old_text and new_text are identical. Nothing was changed.");
  });

  it("[shell.edit.exact-unique] CRLF files accept LF old_text; mode is kept; binary, missing and large files are refused", async () => {
    const dir = tempDir();
    const file = join(dir, "w.txt");
    writeFileSync(file, "a\r\nb\r\nc\r\n");
    chmodSync(file, 0o751);
    await run(editTool, { path: "w.txt", edits: [{ old_text: "a\nb", new_text: "x\ny" }] }, dir);
    expect(readFileSync(file, "utf8")).toBe("x\r\ny\r\nc\r\n");
    expect(statSync(file).mode & 0o777).toBe(0o751);

    writeFileSync(join(dir, "b.bin"), Buffer.from([1, 0, 2]));
    expect((await failure(editTool, { path: "b.bin", edits: [{ old_text: "a", new_text: "b" }] }, dir)).message).toBe("Cannot edit b.bin: it is a binary file.");
    expect((await failure(editTool, { path: "no.txt", edits: [{ old_text: "a", new_text: "b" }] }, dir)).message).toBe("Cannot edit no.txt: does not exist.");

    const max = limits.EDIT_MAX_FILE_BYTES;
    for (const [size, ok] of [
      [max - 1, true],
      [max, true],
      [max + 1, false],
    ] as const) {
      writeFileSync(join(dir, "big.txt"), Buffer.concat([Buffer.alloc(size - 1, 0x61), Buffer.from("Z")]));
      const edit = { path: "big.txt", edits: [{ old_text: "aZ", new_text: "aY" }] };
      if (ok) await run(editTool, edit, dir);
      else expect((await failure(editTool, edit, dir)).message).toBe(`Cannot edit big.txt: it is ${size} bytes, more than the ${max}-byte limit.`);
    }
  });
});

describe("write", () => {
  it("creates parent folders, replaces atomically, keeps mode and symbolic links, and shows a diff", async () => {
    const dir = tempDir();
    const created = await run(writeTool, { path: "deep/er/new.txt", content: "hello\nworld\n" }, dir);
    expect(created.output).toBe("Created deep/er/new.txt (2 lines, 12 bytes).");
    expect(created.display?.diff).toBe("--- a/deep/er/new.txt\n+++ b/deep/er/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n");
    expect(readFileSync(join(dir, "deep/er/new.txt"), "utf8")).toBe("hello\nworld\n");

    const file = join(dir, "script.sh");
    writeFileSync(file, "echo old\n");
    chmodSync(file, 0o700);
    const replaced = await run(writeTool, { path: "script.sh", content: "echo new\n" }, dir);
    expect(replaced.output).toBe("Replaced script.sh (1 line, 9 bytes).");
    expect(replaced.display?.summary).toBe("+1 -1");
    expect(statSync(file).mode & 0o777).toBe(0o700);
    expect(readdirSync(dir).sort()).toEqual(["deep", "script.sh"]); // no temporary file left

    symlinkSync("script.sh", join(dir, "link.sh"));
    await run(writeTool, { path: "link.sh", content: "echo via link\n" }, dir);
    expect(lstatSync(join(dir, "link.sh")).isSymbolicLink()).toBe(true);
    expect(readFileSync(file, "utf8")).toBe("echo via link\n");

    mkdirSync(join(dir, "folder"));
    expect((await failure(writeTool, { path: "folder", content: "x" }, dir)).message).toBe("Cannot write folder: it is a directory.");
    writeFileSync(join(dir, "blocker"), "");
    expect((await failure(writeTool, { path: "blocker/x.txt", content: "x" }, dir)).message).toMatch(/^Cannot (create the folder of|write) blocker\/x.txt/);
  });

  it("[shell.tools.diff-bound] display diffs are cut at DIFF_MAX_CHARS: at, below and above", () => {
    const max = limits.DIFF_MAX_CHARS;
    const text = (n: number) => `${"x".repeat(n - 1)}\n`;
    expect(boundDiff(text(max - 1))).toBe(text(max - 1));
    expect(boundDiff(text(max))).toBe(text(max));
    const cut = boundDiff(`${"a".repeat(99)}\n${text(max - 99)}`);
    expect(cut).toBe(`${"a".repeat(99)}\n[… diff cut: 1 more lines not shown]\n`);
  });
});
