// A throwaway copy of the contract sources (spec/, records/, generated/, tests) and of handwritten/
// (which codegen checks for conformance) for codegen tests,
// with node_modules linked so TypeSpec resolves its libraries.
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "./paths.js";

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
