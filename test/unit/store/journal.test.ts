import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import {
  FileJournal,
  MemoryJournal,
  replayJournal,
} from "../../../handwritten/store/journal.js";
import {
  JournalCorruptError,
  JournalLockedError,
  JournalPoisonedError,
  RecordInvalidError,
  RecordTooLargeError,
} from "../../../handwritten/store/errors.js";
import { MAX_RECORD_BYTES } from "../../../handwritten/store/limits.js";
import { encodeFrame } from "../../../handwritten/store/codec.js";
import { validateJournalRecord, type JournalRecord } from "../../../handwritten/store/validate.js";
import { InjectedTruncateError, InjectedWriteError, failingIo, rawFrame, rec, tempDir } from "./helpers.js";

const pipeline = { validate: validateJournalRecord };
const open = (p: string, extra: Partial<Parameters<typeof FileJournal.open<JournalRecord>>[1]> = {}) =>
  FileJournal.open<JournalRecord>(p, { ...pipeline, ...extra });

function journalWith(n: number, text = "hello"): { file: string; bytes: Buffer } {
  const file = tempDir() + "/events.cbor";
  const j = open(file);
  for (let i = 0; i < n; i++) j.append(rec(i, `${text}-${i}`));
  j.close();
  return { file, bytes: fs.readFileSync(file) };
}

describe("framed journal", () => {
  it("appends, reopens and replays records in order", () => {
    const { file } = journalWith(5);
    const j = open(file);
    expect(j.nextSeq).toBe(5);
    expect(j.report).toEqual({ recovered: null, records: 5, resumedFrom: null });
    expect(j.readAll().map((r) => r.seq)).toEqual([0, 1, 2, 3, 4]);
    j.append(rec(5));
    j.close();
    const r = replayJournal<JournalRecord>(file, pipeline);
    expect(r.records.map((x) => x.event.data.text)).toEqual(["hello-0", "hello-1", "hello-2", "hello-3", "hello-4", "hello"]);
    expect(r.tornTail).toBeNull();
    expect(r.end).toBe(fs.statSync(file).size);
  });

  it("creates the journal with mode 0600 and releases the lock on close", () => {
    const { file } = journalWith(1);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(file + ".lock")).toBe(false);
  });

  it("rejects a record with the wrong seq or an invalid shape before writing", () => {
    const { file, bytes } = journalWith(2);
    const j = open(file);
    expect(() => j.append(rec(5))).toThrow(RecordInvalidError);
    expect(() => j.append({ ...rec(2), source: { class: "nobody" } })).toThrow(RecordInvalidError);
    expect(() => j.append({ ...rec(2), event: { name: "Bad Name", data: {} } })).toThrow(RecordInvalidError);
    j.close();
    expect(fs.readFileSync(file).equals(bytes)).toBe(true);
  });

  it("handles short writes by looping", () => {
    const file = tempDir() + "/events.cbor";
    const j = open(file, { io: failingIo({ failAt: null, maxChunk: 3 }) });
    for (let i = 0; i < 4; i++) j.append(rec(i, "x".repeat(100)));
    j.close();
    expect(replayJournal<JournalRecord>(file, pipeline).records).toHaveLength(4);
  });

  it("[journal.append.rollback-every-offset] an injected write failure at every byte offset of header and payload leaves the file byte-identical", () => {
    const { file, bytes } = journalWith(3);
    const state: { failAt: number | null } = { failAt: null };
    const j = open(file, { io: failingIo(state) });
    const next = rec(3, "payload under test ".repeat(8));
    const frameLen = encodeFrame(next).length;
    expect(frameLen).toBeGreaterThan(100);
    for (let k = 0; k < frameLen; k++) {
      state.failAt = bytes.length + k;
      expect(() => j.append(next)).toThrow(InjectedWriteError);
      expect(fs.readFileSync(file).equals(bytes), `failure at frame byte ${k}`).toBe(true);
      expect(j.nextSeq).toBe(3);
      expect(j.end).toBe(bytes.length);
      expect(j.poisoned).toBe(false);
    }
    state.failAt = null;
    j.append(next);
    j.close();
    const r = replayJournal<JournalRecord>(file, pipeline);
    expect(r.records.map((x) => x.seq)).toEqual([0, 1, 2, 3]);
    expect(r.tornTail).toBeNull();
  });

  it("[journal.append.poison-on-failed-rollback] a failed rollback poisons: later appends fail at once with the truncation failure as cause", () => {
    const { file, bytes } = journalWith(2);
    const state = { failAt: bytes.length + 11, failTruncate: true };
    const j = open(file, { io: failingIo(state) });
    // The caller still receives the original write error.
    expect(() => j.append(rec(2))).toThrow(InjectedWriteError);
    expect(j.poisoned).toBe(true);
    state.failAt = null as unknown as number;
    let later: unknown;
    try {
      j.append(rec(2));
    } catch (err) {
      later = err;
    }
    expect(later).toBeInstanceOf(JournalPoisonedError);
    expect((later as JournalPoisonedError).cause).toBeInstanceOf(InjectedTruncateError);
    // The failed append's partial bytes are still there (the truncation failed) and nothing more was written.
    expect(fs.statSync(file).size).toBe(bytes.length + 11);
    j.close();
    // The path stays poisoned in this process.
    expect(() => open(file)).toThrow(JournalPoisonedError);
    // An offline reader sees the partial frame as a torn tail and changes nothing.
    const r = replayJournal<JournalRecord>(file, pipeline);
    expect(r.records).toHaveLength(2);
    expect(r.tornTail).toEqual({ offset: bytes.length, bytes: 11 });
    expect(fs.statSync(file).size).toBe(bytes.length + 11);
  });

  it("[journal.reopen.torn-tail-every-offset] a tail torn at every offset of the last frame reopens to exactly the previous frame", () => {
    const { file, bytes } = journalWith(4, "torn tail check");
    const prev = replayJournal<JournalRecord>(file, pipeline);
    const lastStart = bytes.length - encodeFrame(prev.records[3]).length;
    for (let cut = lastStart + 1; cut < bytes.length; cut++) {
      fs.writeFileSync(file, bytes.subarray(0, cut));
      // Strict replay reports the tail and does not repair it.
      const ro = replayJournal<JournalRecord>(file, pipeline);
      expect(ro.tornTail).toEqual({ offset: lastStart, bytes: cut - lastStart });
      expect(fs.statSync(file).size).toBe(cut);
      const j = open(file);
      expect(j.report.recovered, `cut at ${cut}`).toEqual({ removedBytes: cut - lastStart, offset: lastStart });
      expect(j.nextSeq).toBe(3);
      j.close();
      expect(fs.readFileSync(file).equals(bytes.subarray(0, lastStart))).toBe(true);
    }
  });

  describe("[journal.reopen.corrupt-frame-fails-closed] a complete corrupt frame fails closed with file, offset and reason, changing no byte", () => {
    const cases: Array<[string, Buffer, RegExp]> = [
      ["bad CBOR", rawFrame(Buffer.from([0xff, 0x00, 0x01])), /CBOR decode failed/],
      ["trailing bytes inside the payload", rawFrame(Buffer.concat([rawFrame(rec(2)).subarray(8), Buffer.from([0])])), /CBOR decode failed/],
      ["bad schema", rawFrame({ seq: 2, what: "no" }), /schema/],
      ["wrong seq", rawFrame(rec(7)), /seq 7 where 2 was expected/],
      ["zero-filled header", Buffer.alloc(16), /CBOR decode failed/],
      ["length over the cap", rawFrame(Buffer.alloc(4), BigInt(MAX_RECORD_BYTES + 1)), /exceeds/],
    ];
    for (const [name, bad, reason] of cases) {
      it(`[journal.reopen.corrupt-frame-fails-closed] ${name}`, () => {
        const { file, bytes } = journalWith(2);
        // A valid frame and a torn tail after the corrupt one must survive untouched as well.
        const suffix = Buffer.concat([bad, rawFrame(rec(3)), rawFrame(rec(4)).subarray(0, 9)]);
        fs.writeFileSync(file, Buffer.concat([bytes, suffix]));
        const before = fs.readFileSync(file);
        for (const attempt of [() => open(file), () => replayJournal<JournalRecord>(file, pipeline)]) {
          let err: unknown;
          try {
            attempt();
          } catch (e) {
            err = e;
          }
          expect(err).toBeInstanceOf(JournalCorruptError);
          const c = err as JournalCorruptError;
          expect(c.file).toBe(file);
          expect(c.offset).toBe(bytes.length);
          expect(c.reason).toMatch(reason);
          expect(c.message).toContain(file);
          expect(fs.readFileSync(file).equals(before)).toBe(true);
        }
        expect(fs.existsSync(file + ".lock")).toBe(false);
      });
    }

    it("[journal.reopen.corrupt-frame-fails-closed] semantic hook rejection", () => {
      const { file, bytes } = journalWith(3);
      const semantic = (r: JournalRecord) => (r.seq === 1 ? { ok: false as const, reason: "not allowed here" } : { ok: true as const });
      expect(() => open(file, { semantic })).toThrow(/offset \d+: semantic: not allowed here/);
      expect(fs.readFileSync(file).equals(bytes)).toBe(true);
    });
  });

  it("[journal.size.record-cap] a record over 64 MiB is rejected before writing; exactly the cap is accepted", () => {
    const file = tempDir() + "/events.cbor";
    const j = open(file);
    // Byte-string payloads keep this fast; a byte string of n >= 65536 bytes has a 5-byte prefix.
    const sized = (seq: number, n: number): JournalRecord => ({ ...rec(seq), event: { name: "agent.blob", data: { b: new Uint8Array(n) } } });
    const overhead = encodeFrame(sized(0, 65536)).length - 8 - 65536;
    const atCap = sized(0, MAX_RECORD_BYTES - overhead);
    expect(encodeFrame(atCap).length - 8).toBe(MAX_RECORD_BYTES);
    const oneOver = sized(0, MAX_RECORD_BYTES - overhead + 1);
    const oneBelow = sized(0, MAX_RECORD_BYTES - overhead - 1);
    expect(encodeFrame(oneOver, Infinity).length - 8).toBe(MAX_RECORD_BYTES + 1);
    expect(() => j.append(oneOver)).toThrow(RecordTooLargeError);
    expect(fs.statSync(file).size).toBe(0);
    j.append(oneBelow);
    j.append({ ...atCap, seq: 1, parent: 0 });
    j.close();
    const r = replayJournal<JournalRecord>(file, pipeline);
    expect(r.records).toHaveLength(2);
    // A header declaring one byte over the cap is refused before the payload is allocated.
    fs.appendFileSync(file, rawFrame(Buffer.alloc(0), BigInt(MAX_RECORD_BYTES + 1)));
    expect(() => replayJournal<JournalRecord>(file, pipeline)).toThrow(/exceeds the 67108864-byte cap/);
  });

  it("[journal.lock.single-writer] a second writer in the same process gets an error naming the holder", () => {
    const { file } = journalWith(1);
    const j = open(file);
    let err: unknown;
    try {
      open(file);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JournalLockedError);
    expect((err as JournalLockedError).holderPid).toBe(process.pid);
    expect((err as Error).message).toContain(String(process.pid));
    // Strict replay neither takes nor waits for the lock.
    expect(replayJournal<JournalRecord>(file, pipeline).records).toHaveLength(1);
    j.close();
    open(file).close();
  });

  it("[journal.lock.single-writer] a lock whose holder pid is dead is taken over", () => {
    const { file } = journalWith(1);
    // pid 2^22+ is above the default pid_max; use a real exited pid where possible.
    fs.writeFileSync(file + ".lock", `4194303 - deadbeef\n`);
    const j = open(file);
    expect(fs.readFileSync(file + ".lock", "utf8").startsWith(`${process.pid} `)).toBe(true);
    j.close();
    // Garbage in a lock file (no parseable holder) does not block forever either.
    fs.writeFileSync(file + ".lock", "");
    open(file).close();
  });

  it("memory journal applies the same validation and cap", () => {
    const m = new MemoryJournal<JournalRecord>(pipeline);
    m.append(rec(0));
    expect(() => m.append(rec(0))).toThrow(RecordInvalidError);
    m.append(rec(1));
    expect(m.readAll().map((r) => r.seq)).toEqual([0, 1]);
    expect(m.path).toBeNull();
  });
  it("[journal.rewrite.atomic-every-failure] a rewrite failing at every byte of its new file leaves the journal byte-identical and usable; one that succeeds leaves exactly the new records", () => {
    const { file, bytes } = journalWith(6, "old");
    const state: { failAt: number | null } = { failAt: null };
    const j = open(file, { io: failingIo(state) });
    // The records kept: two of the six, renumbered from 0 (a restore stream's records have no parent).
    const kept = [3, 5].map((n) => ({ ...rec(n, `old-${n}`), parent: null }));
    const newBytes = kept.reduce((sum, r, seq) => sum + encodeFrame({ ...r, seq }).length, 0);
    for (let k = 0; k < newBytes; k++) {
      state.failAt = k;
      expect(() => j.rewrite(kept)).toThrow(InjectedWriteError);
      expect(fs.readFileSync(file).equals(bytes), `failure at byte ${k} of the new file`).toBe(true);
      expect(j.nextSeq).toBe(6);
      expect(j.end).toBe(bytes.length);
      expect(j.poisoned).toBe(false);
    }
    state.failAt = null;
    expect(j.readRange(4, 6).map((r) => r.event.data.text)).toEqual(["old-4", "old-5"]);
    expect(j.rewrite(kept)).toBe(newBytes);
    expect(j.nextSeq).toBe(2);
    expect(j.readAll().map((r) => [r.seq, r.event.data.text])).toEqual([[0, "old-3"], [1, "old-5"]]);
    j.append({ ...rec(2, "after"), parent: null });
    expect(j.readRange(1, 3).map((r) => r.event.data.text)).toEqual(["old-5", "after"]);
    j.close();
    const r = replayJournal<JournalRecord>(file, pipeline);
    expect(r.records.map((x) => [x.seq, x.event.data.text])).toEqual([[0, "old-3"], [1, "old-5"], [2, "after"]]);
    expect(r.tornTail).toBeNull();
    // A record the validator refuses fails the rewrite before anything is renamed.
    const again = open(file);
    const before = fs.readFileSync(file);
    expect(() => again.rewrite([{ ...rec(0), event: { name: "", data: {} } } as JournalRecord])).toThrow(RecordInvalidError);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    again.close();
    // In memory: the same renumbering, all or nothing.
    const m = new MemoryJournal<JournalRecord>(pipeline);
    for (let n = 0; n < 4; n++) m.append(rec(n, `m-${n}`));
    m.rewrite([{ ...rec(2, "m-2"), parent: null }]);
    expect(m.readAll().map((x) => [x.seq, x.event.data.text])).toEqual([[0, "m-2"]]);
  });
});
