// Whether commands can enter the session's shared network namespace, kept between starts
// (enter-probe.ts, SPEC-sandbox "The network namespace"): asked once per machine state, a "yes" kept
// under that state only, a "no" never kept, and a command failing the way entering fails has the
// kept answer asked again.
import { createRequire } from "node:module";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { enterProbeFile, enterProbeKey, keepEnterable, keptEnterable, looksLikeEnteringFailed } from "../../../handwritten/extensions/shell/sandbox/enter-probe.js";
import { SharedNetwork } from "../../../handwritten/extensions/shell/sandbox/shared-network.js";
import { waitFor } from "../../support/wait.js";

const cp = createRequire("/")("node:child_process") as typeof import("node:child_process");

describe("the kept answer to entering the shared namespace", () => {
  let dir: string;
  const spawned: string[] = [];
  const realSpawn = cp.spawn;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "tau-enter-probe-"));
    spawned.length = 0;
    (cp as { spawn: unknown }).spawn = (file: string, ...rest: unknown[]) => (spawned.push(file), (realSpawn as (...a: unknown[]) => unknown)(file, ...rest));
  });
  afterEach(() => {
    (cp as { spawn: unknown }).spawn = realSpawn;
    rmSync(dir, { recursive: true, force: true });
  });

  it("[sandbox.probes.enter-key] is kept for the facts it was found under only; a damaged or foreign record is no answer", () => {
    const file = enterProbeFile(join(dir, "state"));
    const key = enterProbeKey();
    expect(key).toBeDefined();
    expect(enterProbeKey()).toBe(key);
    expect(keptEnterable(file, key as string)).toBe(false);
    keepEnterable(file, key as string);
    expect(keptEnterable(file, key as string)).toBe(true);
    expect(keptEnterable(file, `${key}x`)).toBe(false);
    writeFileSync(file, JSON.stringify({ key, enterable: "yes" }));
    expect(keptEnterable(file, key as string)).toBe(false);
    writeFileSync(file, "{");
    expect(keptEnterable(file, key as string)).toBe(false);
    expect(looksLikeEnteringFailed("nsenter: reassociate to namespace 'ns/user' failed: Operation not permitted\n")).toBe(true);
    expect(looksLikeEnteringFailed("bwrap: Creating new namespace failed: Resource exhausted\n")).toBe(true);
    expect(looksLikeEnteringFailed("make: *** [all] Error 1\nnsenter: x")).toBe(false);
  });

  it("[sandbox.probes.enter-kept] asks once, then takes the kept yes without a process; a command failing as entering fails has it asked again", async () => {
    const file = enterProbeFile(join(dir, "state"));
    const start = async (): Promise<SharedNetwork> => {
      const n = new SharedNetwork();
      n.keepProbeIn(file);
      expect(await n.start(join(dir, `ns-${spawned.length}.sock`))).toBe(true);
      return n;
    };
    const first = await start();
    first.stop();
    expect(spawned.filter((f) => f === "nsenter")).toHaveLength(1);
    expect(keptEnterable(file, enterProbeKey() as string)).toBe(true);

    spawned.length = 0;
    const second = await start();
    expect(spawned.filter((f) => f === "nsenter")).toEqual([]);
    // An ordinary failure asks nothing.
    second.suspect("cat: nope: No such file or directory\n");
    expect(spawned.filter((f) => f === "nsenter")).toEqual([]);
    // One that looks like entering failed: forgotten, asked now, and (entering still works) kept again.
    second.suspect("nsenter: reassociate to namespace 'ns/user' failed: Operation not permitted\n");
    expect(existsSync(file)).toBe(false);
    expect(spawned.filter((f) => f === "nsenter")).toHaveLength(1);
    await waitFor(() => existsSync(file), "the answer kept again");
    expect(keptEnterable(file, enterProbeKey() as string)).toBe(true);
    second.stop();
  });

  it("[sandbox.probes.enter-no-never-kept] a machine where entering fails gets no shared namespace, and nothing kept", async () => {
    // An nsenter that refuses, first on PATH (it changes the facts, so a kept yes would not count either).
    const bin = join(dir, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "nsenter"), "#!/bin/sh\necho 'nsenter: reassociate to namespace ns/user failed: Operation not permitted' >&2\nexit 1\n");
    chmodSync(join(bin, "nsenter"), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      const file = enterProbeFile(join(dir, "state"));
      const n = new SharedNetwork();
      n.keepProbeIn(file);
      expect(await n.start(join(dir, "ns.sock"))).toBe(false);
      expect(existsSync(file)).toBe(false);
      expect(spawned).toContain("nsenter");
    } finally {
      process.env.PATH = path;
    }
  });
});
