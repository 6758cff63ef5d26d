// A throwaway copy of the contract sources (spec/, records/, generated/, tests) and of handwritten/
// (which codegen checks for conformance) for codegen tests,
// with node_modules linked so TypeSpec resolves its libraries; useScratchRoots removes them after
// each test, codegenProblems lists what codegen finds wrong in one.
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "../../codegen/main.js";
import { AggregateCodegenError } from "../../codegen/errors.js";
import { REPO_ROOT } from "./paths.js";
import { afterEach } from "vitest";

export function scratchRoot(prefix = "tau-codegen-test-"): { root: string; dispose: () => void } {
  const root = mkdtempSync(join(tmpdir(), prefix));
  for (const dir of ["spec", "records", "generated", "handwritten", "test", "examples", "codegen"]) {
    const src = join(REPO_ROOT, dir);
    if (existsSync(src)) cpSync(src, join(root, dir), { recursive: true });
  }
  cpSync(join(REPO_ROOT, "package.json"), join(root, "package.json"));
  symlinkSync(join(REPO_ROOT, "node_modules"), join(root, "node_modules"), "dir");
  return { root, dispose: () => rmSync(root, { recursive: true, force: true }) };
}

/** A maker of scratch roots (see scratchRoot), each removed after the test that made it. Call at the top level of a test file. */
export function useScratchRoots(): () => string {
  const disposers: Array<() => void> = [];
  afterEach(() => {
    while (disposers.length > 0) disposers.pop()?.();
  });
  return () => {
    const s = scratchRoot();
    disposers.push(s.dispose);
    return s.root;
  };
}

/** The messages of the problems codegen finds in `root` (none when it generates). */
export async function codegenProblems(root: string): Promise<string[]> {
  try {
    await generate(root);
  } catch (err) {
    if (err instanceof AggregateCodegenError) return err.problems.map((p) => p.message);
    throw err;
  }
  return [];
}
