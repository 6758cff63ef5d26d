import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { WritebackWorker, nodeSync, retryDelayMs, type SyncTarget } from "../../../handwritten/store/writeback.js";
import { openFileStateStore } from "../../../handwritten/store/stores.js";
import { replayJournal } from "../../../handwritten/store/journal.js";
import { validateJournalRecord, type JournalRecord } from "../../../handwritten/store/validate.js";
import { WRITEBACK_RETRY_BASE_MS, WRITEBACK_RETRY_MAX_MS } from "../../../handwritten/store/limits.js";
import { tempDir } from "./helpers.js";
import { waitFor } from "../../support/wait.js";

const msg = (i: number) => ({ event: { name: "agent.message", data: { text: `m${i}` } }, parent: i === 0 ? null : i - 1, source: { class: "harness" } });
const tick = () => new Promise((r) => setImmediate(r));

/** A sync whose calls block until released, recording the file size each call saw. */
function gatedSync() {
  const calls: Array<{ target: SyncTarget; size: number | null; at: number }> = [];
  let release: (() => void) | null = null;
  let blocked = true;
  const fn = async (target: SyncTarget) => {
    calls.push({ target, size: target.kind === "file" ? fs.statSync(target.path).size : null, at: performance.now() });
    if (blocked) await new Promise<void>((r) => (release = r));
  };
  return {
    fn,
    calls,
    fileCalls: () => calls.filter((c) => c.target.kind === "file"),
    open() {
      blocked = false;
      release?.();
    },
  };
}

const until = (cond: () => boolean, what: string): Promise<void> => waitFor(cond, what, { timeoutMs: 2000, pollMs: 1 });

describe("writeback worker", () => {
  it("[writeback.off-publish-path] appends return while a sync is blocked; the hook never syncs on the caller's turn", async () => {
    const dir = tempDir();
    const gate = gatedSync();
    const wb = new WritebackWorker({ root: dir, sync: gate.fn });
    const store = openFileStateStore({ stateDir: dir, onAppend: wb.onAppend });
    const log = store.openAgent("a1");
    log.append(msg(0));
    // The append returned and nothing was synced on its turn: the wake is deferred.
    expect(gate.calls.length).toBe(0);
    expect(wb.stats().dirty).toBeGreaterThan(0);
    await until(() => gate.calls.length === 1, "the first sync");
    expect(gate.calls[0]!.target).toEqual({ kind: "file", path: log.path });
    // The sync is now blocked indefinitely; appends still complete synchronously and are on disk.
    const t0 = performance.now();
    for (let i = 1; i < 200; i++) log.append(msg(i));
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(replayJournal<JournalRecord>(log.path!, { validate: validateJournalRecord }).records.length).toBe(200);
    await tick();
    expect(gate.calls.length).toBe(1); // one sync in flight; the 199 later marks coalesce behind it
    store.close(); // closing never waits for writeback either
    gate.open();
    expect(await wb.flush(2000)).toBe(true);
    expect(gate.fileCalls().length).toBe(2); // the in-flight one, then one for all the later marks
    wb.close();
  });

  it("[writeback.no-lost-wake] a journal dirtied during its own sync is synced again with the later bytes", async () => {
    const dir = tempDir();
    const gate = gatedSync();
    const wb = new WritebackWorker({ root: dir, sync: gate.fn });
    const store = openFileStateStore({ stateDir: dir, onAppend: wb.onAppend });
    const log = store.openSession("s1");
    log.append(msg(0));
    await until(() => gate.calls.length === 1, "the first sync");
    const sizeAtFirstSync = gate.calls[0]!.size!;
    // Dirty it again while its sync is in flight (the generation moves past the one being synced).
    log.append(msg(1));
    expect(wb.isClean(log.path!)).toBe(false);
    gate.open();
    expect(await wb.flush(2000)).toBe(true);
    const files = gate.fileCalls();
    expect(files.length).toBe(2);
    expect(files[1]!.size).toBeGreaterThan(sizeAtFirstSync);
    expect(files[1]!.size).toBe(fs.statSync(log.path!).size);
    expect(wb.isClean(log.path!)).toBe(true);
    // Marks while idle coalesce into one sync per wake.
    for (let i = 2; i < 50; i++) log.append(msg(i));
    expect(await wb.flush(2000)).toBe(true);
    expect(gate.fileCalls().length).toBe(3);
    store.close();
    wb.close();
  });

  it("covers a new journal's directories up to the root once, and a later new journal's parent again", async () => {
    const dir = path.resolve(tempDir());
    const seen: SyncTarget[] = [];
    const wb = new WritebackWorker({ root: dir, sync: async (t) => void seen.push(t) });
    const store = openFileStateStore({ stateDir: dir, onAppend: wb.onAppend });
    const a = store.openAgent("a1");
    a.append(msg(0));
    a.append(msg(1));
    expect(await wb.flush(2000)).toBe(true);
    const agentDir = path.join(dir, "agents", "a1");
    expect(seen).toEqual([
      { kind: "file", path: a.path },
      { kind: "dir", path: agentDir },
      { kind: "dir", path: path.join(dir, "agents") },
      { kind: "dir", path: dir },
    ]);
    seen.length = 0;
    a.append(msg(2));
    expect(await wb.flush(2000)).toBe(true);
    expect(seen).toEqual([{ kind: "file", path: a.path }]); // directories are covered once
    seen.length = 0;
    const s = store.openSession("s1");
    const r = store.openRestore("s1");
    s.append(msg(0));
    r.append(msg(0));
    expect(await wb.flush(2000)).toBe(true);
    const sessionDir = path.join(dir, "sessions", "s1");
    expect(seen.filter((t) => t.kind === "file").map((t) => t.path).sort()).toEqual([r.path, s.path].sort());
    // Two new journals in one directory: one coalesced sync of that directory.
    expect(seen.filter((t) => t.kind === "dir").map((t) => t.path)).toEqual([sessionDir, path.join(dir, "sessions"), dir]);
    store.close();
    wb.close();
  });

  it("[writeback.retry-without-retraction] failed syncs are retried with back-off; records stay and the journal stays dirty until a sync succeeds", async () => {
    const dir = tempDir();
    const attempts: number[] = [];
    let failuresLeft = 4;
    const errors: number[] = [];
    const wb = new WritebackWorker({
      root: dir,
      retryBaseMs: 4,
      retryMaxMs: 16,
      sync: async (t) => {
        if (t.kind !== "file") return;
        attempts.push(performance.now());
        if (failuresLeft-- > 0) throw Object.assign(new Error("injected EIO"), { code: "EIO" });
      },
      onError: (_e, _t, failures) => errors.push(failures),
    });
    const store = openFileStateStore({ stateDir: dir, onAppend: wb.onAppend });
    const log = store.openAgent("a1");
    log.append(msg(0));
    await until(() => attempts.length >= 2, "a retried sync");
    // Mid-failure: the accepted record is still there, appends still work, and nothing is clean.
    log.append(msg(1));
    expect(replayJournal<JournalRecord>(log.path!, { validate: validateJournalRecord }).records.map((r) => r.seq)).toEqual([0, 1]);
    expect(wb.isClean(log.path!)).toBe(false);
    expect(wb.stats().retrying).toBeGreaterThanOrEqual(1);
    expect(await wb.flush(3000)).toBe(true);
    expect(attempts.length).toBe(5);
    expect(errors).toEqual([1, 2, 3, 4]);
    // Gaps honour the doubling back-off (4, 8, 16, then capped at 16 ms).
    const gaps = attempts.slice(1).map((t, i) => t - attempts[i]!);
    [4, 8, 16, 16].forEach((min, i) => expect(gaps[i]!).toBeGreaterThanOrEqual(min - 1));
    expect(wb.stats()).toMatchObject({ dirty: 0, retrying: 0, failures: 4 });
    expect(log.readAll().map((r) => r.seq)).toEqual([0, 1]);
    store.close();
    wb.close();
  });

  it("back-off doubles from the base and is capped exactly at the maximum", () => {
    expect(WRITEBACK_RETRY_BASE_MS).toBe(50);
    expect(WRITEBACK_RETRY_MAX_MS).toBe(5000);
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(n))).toEqual([50, 100, 200, 400, 800, 1600, 3200]);
    expect(retryDelayMs(8)).toBe(5000); // 6400 capped
    expect(retryDelayMs(10_000)).toBe(5000); // no overflow
    expect(retryDelayMs(0)).toBe(0);
    // At / below / above the cap with a cap that the doubling hits exactly.
    expect([retryDelayMs(3, 1, 4), retryDelayMs(2, 1, 4), retryDelayMs(4, 1, 4)]).toEqual([4, 2, 4]);
  });

  it("the production sync fsyncs real files and directories; a vanished file counts as done", async () => {
    const dir = tempDir();
    fs.writeFileSync(dir + "/f", "x");
    await nodeSync({ kind: "file", path: dir + "/f" });
    await nodeSync({ kind: "dir", path: dir });
    const wb = new WritebackWorker({ root: dir });
    wb.markDirty(dir + "/gone.cbor");
    expect(await wb.flush(2000)).toBe(true);
    expect(wb.stats()).toMatchObject({ dirty: 0, vanished: 1 });
    wb.close();
  });

  it("after close, marks are ignored and no retry timer keeps running", async () => {
    const dir = tempDir();
    let calls = 0;
    const wb = new WritebackWorker({ sync: async () => void calls++ });
    wb.close();
    wb.markDirty(dir + "/x.cbor");
    // An open worker marked right after is the barrier: wakes run in the order they were scheduled,
    // so once it has synced, a wake the closed one had scheduled would have synced too.
    let controlCalls = 0;
    const control = new WritebackWorker({ sync: async () => void controlCalls++ });
    control.markDirty(dir + "/y.cbor");
    await until(() => controlCalls > 0, "the open worker's sync");
    control.close();
    expect(calls).toBe(0);
    expect(wb.stats().dirty).toBe(0);
  });
});
