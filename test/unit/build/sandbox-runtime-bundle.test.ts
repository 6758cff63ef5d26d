// The sandbox runtime bundled on its own (dist/fast/sandbox-runtime.cjs, build.ts) behaves as the
// package does from node_modules: it finds its own helper programs (the seccomp filter beside its
// files), its dependency check gives the same answer, and its `which` runs no process.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BRIDGE_ID_HOOK } from "../../../handwritten/extensions/shell/sandbox/bridge-id.js";
import { REPO_ROOT } from "../../support/paths.js";

const BUNDLE = join(REPO_ROOT, "dist", "fast", "sandbox-runtime.cjs");

/** `checkDependencies()` of the runtime loaded as `how`, and the child processes it started, in a node of its own. */
function dependencyCheck(how: "bundle" | "package"): { errors: string[]; warnings: string[]; spawned: string[] } {
  const load =
    how === "bundle"
      ? `require(${JSON.stringify(join(REPO_ROOT, "bin", "bundle-loader.cjs"))}).loadBundle(${JSON.stringify(BUNDLE)}).exports`
      : `require(${JSON.stringify(join(REPO_ROOT, "node_modules", "@anthropic-ai", "sandbox-runtime"))})`;
  const code = `const cp = require("node:child_process");
const spawned = [];
const spawnSync = cp.spawnSync;
cp.spawnSync = (file, args, o) => (spawned.push(file), spawnSync(file, args, o));
const { SandboxManager } = ${load};
const r = SandboxManager.checkDependencies();
process.stdout.write(JSON.stringify({ ...r, spawned }));`;
  return JSON.parse(execFileSync(process.execPath, ["-e", code], { cwd: REPO_ROOT, env: { ...process.env, TAU_CODE_CACHE: "0" }, encoding: "utf8" })) as ReturnType<typeof dependencyCheck>;
}

describe("the sandbox runtime's own bundle", () => {
  it("[build.sandbox-runtime.same-as-package] finds its helper programs and checks its dependencies as the package does, running no `which`", () => {
    const text = readFileSync(BUNDLE, "latin1");
    expect(text).not.toMatch(/import\.meta/);
    // Its bridges' socket id is asked of tau first, so their sockets are listed before they start.
    expect(text).toContain(`Symbol.for(${JSON.stringify(BRIDGE_ID_HOOK)})`);
    const bundled = dependencyCheck("bundle");
    const packaged = dependencyCheck("package");
    expect({ errors: bundled.errors, warnings: bundled.warnings }).toEqual({ errors: packaged.errors, warnings: packaged.warnings });
    // The seccomp helper is found beside the package's files (a wrong path warns "seccomp not available").
    expect(bundled.warnings.join(" ")).not.toContain("seccomp not available");
    expect(packaged.spawned).toContain("which");
    expect(bundled.spawned).not.toContain("which");
  });
});
