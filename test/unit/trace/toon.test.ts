// The TOON projection as functions: arbitrary strings, in values and in keys, with C0/C1 controls,
// DEL, separators and lone surrogates never reach the output raw, and every item decodes back to
// the same record (a lone surrogate, which TOON cannot hold, as U+FFFD).
import fc from "fast-check";
import { decode } from "@toon-format/toon";
import { beforeAll, describe, expect, it } from "vitest";
import { compactRecord, loadToon, toonHeader, toonItem, type ToonLib } from "../../../handwritten/trace/index.js";
import type { JournalRecord } from "../../../handwritten/store/index.js";
import { EVENTS, EVENT_NAMES, PERSISTENCE } from "../../../generated/index.js";
import { arbitraryForId } from "../../support/schema-arbitrary.js";

/** Index of a raw C0 control other than a line break, DEL, or a UTF-8-encoded C1 control; -1 if none. */
function rawControlAt(bytes: Buffer): number {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] ?? 0;
    if ((b < 0x20 && b !== 0x0a) || b === 0x7f) return i;
    if (b === 0xc2 && (bytes[i + 1] ?? 0) >= 0x80 && (bytes[i + 1] ?? 0) <= 0x9f) return i;
  }
  return -1;
}

const controlHeavy = fc.string({ unit: fc.oneof(fc.integer({ min: 0, max: 0x20 }).map((c) => String.fromCharCode(c)), fc.integer({ min: 0x7f, max: 0xa0 }).map((c) => String.fromCharCode(c)), fc.constantFrom("\u2028", "\u2029", "\ud800", "\udc00", "x", ",", ":", "-", "\"", "\\", " ", "漢", "😀")), maxLength: 200 });
const anyText = fc.oneof(controlHeavy, fc.string({ unit: "binary", maxLength: 300 }), fc.string({ unit: "binary", minLength: 4000, maxLength: 6000 }));

const wellFormedText = (s: string) => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
/** `v` with every lone surrogate (in strings and keys) as U+FFFD: what TOON can hold. */
const wellFormed = (v: unknown): unknown =>
  typeof v === "string" ? wellFormedText(v) : Array.isArray(v) ? v.map(wellFormed) : v !== null && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [wellFormedText(k), wellFormed(x)])) : v;

function record(text: string, key: string): JournalRecord {
  return { seq: 3, event: { name: "provider.tool_result", data: { agent_id: "a-1", prompt_id: "p-1", call_id: "c-1", tool: key, output: text, nested: [{ [key]: text, n: 1 }, { [key]: key, n: 2 }], list: [text, key, 1] } }, parent: null, source: { class: "harness" }, recorded_at: 1 };
}

let toon: ToonLib;
beforeAll(async () => {
  toon = await loadToon();
});

describe("TOON items", () => {
  it("[trace.controls.never-raw] arbitrary strings with C0/C1 controls, in values and keys, never reach TOON output raw, and decode back to the same record", () => {
    fc.assert(
      fc.property(anyText, fc.string({ unit: "binary", maxLength: 20 }), fc.boolean(), (text, key, full) => {
        const value = compactRecord(record(text, key), full);
        const out = toonHeader(1) + toonItem(toon, value);
        expect(rawControlAt(Buffer.from(out, "utf8"))).toBe(-1);
        expect(out.endsWith("\n")).toBe(true);
        const expected = wellFormed(value);
        expect(decode(out, { strict: true })).toEqual([expected]);
      }),
      { numRuns: 300 },
    );
  });

  it("[trace.toon.round-trip] items written one at a time decode as one list, whatever forms their fields take", () => {
    const records = [
      { seq: 0, at_us: 1, event: "a.b", by: "harness", data: { rows: [{ a: 1, b: "x" }, { a: 2, b: "y,z" }] } },
      { seq: 1, at_us: 2, event: "a.c", by: "ui_attached:i-1", data: { empty: [], nested: { deep: { list: [[1, 2], [3]] } }, s: "- starts with a dash", n: null } },
      { seq: 2, at_us: 3, event: "a.d", by: "harness", data: {}, truncated: { "data.output": 9000, "data.tool_calls[0].x": 5000 } },
    ];
    const out = toonHeader(records.length) + records.map((r) => toonItem(toon, r)).join("");
    expect(decode(out, { strict: true })).toEqual(records);
  });
});

/** A TOON 4.0 header form (keyed `[N:]` or a nested field group `{a{b}}`) on a header line, outside quotes. */
const V4_HEADER = /^ *(?:- )?(?:"(?:[^"\\]|\\.)*"|[A-Za-z_][\w.]*)?\[\d+(?::[\t|]?|[\t|]?\]\{[^}]*\{)/;

describe("TOON version", () => {
  it("[trace.toon.version] every agent-journal event, sampled from its schema, needs nothing newer than TOON 3.1: no keyed or nested-group tabular header (4.0)", () => {
    const agentEvents = EVENT_NAMES.filter((name) => PERSISTENCE[name] === "agent");
    expect(agentEvents.length).toBeGreaterThan(10);
    agentEvents.forEach((name, i) => {
      for (const data of fc.sample(arbitraryForId(`${EVENTS[name].model}.json`), { numRuns: 40, seed: 500 + i })) {
        const item = toonItem(toon, compactRecord({ seq: 1, event: { name, data }, parent: null, source: { class: "harness" }, recorded_at: 2 } as JournalRecord, true));
        for (const line of item.split("\n")) expect(V4_HEADER.test(line), `${name}: ${line}`).toBe(false);
      }
    });
    // What does need 3.1: the \uXXXX escape of a control character, and `key: []`.
    expect(toonItem(toon, { seq: 1, text: "bell\u0007", list: [] })).toBe('  - seq: 1\n    text: "bell\\u0007"\n    list: []\n');
    // The check sees the 4.0 forms where the encoder writes them.
    const v4 = toonItem(toon, { seq: 1, by_model: { a: { n: 1 }, b: { n: 2 } }, rows: [{ id: 1, u: { n: "x" } }, { id: 2, u: { n: "y" } }] });
    expect(v4.split("\n").filter((line) => V4_HEADER.test(line))).toHaveLength(2);
  });
});
