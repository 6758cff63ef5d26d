// Where a path lands (SPEC-shell-tools, "Where a path lands"): files and folders judged by the
// descriptor, writes made inside the opened folder, and a folder moved or swapped for a link
// between the judgement and the write refused — with /proc/self/fd (Linux) and with the fallback
// used where there is none (macOS), which is run here on Linux too.
import { execFileSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, renameSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Opener } from "../../../handwritten/extensions/shell/tools/landing.js";
import { readTool } from "../../../handwritten/extensions/shell/tools/index.js";
import { failure, tempDir } from "./helpers.js";

describe.each([
  ["/proc/self/fd", new Opener(true)],
  ["the verify-after-open fallback", new Opener(false)],
])("landing with %s", (_, open) => {
  it("a file or folder reached through links is judged where it lands", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "real"));
    writeFileSync(join(dir, "real", "f.txt"), "x");
    symlinkSync(join(dir, "real"), join(dir, "link"));
    symlinkSync(join(dir, "link", "f.txt"), join(dir, "f-link"));
    const file = await open.openFile(join(dir, "f-link"));
    const folder = await open.openFolder(join(dir, "link"));
    try {
      expect(file.real).toBe(join(dir, "real", "f.txt"));
      expect(folder.real).toBe(join(dir, "real"));
      expect(readdirSync(open.at(folder))).toEqual(["f.txt"]);
      // A child opened through its folder is never a link.
      const child = await open.openChild(folder, "f.txt", "file");
      expect(child?.real).toBe(join(dir, "real", "f.txt"));
      await child?.handle.close();
      const top = await open.openFolder(dir);
      expect(await open.openChild(top, "link", "folder")).toBeUndefined();
      await top.handle.close();
    } finally {
      await file.handle.close();
      await folder.handle.close();
    }
  });

  it("a write follows a link to a file (the link stays), keeps the mode, and creates missing folders inside the opened one", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "target.txt"), "old");
    chmodSync(join(dir, "target.txt"), 0o640);
    symlinkSync("target.txt", join(dir, "via-link"));
    const spot = await open.findWriteSpot(join(dir, "via-link"), "via-link");
    expect(spot).toMatchObject({ real: join(dir, "target.txt"), missing: [], name: "target.txt", mode: 0o640 });
    await open.replace(spot, "new", "via-link");
    expect(lstatSync(join(dir, "via-link")).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, "target.txt"), "utf8")).toBe("new");
    expect(statSync(join(dir, "target.txt")).mode & 0o777).toBe(0o640);

    const deep = await open.findWriteSpot(join(dir, "a", "b", "c.txt"), "a/b/c.txt");
    expect(deep).toMatchObject({ real: join(dir, "a", "b", "c.txt"), missing: ["a", "b"], name: "c.txt", mode: undefined });
    await open.replace(deep, "deep", "a/b/c.txt");
    expect(readFileSync(join(dir, "a", "b", "c.txt"), "utf8")).toBe("deep");
    expect(readdirSync(join(dir, "a", "b"))).toEqual(["c.txt"]);
  });

  it("a folder swapped for a link between the judgement and the write: refused, nothing written anywhere", async () => {
    const dir = tempDir();
    const elsewhere = join(dir, "elsewhere");
    mkdirSync(elsewhere);
    mkdirSync(join(dir, "d"));
    const spot = await open.findWriteSpot(join(dir, "d", "f.txt"), "d/f.txt");
    expect(spot.real).toBe(join(dir, "d", "f.txt"));
    renameSync(join(dir, "d"), join(dir, "d-moved"));
    symlinkSync(elsewhere, join(dir, "d"));
    await expect(open.replace(spot, "x", "d/f.txt")).rejects.toThrow("a folder on its path was moved or replaced while it was being written; nothing was written");
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(readdirSync(join(dir, "d-moved"))).toEqual([]);
  });

  it("a missing folder made a link between the judgement and the write: refused, nothing written where it leads", async () => {
    const dir = tempDir();
    const elsewhere = join(dir, "elsewhere");
    mkdirSync(elsewhere);
    const spot = await open.findWriteSpot(join(dir, "new", "f.txt"), "new/f.txt");
    expect(spot.missing).toEqual(["new"]);
    symlinkSync(elsewhere, join(dir, "new"));
    await expect(open.replace(spot, "x", "new/f.txt")).rejects.toThrow("moved or replaced");
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(readlinkSync(join(dir, "new"))).toBe(elsewhere);
  });
});

describe("reading", () => {
  it("a FIFO is refused at once instead of blocking the tool", async () => {
    const dir = tempDir();
    execFileSync("mkfifo", [join(dir, "pipe")]);
    expect((await failure(readTool, { path: "pipe" }, dir)).message).toBe("Cannot read pipe: it is not a regular file.");
  });
});
