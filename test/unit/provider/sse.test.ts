import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SSE_MAX_EVENT_BYTES, SSE_MAX_LINE_BYTES, SseError, SseParser } from "../../../handwritten/extensions/provider/index.js";
import type { SseEvent } from "../../../handwritten/extensions/provider/index.js";

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

function parseAll(chunks: Uint8Array[], parser = new SseParser()): SseEvent[] {
  const out: SseEvent[] = [];
  for (const c of chunks) out.push(...parser.push(c));
  out.push(...parser.end());
  return out;
}

describe("SseParser", () => {
  it("parses data events, [DONE], comments and ignores unknown fields", () => {
    const events = parseAll([enc(': hello\n\ndata: {"a":1}\n\nretry: 10\nfoo: bar\ndata: [DONE]\n\n')]);
    expect(events).toEqual([
      { event: "message", data: '{"a":1}' },
      { event: "message", data: "[DONE]" },
    ]);
  });

  it("[provider.sse.error-line] an `error:` line (llama.cpp's server) is passed on at once as an error event, without disturbing the event being built", () => {
    const events = parseAll([enc('data: {"a":1}\nerror: {"code":400,"type":"exceed_context_size_error"}\ndata: {"b":2}\n\ndata: [DONE]\n\n')]);
    expect(events).toEqual([
      { event: "error", data: '{"code":400,"type":"exceed_context_size_error"}' },
      { event: "message", data: '{"a":1}\n{"b":2}' },
      { event: "message", data: "[DONE]" },
    ]);
  });

  it("joins multi-line data, keeps event and id fields, strips one leading space only", () => {
    const events = parseAll([enc("event: delta\nid: 7\ndata:  two spaces\ndata:none\ndata\n\n")]);
    expect(events).toEqual([{ event: "delta", id: "7", data: " two spaces\nnone\n" }]);
  });

  it("accepts LF, CRLF and lone CR line ends, including CR and LF in separate chunks", () => {
    expect(parseAll([enc("data: a\r\n\r\ndata: b\r\rdata: c\n\n")]).map((e) => e.data)).toEqual(["a", "b", "c"]);
    expect(parseAll([enc("data: a\r"), enc("\n\r"), enc("\ndata: b\r\n"), enc("\r\n")]).map((e) => e.data)).toEqual(["a", "b"]);
  });

  it("a blank line without data dispatches nothing; a leading BOM is ignored", () => {
    expect(parseAll([enc("\n\n\r\n: c\n\n")])).toEqual([]);
    expect(parseAll([enc("\ufeffdata: x\n\n")])).toEqual([{ event: "message", data: "x" }]);
  });

  it("dispatches an unterminated final event at a clean end", () => {
    expect(parseAll([enc("data: tail")])).toEqual([{ event: "message", data: "tail" }]);
  });

  it("[provider.sse.split-at-every-byte] any split of the byte stream yields the same events", () => {
    const text = 'data: {"x":"héllo ✓ 𝄞"}\r\n\r\n: ping\n\ndata: a\ndata: b\r\rdata: [DONE]\n\n';
    const bytes = enc(text);
    const whole = parseAll([bytes]);
    expect(whole.map((e) => e.data)).toEqual(['{"x":"héllo ✓ 𝄞"}', "a\nb", "[DONE]"]);
    for (let i = 0; i <= bytes.length; i++) {
      for (let j = i; j <= bytes.length; j += 5) {
        expect(parseAll([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)])).toEqual(whole);
      }
    }
    fc.assert(
      fc.property(fc.array(fc.nat(bytes.length), { maxLength: 12 }), (cuts) => {
        const sorted = [...cuts].sort((a, b) => a - b);
        const chunks: Uint8Array[] = [];
        let at = 0;
        for (const c of sorted) {
          chunks.push(bytes.subarray(at, c));
          at = c;
        }
        chunks.push(bytes.subarray(at));
        expect(parseAll(chunks)).toEqual(whole);
      }),
    );
  });

  it("[provider.sse.line-bound] a line exactly at the bound is accepted, one byte more is line_too_long", () => {
    const max = 64;
    const at = `data: ${"x".repeat(max - 6)}`;
    expect(parseAll([enc(`${at}\n\n`)], new SseParser({ maxLineBytes: max }))).toHaveLength(1);
    const below = `data: ${"x".repeat(max - 7)}`;
    expect(parseAll([enc(`${below}\n\n`)], new SseParser({ maxLineBytes: max }))).toHaveLength(1);
    const p = new SseParser({ maxLineBytes: max });
    // The bound holds while the line is still arriving (no line end yet).
    expect(() => p.push(enc(`${at}x`))).toThrow(SseError);
    try {
      new SseParser({ maxLineBytes: max }).push(enc(`${at}x`));
    } catch (err) {
      expect((err as SseError).code).toBe("line_too_long");
    }
    // A failed parser stays failed.
    expect(() => p.push(enc("\n\n"))).toThrow(SseError);
    expect(SSE_MAX_LINE_BYTES).toBe(1_048_576);
  });

  it("[provider.sse.line-bound] the default line bound is enforced across chunks", () => {
    const p = new SseParser();
    p.push(enc("data: "));
    p.push(new Uint8Array(SSE_MAX_LINE_BYTES - 6).fill(0x61));
    expect(() => p.push(enc("a"))).toThrow(/line longer/);
  });

  it("an event's joined data is bounded (at the bound accepted, above rejected)", () => {
    const max = 20;
    const ok = (text: string) => parseAll([enc(text)], new SseParser({ maxEventBytes: max }));
    expect(ok(`data: ${"x".repeat(max)}\n\n`)[0]?.data).toHaveLength(max);
    expect(ok(`data: ${"x".repeat(max - 1)}\n\n`)).toHaveLength(1);
    expect(() => ok(`data: ${"x".repeat(max + 1)}\n\n`)).toThrow(/event data larger/);
    // Joined lines count their separating newline: 10 + 1 + 9 = 20 fits, 10 + 1 + 10 does not.
    expect(ok(`data: ${"x".repeat(10)}\ndata: ${"y".repeat(9)}\n\n`)[0]?.data).toHaveLength(max);
    expect(() => ok(`data: ${"x".repeat(10)}\ndata: ${"y".repeat(10)}\n\n`)).toThrow(SseError);
    // Multi-byte characters count in bytes: 10 × "é" (2 bytes) = 20, 11 × = 22.
    expect(ok(`data: ${"é".repeat(10)}\n\n`)).toHaveLength(1);
    expect(() => ok(`data: ${"é".repeat(11)}\n\n`)).toThrow(SseError);
    expect(SSE_MAX_EVENT_BYTES).toBe(2_097_152);
  });

  it("invalid UTF-8 is an error, not a replacement character", () => {
    expect(() => parseAll([new Uint8Array([0x64, 0x61, 0x74, 0x61, 0x3a, 0xff, 0x0a, 0x0a])])).toThrow(/UTF-8/);
  });
});
