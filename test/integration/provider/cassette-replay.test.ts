// The hand-authored cassettes replayed byte-for-byte from the loopback fake server.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useEgressPolicy, useFakeOpenAI } from "../../support/e2e.js";
import type { ProviderCall } from "../../../handwritten/protocol/index.js";
import { cassetteReplay, loadCassette, streamChatCompletion, summarizeRequest } from "../../../handwritten/extensions/provider/index.js";
import type { EgressPolicy } from "../../../handwritten/extensions/provider/index.js";
import { FakeOpenAI, replayResponse } from "../../support/fake-openai.js";
import { REPO_ROOT } from "../../support/paths.js";

const DIR = join(REPO_ROOT, "test/fixtures/provider/cassettes");

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s));
let egress!: EgressPolicy;
useEgressPolicy((e) => (egress = e));

function request(tools: string[]): ProviderCall {
  return {
    agent_id: "agent-1",
    prompt_id: "prompt-1",
    round: 0,
    model: "gpt-4o-mini",
    system: "You are tau.",
    messages: [{ role: "user", text: "question" }],
    tools: tools.map((name) => ({ name, description: name, parameters: { type: "object" } })),
  };
}

describe("cassette replay", () => {
  it("text answer: deltas, text and usage", async () => {
    const cassette = loadCassette(join(DIR, "text-answer.json"));
    fake.enqueue(replayResponse(cassetteReplay(cassette)));
    const req = request([]);
    const deltas: string[] = [];
    const result = await streamChatCompletion(req, { baseUrl: fake.baseUrl, apiKey: "k" }, { egress, onDelta: (t) => t !== undefined && deltas.push(t) });
    expect(result.status).toBe("finished");
    if (result.status !== "finished") return;
    expect(result.report.text).toBe("The answer is 42 — naïve ✓");
    expect(deltas).toEqual(["The", " answer", " is 42 — ", "naïve ✓"]);
    expect(result.report.finish_reason).toBe("stop");
    expect(result.report.usage).toEqual({ input_tokens: 25, output_tokens: 7, cache_read_tokens: 0, reasoning_tokens: 0 });
    expect(summarizeRequest(req)).toEqual(cassette.request);
  });

  it("[provider.stream.tool-call-args-verbatim] tool calls split at arbitrary bytes keep their raw arguments", async () => {
    const cassette = loadCassette(join(DIR, "tool-calls-with-usage.json"));
    fake.enqueue(replayResponse(cassetteReplay(cassette)));
    const req = request(["shell", "read"]);
    const result = await streamChatCompletion(req, { baseUrl: fake.baseUrl }, { egress });
    expect(result.status).toBe("finished");
    if (result.status !== "finished") return;
    expect(result.report.finish_reason).toBe("tool_calls");
    expect(result.report.tool_calls).toEqual([
      { call_id: "call_Qx7Yb2Lk9mN3", tool: "shell", arguments_json: '{"command": "grep -n \\"TODO\\" src/*.ts",  "timeout_ms": 5000}' },
      { call_id: "call_Rw4Tz8Hp1sV6", tool: "read", arguments_json: '{"path":"notes/caf\\u00e9.md"}' },
    ]);
    expect(result.report.usage).toEqual({ input_tokens: 1187, output_tokens: 41, cache_read_tokens: 1024, reasoning_tokens: 0 });
    expect(summarizeRequest(req)).toEqual(cassette.request);
  });
});
