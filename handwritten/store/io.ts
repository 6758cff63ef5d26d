// The OS boundary of the journal. Production uses node:fs; fault-injection tests pass an
// implementation that fails at a chosen byte offset, so every rollback path is exercised for real.
import * as fs from "node:fs";
import { builtin } from "../startup/builtin.js";

export interface JournalIo {
  /** Positional write; may write fewer bytes than asked (the caller loops). */
  write(fd: number, buf: Uint8Array, off: number, len: number, pos: number): number;
  /** Positional read; returns bytes read (0 at end of file). */
  read(fd: number, buf: Uint8Array, off: number, len: number, pos: number): number;
  truncate(fd: number, len: number): void;
  size(fd: number): number;
}

export const nodeIo: JournalIo = {
  write: (fd, buf, off, len, pos) => fs.writeSync(fd, buf, off, len, pos),
  read: (fd, buf, off, len, pos) => fs.readSync(fd, buf, off, len, pos),
  truncate: (fd, len) => fs.ftruncateSync(fd, len),
  size: (fd) => fs.fstatSync(fd).size,
};

/** Reads until `buf` is full or the file ends; returns the bytes read. */
export function readFully(io: JournalIo, fd: number, buf: Buffer, pos: number): number {
  let got = 0;
  while (got < buf.length) {
    const n = io.read(fd, buf, got, buf.length - got, pos + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

/**
 * SHA-256 of `data` as lowercase hex. node:crypto is loaded on first use: loading it at start-up
 * costs a process 6-13 ms, and most never hash.
 */
export function sha256Hex(data: Uint8Array): string {
  return builtin<typeof import("node:crypto")>("crypto").createHash("sha256").update(data).digest("hex");
}
