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

export function encodeCbor(value: unknown): Buffer {
  return encoder.encode(value);
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
