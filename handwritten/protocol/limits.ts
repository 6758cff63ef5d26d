// Protocol bounds, named once (SPEC-wire-protocol).
import { PROTOCOL_REVISION } from "../../generated/index.js";

/** Largest frame body a reader accepts; a larger length is refused before the body is read. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** Bytes of the big-endian length prefix. */
export const FRAME_HEADER_BYTES = 4;

/**
 * Most CBOR items (values, keys and containers) one frame may hold: decoding cost is bounded by
 * items as well as bytes (16 MiB of empty maps would otherwise be sixteen million objects).
 */
export const MAX_FRAME_ITEMS = 524_288;

/** Deepest nesting of maps and arrays a decoded frame may have. */
export const MAX_DEPTH = 64;

/** The protocol revision this build speaks: spec/common.tsp's, also in the Go and Python contracts. */
export const REVISION = PROTOCOL_REVISION;
