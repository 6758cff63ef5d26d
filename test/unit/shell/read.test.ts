// The read tool: ranges, numbering, per-line and total truncation, binary refusal (SPEC-shell-tools).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { limits, readTool } from "../../../handwritten/extensions/shell/tools/index.js";
import { failure, run, tempDir } from "./helpers.js";

const lines = (n: number, make: (i: number) => string = (i) => `line ${i}`): string =>
  Array.from({ length: n }, (_, i) => `${make(i + 1)}\n`).join("");

describe("read", () => {
  it("[shell.read.ranges-and-truncation] line ranges, numbering and the note telling how to read on", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "f.txt"), lines(10));
    const all = await run(readTool, { path: "f.txt" }, dir);
    expect(all.output.split("\n")).toHaveLength(10);
    expect(all.output.split("\n")[0]).toBe("     1\tline 1");
    expect(all.output).not.toContain("[Showing");

    const middle = await run(readTool, { path: "f.txt", offset: 4, limit: 3 }, dir);
    expect(middle.output).toBe("     4\tline 4\n     5\tline 5\n     6\tline 6\n\n[Showing lines 4-6. More lines follow: use offset=7 to continue.]");
    expect(middle.display?.summary).toBe("lines 4-6");

    const tail = await run(readTool, { path: "f.txt", offset: 8, limit: 3 }, dir);
    expect(tail.output).toBe("     8\tline 8\n     9\tline 9\n    10\tline 10");

    const beyond = await failure(readTool, { path: "f.txt", offset: 11 }, dir);
    expect(beyond.message).toBe("Cannot read f.txt from line 11: the file has only 10 lines.");

    // Without a final newline, CRLF line ends, an empty file.
    writeFileSync(join(dir, "g.txt"), "a\r\nb\r\nc");
    expect((await run(readTool, { path: "g.txt" }, dir)).output).toBe("     1\ta\n     2\tb\n     3\tc");
    writeFileSync(join(dir, "empty.txt"), "");
    expect((await run(readTool, { path: "empty.txt" }, dir)).output).toBe("(empty.txt is empty)");
  });

  it("[shell.read.ranges-and-truncation] READ_MAX_LINES lines by default: at, below and above", async () => {
    const dir = tempDir();
    const max = limits.READ_MAX_LINES;
    for (const n of [max - 1, max, max + 1]) {
      writeFileSync(join(dir, `${n}.txt`), lines(n));
      const { output } = await run(readTool, { path: `${n}.txt` }, dir);
      const shown = output.split("\n").filter((l) => /^\s+\d+\t/.test(l));
      expect(shown).toHaveLength(Math.min(n, max));
      if (n > max) expect(output).toContain(`[Showing lines 1-${max}. More lines follow: use offset=${max + 1} to continue.]`);
      else expect(output).not.toContain("[Showing");
    }
  });

  it("[shell.read.ranges-and-truncation] lines over READ_MAX_LINE_CHARS are cut with a note: at, below and above", async () => {
    const dir = tempDir();
    const max = limits.READ_MAX_LINE_CHARS;
    writeFileSync(join(dir, "f.txt"), `${"a".repeat(max - 1)}\n${"b".repeat(max)}\n${"c".repeat(max + 1)}\n${"d".repeat(1_000_000)}\n`);
    const { output } = await run(readTool, { path: "f.txt" }, dir);
    const [one, two, three, four] = output.split("\n");
    expect(one).toBe(`     1\t${"a".repeat(max - 1)}`);
    expect(two).toBe(`     2\t${"b".repeat(max)}`);
    expect(three).toBe(`     3\t${"c".repeat(max)} … [line cut: ${max + 1} bytes in total]`);
    expect(four).toBe(`     4\t${"d".repeat(max)} … [line cut: 1000000 bytes in total]`);
    expect(output).toContain(`[Lines longer than ${max} characters were cut;`);
    // A cut never splits a surrogate pair.
    writeFileSync(join(dir, "emoji.txt"), `${"x".repeat(max - 1)}😀😀\n`);
    const emoji = (await run(readTool, { path: "emoji.txt" }, dir)).output.split("\n")[0] as string;
    expect(emoji).toBe(`     1\t${"x".repeat(max - 1)} … [line cut: ${max - 1 + 8} bytes in total]`);
  });

  it("[shell.read.ranges-and-truncation] READ_MAX_OUTPUT_BYTES of text per call: at, below and above", async () => {
    const dir = tempDir();
    const budget = limits.READ_MAX_OUTPUT_BYTES;
    const width = 1024;
    const count = budget / width; // 64 lines of 1024 bytes fill the budget exactly
    const body = (last: number) => lines(count - 1, () => "x".repeat(width)) + `${"y".repeat(last)}\n` + "tail\n";
    for (const [last, fits] of [
      [width - 1, true],
      [width, true],
      [width + 1, false],
    ] as const) {
      writeFileSync(join(dir, "f.txt"), body(last));
      const { output } = await run(readTool, { path: "f.txt", limit: count }, dir);
      const shown = output.split("\n").filter((l) => /^\s+\d+\t/.test(l));
      expect(shown).toHaveLength(fits ? count : count - 1);
      if (fits) expect(output).toContain(`[Showing lines 1-${count}. More lines follow: use offset=${count + 1} to continue.]`);
      else expect(output).toContain(`[Showing lines 1-${count - 1}: the ${budget}-byte output limit was reached. Use offset=${count} to continue.]`);
    }
  });

  it("[shell.read.ranges-and-truncation] binary files are refused; a NUL within BINARY_SNIFF_BYTES counts", async () => {
    const dir = tempDir();
    const sniff = limits.BINARY_SNIFF_BYTES;
    const withNulAt = (at: number) => {
      const bytes = Buffer.alloc(sniff + 100, 0x61);
      bytes[at] = 0;
      return bytes;
    };
    writeFileSync(join(dir, "below.bin"), withNulAt(sniff - 2));
    writeFileSync(join(dir, "at.bin"), withNulAt(sniff - 1));
    writeFileSync(join(dir, "above.bin"), withNulAt(sniff));
    expect((await failure(readTool, { path: "below.bin" }, dir)).message).toBe("Cannot read below.bin: it is a binary file.");
    expect((await failure(readTool, { path: "at.bin" }, dir)).message).toBe("Cannot read at.bin: it is a binary file.");
    expect((await run(readTool, { path: "above.bin" }, dir)).output).toMatch(/^\s+1\ta+/);
  });

  it("missing files, folders and cancelled calls give clear errors", async () => {
    const dir = tempDir();
    expect((await failure(readTool, { path: "nope.txt" }, dir)).message).toBe("Cannot read nope.txt: does not exist.");
    expect((await failure(readTool, { path: "." }, dir)).message).toBe("Cannot read .: it is a directory (use ls to list it).");
    writeFileSync(join(dir, "f.txt"), "x\n");
    const controller = new AbortController();
    controller.abort();
    await expect(readTool.run({ path: "f.txt" }, { cwd: dir, signal: controller.signal })).rejects.toMatchObject({ code: "cancelled" });
  });
});
