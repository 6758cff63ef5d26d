import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { MAX_FRAME_ITEMS, MessageReader, WireError, decodeCbor, encodeCbor, encodeFrame } from "../../../handwritten/protocol/index.js";
import { decodeCborRange } from "../../../handwritten/protocol/cbor.js";
import { scanPlainCbor } from "../../../handwritten/protocol/cbor-scan.js";
import { oracleDecode, plainCborItem, type Outcome } from "../../support/cbor-oracle.js";

function outcome(decode: () => unknown): Outcome {
  try {
    return { ok: true, value: decode() };
  } catch (err) {
    if (!(err instanceof WireError)) throw err;
    return { ok: false, message: err.message };
  }
}

function ours(bytes: Buffer): Outcome {
  return outcome(() => decodeCbor(bytes));
}

/** Plain items with a few bytes overwritten, and some cut short. */
const mutated = fc
  .tuple(plainCborItem, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }), fc.nat(), fc.boolean())
  .map(([item, muts, cut, doCut]) => {
    const bytes = [...item];
    for (const [at, v] of muts) if (bytes.length > 0) bytes[at % bytes.length] = v;
    return Buffer.from(doCut ? bytes.slice(0, cut % (bytes.length + 1)) : bytes);
  });

/** cbor-x drops a leading U+FEFF from text over 64 bytes (TextDecoder); the wire reader keeps it. */
function hasLongBomText(value: unknown): boolean {
  if (typeof value === "string") return value.length > 20 && value.charCodeAt(0) === 0xfeff;
  if (Array.isArray(value)) return value.some(hasLongBomText);
  if (value && typeof value === "object" && !Buffer.isBuffer(value)) return Object.entries(value).some(([k, v]) => hasLongBomText(k) || hasLongBomText(v));
  return false;
}

function expectSameAsOracle(bytes: Buffer): void {
  const got = ours(bytes);
  const want = oracleDecode(bytes);
  if (want.ok && got.ok && hasLongBomText(got.value)) return;
  expect(got).toEqual(want);
}

describe("wire CBOR decoding agrees with cbor-x and the reference scan", () => {
  it("plain items with any head width, float width, bigint, byte string and UTF-8 (valid or not)", () => {
    fc.assert(
      fc.property(plainCborItem, (item) => {
        const bytes = Buffer.from(item);
        expect(scanPlainCbor(bytes)).toBeUndefined();
        expectSameAsOracle(bytes);
      }),
      { numRuns: 3000 },
    );
  });

  it("values encoded by the wire encoder decode to what cbor-x decodes", () => {
    const value = fc.letrec<{ v: unknown }>((tie) => ({
      v: fc.oneof(
        { depthSize: "small" },
        fc.integer(),
        fc.double(),
        fc.maxSafeInteger(),
        fc.boolean(),
        fc.constant(null),
        fc.string({ unit: "binary" }),
        fc.uint8Array({ maxLength: 20 }),
        fc.array(tie("v"), { maxLength: 5 }),
        fc.dictionary(fc.string({ unit: "binary", maxLength: 12 }), tie("v"), { maxKeys: 5 }),
      ),
    })).v;
    fc.assert(
      fc.property(value, (v) => {
        expectSameAsOracle(encodeCbor(v));
      }),
      { numRuns: 2000 },
    );
  });

  it("arbitrary and mutated bytes: the same value or the same bad_cbor description", () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)), mutated), (bytes) => {
        expectSameAsOracle(bytes);
      }),
      { numRuns: 5000 },
    );
  });

  it("a body inside a larger buffer decodes exactly as alone: nothing before or after it is read", () => {
    const body = fc.oneof(plainCborItem.map((b) => Buffer.from(b)), mutated);
    const around = fc.uint8Array({ maxLength: 16 }).map((b) => Buffer.from(b));
    fc.assert(
      fc.property(around, body, plainCborItem, around, (pre, body, next, post) => {
        // what follows is often the rest of an item the body cuts short
        const whole = Buffer.concat([pre, body, Buffer.from(next), post]);
        expect(outcome(() => decodeCborRange(whole, pre.length, pre.length + body.length))).toEqual(ours(body));
      }),
      { numRuns: 3000 },
    );
  });

  it("nesting near the depth limit, with mutations: the same outcome as before", () => {
    // Each opener leaves exactly one item to come (the next opener or the leaf).
    const opener = fc.constantFrom([0x81], [0xa1, 0x61, 0x6b], [0x82, 0x01], [0xa2, 0x61, 0x61, 0xf6, 0x61, 0x62]);
    const leaf = fc.constantFrom([0x01], [0x80], [0xa0], [0x61, 0x78]);
    const openers = fc.integer({ min: 58, max: 68 }).chain((n) => fc.array(opener, { minLength: n, maxLength: n }));
    const nested = fc
      .tuple(openers, leaf, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 2 }))
      .map(([openers, leaf, muts]) => {
        const bytes: number[] = [...openers.flat(), ...leaf];
        for (const [at, v] of muts) bytes[at % bytes.length] = v;
        return Buffer.from(bytes);
      });
    fc.assert(
      fc.property(nested, (bytes) => {
        expectSameAsOracle(bytes);
      }),
      { numRuns: 2000 },
    );
  });

  it("admits 63 nested containers and refuses 64", () => {
    expect(decodeCbor(Buffer.from([...new Array(63).fill(0x81), 0x01]))).toBeDefined();
    expect(() => decodeCbor(Buffer.from([...new Array(64).fill(0x81), 0x01]))).toThrow("bad_cbor: nesting deeper than 64");
  });

  it("encodes -0 as the integer 0, as JSON does: the sign of zero does not cross the wire", () => {
    expect(Object.is(decodeCbor(encodeCbor(-0)), 0)).toBe(true);
  });

  it("keeps a leading U+FEFF in text (cbor-x's TextDecoder path drops it)", () => {
    const s = `\ufeff${"a".repeat(80)}`;
    expect(decodeCbor(encodeCbor({ s }))).toEqual({ s });
  });

  it("renames a __proto__ key, as cbor-x does, and never touches the prototype", () => {
    const bytes = Buffer.from([0xa1, 0x69, ...Buffer.from("__proto__"), 0xa1, 0x61, 0x78, 0x01]);
    const value = decodeCbor(bytes) as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(value).toEqual({ __proto_: { x: 1 } });
  });

  it("the key cache never confuses keys that share a slot", () => {
    const keys = Array.from({ length: 5000 }, (_, i) => `k${i.toString(36)}`);
    for (let round = 0; round < 2; round++) {
      for (const k of keys) expect(Object.keys(decodeCbor(encodeCbor({ [k]: 1 })) as object)).toEqual([k]);
    }
  });
});

describe("what is ambiguous once decoded is refused", () => {
  const key = (k: string) => [0x60 | k.length, ...Buffer.from(k)];
  /** An integer head with an 8-byte argument `hi * 2^32 + lo`. */
  const u64 = (major: number, hi: number, lo: number) => {
    const b = Buffer.alloc(9);
    b[0] = (major << 5) | 27;
    b.writeUInt32BE(hi, 1);
    b.writeUInt32BE(lo, 5);
    return [...b];
  };

  it("[wire.cbor.duplicate-keys] a map key that appears twice (or twice after the __proto__ rename) is bad_cbor", () => {
    expect(() => decodeCbor(Buffer.from([0xa2, ...key("a"), 0x01, ...key("a"), 0x02]))).toThrow("bad_cbor: a map key appears twice");
    expect(() => decodeCbor(Buffer.from([0xa2, ...key("__proto__"), 0x01, ...key("__proto_"), 0x02]))).toThrow("bad_cbor: a map key appears twice");
    // The same key in two different maps is fine.
    expect(decodeCbor(Buffer.from([0x82, 0xa1, ...key("a"), 0x01, 0xa1, ...key("a"), 0x02]))).toEqual([{ a: 1 }, { a: 2 }]);
    // Through a message reader: a typed, recoverable error; the next frame still reads.
    const reader = new MessageReader("harness");
    const dup = Buffer.from([0xa2, ...key("message"), ...key("ready"), ...key("message"), ...key("ready")]);
    const frame = Buffer.concat([Buffer.from([0, 0, 0, dup.length]), dup, encodeFrame({ message: "ready", payload: {} })]);
    const out = reader.push(frame);
    expect(out.map((r) => (r.ok ? r.message.message : r.error.code))).toEqual(["bad_cbor", "ready"]);
  });

  it("[wire.cbor.utf8-strict] text that is not UTF-8 is bad_cbor, so two different keys can never decode equal", () => {
    expect(() => decodeCbor(Buffer.from([0x62, 0x61, 0xff]))).toThrow("bad_cbor: text is not valid UTF-8");
    expect(() => decodeCbor(Buffer.from([0xa2, 0x62, 0x61, 0xff, 0x01, 0x62, 0x61, 0xfe, 0x02]))).toThrow("bad_cbor: text is not valid UTF-8");
    const long = Buffer.alloc(40, 0x61);
    long[39] = 0xc3; // a lead byte with no continuation
    expect(() => decodeCbor(Buffer.concat([Buffer.from([0x78, 40]), long]))).toThrow("bad_cbor: text is not valid UTF-8");
    expect(decodeCbor(encodeCbor("é€😀"))).toBe("é€😀");
  });

  it("[wire.cbor.int64-safe] 8-byte integers decode to numbers while exact and are refused as invalid beyond", () => {
    expect(decodeCbor(Buffer.from(u64(0, 0, 5)))).toBe(5);
    expect(decodeCbor(Buffer.from(u64(0, 1, 0)))).toBe(2 ** 32); // what Python's cbor2 sends from 2^32 up
    expect(decodeCbor(Buffer.from(u64(0, 0x1fffff, 0xffffffff)))).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => decodeCbor(Buffer.from(u64(0, 0x200000, 0)))).toThrow(new WireError("invalid", "an integer beyond 2^53 - 1"));
    expect(decodeCbor(Buffer.from(u64(1, 0x1fffff, 0xfffffffe)))).toBe(Number.MIN_SAFE_INTEGER);
    expect(() => decodeCbor(Buffer.from(u64(1, 0x1fffff, 0xffffffff)))).toThrow(new WireError("invalid", "an integer beyond -(2^53 - 1)"));
    const reader = new MessageReader("harness");
    const body = Buffer.from([0xa2, ...key("message"), ...key("ready"), ...key("payload"), 0xa1, ...key("n"), ...u64(0, 0xffffffff, 0)]);
    const [result] = reader.push(Buffer.concat([Buffer.from([0, 0, 0, body.length]), body]));
    expect(result?.ok === false && result.error.code).toBe("invalid");
  });

  it("[wire.cbor.item-bound] a frame holds at most MAX_FRAME_ITEMS items: exactly at, one below and one above", () => {
    const arrayOf = (n: number) => Buffer.concat([Buffer.from([0x9a, (n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]), Buffer.alloc(n, 0xf6)]);
    // The array itself is an item: MAX_FRAME_ITEMS - 1 nulls inside it make exactly MAX_FRAME_ITEMS.
    expect((decodeCbor(arrayOf(MAX_FRAME_ITEMS - 2)) as unknown[]).length).toBe(MAX_FRAME_ITEMS - 2);
    expect((decodeCbor(arrayOf(MAX_FRAME_ITEMS - 1)) as unknown[]).length).toBe(MAX_FRAME_ITEMS - 1);
    expect(() => decodeCbor(arrayOf(MAX_FRAME_ITEMS))).toThrow(`bad_cbor: more than ${MAX_FRAME_ITEMS} items`);
    // The worst legal frame of empty maps is refused after the scan, before anything is built.
    const maps = Buffer.concat([Buffer.from([0x9a, 0x00, 0xff, 0xff, 0xf0]), Buffer.alloc(0xfffff0, 0xa0)]);
    expect(() => decodeCbor(maps)).toThrow(`bad_cbor: more than ${MAX_FRAME_ITEMS} items`);
  });
});
