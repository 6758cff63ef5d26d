// Shared helpers for store tests: temp dirs, record builders, raw frame crafting, failing I/O.
import * as fs from "node:fs";
import * as os from "node:os";
import { Encoder } from "cbor-x/index-no-eval";
import { afterAll } from "vitest";
import { nodeIo, type JournalIo } from "../../../handwritten/store/io.js";
import type { JournalRecord } from "../../../handwritten/store/validate.js";

const madeDirs: string[] = [];
// Every folder tempDir() made is removed once the file's tests are done.
afterAll(() => {
  for (const dir of madeDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

export function tempDir(): string {
  const dir = fs.mkdtempSync(os.tmpdir() + "/tau-store-");
  madeDirs.push(dir);
  return dir;
}

export function rec(seq: number, text = "hello", parent: number | null = seq === 0 ? null : seq - 1): JournalRecord {
  return {
    seq,
    event: { name: "agent.message", data: { text } },
    parent,
    source: { class: "harness" },
    recorded_at: 1_700_000_000_000_000 + seq,
  };
}

const enc = new Encoder({ useRecords: false, mapsAsObjects: true });
export function rawFrame(payload: Uint8Array | unknown, declaredLength?: bigint): Buffer {
  const body = payload instanceof Uint8Array ? Buffer.from(payload) : Buffer.from(enc.encode(payload) as Uint8Array);
  const header = Buffer.alloc(8);
  header.writeBigUInt64LE(declaredLength ?? BigInt(body.length));
  return Buffer.concat([header, body]);
}

export class InjectedWriteError extends Error {
  readonly code = "EIO";
}
export class InjectedTruncateError extends Error {
  readonly code = "EIO";
}

/**
 * I/O that fails once a write would cross absolute file offset `failAt`: it writes the prefix up to
 * that offset (a real partial write) and then throws. `failTruncate` makes rollback fail too.
 */
export function failingIo(state: { failAt: number | null; failTruncate?: boolean; maxChunk?: number }): JournalIo {
  return {
    ...nodeIo,
    write(fd, buf, off, len, pos) {
      const chunk = Math.min(len, state.maxChunk ?? len);
      if (state.failAt !== null && pos + chunk > state.failAt) {
        const prefix = state.failAt - pos;
        if (prefix > 0) fs.writeSync(fd, buf, off, prefix, pos);
        throw new InjectedWriteError(`injected write failure at offset ${state.failAt}`);
      }
      return fs.writeSync(fd, buf, off, chunk, pos);
    },
    truncate(fd, len) {
      if (state.failTruncate) throw new InjectedTruncateError("injected truncate failure");
      nodeIo.truncate(fd, len);
    },
  };
}
