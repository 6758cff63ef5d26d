// A structural pre-scan of one CBOR item, done on the bytes before decoding: it admits only the
// plain subset the protocol allows (definite lengths, no tags, no `undefined` or other simple
// values, text map keys, bounded nesting, declared lengths that fit the body) without allocating. Scanning bytes
// is cheaper than walking the decoded tree, and it keeps the decoder away from hostile lengths.
import { MAX_DEPTH, MAX_FRAME_ITEMS } from "./limits.js";

/**
 * Returns why `bytes[start..end)` is not exactly one plain CBOR item, or undefined when it is. The
 * item count (every value, key and container) is bounded as well as the bytes, so decoding a frame
 * never builds more than `maxItems` values, however small each is.
 */
export function scanPlainCbor(bytes: Uint8Array, start = 0, end = bytes.length, maxItems = MAX_FRAME_ITEMS): string | undefined {
  let pos = start;
  let items = 0;
  // remaining[d]: items still expected at depth d; keyNext[d]: a map at depth d expects a key next.
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
    if (++items > maxItems) return `more than ${maxItems} items`;
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
        if (items > end - pos) return "truncated item"; // every item needs at least one byte
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
