// Per-agent working directories fail closed (SPEC-shell-tools).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { changeWorkdir, resolveWorkdir } from "../../../handwritten/extensions/shell/tools/index.js";
import { tempDir } from "./helpers.js";

describe("resolveWorkdir", () => {
  it("[shell.workdir.fails-closed] uses the remembered folder, or the project root when none is remembered", async () => {
    const root = tempDir();
    mkdirSync(join(root, "pkg"));
    expect(await resolveWorkdir(undefined, root)).toBe(root);
    expect(await resolveWorkdir(join(root, "pkg"), root)).toBe(join(root, "pkg"));
  });

  it("[shell.workdir.fails-closed] malformed, vanished or non-folder remembered paths are errors, never the project root", async () => {
    const root = tempDir();
    const cases: [string, RegExp][] = [
      ["relative/path", /is malformed: it is not an absolute path\. Set it again explicitly\./],
      ["", /is malformed: it is empty/],
      [`${root}/a/../b`, /is malformed: it is not a normalised path/],
      [`${root}/`, /is malformed: it is not a normalised path/],
      [`${root}/x\0y`, /is malformed: it contains a NUL character/],
      [`/${"a".repeat(5000)}`, /is malformed: it is longer than 4096 characters/],
      [join(root, "gone"), /is unavailable \(does not exist\)\. Set it again explicitly\./],
    ];
    writeFileSync(join(root, "file"), "");
    cases.push([join(root, "file"), /is no longer a directory/]);
    for (const [remembered, message] of cases) {
      await expect(resolveWorkdir(remembered, root), JSON.stringify(remembered.slice(0, 40))).rejects.toThrow(message);
    }
    const later = join(root, "later");
    mkdirSync(later);
    expect(await resolveWorkdir(later, root)).toBe(later);
    rmSync(later, { recursive: true });
    await expect(resolveWorkdir(later, root)).rejects.toMatchObject({ code: "failed" });
  });

  it("changeWorkdir resolves relative to the current folder and requires an existing folder", async () => {
    const root = tempDir();
    mkdirSync(join(root, "a/b"), { recursive: true });
    expect(await changeWorkdir(root, "a/b")).toBe(join(root, "a/b"));
    expect(await changeWorkdir(join(root, "a/b"), "../..")).toBe(root);
    await expect(changeWorkdir(root, "missing")).rejects.toThrow(/unavailable/);
  });
});
