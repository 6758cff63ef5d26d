// Wire integers are CBOR integers (SPEC-wire-protocol, "Frames"): every field a schema types as an
// integer is written with major type 0 or 1, never as a float, on the wire and in journals, so a
// reader with separate integer types (Go's int64, Rust's i64) reads it as it reads any integer.
// Journals written before that hold integral floats, which still read and validate.
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { EVENTS, EVENT_NAMES, MESSAGES, MESSAGE_NAMES } from "../../../generated/index.js";
import { FRAME_HEADER_BYTES, cborIntegers, decodeCbor, encodeFrame } from "../../../handwritten/protocol/index.js";
import { FileJournal } from "../../../handwritten/store/journal.js";
import { FRAME_HEADER_BYTES as JOURNAL_HEADER_BYTES } from "../../../handwritten/store/limits.js";
import { encodeFrame as encodeJournalFrame, decodePayload } from "../../../handwritten/store/codec.js";
import { validateJournalRecord, type JournalRecord } from "../../../handwritten/store/validate.js";
import { SCHEMAS, arbitraryForId } from "../../support/schema-arbitrary.js";
import { rawFrame, rec, tempDir } from "../store/helpers.js";

type Schema = Record<string, unknown>;

/** One CBOR item as written: its major type, whether it is a float, and what it holds. */
interface Item {
  readonly major: number;
  readonly float: boolean;
  readonly value: unknown;
  readonly items?: Item[];
  readonly entries?: Map<string, Item>;
}

/** A reader of the plain subset tau writes, keeping each item's major type (decoders drop it). */
function readItem(bytes: Buffer, at: { pos: number }): Item {
  const ib = bytes[at.pos++] as number;
  const major = ib >> 5;
  const ai = ib & 31;
  if (major === 7) {
    if (ai === 25 || ai === 26 || ai === 27) {
      const value = ai === 25 ? NaN : ai === 26 ? bytes.readFloatBE(at.pos) : bytes.readDoubleBE(at.pos);
      at.pos += ai === 25 ? 2 : ai === 26 ? 4 : 8;
      return { major, float: true, value };
    }
    return { major, float: false, value: ai === 20 ? false : ai === 21 ? true : ai === 22 ? null : undefined };
  }
  let arg = ai;
  if (ai === 24) arg = bytes[at.pos++] as number;
  else if (ai === 25) (arg = bytes.readUInt16BE(at.pos)), (at.pos += 2);
  else if (ai === 26) (arg = bytes.readUInt32BE(at.pos)), (at.pos += 4);
  else if (ai === 27) (arg = Number(bytes.readBigUInt64BE(at.pos))), (at.pos += 8);
  switch (major) {
    case 0:
      return { major, float: false, value: arg };
    case 1:
      return { major, float: false, value: -1 - arg };
    case 2:
    case 3: {
      const raw = bytes.subarray(at.pos, (at.pos += arg));
      return { major, float: false, value: major === 3 ? raw.toString("utf8") : raw };
    }
    case 4:
      return { major, float: false, value: undefined, items: Array.from({ length: arg }, () => readItem(bytes, at)) };
    case 5: {
      const entries = new Map<string, Item>();
      for (let i = 0; i < arg; i++) {
        const key = readItem(bytes, at).value as string;
        entries.set(key, readItem(bytes, at));
      }
      return { major, float: false, value: undefined, entries };
    }
    default:
      throw new Error(`major type ${major} is not written by tau`);
  }
}

function itemOf(body: Buffer): Item {
  const at = { pos: 0 };
  const item = readItem(body, at);
  expect(at.pos).toBe(body.length);
  return item;
}

interface Tally {
  /** Integer-typed positions, by the path where each was found. */
  readonly checked: string[];
  /** Of those, the ones holding a value outside the 32-bit range (where cbor-x alone writes floats). */
  wide: number;
  readonly floats: string[];
}

function resolve(schema: Schema, root: Schema): { schema: Schema; root: Schema } {
  while (typeof schema.$ref === "string" && schema.$ref !== "EventEnvelope.json") {
    const ref = schema.$ref;
    if (ref.startsWith("#/$defs/")) schema = (root.$defs as Record<string, Schema>)[ref.slice(8)] as Schema;
    else schema = root = SCHEMAS.get(ref) as Schema;
  }
  return { schema, root };
}

/**
 * Walks `item` along `schema`, recording every integer-typed position in `tally`. Returns false when
 * the item is not of the schema's shape (an `anyOf` tries its branches with that); an event envelope
 * is followed into the schema of the event it names.
 */
function walk(at: Schema, atRoot: Schema, item: Item, path: string, tally: Tally): boolean {
  const { schema, root } = resolve(at, atRoot);
  if (schema.$ref === "EventEnvelope.json") {
    const name = item.entries?.get("name")?.value as keyof typeof EVENTS;
    const data = item.entries?.get("data");
    const model = EVENTS[name]?.model;
    if (model === undefined || data === undefined) return false;
    const eventSchema = SCHEMAS.get(`${model}.json`) as Schema;
    return walk(eventSchema, eventSchema, data, `${path}.data(${name})`, tally);
  }
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Schema[]).some((branch) => walk(branch, root, item, path, tally));
  if ("const" in schema || Array.isArray(schema.enum)) return true;
  switch (schema.type) {
    case "integer":
      if (item.major === 0 || item.major === 1) {
        tally.checked.push(path);
        if (Math.abs(item.value as number) >= 2 ** 32) tally.wide++;
        return true;
      }
      if (item.float && Number.isInteger(item.value)) {
        tally.floats.push(`${path} = ${String(item.value)}`);
        return true;
      }
      return false;
    case "number":
      return item.major === 0 || item.major === 1 || item.float;
    case "string":
      return item.major === 3;
    case "boolean":
    case "null":
      return item.major === 7 && !item.float;
    case "array":
      return item.major === 4 && (item.items ?? []).every((x, i) => walk(schema.items as Schema, root, x, `${path}[${i}]`, tally));
    case "object": {
      if (item.major !== 5) return false;
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const extra = (schema.unevaluatedProperties ?? {}) as Schema;
      for (const [key, value] of item.entries ?? []) {
        const sub = props[key] ?? extra;
        if (!walk(sub, root, value, `${path}.${key}`, tally)) return false;
      }
      return true;
    }
    case undefined:
      return true; // an open value (`unknown`): any shape
  }
  throw new Error(`${path}: a schema this walk does not know: ${JSON.stringify(schema).slice(0, 120)}`);
}

function tallyOf(schemaId: string, body: Buffer, tally: Tally, label: string): void {
  const schema = SCHEMAS.get(schemaId) as Schema;
  expect(walk(schema, schema, itemOf(body), label, tally), `${label} follows ${schemaId}`).toBe(true);
}

const emptyTally = (): Tally => ({ checked: [], wide: 0, floats: [] });
const RUNS = 25;

describe("wire integers", () => {
  it("[wire.cbor.integers-are-integers] every integer field of every message and event, sampled from its schema, is a CBOR integer in its frame", () => {
    const tally = emptyTally();
    MESSAGE_NAMES.forEach((name, i) => {
      const id = `${MESSAGES[name].model}.json`;
      for (const m of fc.sample(arbitraryForId(id), { numRuns: RUNS, seed: 300 + i })) {
        tallyOf(id, encodeFrame(m).subarray(FRAME_HEADER_BYTES), tally, name);
      }
    });
    EVENT_NAMES.forEach((name, i) => {
      const id = `${EVENTS[name].model}.json`;
      for (const data of fc.sample(arbitraryForId(id), { numRuns: RUNS, seed: 600 + i })) {
        // As the harness delivers it, with the delivery's own integers beside the payload's.
        const deliver = { message: "deliver", payload: { event: { name, data }, seq: 2 ** 40 + i, recorded_at: 1_764_547_200_123_456, publisher: { class: "harness" } } };
        tallyOf("DeliverMessage.json", encodeFrame(deliver).subarray(FRAME_HEADER_BYTES), tally, `deliver ${name}`);
      }
    });
    expect(tally.floats).toEqual([]);
    // The samples reach the range where cbor-x alone writes floats, so the check can fail.
    expect(tally.wide).toBeGreaterThan(1000);
  });

  it("[wire.cbor.integers-are-integers] every integer field of every journal record kind is a CBOR integer in its journal frame, and reads back the same", () => {
    const tally = emptyTally();
    for (const id of ["JournalRecord.json", "PromptHistoryRecord.json"]) {
      for (const record of fc.sample(arbitraryForId(id), { numRuns: 200, seed: 900 })) {
        const frame = encodeJournalFrame(record);
        tallyOf(id, frame.subarray(JOURNAL_HEADER_BYTES), tally, id);
        expect(decodePayload(frame.subarray(JOURNAL_HEADER_BYTES))).toEqual(record);
      }
    }
    EVENT_NAMES.forEach((name, i) => {
      const id = `${EVENTS[name].model}.json`;
      for (const data of fc.sample(arbitraryForId(id), { numRuns: 5, seed: 1200 + i })) {
        const record = { seq: 2 ** 33 + i, event: { name, data }, parent: null, source: { class: "harness" }, recorded_at: 1_764_547_200_123_456 };
        tallyOf("JournalRecord.json", encodeJournalFrame(record).subarray(JOURNAL_HEADER_BYTES), tally, `journal ${name}`);
      }
    });
    expect(tally.floats).toEqual([]);
    expect(tally.wide).toBeGreaterThan(EVENT_NAMES.length * 5);
  });

  it("a journal written before integers were integers (floats from 2^32 up) still reads and validates", () => {
    const file = tempDir() + "/events.cbor";
    // cbor-x on its own, as tau's journals were written: recorded_at 1.7e15 is a float64.
    const old = rawFrame(rec(0));
    expect(itemOf(old.subarray(JOURNAL_HEADER_BYTES)).entries?.get("recorded_at")?.float).toBe(true);
    writeFileSync(file, old, { mode: 0o600 });
    const j = FileJournal.open<JournalRecord>(file, { validate: validateJournalRecord });
    expect(j.readAll()).toEqual([rec(0)]);
    j.append(rec(1));
    j.close();
    const second = readFileSync(file).subarray(old.length + JOURNAL_HEADER_BYTES);
    expect(itemOf(second).entries?.get("recorded_at")).toMatchObject({ major: 0, value: rec(1).recorded_at });
    expect(FileJournal.open<JournalRecord>(file, { validate: validateJournalRecord }).readAll()).toEqual([rec(0), rec(1)]);
  });

  it("the wire reader takes an integral float where an integer is expected (an older or other writer)", () => {
    const float = Buffer.alloc(9, 0xfb);
    float.writeDoubleBE(1_764_547_200_123_456, 1);
    expect(decodeCbor(float)).toBe(1_764_547_200_123_456);
  });
});

describe("cborIntegers", () => {
  it("widens only safe integers outside the 32-bit range, copies only what it changes and never the input", () => {
    const shared = { text: "x", n: 7, bytes: Buffer.from([1, 2]) };
    const value = { a: 2 ** 32, b: [-(2 ** 32), -(2 ** 32) - 1, 2 ** 32 - 1, 1.5, 2 ** 53, 1e300], shared };
    const out = cborIntegers(value) as typeof value & { a: unknown; b: unknown[] };
    expect(out).not.toBe(value);
    expect(value.a).toBe(2 ** 32);
    expect(out.a).toBe(2n ** 32n);
    expect(out.b).toEqual([-(2 ** 32), -(2n ** 32n) - 1n, 2 ** 32 - 1, 1.5, 2 ** 53, 1e300]);
    expect(out.shared).toBe(shared);
    expect(cborIntegers(shared)).toBe(shared);
    // A `__proto__` key read from the wire stays a key of the copy.
    const odd = JSON.parse('{"__proto__": 5000000000, "k": 1}') as Record<string, unknown>;
    const copy = cborIntegers(odd) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(["__proto__", "k"]);
    expect(Object.getOwnPropertyDescriptor(copy, "__proto__")?.value).toBe(5_000_000_000n);
  });
});
