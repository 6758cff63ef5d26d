// Initial extension processes the daemon starts before it loads the harness (host `startEarly`) are
// adopted by the supervisor's first launch, even when they have already ended by then.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startEarly, type EarlyExtension } from "../../../handwritten/host/index.js";
import { Harness } from "../../../handwritten/harness/index.js";
import { superviseExtensions } from "../../../handwritten/harness/extensions.js";
import type { ChildProcess } from "node:child_process";
import { waitFor, nextEvent } from "../../support/wait.js";

const dir = mkdtempSync(join(tmpdir(), "tau-early-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every event the harness commits from now on (transient ones included). */
function committed(harness: Harness): Array<{ name: string; data: Record<string, unknown> }> {
  const seen: Array<{ name: string; data: Record<string, unknown> }> = [];
  harness.bus.onCommitted("*", (e) => seen.push({ name: e.name, data: e.data }));
  return seen;
}

/** A fresh in-memory harness whose supervisor adopts `early`; runs `check` after start, then stops both. */
async function adopt(
  configs: Array<{ name: string; command: string[]; startup_timeout_seconds: number }>,
  early: Map<string, EarlyExtension>,
  check: (seen: Array<{ name: string; data: Record<string, unknown> }>) => void,
): Promise<void> {
  const harness = await Harness.open({ projectRoot: dir, debugLog: false, configRoot: join(dir, "config"), warn: () => {} });
  const seen = committed(harness);
  const supervisor = superviseExtensions(harness, { tauCommand: [], early });
  try {
    expect(await supervisor.start(configs)).toEqual([]);
    await harness.bus.settled();
    check(seen);
    expect(early.size).toBe(0);
  } finally {
    await supervisor.stop();
    await harness.shutdown("requested");
  }
}

describe("early-started extensions", () => {
  it("[host.early.adopted] reports an initial process that ended before adoption by its exit status, not a startup timeout", async () => {
    const configs = [{ name: "quitter", command: ["sh", "-c", "exit 3"], startup_timeout_seconds: 60 }];
    const early = startEarly(configs, [], dir, process.env);
    const child = early.get("quitter")?.child;
    expect(child).toBeDefined();
    // Its exit is processed, and its exit and close events have passed, before the supervisor exists.
    await nextEvent(child as ChildProcess, "close", "the early process to end and its output to close");
    expect(child?.exitCode).toBe(3);
    await adopt(configs, early, (seen) => {
      const names = seen.map((e) => [e.name, e.data.instance, e.data.code ?? e.data.text]);
      expect(names.filter(([n]) => n === "extension.exited" || n === "harness.notice")).toEqual([
        ["extension.exited", "quitter", 3],
        ["harness.notice", "quitter", 'extension "quitter": exited during startup (code 3)'],
      ]);
    });
  });

  it("[host.early.adopted] reports a spawn error that happened before adoption with the spawn diagnostic", async () => {
    const configs = [{ name: "missing", command: ["/nonexistent/tau-ext"], startup_timeout_seconds: 60 }];
    const early = startEarly(configs, [], dir, process.env);
    await waitFor(() => early.get("missing")?.error !== undefined, "the spawn error");
    await adopt(configs, early, (seen) => {
      const notices = seen.filter((e) => e.name === "harness.notice").map((e) => e.data.text);
      expect(notices).toEqual(['extension "missing" could not start "/nonexistent/tau-ext": ENOENT']);
    });
  });
});
