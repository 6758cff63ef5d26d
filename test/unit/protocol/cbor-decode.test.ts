import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { WireError, decodeCbor, encodeCbor } from "../../../handwritten/protocol/index.js";
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
