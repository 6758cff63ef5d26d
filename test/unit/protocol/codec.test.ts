import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  FrameReader,
  MAX_FRAME_BYTES,
  MessageReader,
  WireError,
  compareRevision,
  encodeCbor,
  encodeFrame,
  parseMessage,
} from "../../../handwritten/protocol/index.js";
import { MESSAGES, MESSAGE_NAMES } from "../../../generated/index.js";
import { arbitraryForId } from "../../support/schema-arbitrary.js";

function frameOf(body: Uint8Array): Buffer {
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

describe("wire codec", () => {
  for (const name of MESSAGE_NAMES) {
    it(`[wire.roundtrip.every-message] ${name} survives encode → frames → validate`, () => {
      const arb = arbitraryForId(`${MESSAGES[name].model}.json`);
      fc.assert(
        fc.property(arb, (msg) => {
          const side = MESSAGES[name].direction === "from_harness" ? "peer" : "harness";
          const reader = new MessageReader(side);
          const results = reader.push(encodeFrame(msg));
          expect(results).toHaveLength(1);
          const [r] = results;
          if (!r?.ok) throw new Error(`rejected: ${r?.error.message}`);
          expect(r.message).toEqual(msg);
        }),
        { numRuns: 60 },
      );
    });
  }

  it("[wire.frame.oversize-rejected-before-body] refuses a length over 16 MiB from the header alone", () => {
    const reader = new FrameReader();
    const header = Buffer.alloc(4);
    header.writeUInt32BE(MAX_FRAME_BYTES + 1, 0);
    const results = reader.push(header);
    expect(results).toHaveLength(1);
    expect(results[0]?.ok).toBe(false);
    expect(!results[0]?.ok && results[0]?.error.code).toBe("oversize");
    expect(reader.bufferedBytes).toBe(0);
    expect(reader.isClosed).toBe(true);
    expect(reader.push(Buffer.alloc(100))).toEqual([]);
  });

  it("[wire.frame.oversize-rejected-before-body] accepts exactly the cap and refuses one over (small cap)", () => {
    const cap = 64;
    const exact = frameOf(Buffer.concat([Buffer.from([0x78, cap - 2]), Buffer.alloc(cap - 2, 0x61)]));
    const r1 = new FrameReader(cap).push(exact);
    expect(r1[0]?.ok).toBe(true);
    const over = frameOf(Buffer.concat([Buffer.from([0x78, cap - 1]), Buffer.alloc(cap - 1, 0x61)]));
    const r2 = new FrameReader(cap).push(over);
    expect(!r2[0]?.ok && r2[0]?.error.code).toBe("oversize");
    expect(() => encodeFrame("a".repeat(cap), cap)).toThrow(WireError);
  });

  it("[wire.reader.split-at-every-byte] reassembles a stream split at every byte boundary", () => {
    const msgs = [
      { message: "hello", payload: { revision: { major: 1, minor: 0 }, role: "ui" } },
      { message: "emit", payload: { event: { name: "ui.focus", data: { focused: true } } } },
      { message: "ready", payload: {} },
    ];
    const stream = Buffer.concat(msgs.map((m) => encodeFrame(m)));
    for (let cut = 0; cut <= stream.length; cut++) {
      for (const step of [1, 3, 7]) {
        const reader = new MessageReader("harness");
        const out = [...reader.push(stream.subarray(0, cut))];
        for (let i = cut; i < stream.length; i += step) out.push(...reader.push(stream.subarray(i, i + step)));
        expect(out.map((r) => (r.ok ? r.message : r.error.message))).toEqual(msgs);
        expect(reader.bufferedBytes).toBe(0);
      }
    }
  });

  it("[wire.reader.arbitrary-bytes-typed-outcome] arbitrary bytes end in values or typed errors, never a throw", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 8 }), (chunks) => {
        const reader = new MessageReader("harness");
        for (const chunk of chunks) {
          const results = reader.push(chunk);
          for (const r of results) {
            if (!r.ok) expect(["oversize", "bad_cbor", "invalid", "unknown_message"]).toContain(r.error.code);
          }
          expect(reader.bufferedBytes).toBeLessThanOrEqual(4 + MAX_FRAME_BYTES);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("[wire.reader.arbitrary-bytes-typed-outcome] mutated valid frames end in values or typed errors", () => {
    const base = encodeFrame({ message: "emit", payload: { event: { name: "agent.cancel_request", data: { agent_id: "a1" } }, persist: false } });
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat({ max: base.length - 1 }), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }), (muts) => {
        const bytes = Buffer.from(base);
        for (const [at, v] of muts) bytes[at] = v;
        const reader = new MessageReader("harness", 1024);
        const results = reader.push(bytes);
        for (const r of results) {
          if (!r.ok) expect(r.error).toBeInstanceOf(WireError);
        }
        expect(reader.bufferedBytes).toBeLessThanOrEqual(4 + 1024);
      }),
      { numRuns: 3000 },
    );
  });

  it("rejects tags, several items, empty bodies and deep nesting as bad_cbor", () => {
    const cases: Array<[string, Buffer]> = [
      ["tag", frameOf(Buffer.from([0xc1, 0x01]))],
      ["two items", frameOf(Buffer.from([0x01, 0x02]))],
      ["empty", frameOf(Buffer.alloc(0))],
      ["deep", frameOf(Buffer.concat([Buffer.alloc(100, 0x81), Buffer.from([0x01])]))],
      ["truncated", frameOf(Buffer.from([0x78, 0x10, 0x61]))],
      ["undefined", frameOf(Buffer.from([0xa1, 0x61, 0x61, 0xf7]))],
      ["integer map key", frameOf(Buffer.from([0xa1, 0x01, 0x02]))],
      ["huge array length", frameOf(Buffer.from([0x9a, 0xff, 0xff, 0xff, 0xff, 0x01]))],
      ["reserved info", frameOf(Buffer.from([0x1c]))],
      ["stray break", frameOf(Buffer.from([0xff]))],
      ["indefinite map", frameOf(Buffer.from([0xbf, 0x61, 0x61, 0x01, 0xff]))],
      ["indefinite text", frameOf(Buffer.from([0x7f, 0x61, 0x61, 0xff]))],
    ];
    for (const [label, frame] of cases) {
      const [r] = new FrameReader().push(frame);
      expect(r?.ok, label).toBe(false);
      expect(!r?.ok && r?.error.code, label).toBe("bad_cbor");
    }
  });

  it("classifies unknown messages, wrong directions, invalid payloads and unknown events", () => {
    const deliver = (event: unknown) => ({ message: "deliver", payload: { event, seq: 1, recorded_at: 2, publisher: { class: "harness" } } });
    const cases: Array<[unknown, "harness" | "peer", string]> = [
      [{ message: "nope", payload: {} }, "harness", "unknown_message"],
      [{ message: "configure", payload: {} }, "harness", "unknown_message"],
      [{ message: "hello", payload: { revision: { major: 1 }, role: "ui" } }, "harness", "invalid"],
      [{ message: "hello", payload: { revision: { major: 1, minor: 0 }, role: "ui", extra: 1 } }, "harness", "invalid"],
      [{ message: "emit", payload: { event: { name: "ui.focus", data: [] } } }, "harness", "invalid"],
      [deliver({ name: "made.up", data: {} }), "peer", "unknown_message"],
      [deliver({ name: "ui.focus", data: { focused: "yes" } }), "peer", "invalid"],
      [[1, 2], "harness", "invalid"],
    ];
    for (const [value, side, code] of cases) {
      const r = parseMessage(value, side);
      expect(r.ok).toBe(false);
      expect(!r.ok && r.error.code).toBe(code);
    }
  });

  it("[bus.admission.authority-before-schema] leaves an emitted event's payload to admission: the reader checks the envelope only", () => {
    // Whether `made.up` exists, and what ui.focus's data must be, is told only to a publisher that
    // may publish them (SPEC-event-publication, "Admission").
    for (const event of [{ name: "made.up", data: {} }, { name: "ui.focus", data: { focused: "yes" } }, { name: "agent.prompt_submitted", data: { bogus: 1 } }]) {
      expect(parseMessage({ message: "emit", payload: { event } }, "harness")).toEqual({ ok: true, message: { message: "emit", payload: { event } } });
    }
  });

  it("error descriptions never echo field values", () => {
    const secret = "sk-very-secret-value";
    const r = parseMessage({ message: "deliver", payload: { event: { name: "ui.focus", data: { focused: secret } }, seq: 1, recorded_at: 2, publisher: { class: "harness" } } }, "peer");
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.message).not.toContain(secret);
  });

  it("negotiates revisions: equal, same major, other major", () => {
    expect(compareRevision({ major: 1, minor: 0 })).toBe("equal");
    expect(compareRevision({ major: 1, minor: 7 })).toBe("compatible");
    expect(compareRevision({ major: 2, minor: 0 })).toBe("incompatible");
  });

  it("accepts nested maps, arrays, floats, booleans, null and byte strings", () => {
    const value = { a: [1, -2, 1.5, true, false, null], b: { c: "text", d: new Uint8Array([1, 2, 3]) } };
    const [r] = new FrameReader().push(encodeFrame(value));
    expect(r?.ok && r.value).toEqual({ a: [1, -2, 1.5, true, false, null], b: { c: "text", d: Buffer.from([1, 2, 3]) } });
  });

  it("encodes plain maps, never records or tags", () => {
    const bytes = encodeCbor({ a: 1, b: [true, null, "x"] });
    expect(bytes[0]).toBe(0xa2);
    expect(bytes.includes(0xd9)).toBe(false);
  });
});
