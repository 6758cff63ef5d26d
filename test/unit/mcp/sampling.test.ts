// A server's sampling request as tau takes it (SPEC-mcp, "Sampling"): text only, no tool use, bounded
// in count and size before anything is joined.
import { describe, expect, it } from "vitest";
import { SamplingError, samplingMessages } from "../../../handwritten/extensions/mcp/sampling.js";
import { MCP_SAMPLING_MAX_MESSAGES, MCP_SAMPLING_MAX_TEXT_CHARS } from "../../../handwritten/extensions/mcp/limits.js";

type Params = Parameters<typeof samplingMessages>[0];
const text = (t: string) => ({ type: "text" as const, text: t });
const params = (messages: Params["messages"], more: Partial<Params> = {}): Params => ({ messages, maxTokens: 10, ...more });
const why = (r: ReturnType<typeof samplingMessages>) => (r instanceof SamplingError ? r.message : "taken");

describe("a sampling request's messages", () => {
  it("[mcp.sampling.request-bounds] text messages are taken (several blocks joined); images, tool use, too many or too long messages are refused naming why", () => {
    expect(samplingMessages(params([{ role: "user", content: [text("a"), text("b")] }, { role: "assistant", content: text("c") }]))).toEqual([
      { role: "user", text: "a\nb" },
      { role: "assistant", text: "c" },
    ]);
    expect(why(samplingMessages(params([{ role: "user", content: { type: "audio", data: "AA==", mimeType: "audio/wav" } }])))).toBe("tau refused the sampling request: message 1 holds audio content; tau's sampling takes text only");
    const tools = [{ name: "t", inputSchema: { type: "object" as const } }];
    expect(why(samplingMessages(params([{ role: "user", content: text("a") }], { tools })))).toBe("tau refused the sampling request: tau offers no tool use in sampling");
    expect(why(samplingMessages(params([{ role: "assistant", content: { type: "tool_use", id: "x", name: "t", input: {} } }])))).toBe("tau refused the sampling request: tau offers no tool use in sampling");
    const many = Array.from({ length: MCP_SAMPLING_MAX_MESSAGES + 1 }, () => ({ role: "user" as const, content: text("a") }));
    expect(samplingMessages(params(many.slice(1)))).toHaveLength(MCP_SAMPLING_MAX_MESSAGES);
    expect(why(samplingMessages(params(many)))).toBe(`tau refused the sampling request: it has ${MCP_SAMPLING_MAX_MESSAGES + 1} messages; tau takes 1 to ${MCP_SAMPLING_MAX_MESSAGES}`);
    // At the bound, one below and one above it (two blocks count the newline that joins them).
    const long = (n: number) => samplingMessages(params([{ role: "user", content: text("x".repeat(n)) }]));
    expect(long(MCP_SAMPLING_MAX_TEXT_CHARS)).toHaveLength(1);
    expect(long(MCP_SAMPLING_MAX_TEXT_CHARS - 1)).toHaveLength(1);
    expect(why(long(MCP_SAMPLING_MAX_TEXT_CHARS + 1))).toBe(`tau refused the sampling request: message 1 is longer than ${MCP_SAMPLING_MAX_TEXT_CHARS} characters`);
    expect(why(samplingMessages(params([{ role: "user", content: [text("x".repeat(MCP_SAMPLING_MAX_TEXT_CHARS - 1)), text("y")] }])))).toContain("message 1 is longer");
  });
});
