// Opening a journal at its checkpoint: only the records after a binding checkpoint are scanned; a
// checkpoint that does not bind the file (another file, a boundary past its end, a changed witness)
// means a scan of the whole journal. Pages of history read backwards from an offset index.
import { describe, expect, it } from "vitest";
import * as fs from "node:fs";
import { join } from "node:path";
import { FileJournal, boundCheckpoint, limits, nodeIo, validateJournalRecord, writeJournalCheckpoint, type JournalIo, type JournalRecord } from "../../../handwritten/store/index.js";
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

function reopen(file: string, meta: string, io: JournalIo = nodeIo): { journal: FileJournal<JournalRecord>; scanned: number[] } {
  const scanned: number[] = [];
  const journal = FileJournal.open<JournalRecord>(file, {
    validate: validateJournalRecord,
    io,
    onRecord: (r) => scanned.push(r.seq),
    resumeFrom: (fd) => {
      const cp = boundCheckpoint(meta, fd);
      return cp ? { offset: cp.boundary, seq: cp.next_seq, ...(cp.anchors ? { anchors: cp.anchors } : {}) } : undefined;
    },
  });
  return { journal, scanned };
}

/** node:fs, counting the bytes read. */
function countingIo(): JournalIo & { bytesRead: number } {
  const io = {
    ...nodeIo,
    bytesRead: 0,
    read: (fd: number, buf: Uint8Array, off: number, len: number, pos: number) => {
      const n = nodeIo.read(fd, buf, off, len, pos);
      io.bytesRead += n;
      return n;
    },
  };
  return io;
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

  it("[journal.index.anchors-from-checkpoint] a resumed journal finds any frame from the anchors its checkpoint stored, reading near the frame only", () => {
    const dir = tempDir();
    const file = join(dir, "events.cbor");
    const meta = join(dir, "meta.json");
    const n = 20 * limits.FRAME_ANCHOR_EVERY + 17;
    const whole = FileJournal.open<JournalRecord>(file, { validate: validateJournalRecord });
    for (let i = 0; i < n; i++) whole.append(record(i, i % 7 === 0 ? 5000 : 10));
    writeJournalCheckpoint({ journal: file, meta }, whole.end, whole.nextSeq, {}, whole.anchors());
    const expected = whole.readAll();
    whole.close();
    const size = fs.statSync(file).size;
    const cp = JSON.parse(fs.readFileSync(meta, "utf8")) as { anchors: number[] };
    expect(cp.anchors).toHaveLength(Math.ceil(n / limits.FRAME_ANCHOR_EVERY));

    const io = countingIo();
    const { journal, scanned } = reopen(file, meta, io);
    expect(scanned).toEqual([]); // nothing after the boundary
    const opened = io.bytesRead;
    // The most recent records, a window at the end: read near the end, not from the start.
    const from = journal.windowStart(n, 300, Infinity);
    expect(from).toBe(n - 300);
    expect(journal.readRange(from, n).map((r) => r.seq)).toEqual(expected.slice(from).map((r) => r.seq));
    expect(io.bytesRead - opened).toBeLessThan(size / 4);
    // Anywhere else too, and appends extend the index.
    for (const at of [0, 1, limits.FRAME_ANCHOR_EVERY - 1, limits.FRAME_ANCHOR_EVERY, 7 * limits.FRAME_ANCHOR_EVERY + 100, n - 1]) {
      expect(journal.readRange(at, at + 3)).toEqual(expected.slice(at, at + 3));
    }
    journal.append(record(n));
    expect(journal.readRange(n - 1, n + 1).map((r) => r.seq)).toEqual([n - 1, n]);
    journal.close();
  });

  it("[journal.index.wrong-anchors-recovered] anchors that do not fit the file are dropped and every frame is found from the start", () => {
    const dir = tempDir();
    const file = join(dir, "events.cbor");
    const meta = join(dir, "meta.json");
    const n = 4 * limits.FRAME_ANCHOR_EVERY + 3;
    const whole = FileJournal.open<JournalRecord>(file, { validate: validateJournalRecord });
    for (let i = 0; i < n; i++) whole.append(record(i, i % 5 === 0 ? 700 : 10));
    const anchors = whole.anchors();
    const expected = whole.readAll();
    // Plausible (increasing, inside the file) but wrong: the third anchor points into a frame.
    const wrong = [...anchors];
    wrong[2] = (wrong[2] as number) + 3;
    writeJournalCheckpoint({ journal: file, meta }, whole.end, whole.nextSeq, {}, wrong);
    whole.close();
    const { journal } = reopen(file, meta);
    const at = 2 * limits.FRAME_ANCHOR_EVERY + 5;
    expect(journal.readRange(at, at + 4)).toEqual(expected.slice(at, at + 4));
    expect(journal.windowStart(n, 3 * limits.FRAME_ANCHOR_EVERY, Infinity)).toBe(n - 3 * limits.FRAME_ANCHOR_EVERY);
    expect(journal.anchors()).toEqual(anchors);
    journal.close();
  });
});
