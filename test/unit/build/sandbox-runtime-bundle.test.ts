// The sandbox runtime bundled on its own (dist/fast/sandbox-runtime.cjs, build.ts) behaves as the
// package does from node_modules: it finds its own helper programs (the seccomp filter beside its
// files), its dependency check gives the same answer, and its `which` runs no process; node-forge
// is initialized on first use only; bubblewrap's version is asked of tau before `bwrap --version`;
// an empty working directory is not searched with ripgrep, any other still is.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BRIDGE_ID_HOOK, BWRAP_VERSION_HOOK, FORGE_LOADED_HOOK } from "../../../handwritten/extensions/shell/sandbox/runtime-hooks.js";
import { REPO_ROOT } from "../../support/paths.js";

const BUNDLE = join(REPO_ROOT, "dist", "fast", "sandbox-runtime.cjs");

/** `checkDependencies()` of the runtime loaded as `how`, and the child processes it started, in a node of its own. */
function dependencyCheck(how: "bundle" | "package", prelude = ""): { errors: string[]; warnings: string[]; spawned: string[]; told?: string[] } {
  const load =
    how === "bundle"
      ? `require(${JSON.stringify(join(REPO_ROOT, "bin", "bundle-loader.cjs"))}).loadBundle(${JSON.stringify(BUNDLE)}).exports`
      : `require(${JSON.stringify(join(REPO_ROOT, "node_modules", "@anthropic-ai", "sandbox-runtime"))})`;
  const code = `const cp = require("node:child_process");
const spawned = [];
${prelude}
const spawnSync = cp.spawnSync;
cp.spawnSync = (file, args, o) => (spawned.push(file), spawnSync(file, args, o));
const { SandboxManager } = ${load};
const r = SandboxManager.checkDependencies();
process.stdout.write(JSON.stringify({ ...r, spawned, ...(globalThis.told ? { told: globalThis.told } : {}) }));`;
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

  it("[build.sandbox-runtime.forge-on-first-use] loads and checks its dependencies without initializing node-forge, which still works once used", () => {
    const load = (what: string): string => `require(${JSON.stringify(join(REPO_ROOT, "bin", "bundle-loader.cjs"))}).loadBundle(${JSON.stringify(BUNDLE)}).exports`.replace("exports", what);
    const code = `const r = ${load("exports")};
const loaded = () => globalThis[Symbol.for(${JSON.stringify(FORGE_LOADED_HOOK)})] === true;
r.SandboxManager.checkDependencies();
const before = loaded();
const ca = r.generateCa({ cn: "tau test CA" });
const pkg = require(${JSON.stringify(join(REPO_ROOT, "node_modules", "@anthropic-ai", "sandbox-runtime"))});
process.stdout.write(JSON.stringify({ before, after: loaded(), pem: ca.certPem.startsWith("-----BEGIN CERTIFICATE-----"), valid: pkg.validateCaPair(ca.certPem, ca.keyPem), thumb: r.certThumbprint(ca.certPem) === pkg.certThumbprint(ca.certPem) }));`;
    const out = JSON.parse(execFileSync(process.execPath, ["-e", code], { cwd: REPO_ROOT, env: { ...process.env, TAU_CODE_CACHE: "0" }, encoding: "utf8" })) as Record<string, unknown>;
    expect(out).toMatchObject({ before: false, after: true, pem: true, thumb: true });
    // The package's own check of the pair: undefined or a result without an error.
    expect(JSON.stringify(out.valid ?? {})).not.toMatch(/error/i);
  });

  it("[build.sandbox-runtime.bwrap-version-kept] asks tau for bubblewrap's version before running `bwrap --version`, and tells it what it found", () => {
    const hook = (answer: string | undefined): string =>
      `globalThis.told = []; globalThis[Symbol.for(${JSON.stringify(BWRAP_VERSION_HOOK)})] = { get: () => ${answer === undefined ? "undefined" : JSON.stringify(answer)}, set: (b, v) => globalThis.told.push(v) };`;
    const kept = dependencyCheck("bundle", hook("0.4.0"));
    expect(kept.spawned.filter((f) => f.endsWith("bwrap"))).toEqual([]);
    expect(kept.warnings.join(" ")).toContain("bubblewrap 0.4.0");
    expect(kept.told).toEqual([]);
    const asked = dependencyCheck("bundle", hook(undefined));
    expect(asked.spawned.some((f) => f.endsWith("bwrap"))).toBe(true);
    expect(asked.told).toHaveLength(1);
    expect(asked.told?.[0]).toMatch(/^\d+(\.\d+)+$/);
    expect(asked.warnings.join(" ")).not.toContain("older than");
  });

  it("[build.sandbox-runtime.empty-folder-not-searched] wraps from an empty working directory without ripgrep, and still finds a protected name below any other", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tau-rt-cwd-"));
    try {
      const empty = join(dir, "empty");
      const full = join(dir, "full");
      mkdirSync(empty);
      mkdirSync(join(full, "sub"), { recursive: true });
      writeFileSync(join(full, "sub", ".bashrc"), "");
      const code = `const cp = require("node:child_process");
const spawned = [];
const spawn = cp.spawn;
cp.spawn = (file, args, o) => (spawned.push(file), spawn(file, args, o));
const { SandboxManager } = require(${JSON.stringify(join(REPO_ROOT, "bin", "bundle-loader.cjs"))}).loadBundle(${JSON.stringify(BUNDLE)}).exports;
(async () => {
  // Writable, so the protected names below are bound read-only.
  await SandboxManager.initialize({ network: { allowedDomains: [], deniedDomains: [] }, filesystem: { denyRead: [], allowWrite: [${JSON.stringify(dir)}], denyWrite: [] } });
  const out = {};
  for (const where of [${JSON.stringify(empty)}, ${JSON.stringify(full)}]) {
    process.chdir(where);
    const before = spawned.length;
    const wrapped = await SandboxManager.wrapWithSandbox("true");
    out[where] = { rg: spawned.slice(before).some((f) => /(^|\\/)rg$/.test(f)), bashrc: wrapped.includes(${JSON.stringify(join(full, "sub", ".bashrc"))}) };
    SandboxManager.cleanupAfterCommand();
  }
  await SandboxManager.reset();
  process.stdout.write(JSON.stringify(out));
})();`;
      const out = JSON.parse(execFileSync(process.execPath, ["-e", code], { cwd: REPO_ROOT, env: { ...process.env, TAU_CODE_CACHE: "0" }, encoding: "utf8" })) as Record<string, { rg: boolean; bashrc: boolean }>;
      expect(out[empty]).toEqual({ rg: false, bashrc: false });
      expect(out[full]).toEqual({ rg: true, bashrc: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
