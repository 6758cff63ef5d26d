// A prompt round split into a head and parts, and reassembled: no frame nears the cap, nothing is
// lost or reordered, whatever the transcript's size or its characters.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  MAX_FRAME_ITEMS,
  PROVIDER_PART_BYTES,
  PROVIDER_PART_ITEMS,
  ProviderCallAssembler,
  decodeCbor,
  encodeCbor,
  encodeFrame,
  eventProblem,
  splitProviderCall,
  type ProviderCall,
} from "../../../handwritten/protocol/index.js";
import type { ProviderMessage } from "../../../generated/index.js";

function call(messages: ProviderMessage[], tools: ProviderCall["tools"] = []): ProviderCall {
  return { agent_id: "a-1", prompt_id: "p-1", round: 0, model: "m", system: "be brief", messages, tools };
}

function roundTrip(c: ProviderCall, maxBytes?: number): ProviderCall {
  const { head, parts } = splitProviderCall(c, maxBytes);
  const assembler = new ProviderCallAssembler();
  assembler.head(head);
  let whole: ProviderCall | undefined;
  for (const p of parts) {
    expect(whole).toBeUndefined();
    whole = assembler.part(p);
  }
  return whole as ProviderCall;
}

const frameOf = (name: string, data: unknown) => encodeFrame({ message: "direct", payload: { event: { name, data } } }, 64 * 1024 * 1024);

describe("provider request parts", () => {
  it("[provider.request.parts-bounded] a 34 MiB transcript (a 9 MiB multi-byte message and an answer with 7 MiB of reasoning among many) goes in parts that each fit well inside a frame, validate, and reassemble exactly", () => {
    const big = "é😀x".repeat(1_400_000); // 9.8 MiB of UTF-8 in one message
    const messages: ProviderMessage[] = [{ role: "user", text: "start" }];
    for (let i = 0; i < 140; i++) messages.push({ role: "tool", call_id: `c${i}`, text: `line ${i}\n`.repeat(10_000) });
    messages.push({ role: "user", text: big });
    messages.push({ role: "assistant", text: "answer ".repeat(400_000), reasoning: "😀é".repeat(1_200_000) });
    messages.push({ role: "assistant", text: "", tool_calls: Array.from({ length: 128 }, (_, i) => ({ call_id: `t${i}`, tool: "shell", arguments_json: JSON.stringify({ command: `echo ${i}` }) })) });
    const c = call(messages, [{ name: "shell", description: "runs a command", parameters: { type: "object" } }]);
    const { head, parts } = splitProviderCall(c);
    expect(head.parts).toBe(parts.length);
    expect(parts.length).toBeGreaterThan(5);
    expect(eventProblem({ name: "provider.request", data: head as never })).toBeUndefined();
    for (const p of parts) {
      expect(eventProblem({ name: "provider.request_part", data: p as never })).toBeUndefined();
      const frame = frameOf("provider.request_part", p);
      expect(frame.length).toBeLessThanOrEqual(PROVIDER_PART_BYTES + 64 * 1024);
    }
    expect(parts.some((p) => p.messages.some((m) => m.continues === true))).toBe(true);
    expect(roundTrip(c)).toEqual(c);
  });

  it("[provider.request.parts-roundtrip] any transcript reassembles to itself, whatever the part budget", () => {
    const text = fc.string({ unit: "grapheme", maxLength: 60 });
    const message = fc.record(
      {
        role: fc.constantFrom("user", "assistant", "tool" as const),
        text,
        call_id: fc.constantFrom("c1", "c2"),
        is_error: fc.boolean(),
        reasoning: text,
        tool_calls: fc.array(fc.record({ call_id: fc.constantFrom("x", "y"), tool: fc.constantFrom("shell", "read"), arguments_json: text }), { maxLength: 3 }),
      },
      { requiredKeys: ["role"] },
    ) as fc.Arbitrary<ProviderMessage>;
    fc.assert(
      fc.property(fc.array(message, { maxLength: 30 }), fc.integer({ min: 128, max: 2048 }), (messages, budget) => {
        expect(roundTrip(call(messages), budget)).toEqual(call(messages));
      }),
      { numRuns: 500 },
    );
  });

  it("[provider.request.parts-item-bound] a transcript of 300,000 tiny messages goes in parts each inside the frame item bound", () => {
    const messages: ProviderMessage[] = Array.from({ length: 300_000 }, (_, i) => ({ role: "user", text: String(i % 10), is_error: false }));
    const { parts } = splitProviderCall(call(messages));
    expect(parts.length).toBeGreaterThan(2);
    for (const p of parts) expect(() => decodeCbor(encodeCbor({ message: "direct", payload: { event: { name: "provider.request_part", data: p } } }))).not.toThrow();
    expect(parts.reduce((n, p) => n + p.messages.length, 0)).toBe(300_000);
    expect(MAX_FRAME_ITEMS).toBeGreaterThan(PROVIDER_PART_ITEMS + 1000);
  });

  it("a part that arrives out of order, or without its head, is an error and the round is dropped", () => {
    const { head, parts } = splitProviderCall(call([{ role: "user", text: "x".repeat(3000) }, { role: "user", text: "y".repeat(3000) }]), 2048);
    expect(parts.length).toBeGreaterThanOrEqual(2);
    const a = new ProviderCallAssembler();
    expect(() => a.part(parts[0]!)).toThrow("has no head");
    a.head(head);
    expect(() => a.part(parts[1]!)).toThrow("arrived where part 0 was due");
    expect(() => a.part(parts[0]!)).toThrow("has no head");
  });
});
