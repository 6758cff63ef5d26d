// Random hex for ids and unique file names, from the kernel's generator (/dev/urandom) rather than
// node:crypto, whose initialisation costs a tau process 6-13 ms wherever it is loaded at start-up
// (the `tau run` client before it can start the daemon, the daemon's harness). Bytes are read 256
// at a time and each is handed out once; node:crypto fills the pool only where /dev/urandom cannot
// be read.
import { closeSync, openSync, readSync } from "node:fs";
import { builtin } from "./builtin.js";

const POOL_BYTES = 256;
let pool = Buffer.alloc(0);
let used = 0;

/** `bytes` random bytes, as lowercase hex (twice as many characters). */
export function randomHex(bytes: number): string {
  if (used + bytes > pool.length) refill(Math.max(POOL_BYTES, bytes));
  const hex = pool.toString("hex", used, used + bytes);
  used += bytes;
  return hex;
}

function refill(size: number): void {
  const next = Buffer.allocUnsafe(size);
  try {
    const fd = openSync("/dev/urandom", "r");
    try {
      for (let got = 0; got < size; ) {
        const n = readSync(fd, next, got, size - got, null);
        if (n <= 0) throw new Error("/dev/urandom ended");
        got += n;
      }
    } finally {
      closeSync(fd);
    }
  } catch {
    builtin<typeof import("node:crypto")>("crypto").randomFillSync(next);
  }
  pool = next;
  used = 0;
}
