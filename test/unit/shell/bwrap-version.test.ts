// bubblewrap's version kept between starts (bwrap-version.ts, SPEC-sandbox "Set-up"): offered back
// only for the very program it was found for; a program replaced in place is asked again.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BWRAP_VERSION_HOOK } from "../../../handwritten/extensions/shell/sandbox/runtime-hooks.js";
import { bwrapVersionFile, keepBwrapVersion } from "../../../handwritten/extensions/shell/sandbox/bwrap-version.js";

interface Hook {
  get(bwrap: string): string | undefined;
  set(bwrap: string, version: string): void;
}
const hook = (): Hook => (globalThis as Record<symbol, unknown>)[Symbol.for(BWRAP_VERSION_HOOK)] as Hook;

describe("bubblewrap's kept version", () => {
  const dirs: string[] = [];
  afterEach(() => {
    delete (globalThis as Record<symbol, unknown>)[Symbol.for(BWRAP_VERSION_HOOK)];
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("[sandbox.probes.bwrap-version-identity] is offered for the same program only: another path, a replaced or touched file, or a damaged record is asked again", () => {
    const dir = mkdtempSync(join(tmpdir(), "tau-bwrap-version-"));
    dirs.push(dir);
    const state = join(dir, "state");
    const bwrap = join(dir, "bwrap");
    writeFileSync(bwrap, "#!/bin/sh\necho bubblewrap 0.8.0\n", { mode: 0o755 });
    keepBwrapVersion(state);
    expect(hook().get(bwrap)).toBeUndefined();
    hook().set(bwrap, "0.8.0");
    expect(hook().get(bwrap)).toBe("0.8.0");
    expect(statSync(bwrapVersionFile(state)).mode & 0o777).toBe(0o600);
    // Another program at another path.
    const other = join(dir, "bwrap2");
    copyFileSync(bwrap, other);
    expect(hook().get(other)).toBeUndefined();
    // The same path, the file replaced (a new inode) or touched (new times).
    rmSync(bwrap);
    writeFileSync(bwrap, "#!/bin/sh\necho bubblewrap 0.4.0\n", { mode: 0o755 });
    expect(hook().get(bwrap)).toBeUndefined();
    hook().set(bwrap, "0.4.0");
    expect(hook().get(bwrap)).toBe("0.4.0");
    utimesSync(bwrap, new Date(), new Date(Date.now() + 5_000));
    expect(hook().get(bwrap)).toBeUndefined();
    // Not a version: not kept; a damaged record: not offered.
    hook().set(bwrap, "9.9.9; rm -rf /");
    expect(hook().get(bwrap)).toBeUndefined();
    hook().set(bwrap, "0.9.0");
    const file = bwrapVersionFile(state);
    writeFileSync(file, readFileSync(file, "utf8").replace('"0.9.0"', '"0.9.0 (patched)"'));
    expect(hook().get(bwrap)).toBeUndefined();
  });
});
