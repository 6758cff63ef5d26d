// Plain CBOR only: maps with text keys, arrays, text, bytes, numbers, booleans, null.
// Encoding uses cbor-x's no-eval build with records disabled. Decoding is two passes over the
// bytes: `scanPlainCbor` admits only the plain subset (and bounds every declared length by the
// body) before `readScannedCbor` builds a single value — no tags, records or other extensions.
import { createRequire } from "node:module";
import type * as CborX from "cbor-x";
import { readScannedCbor } from "./cbor-read.js";
import { scanPlainCbor } from "./cbor-scan.js";
import { WireError } from "./errors.js";

// The no-eval build is CommonJS only; load it by require so no code is generated at run time.
const { Encoder } = createRequire(import.meta.url)("cbor-x/index-no-eval") as typeof CborX;

const encoder = new Encoder({ useRecords: false, mapsAsObjects: true, tagUint8Array: false, variableMapSize: true });

/** Encodes `value` as plain CBOR; every safe integer becomes a CBOR integer (`cborIntegers`). */
export function encodeCbor(value: unknown): Buffer {
  return encoder.encode(cborIntegers(value));
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * `value` with every safe integer outside the 32-bit range (such as `recorded_at`) as a bigint.
 * cbor-x writes a number below −2^32 or from 2^32 up as a 64-bit float, whatever the schema says;
 * a bigint it writes as a CBOR integer with an 8-byte argument, as other languages' encoders do, so
 * integer-typed fields reach Go, Python or Rust readers as integers (SPEC-wire-protocol, "Frames").
 * Only the maps and arrays on the path to such a number are copied; everything else is shared. An
 * integral number beyond ±(2^53 − 1) stays a float (it names no exact integer, and no schema admits
 * it as one). Only plain objects and arrays are walked: byte strings and other values pass as they are.
 */
export function cborIntegers(value: unknown): unknown {
  if (typeof value === "number") return value > 0xffffffff || value < -0x100000000 ? wide(value) : value;
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const widened = cborIntegers(item);
      if (widened !== item) (out ??= value.slice())[i] = widened;
    }
    return out ?? value;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const map = value as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const key in map) {
    if (!hasOwn.call(map, key)) continue;
    const item = map[key];
    const widened = cborIntegers(item);
    if (widened === item) continue;
    out ??= { ...map };
    // defineProperty, not assignment: a `__proto__` key stays a key (assignment would set the prototype).
    Object.defineProperty(out, key, { value: widened, enumerable: true, writable: true, configurable: true });
  }
  return out ?? value;
}

function wide(n: number): number | bigint {
  return Number.isSafeInteger(n) ? BigInt(n) : n;
}

/**
 * Decodes exactly one plain CBOR item, or throws `WireError("bad_cbor")`. Byte strings in the
 * result are Buffer views of `bytes` (see FrameReader.push); invalid UTF-8 in text becomes U+FFFD.
 */
export function decodeCbor(bytes: Uint8Array): unknown {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  return decodeCborRange(buffer, 0, buffer.length);
}

/** `decodeCbor` of `bytes[start..end)`, without making a view of it first (FrameReader). */
export function decodeCborRange(bytes: Buffer, start: number, end: number): unknown {
  if (start >= end) throw new WireError("bad_cbor", "empty frame body");
  const problem = scanPlainCbor(bytes, start, end);
  if (problem) throw new WireError("bad_cbor", problem);
  return readScannedCbor(bytes, start);
}
