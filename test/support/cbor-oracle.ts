// The reference for property tests of the wire codec: the pre-scan followed by cbor-x's no-eval
// decoder, as decodeCbor worked before its hand-written reader. The reader must agree with it on
// every input: the same value, or the same error.
import { createRequire } from "node:module";
import type * as CborX from "cbor-x";
import fc from "fast-check";
import { scanPlainCbor } from "../../handwritten/protocol/cbor-scan.js";

const { Decoder } = createRequire(import.meta.url)("cbor-x/index-no-eval") as typeof CborX;
const cborx = new Decoder({ useRecords: false, mapsAsObjects: true });

export type Outcome = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * What `decodeCbor` must do, built from independent parts: the scan, then a reference walk of the
 * admitted item for what is ambiguous once decoded (invalid UTF-8, a repeated key, an integer no
 * number holds exactly; the first in document order wins), then cbor-x, whose 8-byte integers
 * (bigint) become numbers.
 */
export function oracleDecode(bytes: Buffer): Outcome {
  if (bytes.length === 0) return { ok: false, message: "bad_cbor: empty frame body" };
  const problem = scanPlainCbor(bytes);
  if (problem) return { ok: false, message: `bad_cbor: ${problem}` };
  const ambiguity = referenceAmbiguity(bytes);
  if (ambiguity) return { ok: false, message: ambiguity };
  try {
    return { ok: true, value: numbersForBigints(cborx.decode(bytes)) };
  } catch {
    return { ok: false, message: "bad_cbor: undecodable item" };
  }
}

function numbersForBigints(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (Array.isArray(value)) return value.map(numbersForBigints);
  if (value && typeof value === "object" && !Buffer.isBuffer(value)) {
    for (const [k, v] of Object.entries(value)) (value as Record<string, unknown>)[k] = numbersForBigints(v);
  }
  return value;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A slow, plain walk of a scan-admitted item, in document order. */
function referenceAmbiguity(bytes: Buffer): string | undefined {
  let pos = 0;
  const readHead = (): { major: number; arg: bigint } => {
    const ib = bytes[pos++] as number;
    const ai = ib & 31;
    let arg = BigInt(ai);
    if (ai >= 24 && ai <= 27) {
      const n = 1 << (ai - 24);
      arg = 0n;
      for (let i = 0; i < n; i++) arg = (arg << 8n) | BigInt(bytes[pos++] as number);
    }
    return { major: ib >> 5, arg };
  };
  const readText = (len: number): string => {
    const raw = bytes.subarray(pos, pos + len);
    pos += len;
    return strictUtf8.decode(raw);
  };
  const walk = (): void => {
    const { major, arg } = readHead();
    const n = Number(arg);
    switch (major) {
      case 0:
        if (arg > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error("invalid: an integer beyond 2^53 - 1");
        return;
      case 1:
        if (-1n - arg < BigInt(Number.MIN_SAFE_INTEGER)) throw new Error("invalid: an integer beyond -(2^53 - 1)");
        return;
      case 2:
        pos += n;
        return;
      case 3:
        readText(n);
        return;
      case 4:
        for (let i = 0; i < n; i++) walk();
        return;
      case 5: {
        const keys = new Set<string>();
        for (let i = 0; i < n; i++) {
          const kh = readHead();
          let key = readText(Number(kh.arg));
          if (key === "__proto__") key = "__proto_";
          if (keys.has(key)) throw new Error("bad_cbor: a map key appears twice");
          keys.add(key);
          walk();
        }
        return;
      }
      default:
        // 7: floats and simple values carry their bytes in the head's argument
        return;
    }
  };
  try {
    walk();
    return undefined;
  } catch (err) {
    if (err instanceof TypeError) return "bad_cbor: text is not valid UTF-8"; // TextDecoder's fatal error
    return (err as Error).message;
  }
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
