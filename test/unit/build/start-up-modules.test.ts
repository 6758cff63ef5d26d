// What loading a fast bundle costs in node's own modules: none of them starts node's crypto (6-13 ms
// of a process's start-up), which tau loads only where it hashes or makes a TLS connection, and the
// shell extension leaves node:child_process (about 7 ms) until it is ready.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../support/paths.js";

/** node's internal modules that loading `dist/fast/<name>.cjs` (its top level, not its main) adds. */
function modulesLoadedBy(name: string): string[] {
  const code = `const { loadBundle } = require(${JSON.stringify(join(REPO_ROOT, "bin", "bundle-loader.cjs"))});
const before = new Set(process.moduleLoadList);
loadBundle(${JSON.stringify(join(REPO_ROOT, "dist", "fast", `${name}.cjs`))});
process.stdout.write(JSON.stringify(process.moduleLoadList.filter((m) => !before.has(m))));`;
  const env: NodeJS.ProcessEnv = { ...process.env, TAU_CODE_CACHE: "0" };
  delete env.NODE_EXTRA_CA_CERTS; // it would start crypto before the bundle loads
  return JSON.parse(execFileSync(process.execPath, ["-e", code], { env, encoding: "utf8" })) as string[];
}

describe("fast bundles at start-up", () => {
  it.each(["run", "run-prompt", "run-early-daemon", "daemon", "daemon-harness", "ext-shell", "ext-provider"])("[build.start-up.no-crypto] %s loads without node's crypto", (name) => {
    const loaded = modulesLoadedBy(name);
    expect(loaded.length).toBeGreaterThan(0); // the probe sees what a bundle loads
    expect(loaded.filter((m) => /crypto|tls|https/.test(m))).toEqual([]);
  });

  it("[build.start-up.no-crypto] the shell extension loads node:child_process only once it is ready (its boot gates every session's activation)", () => {
    expect(modulesLoadedBy("ext-shell").filter((m) => /child_process/.test(m))).toEqual([]);
  });
});
