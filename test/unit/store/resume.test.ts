// Opening a journal at its checkpoint: only the records after a binding checkpoint are scanned; a
// checkpoint that does not bind the file (another file, a boundary past its end, a changed witness)
// means a scan of the whole journal. Pages of history read backwards from an offset index.
import { describe, expect, it } from "vitest";
import * as fs from "node:fs";
import { join } from "node:path";
import { FileJournal, boundCheckpoint, validateJournalRecord, writeJournalCheckpoint, type JournalRecord } from "../../../handwritten/store/index.js";
import { tempDir } from "./helpers.js";

function record(seq: number, size = 10): JournalRecord {
  return { seq, event: { name: "agent.metadata_set", data: { agent_id: "a-1", key: "k", value: "x".repeat(size), by: { class: "harness" } } }, parent: null, source: { class: "harness" }, recorded_at: 1000 + seq };
}

function write(file: string, meta: string, n: number, checkpointAt: number): void {
  const j = FileJournal.open<JournalRecord>(file, { validate: validateJournalRecord });
  for (let i = 0; i < n; i++) {
    j.append(record(i, i % 7 === 0 ? 5000 : 10));
    if (i + 1 === checkpointAt) writeJournalCheckpoint({ journal: file, meta }, j.end, j.nextSeq, { upto: checkpointAt });
  }
  j.close();
}

function reopen(file: string, meta: string): { journal: FileJournal<JournalRecord>; scanned: number[] } {
  const scanned: number[] = [];
  const journal = FileJournal.open<JournalRecord>(file, {
    validate: validateJournalRecord,
    onRecord: (r) => scanned.push(r.seq),
    resumeFrom: (fd) => {
      const cp = boundCheckpoint(meta, fd);
      return cp ? { offset: cp.boundary, seq: cp.next_seq } : undefined;
    },
  });
  return { journal, scanned };
}

describe("opening a journal at its checkpoint", () => {
  it("[journal.resume.checkpoint-tail-only] scans only what follows a binding checkpoint; anything that does not bind means the whole journal", () => {
    const dir = tempDir();
    const file = join(dir, "events.cbor");
    const meta = join(dir, "meta.json");
    write(file, meta, 1000, 900);
    const { journal, scanned } = reopen(file, meta);
    expect(scanned).toEqual(Array.from({ length: 100 }, (_, i) => 900 + i));
    expect(journal.report).toMatchObject({ records: 100, resumedFrom: { seq: 900 } });
    expect(journal.nextSeq).toBe(1000);
    // The prefix is still there to read (offsets from headers), validated as it is read.
    expect(journal.readRange(0, 3).map((r) => r.seq)).toEqual([0, 1, 2]);
    journal.append(record(1000));
    expect(journal.readRange(998, 1001).map((r) => r.seq)).toEqual([998, 999, 1000]);
    journal.close();

    // Another file at the same path (the same bytes, another inode): the checkpoint binds nothing.
    writeJournalCheckpoint({ journal: file, meta }, fs.statSync(file).size, 1001);
    const copy = join(dir, "copy.cbor");
    fs.copyFileSync(file, copy);
    fs.renameSync(copy, file);
    const other = reopen(file, meta);
    expect(other.scanned).toHaveLength(1001);
    expect(other.journal.report.resumedFrom).toBeNull();
    other.journal.close();
  });

  it("[journal.resume.stale-checkpoint-full-scan] a boundary past the end or a witness that does not match is not used", () => {
    const dir = tempDir();
    const file = join(dir, "events.cbor");
    const meta = join(dir, "meta.json");
    write(file, meta, 50, 40);
    const cp = JSON.parse(fs.readFileSync(meta, "utf8")) as Record<string, unknown>;
    fs.writeFileSync(meta, JSON.stringify({ ...cp, boundary: fs.statSync(file).size + 1 }));
    let r = reopen(file, meta);
    expect(r.scanned).toHaveLength(50);
    expect(r.journal.report.resumedFrom).toBeNull();
    r.journal.close();
    fs.writeFileSync(meta, JSON.stringify({ ...cp, witness: "0".repeat(64) }));
    r = reopen(file, meta);
    expect(r.scanned).toHaveLength(50);
    r.journal.close();
    fs.writeFileSync(meta, JSON.stringify(cp));
    r = reopen(file, meta);
    expect(r.scanned).toHaveLength(10);
    r.journal.close();
  });

  it("[journal.window.bytes-and-records] a window read backwards stops at its record count and, beyond the first record, at its bytes", () => {
    const dir = tempDir();
    const file = join(dir, "events.cbor");
    write(file, join(dir, "meta.json"), 100, 0);
    const { journal } = reopen(file, join(dir, "none.json"));
    expect(journal.windowStart(100, 10, Infinity)).toBe(90);
    expect(journal.windowStart(5, 10, Infinity)).toBe(0);
    // Records 91..99 are small (~100 bytes), 98 is a 5000-byte one (98 % 7 == 0).
    const first = journal.windowStart(100, 50, 4000);
    expect(first).toBe(99); // 98 would pass 4,000 bytes: only the last record
    expect(journal.windowStart(100, 50, 6000)).toBeLessThan(99);
    expect(journal.windowStart(99, 50, 100)).toBe(98); // at least one record, however large
    journal.close();
  });
});
