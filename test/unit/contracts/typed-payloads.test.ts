// Event payloads are their generated types everywhere in handwritten/: a payload is never coerced
// field by field (`String(data.x)`, `Number(c.data.y)`) nor forced through a double cast. The few
// places where untyped data becomes a typed event (after its schema check) are named functions in
// protocol/messages.ts and the bus, and use single casts the compiler still checks for overlap.
import { describe, expect, it } from "vitest";
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { REPO_ROOT } from "../../support/paths.js";

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith(".ts") ? [p] : [];
  });
}

const FORBIDDEN: ReadonlyArray<[string, RegExp]> = [
  ["a payload field coerced with String()", /\bString\([^()]*\bdata\b[^()]*\)/],
  ["a payload field coerced with Number()", /\bNumber\([^()]*\bdata\b[^()]*\)/],
  ["a double cast", /\bas unknown as\b/],
];

describe("typed payloads", () => {
  it("[contracts.typed.no-payload-coercions] no handwritten module coerces an event payload's fields or double-casts", () => {
    const root = join(REPO_ROOT, "handwritten");
    const found: string[] = [];
    for (const file of sources(root)) {
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          for (const [what, re] of FORBIDDEN) if (re.test(line)) found.push(`handwritten/${relative(root, file)}:${i + 1}: ${what}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it("[contracts.typed.check-can-fail] the check finds each form it forbids", () => {
    const samples = ["const id = String(c.data.agent_id);", "const n = Number(data.round) + 1;", "const r = c.data as unknown as UiSkillLoad;"];
    expect(samples.map((s) => FORBIDDEN.some(([, re]) => re.test(s)))).toEqual([true, true, true]);
  });
});
