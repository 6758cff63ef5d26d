// Decodes one CBOR item that `scanPlainCbor` has already admitted. The scan guarantees the shape
// (definite lengths that fit the body, text map keys, no tags, only false/true/null/floats among
// the simple values, nesting within MAX_DEPTH, a bounded item count, exactly one item), so this
// reader checks only what needs the values: it rejects what is ambiguous once decoded (a map key
// that appears twice, counting the `__proto__` → `__proto_` rename; text that is not UTF-8, which
// would otherwise become U+FFFD and could make two different keys equal) as `bad_cbor`, and an
// integer beyond ±(2^53 − 1), which no JavaScript number holds exactly, as `invalid`. Otherwise it
// yields what cbor-x's decoder (useRecords: false, mapsAsObjects) yields for the same bytes, which
// the property tests check: plain objects with `__proto__` renamed `__proto_`, byte strings as views
// of the input, an 8-byte integer as a number (cbor-x: bigint). One deliberate difference: a text
// string keeps a leading U+FEFF, which cbor-x's TextDecoder path drops.
import { isUtf8 } from "node:buffer";
import { WireError } from "./errors.js";

const EMPTY = Buffer.alloc(0);
let src: Buffer = EMPTY;
let pos = 0;
// Scratch space for floats: big-endian bytes are copied in reverse into a little-endian view.
const f64 = new Float64Array(1);
const f32 = new Float32Array(f64.buffer, 0, 1);
const scratch = new Uint8Array(f64.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const fromCharCode = String.fromCharCode;
const hasOwn = Object.prototype.hasOwnProperty;

/** The value of the item at `bytes[start]`, which must have passed `scanPlainCbor`. */
export function readScannedCbor(bytes: Buffer, start = 0): unknown {
  src = bytes;
  pos = start;
  try {
    return item();
  } finally {
    src = EMPTY; // never keep the caller's buffer alive
  }
}

function item(): unknown {
  const ib = src[pos++] as number;
  const major = ib >> 5;
  const ai = ib & 31;
  if (major === 7) return simple(ai);
  let arg = ai;
  if (ai >= 24) {
    if (ai === 24) arg = src[pos++] as number;
    else if (ai === 25) arg = uint16();
    else if (ai === 26) arg = uint32();
    else {
      // 8-byte argument (what Python, Go and Rust encoders use from 2^32 up): an integer decodes to
      // a number while that is exact, and is refused beyond; a length this large cannot have passed
      // the scan, so for strings, arrays and maps it is a plain number.
      const hi = uint32();
      const lo = uint32();
      arg = hi * 0x100000000 + lo;
      if (major === 0 && hi >= 0x200000) throw new WireError("invalid", "an integer beyond 2^53 - 1");
      if (major === 1 && (hi > 0x1fffff || (hi === 0x1fffff && lo === 0xffffffff))) throw new WireError("invalid", "an integer beyond -(2^53 - 1)");
    }
  }
  switch (major) {
    case 0:
      return arg;
    case 1:
      return -1 - arg;
    case 2:
      return src.subarray(pos, (pos += arg));
    case 3:
      return text(arg);
    case 4: {
      const array = new Array<unknown>(arg);
      for (let i = 0; i < arg; i++) array[i] = item();
      return array;
    }
    default: {
      // major 5: a map with text keys (major 6, tags, never passes the scan)
      const object: Record<string, unknown> = {};
      for (let i = 0; i < arg; i++) {
        let key = mapKey(keyLength());
        if (key === "__proto__") key = "__proto_";
        if (hasOwn.call(object, key)) throw new WireError("bad_cbor", "a map key appears twice");
        object[key] = item();
      }
      return object;
    }
  }
}

function simple(ai: number): unknown {
  switch (ai) {
    case 20:
      return false;
    case 21:
      return true;
    case 22:
      return null;
    case 25:
      return half();
    case 26:
      copyReversed(4);
      return f32[0];
    default: // 27
      copyReversed(8);
      return f64[0];
  }
}

/** The length of a text key (major type 3, as the scan ensured). */
function keyLength(): number {
  const ai = (src[pos++] as number) & 31;
  if (ai < 24) return ai;
  if (ai === 24) return src[pos++] as number;
  if (ai === 25) return uint16();
  if (ai === 26) return uint32();
  return uint32() * 0x100000000 + uint32();
}

// Map keys repeat from frame to frame. A small direct-mapped cache of short ASCII keys hands back
// the same string for the same bytes, which V8 has already internalized as a property name; a
// hit is confirmed byte by byte, so the cache can only save work, never change a key.
const KEY_CACHE_SLOTS = 1024; // a power of two
const MAX_CACHED_KEY = 32;
const keyCache: Array<string | undefined> = new Array<string | undefined>(KEY_CACHE_SLOTS).fill(undefined);

function mapKey(length: number): string {
  if (length > MAX_CACHED_KEY) return text(length);
  const start = pos;
  const end = start + length;
  let hash = length;
  for (let i = start; i < end; i++) hash = (Math.imul(hash, 31) + (src[i] as number)) | 0;
  const slot = hash & (KEY_CACHE_SLOTS - 1);
  const hit = keyCache[slot];
  if (hit !== undefined && hit.length === length) {
    let i = 0;
    while (i < length && hit.charCodeAt(i) === src[start + i]) i++;
    if (i === length) {
      pos = end;
      return hit;
    }
  }
  // Only ASCII keys are cached: for them, char codes are the bytes compared above.
  let key = "";
  for (let i = start; i < end; i++) {
    const c = src[i] as number;
    if (c > 0x7f) return text(length);
    key += fromCharCode(c);
  }
  pos = end;
  keyCache[slot] = key;
  return key;
}

function text(length: number): string {
  const start = pos;
  pos += length;
  if (length < 16) {
    // Short strings (most map keys) are usually ASCII: build them here rather than calling into C++.
    let out = "";
    for (let i = start; i < pos; i++) {
      const c = src[i] as number;
      if (c > 0x7f) return utf8(start, pos);
      out += fromCharCode(c);
    }
    return out;
  }
  return utf8(start, pos);
}

/** Text that must be UTF-8: a substituted U+FFFD would make different bytes the same string. */
function utf8(start: number, end: number): string {
  if (!isUtf8(src.subarray(start, end))) throw new WireError("bad_cbor", "text is not valid UTF-8");
  return src.toString("utf8", start, end);
}

function uint16(): number {
  const v = ((src[pos] as number) << 8) | (src[pos + 1] as number);
  pos += 2;
  return v;
}

function uint32(): number {
  const v = (src[pos] as number) * 0x1000000 + (((src[pos + 1] as number) << 16) | ((src[pos + 2] as number) << 8) | (src[pos + 3] as number));
  pos += 4;
  return v;
}

function copyReversed(n: number): void {
  if (LITTLE_ENDIAN) for (let i = 0; i < n; i++) scratch[n - 1 - i] = src[pos + i] as number;
  else for (let i = 0; i < n; i++) scratch[i] = src[pos + i] as number;
  pos += n;
}

/** IEEE 754 half precision, as RFC 8949 appendix D. */
function half(): number {
  const h = uint16();
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  let value: number;
  if (exp === 0) value = mant * 2 ** -24;
  else if (exp !== 31) value = (mant + 1024) * 2 ** (exp - 25);
  else value = mant === 0 ? Infinity : NaN;
  return h & 0x8000 ? -value : value;
}
