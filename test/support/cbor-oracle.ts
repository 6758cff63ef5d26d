// Reference decoders for property tests of the wire codec: the pre-scan exactly as first written
// (array stacks, one branch per check) and cbor-x's no-eval decoder. The hand-written reader and
// the optimised scan must agree with these on every input: the same value, or the same error.
import { createRequire } from "node:module";
import type * as CborX from "cbor-x";
import fc from "fast-check";
import { MAX_DEPTH } from "../../handwritten/protocol/limits.js";

const { Decoder } = createRequire(import.meta.url)("cbor-x/index-no-eval") as typeof CborX;
const cborx = new Decoder({ useRecords: false, mapsAsObjects: true });

export type Outcome = { ok: true; value: unknown } | { ok: false; message: string };

/** What `decodeCbor` did before the hand-written reader: reference scan, then cbor-x. */
export function oracleDecode(bytes: Buffer): Outcome {
  if (bytes.length === 0) return { ok: false, message: "bad_cbor: empty frame body" };
  const problem = referenceScan(bytes);
  if (problem) return { ok: false, message: `bad_cbor: ${problem}` };
  try {
    return { ok: true, value: cborx.decode(bytes) };
  } catch {
    return { ok: false, message: "bad_cbor: undecodable item" };
  }
}

/** The original structural pre-scan (see handwritten/protocol/cbor-scan.ts). */
export function referenceScan(bytes: Uint8Array): string | undefined {
  const end = bytes.length;
  let pos = 0;
  const remaining: number[] = [1];
  const keyNext: Array<boolean | undefined> = [undefined];
  while (remaining.length > 0) {
    const top = remaining.length - 1;
    if (remaining[top] === 0) {
      remaining.pop();
      keyNext.pop();
      continue;
    }
    if (pos >= end) return "truncated item";
    const ib = bytes[pos++] as number;
    const major = ib >> 5;
    const ai = ib & 31;
    if (keyNext[top] !== undefined) {
      if (keyNext[top] && major !== 3) return "map key is not text";
      keyNext[top] = !keyNext[top];
    }
    remaining[top] = (remaining[top] as number) - 1;
    let arg = ai;
    if (ai >= 24) {
      if (ai === 31) return "indefinite length";
      if (ai > 27) return "reserved additional information";
      const n = 1 << (ai - 24);
      if (pos + n > end) return "truncated item";
      arg = 0;
      for (let i = 0; i < n; i++) arg = arg * 256 + (bytes[pos++] as number);
    }
    switch (major) {
      case 2:
      case 3:
        if (arg > end - pos) return "truncated item";
        pos += arg;
        break;
      case 4:
      case 5: {
        if (remaining.length >= MAX_DEPTH) return `nesting deeper than ${MAX_DEPTH}`;
        const items = major === 5 ? arg * 2 : arg;
        if (items > end - pos) return "truncated item";
        remaining.push(items);
        keyNext.push(major === 5 ? true : undefined);
        break;
      }
      case 6:
        return "tagged or extension value";
      case 7:
        if (ai === 20 || ai === 21 || ai === 22 || ai === 25 || ai === 26 || ai === 27) break;
        return ai === 23 ? "undefined value" : "unsupported simple value";
    }
  }
  if (pos !== end) return "more than one item in the frame body";
  return undefined;
}

// ---- generators of plain CBOR bytes, including encodings cbor-x's encoder never produces ----

/** A CBOR head: major type and argument, in the shortest form or any wider one. */
function head(major: number, arg: bigint, widen: number): number[] {
  const widths = [arg < 24n ? 0 : -1, arg < 0x100n ? 1 : -1, arg < 0x10000n ? 2 : -1, arg < 0x100000000n ? 4 : -1, 8].filter((w) => w >= 0);
  const width = widths[Math.min(widen, widths.length - 1)] as number;
  if (width === 0) return [(major << 5) | Number(arg)];
  const out = [(major << 5) | { 1: 24, 2: 25, 4: 26, 8: 27 }[width]!];
  for (let i = width - 1; i >= 0; i--) out.push(Number((arg >> BigInt(8 * i)) & 0xffn));
  return out;
}

const widen = fc.nat({ max: 4 }).map((n) => (n < 3 ? 0 : n - 2)); // mostly shortest
const argument = fc.oneof(
  { weight: 4, arbitrary: fc.nat({ max: 30 }).map(BigInt) },
  { weight: 3, arbitrary: fc.bigInt({ min: 0n, max: 0xffffffffn }) },
  { weight: 2, arbitrary: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }) },
);
const someText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 90 }),
  fc.constantFrom("__proto__", "__proto_", "constructor", "toString", "message", "payload", "", "é", "x".repeat(70)),
).map((s) => [...Buffer.from(s, "utf8")]);
const rawText = fc.oneof({ weight: 4, arbitrary: someText }, { weight: 1, arbitrary: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 80 }) });

function textItem(bytes: number[], w: number): number[] {
  return [...head(3, BigInt(bytes.length), w), ...bytes];
}

/** Bytes of one plain CBOR item (valid for the scan), with random widths, floats and UTF-8. */
export const plainCborItem: fc.Arbitrary<number[]> = fc.letrec<{ item: number[] }>((tie) => ({
  item: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.tuple(fc.constantFrom(0, 1), argument, widen).map(([m, a, w]) => head(m, a, w)),
    fc.tuple(fc.constantFrom(0xf9, 0xfa, 0xfb), fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 8, maxLength: 8 })).map(([ib, b]) => [ib, ...b.slice(0, ib === 0xf9 ? 2 : ib === 0xfa ? 4 : 8)]),
    fc.constantFrom(0xf4, 0xf5, 0xf6).map((b) => [b]),
    fc.tuple(fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 40 }), widen).map(([b, w]) => [...head(2, BigInt(b.length), w), ...b]),
    fc.tuple(rawText, widen).map(([b, w]) => textItem(b, w)),
    fc.tuple(fc.array(tie("item"), { maxLength: 5 }), widen).map(([items, w]) => [...head(4, BigInt(items.length), w), ...items.flat()]),
    fc
      .tuple(fc.array(fc.tuple(rawText, widen, tie("item")), { maxLength: 5 }), widen)
      .map(([entries, w]) => [...head(5, BigInt(entries.length), w), ...entries.flatMap(([k, kw, v]) => [...textItem(k, kw), ...v])]),
  ),
})).item;
