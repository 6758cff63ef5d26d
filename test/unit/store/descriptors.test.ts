// Journals give their descriptor back when many are open and take it again when used (issue: a
// session of 600 agents held 600 journal descriptors): the writer lock stays held all the while, and
// a file replaced or changed behind a parked journal fails closed instead of being written.
import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { FileJournal } from "../../../handwritten/store/journal.js";
import { JournalPoisonedError, StoreError } from "../../../handwritten/store/errors.js";
import { MAX_OPEN_JOURNAL_DESCRIPTORS } from "../../../handwritten/store/limits.js";
import { validateJournalRecord, type JournalRecord } from "../../../handwritten/store/validate.js";
import { rec, tempDir } from "./helpers.js";

const open = (p: string) => FileJournal.open<JournalRecord>(p, { validate: validateJournalRecord });

/** Descriptors of this process that name `folder`'s files. */
function descriptorsUnder(folder: string): number {
  let n = 0;
  for (const fd of fs.readdirSync("/proc/self/fd")) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(folder)) n++;
    } catch {
      // closed while listing
    }
  }
  return n;
}

describe("journal descriptors", () => {
  it("[journal.descriptors.bounded] three times the pool's size of journals hold at most the pool's descriptors, and every one still appends and reads", () => {
    const dir = tempDir();
    const count = 3 * MAX_OPEN_JOURNAL_DESCRIPTORS;
    const journals = Array.from({ length: count }, (_, i) => open(`${dir}/j${i}.cbor`));
    for (const [i, j] of journals.entries()) j.append(rec(0, `first-${i}`));
    expect(descriptorsUnder(dir)).toBeLessThanOrEqual(MAX_OPEN_JOURNAL_DESCRIPTORS);
    expect(descriptorsUnder(dir)).toBeGreaterThan(0);
    // Used again in another order: each reopens its own file and goes on where it was.
    for (let k = count - 1; k >= 0; k -= 7) journals[k]!.append(rec(1, `second-${k}`));
    for (const [i, j] of journals.entries()) {
      const texts = j.readRange(0, j.nextSeq).map((r) => r.event.data.text);
      expect(texts).toEqual((count - 1 - i) % 7 === 0 ? [`first-${i}`, `second-${i}`] : [`first-${i}`]);
    }
    expect(descriptorsUnder(dir)).toBeLessThanOrEqual(MAX_OPEN_JOURNAL_DESCRIPTORS);
    for (const j of journals) j.close();
    expect(descriptorsUnder(dir)).toBe(0);
    // The locks were held throughout and are released by close: each reopens.
    for (let i = 0; i < count; i += 50) open(`${dir}/j${i}.cbor`).close();
  });

  it("[journal.descriptors.replaced-fails-closed] a parked journal whose file was replaced is poisoned on its next use and the replacement is left untouched", () => {
    const dir = tempDir();
    const j = open(`${dir}/events.cbor`);
    j.append(rec(0));
    j.park();
    fs.writeFileSync(`${dir}/other.cbor`, "someone else's file");
    fs.renameSync(`${dir}/other.cbor`, `${dir}/events.cbor`);
    expect(() => j.append(rec(1))).toThrow(StoreError);
    expect(fs.readFileSync(`${dir}/events.cbor`, "utf8")).toBe("someone else's file");
    expect(() => j.append(rec(1))).toThrow(JournalPoisonedError);
    j.close();
  });

  it("[journal.descriptors.changed-fails-closed] bytes added behind a parked journal are never overwritten: its next use fails closed", () => {
    const dir = tempDir();
    const j = open(`${dir}/events.cbor`);
    j.append(rec(0));
    j.park();
    fs.appendFileSync(`${dir}/events.cbor`, "tail written by another process");
    const size = fs.statSync(`${dir}/events.cbor`).size;
    expect(() => j.append(rec(1))).toThrow(/replaced or changed/);
    expect(fs.statSync(`${dir}/events.cbor`).size).toBe(size);
    j.close();
  });
});
