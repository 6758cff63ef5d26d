// The Responses API wire family (POST /responses, streamed) against the loopback fake server
// speaking the documented event stream (SPEC-provider-responses): the request body, text,
// reasoning summaries and encrypted reasoning items, function calls, usage, how a response ends,
// and errors — through the same round runner (egress, retries, bounds) as chat completions.
import { describe, expect, it } from "vitest";
import { useEgressPolicy, useFakeOpenAI } from "../../support/e2e.js";
import type { ProviderCall } from "../../../handwritten/protocol/index.js";
import { MAX_RESPONSE_CHARS, streamResponses, type EgressPolicy, type RetryNotice, type RoundResult } from "../../../handwritten/extensions/provider/index.js";
import { FakeOpenAI, errorResponse } from "../../support/fake-openai.js";
import { responsesEvent, responsesStream } from "../../support/fake-responses.js";
import { replay } from "../../support/recorded-streams.js";

const API_KEY = "sk-test-SECRET-responses-0123456789";
let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { drainedAfterEach: true });
let egress!: EgressPolicy;
useEgressPolicy((e) => (egress = e));

function request(overrides: Partial<ProviderCall> = {}): ProviderCall {
  return { agent_id: "agent-1", prompt_id: "prompt-1", round: 0, model: "o-fake", system: "You are tau.", messages: [{ role: "user", text: "hello" }], tools: [], ...overrides };
}

async function run(req: ProviderCall = request()): Promise<{ result: RoundResult; deltas: Array<{ text?: string; reasoning?: string }>; retries: RetryNotice[] }> {
  const deltas: Array<{ text?: string; reasoning?: string }> = [];
  const retries: RetryNotice[] = [];
  const result = await streamResponses(req, { baseUrl: fake.baseUrl, apiKey: API_KEY }, {
    egress,
    onDelta: (text, reasoning) => deltas.push(text !== undefined ? { text } : { reasoning: reasoning ?? "" }),
    onRetry: (n) => retries.push(n),
    retry: { baseDelayMs: 5, maxDelayMs: 20, random: () => 0.5 },
  });
  return { result, deltas, retries };
}

const finished = (r: { result: RoundResult }) => {
  if (r.result.status !== "finished") throw new Error(`expected finished, got ${JSON.stringify(r.result)}`);
  return r.result.report;
};
const failed = (r: { result: RoundResult }) => {
  if (r.result.status !== "failed") throw new Error(`expected failed, got ${JSON.stringify(r.result)}`);
  return r.result.report;
};

describe("the Responses API family", () => {
  it("[provider.responses.body] the request: instructions, the transcript as input items (reasoning items sent back whole before their calls), tools, stateless with encrypted reasoning asked for", async () => {
    fake.enqueue(responsesStream([{ type: "message", id: "msg_1", text: "ok" }]));
    const req = request({
      messages: [
        { role: "user", text: "list files" },
        {
          role: "assistant",
          text: "Looking.",
          reasoning: "I should list.",
          reasoning_items: [{ id: "rs_1", encrypted_content: "gAAAA-opaque-1", summary: "I should list." }],
          tool_calls: [{ call_id: "call_1", tool: "shell", arguments_json: '{"command":"ls"}' }],
        },
        { role: "tool", call_id: "call_1", text: "a.txt\nb.txt" },
      ],
      tools: [{ name: "shell", description: "Run a command", parameters: { type: "object", properties: { command: { type: "string" } } } }],
    });
    finished(await run(req));
    const r = fake.responsesRequests[0];
    expect(r?.path).toBe("/v1/responses");
    expect(r?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(r?.body).toEqual({
      model: "o-fake",
      instructions: "You are tau.",
      input: [
        { role: "user", content: "list files" },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "I should list." }], encrypted_content: "gAAAA-opaque-1" },
        { role: "assistant", content: "Looking." },
        { type: "function_call", call_id: "call_1", name: "shell", arguments: '{"command":"ls"}' },
        { type: "function_call_output", call_id: "call_1", output: "a.txt\nb.txt" },
      ],
      tools: [{ type: "function", name: "shell", description: "Run a command", parameters: { type: "object", properties: { command: { type: "string" } } }, strict: false }],
      stream: true,
      store: false,
      include: ["reasoning.encrypted_content"],
    });
  });

  it("[provider.responses.stream] text, reasoning summary, encrypted reasoning items, function calls and usage come out as one report; deltas stream on the way", async () => {
    fake.enqueue(
      responsesStream(
        [
          { type: "reasoning", id: "rs_9", summary: "Think first.", encrypted_content: "gAAAA-enc-9" },
          { type: "message", id: "msg_9", text: "I will read both files." },
          { type: "function_call", id: "fc_1", call_id: "call_a", name: "read", arguments: '{"path":"a.txt"}' },
          { type: "function_call", id: "fc_2", call_id: "call_b", name: "read", arguments: '{"path":"b.txt"}' },
        ],
        { usage: { input_tokens: 1200, output_tokens: 80, cached_tokens: 1000, reasoning_tokens: 40 }, deltaChars: 5 },
      ),
    );
    const r = await run();
    expect(finished(r)).toEqual({
      prompt_id: "prompt-1",
      round: 0,
      model: "o-fake",
      text: "I will read both files.",
      reasoning: "Think first.",
      reasoning_items: [{ id: "rs_9", encrypted_content: "gAAAA-enc-9", summary: "Think first." }],
      tool_calls: [
        { call_id: "call_a", tool: "read", arguments_json: '{"path":"a.txt"}' },
        { call_id: "call_b", tool: "read", arguments_json: '{"path":"b.txt"}' },
      ],
      finish_reason: "tool_calls",
      usage: { input_tokens: 1200, output_tokens: 80, cache_read_tokens: 1000, reasoning_tokens: 40 },
    });
    expect(r.deltas.map((d) => d.text ?? "").join("")).toBe("I will read both files.");
    expect(r.deltas.map((d) => d.reasoning ?? "").join("")).toBe("Think first.");
    expect(r.deltas.length).toBeGreaterThan(4); // in pieces, as streamed
  });

  it("[provider.responses.stream] a server that sends only finished items (no deltas) and no final output still gives the whole answer, shown once", async () => {
    const s = responsesStream([{ type: "message", id: "m", text: "whole at once" }], { omitFinalOutput: true });
    s.chunks = (s.chunks ?? []).filter((c) => !String(typeof c === "string" ? c : c.data).includes("output_text.delta"));
    fake.enqueue(s);
    const r = await run();
    expect(finished(r)).toMatchObject({ text: "whole at once", finish_reason: "stop" });
    expect(r.deltas).toEqual([{ text: "whole at once" }]);
  });

  it("[provider.responses.streamed-as-kept] recorded streams: what the deltas showed is what the report keeps — summary parts and reasoning items a paragraph apart, two messages a paragraph apart, the rest of a finished text the deltas did not carry", async () => {
    for (const file of ["openai-reasoning-summary-parts.sse", "openai-phase-two-messages.sse", "openai-web-search.sse", "xai-reasoning-encrypted-text.sse", "lmstudio-reasoning-tool-call.sse"]) {
      fake.enqueue(replay(`recorded-responses/${file}`));
      const r = await run();
      const report = finished(r);
      expect(r.deltas.map((d) => d.text ?? "").join(""), file).toBe(report.text);
      expect(r.deltas.map((d) => d.reasoning ?? "").join(""), file).toBe(report.reasoning ?? "");
    }
  });

  it("[provider.responses.unknown-events] unknown events (whatever their data), keep-alives output items of unknown types and a reasoning item that cannot be sent back never fail an answer; an error event whose data is not JSON fails it with that text", async () => {
    const s = responsesStream([{ type: "message", id: "m", text: "still here" }]);
    const chunks = s.chunks ?? [];
    s.chunks = [
      chunks[0]!,
      ": keep-alive\n\n",
      "event: ping\ndata: ping\n\n",
      "event: response.something_new\ndata: [1, 2]\n\n",
      "data: \n\n",
      responsesEvent("response.output_item.added", { output_index: 0, item: { type: "future_item", id: "fi_1", status: "in_progress" } }),
      responsesEvent("response.future_item.delta", { output_index: 0, item_id: "fi_1", delta: "ignored" }),
      responsesEvent("response.output_item.done", { output_index: 0, item: { type: "future_item", id: "fi_1", status: "completed", payload: { a: 1 } } }),
      // The message moves one place on: its events renumbered.
      ...chunks.slice(1).map((c) => String(typeof c === "string" ? c : c.data).replace(/"output_index":0/g, '"output_index":1').replace(/"output":\[/, '"output":[{"type":"future_item","id":"fi_1"},')),
    ];
    fake.enqueue(s);
    const r = await run();
    expect(finished(r)).toMatchObject({ text: "still here", finish_reason: "stop", tool_calls: [] });
    expect(r.deltas).toEqual([{ text: "still here" }]);
    // Encrypted reasoning without an id: kept as reasoning only.
    fake.enqueue(responsesStream([{ type: "reasoning", id: "", summary: "Thought.", encrypted_content: "gAAAA-no-id" }, { type: "message", id: "m", text: "ok" }]));
    const noId = finished(await run());
    expect(noId).toMatchObject({ text: "ok", reasoning: "Thought." });
    expect(noId).not.toHaveProperty("reasoning_items");
    fake.enqueue({ chunks: [responsesEvent("response.output_text.delta", { output_index: 0, delta: "so" }), "event: error\ndata: upstream overloaded\n\n"] });
    expect(failed(await run())).toMatchObject({ error_class: "server_error", diagnostic: expect.stringContaining("upstream overloaded") });
  });

  it("[provider.responses.arguments-done] a call whose arguments come only in response.function_call_arguments.done, its finished item without them, keeps them", async () => {
    fake.enqueue({
      chunks: [
        responsesEvent("response.output_item.added", { output_index: 0, item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "read", arguments: "", status: "in_progress" } }),
        responsesEvent("response.function_call_arguments.done", { output_index: 0, item_id: "fc_1", arguments: '{"path":"a.txt"}' }),
        responsesEvent("response.output_item.done", { output_index: 0, item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "read", status: "completed" } }),
        responsesEvent("response.completed", { response: { id: "r", status: "completed" } }),
      ],
    });
    expect(finished(await run())).toMatchObject({ finish_reason: "tool_calls", tool_calls: [{ call_id: "call_1", tool: "read", arguments_json: '{"path":"a.txt"}' }] });
  });

  it("[provider.responses.ends] incomplete ends as length or content_filter, a refusal is the answer, a clean end without response.completed is a protocol error", async () => {
    fake.enqueue(responsesStream([{ type: "message", id: "m", text: "cut off he" }], { end: { status: "incomplete", reason: "max_output_tokens" } }));
    expect(finished(await run())).toMatchObject({ text: "cut off he", finish_reason: "length", server_finish_reason: "incomplete:max_output_tokens" });
    fake.enqueue(responsesStream([{ type: "message", id: "m", text: "" }], { end: { status: "incomplete", reason: "content_filter" } }));
    expect(finished(await run())).toMatchObject({ finish_reason: "content_filter", server_finish_reason: "incomplete:content_filter" });
    fake.enqueue(responsesStream([{ type: "message", id: "m", text: "I can't help with that.", refusal: true }]));
    expect(finished(await run())).toMatchObject({ text: "I can't help with that.", finish_reason: "stop" });
    // No response.completed: whatever came may be half an answer, so neither whole text nor a cut-off call is one.
    const whole = responsesStream([{ type: "message", id: "m", text: "all here" }]);
    whole.chunks = (whole.chunks ?? []).slice(0, -1);
    fake.enqueue(whole);
    expect(failed(await run())).toMatchObject({ error_class: "protocol", diagnostic: expect.stringContaining("no response.completed") });
    const cut = responsesStream([{ type: "function_call", id: "f", call_id: "call_x", name: "read", arguments: '{"path":"a.t' }]);
    cut.chunks = (cut.chunks ?? []).filter((c) => !/output_item\.done|arguments\.done|response\.completed/.test(String(typeof c === "string" ? c : c.data)));
    fake.enqueue(cut);
    expect(failed(await run())).toMatchObject({ error_class: "protocol" });
  });

  it("[provider.responses.errors] response.failed and error events keep their code; HTTP 429 is retried; an oversize answer and a bad call id are protocol errors; the key never shows", async () => {
    // After some output, so neither is retried: the failure is reported as the server gave it.
    fake.enqueue(responsesStream([{ type: "message", id: "m", text: "partial" }], { end: { status: "failed", code: "server_error", message: "the model crashed" } }));
    const f1 = failed(await run());
    expect(f1.diagnostic).toContain("code=server_error");
    expect(f1.diagnostic).toContain("the model crashed");
    expect(f1.diagnostic).toContain("not retried after output was streamed");
    fake.enqueue({ chunks: [responsesEvent("response.output_text.delta", { item_id: "m", output_index: 0, content_index: 0, delta: "so" }), responsesEvent("error", { code: "rate_limit_exceeded", message: `slow down ${API_KEY}`, param: null })] });
    const f2 = failed(await run());
    expect(f2.diagnostic).toContain("code=rate_limit_exceeded");
    expect(f2.diagnostic).not.toContain(API_KEY);
    fake.enqueue(errorResponse(429, { code: "rate_limit", message: "busy" }), responsesStream([{ type: "message", id: "m", text: "after a retry" }]));
    const r3 = await run();
    expect(finished(r3)).toMatchObject({ text: "after a retry" });
    expect(r3.retries).toHaveLength(1);
    fake.enqueue(responsesStream([{ type: "message", id: "m", text: "x".repeat(MAX_RESPONSE_CHARS + 1) }], { omitFinalOutput: true, deltaChars: 512 * 1024 }));
    expect(failed(await run())).toMatchObject({ error_class: "protocol", diagnostic: expect.stringContaining("larger than") });
    fake.enqueue(responsesStream([{ type: "function_call", id: "f", call_id: "bad id with spaces", name: "read", arguments: "{}" }]));
    expect(failed(await run())).toMatchObject({ error_class: "protocol", diagnostic: expect.stringContaining("unusable call_id") });
  });
});
