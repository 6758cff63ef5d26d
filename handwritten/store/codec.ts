// CBOR record codec for journal frames: plain maps, no record extension (which would need eval),
// so every record decodes to a plain object that validators can check structurally. Integers are
// CBOR integers, as on the wire (`cborIntegers`); journals written before that hold integers from
// 2^32 up (`recorded_at`) as integral floats, which decode to the same numbers and still validate.
import { Decoder, Encoder } from "cbor-x/index-no-eval";
import { cborIntegers } from "../protocol/index.js";
import { FRAME_HEADER_BYTES, MAX_RECORD_BYTES } from "./limits.js";
import { RecordTooLargeError } from "./errors.js";

const encoder = new Encoder({ useRecords: false, mapsAsObjects: true });
// cbor-x flag: start every encode at the beginning of the encoder's own buffer (reused, no realloc).
// Safe because the bytes are copied into the frame before the next encode.
const RESET_BUFFER_MODE = 1024;
// int64AsNumber (not in cbor-x's typings): an 8-byte integer decodes to a number, not a bigint. One
// beyond ±(2^53 − 1) loses precision, and fails validation: every schema bounds integers to the safe range.
const decoder = new Decoder({ useRecords: false, mapsAsObjects: true, int64AsNumber: true } as ConstructorParameters<typeof Decoder>[0]);

/** Encodes one record into a complete frame (header + payload), rejecting it before any write if over the cap. */
export function encodeFrame(record: unknown, limit: number = MAX_RECORD_BYTES): Buffer {
  // The encoder returns a view into a reused buffer: copy it into the frame right away.
  const payload = (encoder.encode as (v: unknown, mode: number) => Uint8Array)(cborIntegers(record), RESET_BUFFER_MODE);
  if (payload.length > limit) throw new RecordTooLargeError(payload.length, limit);
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  frame.writeBigUInt64LE(BigInt(payload.length), 0);
  frame.set(payload, FRAME_HEADER_BYTES);
  return frame;
}

/** Throws on malformed CBOR or trailing bytes inside the payload. */
export function decodePayload(payload: Uint8Array): unknown {
  return decoder.decode(payload);
}
