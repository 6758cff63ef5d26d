// Plain CBOR only: maps with text keys, arrays, text, bytes, numbers, booleans, null.
// Uses cbor-x's no-eval build with records disabled, and rejects tags and other extensions.
import { createRequire } from "node:module";
import type * as CborX from "cbor-x";
import { scanPlainCbor } from "./cbor-scan.js";
import { WireError } from "./errors.js";

// The no-eval build is CommonJS only; load it by require so no code is generated at run time.
const { Encoder, Decoder } = createRequire(import.meta.url)("cbor-x/index-no-eval") as typeof CborX;

const encoder = new Encoder({ useRecords: false, mapsAsObjects: true, tagUint8Array: false, variableMapSize: true });
// Decoded byte strings alias the input buffer (see FrameReader.push).
const decoder = new Decoder({ useRecords: false, mapsAsObjects: true });

export function encodeCbor(value: unknown): Buffer {
  return encoder.encode(value);
}

/** Decodes exactly one plain CBOR item, or throws `WireError("bad_cbor")`. */
export function decodeCbor(bytes: Uint8Array): unknown {
  if (bytes.length === 0) throw new WireError("bad_cbor", "empty frame body");
  const problem = scanPlainCbor(bytes);
  if (problem) throw new WireError("bad_cbor", problem);
  try {
    return decoder.decode(bytes);
  } catch {
    // The scan admitted the structure; what remains is, for example, invalid UTF-8 in a text string.
    throw new WireError("bad_cbor", "undecodable item");
  }
}
