// Where each gate test id is implemented: test titles beginning with `[id]` in test/, examples/ and
// generated/tests/, with the file and line of each, found with codegen's own test scanner pattern.
import { readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { TITLE, walk } from "../tests-scan.js";

export type TestState = "test" | "todo" | "skip";

export interface TestLocation {
  file: string;
  line: number;
  state: TestState;
}

export const SCANNED_DIRS = ["test", "examples", "generated/tests"] as const;

export function scanTestLocations(root: string): Map<string, TestLocation[]> {
  const out = new Map<string, TestLocation[]>();
  const files = SCANNED_DIRS.flatMap((d) => walk(join(root, d)))
    .map((abs) => ({ abs, rel: relative(root, abs).split(sep).join("/") }))
    .sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  for (const { abs, rel } of files) {
    const text = readFileSync(abs, "utf8");
    for (const m of text.matchAll(TITLE)) {
      const id = m[3] ?? "";
      const modifier = m[2] ?? "";
      const state: TestState = modifier === ".todo" ? "todo" : modifier === ".skip" ? "skip" : "test";
      const line = text.slice(0, m.index ?? 0).split("\n").length;
      const list = out.get(id) ?? [];
      list.push({ file: rel, line, state });
      out.set(id, list);
    }
  }
  return out;
}
