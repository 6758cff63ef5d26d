import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { validateAgentMetadataRequest } from "../../../generated/index.js";

// ajv's own code-point count, which the generated validators replace by a faster exact one.
const ucs2length = createRequire(import.meta.url)("ajv/dist/runtime/ucs2length").default as (s: string) => number;

describe("generated validators count string length in code points, as ajv does", () => {
  it("maxLength accepts exactly the strings ajv's ucs2length admits (pairs, lone surrogates, BMP)", () => {
    const unit = fc.oneof(
      fc.constantFrom("a", "é", "\u4e2d", "\ud83d\ude00", "\ud83d", "\ude00", "\uffff"),
      fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
    );
    // ShortText (maxLength 1024) as the value of agent.metadata_request
    const text = fc.array(unit, { minLength: 900, maxLength: 1200 }).map((us) => us.join(""));
    fc.assert(
      fc.property(text, (value) => {
        const ok = validateAgentMetadataRequest({ agent_id: "a1", key: "k", value });
        expect(ok).toBe(ucs2length(value) <= 1024);
      }),
      { numRuns: 500 },
    );
  });

  it("at the boundary: 1024 astral characters (2048 UTF-16 units) pass, 1025 fail", () => {
    const astral = "\ud83d\ude00";
    expect(validateAgentMetadataRequest({ agent_id: "a1", key: "k", value: astral.repeat(1024) })).toBe(true);
    expect(validateAgentMetadataRequest({ agent_id: "a1", key: "k", value: astral.repeat(1025) })).toBe(false);
    expect(validateAgentMetadataRequest({ agent_id: "a1", key: "k", value: "a".repeat(1024) })).toBe(true);
    expect(validateAgentMetadataRequest({ agent_id: "a1", key: "k", value: "a".repeat(1025) })).toBe(false);
  });
});
