// The trace projections as functions: control characters never raw (property), the native
// representation of what JSON cannot hold, and lite-mode bounds on whole characters.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Tag } from "cbor-x";
import { closeSync, fstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compactLine, jsonLine, nativeLine, nativeValue, openStaging, utf8Prefix } from "../../../handwritten/trace/index.js";
import type { JournalRecord } from "../../../handwritten/store/index.js";

/** Bytes of a raw C0 control (other than the line's final newline), DEL, or a UTF-8-encoded C1 control. */
function rawControlAt(bytes: Buffer): number {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] ?? 0;
    if ((b < 0x20 && !(b === 0x0a && i === bytes.length - 1)) || b === 0x7f) return i;
    if (b === 0xc2 && (bytes[i + 1] ?? 0) >= 0x80 && (bytes[i + 1] ?? 0) <= 0x9f) return i;
  }
  return -1;
}

const controlHeavy = fc.string({ unit: fc.oneof(fc.integer({ min: 0, max: 0x20 }).map((c) => String.fromCharCode(c)), fc.integer({ min: 0x7f, max: 0xa0 }).map((c) => String.fromCharCode(c)), fc.constantFrom("\u2028", "\u2029", "\ud800", "x", "漢", "😀")), maxLength: 200 });
const anyText = fc.oneof(controlHeavy, fc.string({ unit: "binary", maxLength: 300 }), fc.string({ unit: "binary", minLength: 4000, maxLength: 6000 }));

function record(text: string, key: string): JournalRecord {
  return { seq: 3, event: { name: "provider.tool_result", data: { agent_id: "a-1", prompt_id: "p-1", call_id: "c-1", tool: key, output: text, nested: [{ [key]: text }] } }, parent: null, source: { class: "harness" }, recorded_at: 1 };
}

describe("trace lines", () => {
  it("[trace.controls.never-raw] arbitrary strings with C0/C1 controls never reach a line raw, in any format, and every line parses back to the same strings", () => {
    fc.assert(
      fc.property(anyText, fc.string({ unit: "binary", maxLength: 20 }), fc.boolean(), (text, key, full) => {
        const r = record(text, key);
        for (const line of [nativeLine(r), compactLine(r, full), jsonLine({ text })]) {
          const bytes = Buffer.from(line, "utf8");
          expect(rawControlAt(bytes)).toBe(-1);
          expect(line.endsWith("\n")).toBe(true);
        }
        expect((JSON.parse(nativeLine(r)) as JournalRecord).event.data.output).toBe(text);
        const compact = JSON.parse(compactLine(r, true)) as { data: { output: string } };
        expect(compact.data.output).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it("[trace.native.lossless] values JSON cannot hold are tagged objects that name them exactly", () => {
    const v = {
      nan: NaN,
      inf: -Infinity,
      negZero: -0,
      big: 2n ** 70n,
      bytes: new Uint8Array([1, 2, 255]),
      floats: new Float32Array([1.5]),
      tag: new Tag({ a: 1 }, 1234),
      date: new Date(5),
      map: new Map<unknown, unknown>([[1, "one"]]),
      set: new Set([true]),
      undef: undefined,
      sneaky: { $tau: "float", bits: "00" },
      plain: 0.1,
    };
    expect(JSON.parse(JSON.stringify(nativeValue(v)))).toEqual({
      nan: { $tau: "float", bits: "7ff8000000000000" },
      inf: { $tau: "float", bits: "fff0000000000000" },
      negZero: { $tau: "float", bits: "8000000000000000" },
      big: { $tau: "bigint", value: "1180591620717411303424" },
      bytes: { $tau: "bytes", base64: "AQL/" },
      floats: { $tau: "typed", type: "Float32Array", base64: Buffer.from(new Float32Array([1.5]).buffer).toString("base64") },
      tag: { $tau: "tag", tag: 1234, value: { a: 1 } },
      date: { $tau: "date", ms: 5 },
      map: { $tau: "map", entries: [[1, "one"]] },
      set: { $tau: "set", values: [true] },
      undef: { $tau: "undefined" },
      sneaky: { $tau: "object", entries: { $tau: "float", bits: "00" } },
      plain: 0.1,
    });
  });

  it("[trace.lite.bounded] utf8Prefix keeps at most the bound, on a whole character", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 3000 }), fc.integer({ min: 0, max: 4096 }), (s, max) => {
        const p = utf8Prefix(s, max);
        expect(Buffer.byteLength(p)).toBeLessThanOrEqual(max);
        expect(s.startsWith(p) || Buffer.from(s).subarray(0, Buffer.byteLength(p)).toString() === p).toBe(true);
        if (Buffer.byteLength(s) <= max) expect(p).toBe(s);
        else expect(Buffer.byteLength(p)).toBeGreaterThan(max - 4);
      }),
    );
  });
});

describe("trace staging", () => {
  it("[trace.corrupt.no-output] the staging file is private (0600) and has no name from the moment it is opened", () => {
    const dir = mkdtempSync(join(tmpdir(), "tau-staging-"));
    try {
      const fd = openStaging(dir);
      const st = fstatSync(fd);
      expect(st.mode & 0o777).toBe(0o600);
      expect(st.nlink).toBe(0);
      expect(readdirSync(dir)).toEqual([]);
      closeSync(fd);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
