// Protocol bounds, named once (SPEC-wire-protocol).

/** Largest frame body a reader accepts; a larger length is refused before the body is read. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** Bytes of the big-endian length prefix. */
export const FRAME_HEADER_BYTES = 4;

/** Deepest nesting of maps and arrays a decoded frame may have. */
export const MAX_DEPTH = 64;

/** The protocol revision this build speaks. */
export const REVISION = { major: 1, minor: 0 } as const;
