import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { PromptHistory, openPromptHistory, promptHistoryPath } from "../../../handwritten/store/prompt-history.js";
import { acquireJournalLock } from "../../../handwritten/store/lock.js";
import {
  JournalCorruptError,
  JournalLockedError,
  JournalPoisonedError,
  RecordInvalidError,
} from "../../../handwritten/store/errors.js";
import { PROMPT_HISTORY_LOCK_TIMEOUT_MS, PROMPT_HISTORY_MAX_ENTRIES } from "../../../handwritten/store/limits.js";
import { InjectedWriteError, failingIo, rawFrame, tempDir } from "./helpers.js";

const texts = (h: PromptHistory) => h.entries().map((e) => e.text);

describe("prompt history", () => {
  it("appends framed records with seq, session and cwd, under a lock held only for the append", () => {
    const dir = tempDir();
    const h = openPromptHistory(dir);
    expect(h.entries()).toEqual([]);
    const r = h.append({ text: "::literal", session_id: "s1", cwd: "/w", recorded_at: 7 });
    expect(r).toEqual({ seq: 0, text: "::literal", session_id: "s1", cwd: "/w", recorded_at: 7 });
    expect(h.append({ text: "two" }).seq).toBe(1);
    const file = promptHistoryPath(dir);
    expect(fs.existsSync(file + ".lock")).toBe(false);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const again = openPromptHistory(dir);
    expect(again.entries().map((e) => [e.seq, e.text])).toEqual([[0, "::literal"], [1, "two"]]);
    expect(() => h.append({ text: "x", session_id: "../bad" })).toThrow(RecordInvalidError);
    expect(again.refresh().mode).toBe("unchanged");
  });

  it("keeps at most PROMPT_HISTORY_MAX_ENTRIES newest entries in memory (at / one below / one above)", () => {
    expect(PROMPT_HISTORY_MAX_ENTRIES).toBe(1000);
    const file = tempDir() + "/prompt-history.cbor";
    const writer = new PromptHistory(file);
    const check = (total: number) => {
      const h = new PromptHistory(file);
      h.refresh();
      expect(h.entries().length).toBe(Math.min(total, PROMPT_HISTORY_MAX_ENTRIES));
      expect(h.entries()[h.entries().length - 1]!.text).toBe(`p${total - 1}`);
      expect(h.entries()[0]!.text).toBe(`p${Math.max(0, total - PROMPT_HISTORY_MAX_ENTRIES)}`);
    };
    for (let i = 0; i < PROMPT_HISTORY_MAX_ENTRIES - 1; i++) writer.append({ text: `p${i}`, recorded_at: i });
    check(PROMPT_HISTORY_MAX_ENTRIES - 1);
    writer.append({ text: `p${PROMPT_HISTORY_MAX_ENTRIES - 1}`, recorded_at: 0 });
    check(PROMPT_HISTORY_MAX_ENTRIES);
    writer.append({ text: `p${PROMPT_HISTORY_MAX_ENTRIES}`, recorded_at: 0 });
    check(PROMPT_HISTORY_MAX_ENTRIES + 1);
    // The writer's own view is bounded the same way, and seq keeps counting.
    expect(writer.entries().length).toBe(PROMPT_HISTORY_MAX_ENTRIES);
    expect(writer.nextSeq).toBe(PROMPT_HISTORY_MAX_ENTRIES + 1);
  });

  it("waits for another holder's lock up to the timeout, then fails naming the holder", () => {
    expect(PROMPT_HISTORY_LOCK_TIMEOUT_MS).toBe(2000);
    const file = tempDir() + "/prompt-history.cbor";
    const held = acquireJournalLock(file);
    const h = new PromptHistory(file, { lockTimeoutMs: 30 });
    const t0 = performance.now();
    expect(() => h.append({ text: "x" })).toThrow(JournalLockedError);
    const waited = performance.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(15);
    expect(waited).toBeLessThan(1000);
    held.release();
    expect(h.append({ text: "x" }).seq).toBe(0);
  });

  it("a reader ignores an incomplete final frame; the next locked append removes it as a crash tail", () => {
    const file = tempDir() + "/prompt-history.cbor";
    const h = new PromptHistory(file);
    h.append({ text: "a", recorded_at: 1 });
    const good = fs.statSync(file).size;
    const torn = rawFrame({ seq: 1, text: "torn", recorded_at: 2 }).subarray(0, 11);
    fs.appendFileSync(file, torn);
    const reader = new PromptHistory(file);
    expect(reader.refresh()).toMatchObject({ mode: "full", newRecords: 1, end: good });
    expect(fs.statSync(file).size).toBe(good + 11); // readers never repair
    expect(h.append({ text: "b", recorded_at: 3 }).seq).toBe(1);
    expect(reader.refresh()).toMatchObject({ mode: "incremental", newRecords: 1 });
    expect(texts(reader)).toEqual(["a", "b"]);
  });

  it("a corrupt complete frame fails closed for readers and writers and changes nothing", () => {
    const file = tempDir() + "/prompt-history.cbor";
    new PromptHistory(file).append({ text: "a", recorded_at: 1 });
    fs.appendFileSync(file, rawFrame({ seq: 5, text: "wrong seq", recorded_at: 2 }));
    const before = fs.readFileSync(file);
    const h = new PromptHistory(file);
    expect(() => h.refresh()).toThrow(JournalCorruptError);
    expect(() => h.append({ text: "b" })).toThrow(JournalCorruptError);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    expect(fs.existsSync(file + ".lock")).toBe(false);
  });

  it("a failed write rolls back to the exact end; a failed rollback poisons this process's writer", () => {
    const file = tempDir() + "/prompt-history.cbor";
    new PromptHistory(file).append({ text: "a", recorded_at: 1 });
    const before = fs.readFileSync(file);
    const state: { failAt: number | null; failTruncate?: boolean } = { failAt: before.length + 5 };
    const h = new PromptHistory(file, { io: failingIo(state) });
    expect(() => h.append({ text: "b" })).toThrow(InjectedWriteError);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    state.failTruncate = true;
    expect(() => h.append({ text: "b" })).toThrow(InjectedWriteError);
    state.failAt = null;
    expect(() => h.append({ text: "c" })).toThrow(JournalPoisonedError);
    // Another process (here: another instance) recovers the torn tail under the lock.
    const other = new PromptHistory(file);
    expect(other.append({ text: "d" }).seq).toBe(1);
    expect(texts(other)).toEqual(["a", "d"]);
  });
});
