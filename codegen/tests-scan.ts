// Finds which required test ids the test suite implements: a test whose title begins with `[id]`.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export const TITLE = /\b(it|test)(\.todo|\.each\([A-Za-z0-9_$.]*\)|\.skip|\.only)?\(\s*["'`]\[([a-z0-9]+(?:[.-][a-z0-9]+)+)\]/g;

export interface TestScan {
  implemented: Set<string>;
  todo: Set<string>;
  skipped: Set<string>;
}

export function scanTests(root: string, dirs: readonly string[], extra: readonly string[]): TestScan {
  const scan: TestScan = { implemented: new Set(), todo: new Set(), skipped: new Set() };
  const texts = [...extra];
  for (const d of dirs) for (const f of walk(join(root, d))) texts.push(readFileSync(f, "utf8"));
  for (const text of texts) {
    for (const m of text.matchAll(TITLE)) {
      const id = m[3] ?? "";
      const modifier = m[2] ?? "";
      if (modifier === ".todo") scan.todo.add(id);
      else if (modifier === ".skip") scan.skipped.add(id);
      else scan.implemented.add(id);
    }
  }
  return scan;
}

export function walk(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir).sort();
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of entries) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isDirectory()) out.push(...walk(path));
    else if (/\.test\.ts$/.test(name) && name !== "gates.todo.test.ts") out.push(path);
  }
  return out;
}
