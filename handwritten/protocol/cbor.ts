// Plain CBOR only: maps with text keys, arrays, text, bytes, numbers, booleans, null.
// Uses cbor-x's no-eval build with records disabled, and rejects tags and other extensions.
import { createRequire } from "node:module";
import type * as CborX from "cbor-x";
import { MAX_DEPTH } from "./limits.js";
import { WireError } from "./errors.js";

// The no-eval build is CommonJS only; load it by require so no code is generated at run time.
const { Encoder, Decoder } = createRequire(import.meta.url)("cbor-x/index-no-eval") as typeof CborX;

const encoder = new Encoder({ useRecords: false, mapsAsObjects: true, tagUint8Array: false, variableMapSize: true });
// Decoded byte strings alias the input; FrameReader decodes only from its own copy of the input.
const decoder = new Decoder({ useRecords: false, mapsAsObjects: true });

export function encodeCbor(value: unknown): Buffer {
  return encoder.encode(value);
}

/** Decodes exactly one plain CBOR item, or throws `WireError("bad_cbor")`. */
export function decodeCbor(bytes: Uint8Array): unknown {
  if (bytes.length === 0) throw new WireError("bad_cbor", "empty frame body");
  let value: unknown;
  try {
    value = decoder.decode(bytes);
  } catch (err) {
    throw new WireError("bad_cbor", describeDecodeFailure(err));
  }
  const problem = plainProblem(value, 0);
  if (problem) throw new WireError("bad_cbor", problem);
  return value;
}

function describeDecodeFailure(err: unknown): string {
  if (err instanceof RangeError) return "item exceeds decoder limits";
  const msg = err instanceof Error ? err.message : "";
  if (/end of buffer not reached/.test(msg)) return "more than one item in the frame body";
  if (/Unexpected end/i.test(msg) || /beyond|outside/i.test(msg)) return "truncated item";
  return "undecodable item";
}

/** Returns why `value` is not plain protocol data, or undefined when it is. */
function plainProblem(value: unknown, depth: number): string | undefined {
  if (value === null) return undefined;
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return undefined;
    case "object":
      break;
    default:
      return `unsupported ${typeof value} value`;
  }
  if (depth >= MAX_DEPTH) return `nesting deeper than ${MAX_DEPTH}`;
  if (Array.isArray(value)) {
    for (const item of value) {
      const p = plainProblem(item, depth + 1);
      if (p) return p;
    }
    return undefined;
  }
  if (value instanceof Uint8Array) return undefined;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return "tagged or extension value";
  for (const key in value) {
    const p = plainProblem((value as Record<string, unknown>)[key], depth + 1);
    if (p) return p;
  }
  return undefined;
}
