// The /chat/completions wire client against the loopback fake OpenAI server.
import { describe, expect, it } from "vitest";
import { useEgressPolicy, useFakeOpenAI } from "../../support/e2e.js";
import type { ProviderCall } from "../../../handwritten/protocol/index.js";
import {
  MAX_DIAGNOSTIC_CHARS,
  MAX_ERROR_BODY_BYTES,
  MAX_RESPONSE_CHARS,
  MAX_TOOL_CALLS,
  SSE_MAX_LINE_BYTES,
  createEgressPolicy,
  reasoningReplayFor,
  streamChatCompletion,
} from "../../../handwritten/extensions/provider/index.js";
import type {
  ChatCompletionResult,
  EgressPolicy,
  ProviderProfile,
  RetryNotice,
  StreamChatCompletionOptions,
} from "../../../handwritten/extensions/provider/index.js";
import {
  FakeOpenAI,
  SSE_DONE,
  completionChunk,
  disconnectAfter,
  errorResponse,
  sseEvent,
  textResponse,
  toolCallResponse,
  usageChunk,
} from "../../support/fake-openai.js";

const API_KEY = "sk-test-SECRET-0123456789abcdef";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { drainedAfterEach: true });
let egress!: EgressPolicy;
useEgressPolicy((e) => (egress = e));

function request(overrides: Partial<ProviderCall> = {}): ProviderCall {
  return {
    agent_id: "agent-1",
    prompt_id: "prompt-1",
    round: 0,
    model: "fake-model",
    system: "You are tau.",
    messages: [{ role: "user", text: "hello" }],
    tools: [],
    ...overrides,
  };
}

interface Run {
  result: ChatCompletionResult;
  deltas: { text?: string; reasoning?: string }[];
  retries: RetryNotice[];
}

async function run(
  req: ProviderCall = request(),
  opts: Partial<StreamChatCompletionOptions> = {},
  apiKey: string = API_KEY,
): Promise<Run> {
  const deltas: Run["deltas"] = [];
  const retries: RetryNotice[] = [];
  const result = await streamChatCompletion(
    req,
    { baseUrl: fake.baseUrl, apiKey },
    {
      egress,
      onDelta: (text, reasoning) => deltas.push(text !== undefined ? { text } : { reasoning: reasoning ?? "" }),
      onRetry: (n) => retries.push(n),
      retry: { baseDelayMs: 5, maxDelayMs: 20, random: () => 0.5 },
      ...opts,
    },
  );
  return { result, deltas, retries };
}

function finished(r: Run) {
  if (r.result.status !== "finished") throw new Error(`expected finished, got ${JSON.stringify(r.result)}`);
  return r.result.report;
}
function failed(r: Run) {
  if (r.result.status !== "failed") throw new Error(`expected failed, got ${JSON.stringify(r.result)}`);
  return r.result.report;
}

describe("request body", () => {
  it("sends model, system first, tool calls and results, function tools, stream options", async () => {
    const rawArgs = '{"cmd":  "ls -la",\n "n": 1.50, "u":"\\u00e9"}';
    fake.enqueue(textResponse("ok"));
    const r = await run(
      request({
        messages: [
          { role: "user", text: "list files" },
          { role: "assistant", tool_calls: [{ call_id: "call_1", tool: "shell", arguments_json: rawArgs }] },
          { role: "tool", call_id: "call_1", text: "a\nb", is_error: false },
          { role: "assistant", text: "done" },
          { role: "user", text: "thanks" },
        ],
        tools: [{ name: "shell", description: "Run a command", parameters: { type: "object", properties: { cmd: { type: "string" } } } }],
      }),
    );
    finished(r);
    const got = fake.requests[0];
    expect(got?.method).toBe("POST");
    expect(got?.path).toBe("/v1/chat/completions");
    expect(got?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(got?.headers.accept).toBe("text/event-stream");
    expect(got?.body).toEqual({
      model: "fake-model",
      messages: [
        { role: "system", content: "You are tau." },
        { role: "user", content: "list files" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "shell", arguments: rawArgs } }] },
        { role: "tool", tool_call_id: "call_1", content: "a\nb" },
        { role: "assistant", content: "done" },
        { role: "user", content: "thanks" },
      ],
      tools: [
        {
          type: "function",
          function: { name: "shell", description: "Run a command", parameters: { type: "object", properties: { cmd: { type: "string" } } } },
        },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("omits tools when none are offered and sends no authorization without a key", async () => {
    fake.enqueue(textResponse("ok"));
    finished(await run(request(), {}, ""));
    expect(fake.requests[0]?.body).not.toHaveProperty("tools");
    expect(fake.requests[0]?.headers.authorization).toBeUndefined();
  });
});

describe("streaming", () => {
  it("plain text: deltas in order, finish stop, usage mapped", async () => {
    fake.enqueue(
      textResponse(["Hel", "lo", ", world"], {
        usage: { prompt_tokens: 12, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 8 }, completion_tokens_details: { reasoning_tokens: 1 } },
      }),
    );
    const r = await run();
    const report = finished(r);
    expect(r.deltas).toEqual([{ text: "Hel" }, { text: "lo" }, { text: ", world" }]);
    expect(report).toEqual({
      prompt_id: "prompt-1",
      round: 0,
      model: "fake-model",
      text: "Hello, world",
      tool_calls: [],
      finish_reason: "stop",
      server_finish_reason: "stop",
      usage: { input_tokens: 12, output_tokens: 3, cache_read_tokens: 8, reasoning_tokens: 1 },
    });
    expect(r.result.attempts).toBe(1);
  });

  it("reasoning from reasoning_content and reasoning", async () => {
    fake.enqueue({
      chunks: [
        sseEvent(completionChunk({ role: "assistant", reasoning_content: "think " })),
        sseEvent(completionChunk({ reasoning: "more" })),
        sseEvent(completionChunk({ content: "answer" })),
        sseEvent(completionChunk({}, { finishReason: "length" })),
        SSE_DONE,
      ],
    });
    const r = await run();
    const report = finished(r);
    expect(report.reasoning).toBe("think more");
    expect(report.text).toBe("answer");
    expect(report.finish_reason).toBe("length");
    expect(report.usage).toBeUndefined();
    expect(r.deltas).toEqual([{ reasoning: "think " }, { reasoning: "more" }, { text: "answer" }]);
  });

  it("[provider.stream.tool-call-args-verbatim] tool calls split across chunks keep raw argument text byte-identical", async () => {
    const raw = '{ "path" : "a\\"b\\\\c.txt",\t"lines": [1,  2], "note": "caf\\u00e9 ✓" }';
    // Split at every awkward point: inside escapes, inside the unicode escape, around whitespace.
    const fragments = [raw.slice(0, 3), raw.slice(3, 14), raw.slice(14, 15), raw.slice(15, 40), raw.slice(40, 47), raw.slice(47)];
    expect(fragments.join("")).toBe(raw);
    fake.enqueue(toolCallResponse([{ id: "call_abc", name: "read", arguments: fragments }], { usage: { prompt_tokens: 5, completion_tokens: 9 } }));
    const report = finished(await run());
    expect(report.finish_reason).toBe("tool_calls");
    expect(report.tool_calls).toEqual([{ call_id: "call_abc", tool: "read", arguments_json: raw }]);
    expect(report.usage).toEqual({ input_tokens: 5, output_tokens: 9 });

    // Replayed verbatim in the next round's request.
    fake.enqueue(textResponse("done"));
    finished(
      await run(
        request({
          round: 1,
          messages: [
            { role: "user", text: "go" },
            { role: "assistant", tool_calls: report.tool_calls },
            { role: "tool", call_id: "call_abc", text: "contents" },
          ],
        }),
      ),
    );
    const sent = fake.requests[1]?.rawBody ?? "";
    const parsed = JSON.parse(sent) as { messages: { tool_calls?: { function: { arguments: string } }[] }[] };
    expect(parsed.messages[2]?.tool_calls?.[0]?.function.arguments).toBe(raw);
  });

  it("[provider.stream.tool-call-args-verbatim] SSE bytes split at awkward offsets (inside multi-byte characters and escapes) yield the same tool call", async () => {
    const raw = '{"q":"ünïcödé \\n","k":[true,null]}';
    const body = toolCallResponse([{ id: "call_1", name: "search", arguments: [raw.slice(0, 9), raw.slice(9)] }])
      .chunks?.map((c) => (typeof c === "string" ? c : String(c.data)))
      .join("");
    const bytes = Buffer.from(body ?? "", "utf8");
    for (const at of [1, 7, 60, Math.floor(bytes.length / 2), bytes.length - 3]) {
      fake.enqueue({ chunks: [{ data: bytes.subarray(0, at) }, { data: bytes.subarray(at), delayMs: 2 }] });
      const report = finished(await run());
      expect(report.tool_calls).toEqual([{ call_id: "call_1", tool: "search", arguments_json: raw }]);
    }
  });

  it("several tool calls in one turn, interleaved by index", async () => {
    fake.enqueue({
      chunks: [
        sseEvent(completionChunk({ role: "assistant", content: "Let me look." })),
        sseEvent(completionChunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "shell", arguments: "" } }] })),
        sseEvent(completionChunk({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "read", arguments: '{"pa' } }] })),
        sseEvent(completionChunk({ tool_calls: [{ index: 0, function: { arguments: '{"cmd":"ls"}' } }] })),
        sseEvent(completionChunk({ tool_calls: [{ index: 1, function: { arguments: 'th":"x"}' } }] })),
        sseEvent(completionChunk({ tool_calls: [{ index: 2, id: "call_c", type: "function", function: { name: "noargs", arguments: "{}" } }] })),
        sseEvent(completionChunk({}, { finishReason: "tool_calls" })),
        sseEvent(usageChunk({ prompt_tokens: 1, completion_tokens: 2 })),
        SSE_DONE,
      ],
    });
    const r = await run();
    const report = finished(r);
    expect(report.text).toBe("Let me look.");
    expect(report.tool_calls).toEqual([
      { call_id: "call_a", tool: "shell", arguments_json: '{"cmd":"ls"}' },
      { call_id: "call_b", tool: "read", arguments_json: '{"path":"x"}' },
      { call_id: "call_c", tool: "noargs", arguments_json: "{}" },
    ]);
  });

  it("slow stream completes", async () => {
    fake.enqueue(textResponse(["a", "b", "c", "d"], { delayMs: 150 }));
    const r = await run(request(), { timeouts: { idleMs: 1_000 } });
    expect(finished(r).text).toBe("abcd");
    expect(r.deltas).toHaveLength(4);
  });

  it("CRLF line ends, comments and events split across chunks", async () => {
    const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`;
    const body = `: keep-alive\r\n\r\n${chunk(completionChunk({ content: "x" }))}${chunk(completionChunk({}, { finishReason: "stop" }))}data: [DONE]\r\n\r\n`;
    fake.enqueue({ chunks: body.match(/[\s\S]{1,7}/g) ?? [] });
    expect(finished(await run()).text).toBe("x");
  });
});

describe("protocol failures", () => {
  it("malformed SSE data → protocol, not retried", async () => {
    fake.enqueue({ chunks: [sseEvent(completionChunk({ content: "" })), "data: {not json\n\n", SSE_DONE] });
    const r = await run();
    expect(failed(r).error_class).toBe("protocol");
    expect(fake.requests).toHaveLength(1);
    expect(r.retries).toEqual([]);
  });

  it("[provider.stream.finish-reasons] an unknown finish_reason → protocol; finish_reason error → server_error", async () => {
    fake.enqueue({ chunks: [sseEvent(completionChunk({ content: "hi" })), sseEvent(completionChunk({}, { finishReason: "sleepy" })), SSE_DONE] });
    const report = failed(await run());
    expect(report.error_class).toBe("protocol");
    expect(report.diagnostic).toContain('"sleepy"');
    fake.enqueue({ chunks: [sseEvent(completionChunk({ content: "hi" })), sseEvent(completionChunk({}, { finishReason: "error" })), SSE_DONE] });
    expect(failed(await run()).error_class).toBe("server_error");
  });

  it("[provider.stream.clean-end-without-finish] a clean end without finish_reason is accepted when its content is whole, else protocol", async () => {
    // Text, at [DONE] and at the body's end: a stop, with the server's (absent) reason kept as "".
    fake.enqueue({ chunks: [sseEvent(completionChunk({ content: "hi" })), SSE_DONE] }, { chunks: [sseEvent(completionChunk({ reasoning_content: "hm" }))] });
    expect(finished(await run())).toMatchObject({ text: "hi", finish_reason: "stop", server_finish_reason: "" });
    expect(finished(await run())).toMatchObject({ text: "", reasoning: "hm", finish_reason: "stop", server_finish_reason: "" });
    // Whole tool calls: they run.
    fake.enqueue({ chunks: [sseEvent(completionChunk({ tool_calls: [{ index: 0, id: "call_1", function: { name: "ls", arguments: "{}" } }] })), SSE_DONE] });
    expect(finished(await run())).toMatchObject({ finish_reason: "tool_calls", server_finish_reason: "", tool_calls: [{ call_id: "call_1", tool: "ls", arguments_json: "{}" }] });
    // Nothing at all, or a tool call cut off inside its arguments: protocol.
    fake.enqueue({ chunks: [sseEvent(completionChunk({ role: "assistant", content: "" })), SSE_DONE] });
    expect(failed(await run()).diagnostic).toContain("without a finish_reason or any content");
    fake.enqueue({ chunks: [sseEvent(completionChunk({ tool_calls: [{ index: 0, id: "call_1", function: { name: "ls", arguments: '{"pa' } }] })), SSE_DONE] });
    expect(failed(await run()).diagnostic).toContain("inside a tool call");
  });

  it("tool_calls finish without a call id → protocol", async () => {
    fake.enqueue({
      chunks: [
        sseEvent(completionChunk({ tool_calls: [{ index: 0, type: "function", function: { name: "x", arguments: "{}" } }] })),
        sseEvent(completionChunk({}, { finishReason: "tool_calls" })),
        SSE_DONE,
      ],
    });
    expect(failed(await run()).error_class).toBe("protocol");
  });

  it("an SSE line over the bound → protocol; exactly at the bound is accepted by the parser", async () => {
    const over = `data: ${"x".repeat(SSE_MAX_LINE_BYTES)}`; // longer than the bound once "data: " counts
    fake.enqueue({ chunks: [over, "\n\n", SSE_DONE] });
    const report = failed(await run());
    expect(report.error_class).toBe("protocol");
    expect(report.diagnostic).toContain("line longer");
  });

  it("tool-call index bound: index MAX_TOOL_CALLS-1 accepted, MAX_TOOL_CALLS → protocol", async () => {
    const at = (index: number) => ({
      chunks: [
        sseEvent(completionChunk({ tool_calls: [{ index, id: `call_${index}`, type: "function", function: { name: "t", arguments: "{}" } }] })),
        sseEvent(completionChunk({}, { finishReason: "tool_calls" })),
        SSE_DONE,
      ],
    });
    fake.enqueue(at(MAX_TOOL_CALLS - 1));
    expect(finished(await run()).tool_calls).toEqual([{ call_id: `call_${MAX_TOOL_CALLS - 1}`, tool: "t", arguments_json: "{}" }]);
    fake.enqueue(at(MAX_TOOL_CALLS));
    expect(failed(await run()).error_class).toBe("protocol");
  });

  it("response size bound: exactly MAX_RESPONSE_CHARS accepted, one more → protocol", async () => {
    const piece = 1_000_000;
    const body = (total: number) => {
      const chunks: string[] = [];
      for (let left = total; left > 0; left -= piece) chunks.push(sseEvent(completionChunk({ content: "x".repeat(Math.min(piece, left)) })));
      chunks.push(sseEvent(completionChunk({}, { finishReason: "stop" })), SSE_DONE);
      return { chunks };
    };
    fake.enqueue(body(MAX_RESPONSE_CHARS));
    expect(finished(await run(request(), { onDelta: () => {} })).text).toHaveLength(MAX_RESPONSE_CHARS);
    fake.enqueue(body(MAX_RESPONSE_CHARS + 1));
    const report = failed(await run(request(), { onDelta: () => {} }));
    expect(report.error_class).toBe("protocol");
    expect(report.diagnostic).toContain("larger than");
  });

  it("a huge error body is read only up to the bound and still classified by status", async () => {
    fake.enqueue({ status: 503, headers: { "content-type": "application/json" }, chunks: [`{"error":{"message":"${"y".repeat(MAX_ERROR_BODY_BYTES * 4)}"}}`] }, textResponse("ok"));
    const r = await run();
    expect(finished(r).text).toBe("ok");
    expect(r.retries[0]?.error_class).toBe("server_error");
  });

  it("a non-SSE 200 response → protocol", async () => {
    fake.enqueue({ headers: { "content-type": "application/json" }, chunks: ['{"choices":[]}'] });
    expect(failed(await run()).error_class).toBe("protocol");
  });

  it("an error object inside the stream is classified from its code", async () => {
    fake.enqueue({ chunks: [sseEvent({ error: { code: "context_length_exceeded", type: "invalid_request_error", message: "too long" } })] });
    const r = await run();
    expect(failed(r).error_class).toBe("context_window_exceeded");
    expect(r.retries).toEqual([]);
  });

  it("[provider.stream.error-objects-keep-code] error objects in every shape servers send keep their code and type and are classified by the status they carry", async () => {
    // Groq: an `error` event whose object carries status_code.
    fake.enqueue({ chunks: ['event: error\ndata: {"error":{"message":"Tool call validation failed","type":"invalid_request_error","code":"tool_use_failed","status_code":400}}\n\n'] });
    let report = failed(await run());
    expect(report.error_class).toBe("invalid_request");
    expect(report.diagnostic).toBe("stream error (code=tool_use_failed, type=invalid_request_error): Tool call validation failed");
    // vLLM: a top-level error object with a numeric code.
    fake.enqueue({ chunks: [sseEvent({ object: "error", message: "bad", type: "BadRequestError", param: null, code: 400 })] });
    report = failed(await run());
    expect(report.error_class).toBe("invalid_request");
    expect(report.diagnostic).toBe("stream error (code=400, type=BadRequestError): bad");
    // llama.cpp: an `error:` line (not data), then [DONE].
    fake.enqueue({ chunks: ['error: {"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}\n\n', SSE_DONE] });
    report = failed(await run());
    expect(report.error_class).toBe("context_window_exceeded");
    expect(report.diagnostic).toContain("code=400, type=exceed_context_size_error");
    // An error event whose data is not JSON keeps its text; without a status it is a server failure.
    fake.enqueue({ chunks: ["event: error\ndata: upstream went away\n\n"] }, textResponse("after"));
    const r = await run();
    expect(finished(r).text).toBe("after");
    expect(r.retries.map((x) => x.error_class)).toEqual(["server_error"]);
  });
});

describe("fidelity", () => {
  it("[provider.stream.finish-reasons] content_filter and length are answers, not failures; synonyms are normalised, and the server's word is always kept as sent", async () => {
    for (const [sent, reported] of [
      ["content_filter", "content_filter"],
      ["length", "length"],
      ["model_length", "length"],
      ["function_call", "tool_calls"],
    ] as const) {
      const call = sent === "function_call" ? [sseEvent(completionChunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "f", arguments: "{}" } }] }))] : [];
      fake.enqueue({ chunks: [sseEvent(completionChunk({ content: "part" })), ...call, sseEvent(completionChunk({}, { finishReason: sent })), SSE_DONE] });
      const report = finished(await run());
      expect(report.finish_reason, sent).toBe(reported);
      // The server's own word is kept as sent, the same word or a synonym.
      expect(report.server_finish_reason, sent).toBe(sent);
    }
  });

  it("[provider.stream.tool-calls-whatever-finish] whole tool calls run whatever the finish reason; calls cut off by length do not", async () => {
    // Gemini's endpoint: the calls and `stop` in one chunk.
    fake.enqueue({
      chunks: [
        sseEvent(completionChunk({ role: "assistant", tool_calls: [{ id: "function-call-1", type: "function", function: { name: "ls", arguments: '{"path":"."}' } }] }, { finishReason: "stop" })),
        SSE_DONE,
      ],
    });
    let report = finished(await run());
    expect(report.finish_reason).toBe("tool_calls");
    expect(report.server_finish_reason).toBe("stop");
    expect(report.tool_calls).toEqual([{ call_id: "function-call-1", tool: "ls", arguments_json: '{"path":"."}' }]);
    // Arguments cut off at the output limit: the finish stays `length`, so nothing runs.
    fake.enqueue({
      chunks: [sseEvent(completionChunk({ tool_calls: [{ index: 0, id: "call_1", function: { name: "write", arguments: '{"text":"long' } }] })), sseEvent(completionChunk({}, { finishReason: "length" })), SSE_DONE],
    });
    report = finished(await run());
    expect(report.finish_reason).toBe("length");
    expect(report.server_finish_reason).toBe("length");
  });

  it("[provider.stream.content-parts-and-refusals] content as a list of parts (text, thinking, refusal) and delta.refusal are kept; other parts are skipped", async () => {
    fake.enqueue({
      chunks: [
        sseEvent(completionChunk({ role: "assistant", content: [{ type: "thinking", thinking: [{ type: "text", text: "Let me" }] }] })),
        sseEvent(completionChunk({ content: [{ type: "thinking", thinking: " think." }, { type: "image_url", image_url: { url: "x" } }] })),
        sseEvent(completionChunk({ content: [{ type: "text", text: "2 + 2" }, " = 4"] })),
        sseEvent(completionChunk({ content: [{ type: "refusal", refusal: " (no more)" }] })),
        sseEvent(completionChunk({}, { finishReason: "stop" })),
        SSE_DONE,
      ],
    });
    let r = await run();
    expect(finished(r)).toMatchObject({ text: "2 + 2 = 4 (no more)", reasoning: "Let me think.", finish_reason: "stop" });
    expect(r.deltas).toEqual([{ reasoning: "Let me" }, { reasoning: " think." }, { text: "2 + 2" }, { text: " = 4" }, { text: " (no more)" }]);
    fake.enqueue({
      chunks: [
        sseEvent(completionChunk({ role: "assistant", content: null, refusal: "" })),
        sseEvent(completionChunk({ refusal: "I can't" })),
        sseEvent(completionChunk({ refusal: " help with that." })),
        sseEvent(completionChunk({}, { finishReason: "stop" })),
        SSE_DONE,
      ],
    });
    r = await run();
    expect(finished(r).text).toBe("I can't help with that.");
    expect(r.deltas).toEqual([{ text: "I can't" }, { text: " help with that." }]);
    fake.enqueue({ chunks: [sseEvent(completionChunk({ content: { text: "x" } }))] });
    expect(failed(await run()).error_class).toBe("protocol");
  });

  it("usage only inside Groq's x_groq is read", async () => {
    fake.enqueue({
      chunks: [sseEvent(completionChunk({ content: "ok" })), sseEvent({ ...completionChunk({}, { finishReason: "stop" }), x_groq: { id: "req_1", usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } } }), SSE_DONE],
    });
    expect(finished(await run()).usage).toEqual({ input_tokens: 7, output_tokens: 2 });
  });

  it("llama.cpp's timings give the usage only while no usage object came, wherever that object is in the stream", async () => {
    const timings = { cache_n: 40, prompt_n: 3, prompt_ms: 25.7, predicted_n: 5, predicted_ms: 51.7 };
    const usage = { prompt_tokens: 43, completion_tokens: 5, total_tokens: 48 };
    const end = completionChunk({}, { finishReason: "stop" });
    fake.enqueue({ chunks: [sseEvent(completionChunk({ content: "Hi" })), sseEvent({ ...end, timings }), SSE_DONE] });
    expect(finished(await run()).usage).toEqual({ input_tokens: 43, output_tokens: 5, cache_read_tokens: 40 });
    fake.enqueue({ chunks: [sseEvent(completionChunk({ content: "Hi" })), sseEvent({ ...end, usage }), sseEvent({ ...completionChunk({}), choices: [], timings }), SSE_DONE] });
    expect(finished(await run()).usage).toEqual({ input_tokens: 43, output_tokens: 5 });
    fake.enqueue({ chunks: [sseEvent(completionChunk({ content: "Hi" })), sseEvent({ ...end, timings }), sseEvent({ ...completionChunk({}), choices: [], usage }), SSE_DONE] });
    expect(finished(await run()).usage).toEqual({ input_tokens: 43, output_tokens: 5 });
  });

  it("reasoning_details text counts once: alone it is the reasoning, beside a reasoning field it repeats it; encrypted entries add nothing", async () => {
    const details = (text: string) => [{ type: "reasoning.text", text, format: "anthropic-claude-v1", index: 0 }, { type: "reasoning.encrypted", data: "c2VjcmV0" }];
    const chunk = (delta: Record<string, unknown>) => completionChunk(delta);
    fake.enqueue({ chunks: [sseEvent(chunk({ content: "", reasoning_details: details("a*b") })), sseEvent(chunk({ reasoning_details: [{ type: "reasoning.summary", summary: " then c" }] })), sseEvent(completionChunk({ content: "c" }, { finishReason: "stop" })), SSE_DONE] });
    const alone = finished(await run());
    expect(alone.reasoning).toBe("a*b then c");
    expect(alone).not.toHaveProperty("reasoning_field");
    fake.enqueue({ chunks: [sseEvent(chunk({ reasoning: "a*b", reasoning_details: details("a*b") })), sseEvent(completionChunk({ content: "c" }, { finishReason: "stop" })), SSE_DONE] });
    expect(finished(await run()).reasoning).toBe("a*b");
  });

  it("[provider.request.reasoning-replay] kept reasoning goes back as the profile asks: on auto, reasoning_content on each assistant message whose server streamed it (whatever the host or model), reasoning when asked and there is any, or nothing", async () => {
    const messages: ProviderCall["messages"] = [
      { role: "user", text: "list" },
      { role: "assistant", text: "", reasoning: "I should list.", reasoning_field: "reasoning_content", tool_calls: [{ call_id: "call_1", tool: "ls", arguments_json: "{}" }] },
      { role: "tool", call_id: "call_1", text: "a" },
      { role: "assistant", text: "a is here", reasoning_field: "reasoning_content" },
      { role: "assistant", text: "and b", reasoning: "streamed as reasoning", reasoning_field: "reasoning" },
      { role: "assistant", text: "no reasoning streamed" },
      { role: "user", text: "thanks" },
    ];
    const sent = async (profile: Partial<ProviderProfile>, model = "fake-model") => {
      fake.enqueue(textResponse("ok"));
      const before = fake.requests.length;
      const result = await streamChatCompletion(request({ model, messages }), { baseUrl: fake.baseUrl, apiKey: API_KEY, ...profile }, { egress });
      expect(result.status).toBe("finished");
      return (fake.requests[before]?.body as { messages: Array<Record<string, unknown>> }).messages.filter((m) => m.role === "assistant");
    };
    // auto: by what each message's server streamed, on a host and a model that name nothing.
    for (const a of [await sent({}), await sent({ reasoningReplay: "auto" }, "some-thinking-model")]) {
      expect(a.map((m) => m.reasoning_content)).toEqual(["I should list.", "", undefined, undefined]);
      expect(a.some((m) => "reasoning" in m)).toBe(false);
    }
    expect(reasoningReplayFor(undefined)).toBe("auto");
    // reasoning_content: on every assistant message, even when empty.
    expect((await sent({ reasoningReplay: "reasoning_content" })).map((m) => m.reasoning_content)).toEqual(["I should list.", "", "streamed as reasoning", ""]);
    // none: nothing, whatever was streamed.
    for (const m of await sent({ reasoningReplay: "none" }, "deepseek-reasoner")) {
      expect(m).not.toHaveProperty("reasoning_content");
      expect(m).not.toHaveProperty("reasoning");
    }
    // reasoning: only where there is some.
    const r = await sent({ reasoningReplay: "reasoning" });
    expect(r[0]).toMatchObject({ reasoning: "I should list.", content: null });
    expect(r[1]).toEqual({ role: "assistant", content: "a is here" });
  });

  it("[provider.stream.reasoning-field] the field a server streamed reasoning in is reported with the response: reasoning_content, reasoning, or none", async () => {
    fake.enqueue({ chunks: [sseEvent(completionChunk({ reasoning_content: "think" })), sseEvent(completionChunk({ content: "hi" }, { finishReason: "stop" })), SSE_DONE] });
    expect(finished(await run())).toMatchObject({ reasoning: "think", reasoning_field: "reasoning_content", server_finish_reason: "stop" });
    fake.enqueue({ chunks: [sseEvent(completionChunk({ reasoning: "hm" })), sseEvent(completionChunk({ content: "hi" }, { finishReason: "stop" })), SSE_DONE] });
    expect(finished(await run())).toMatchObject({ reasoning: "hm", reasoning_field: "reasoning" });
    fake.enqueue(textResponse("plain"));
    expect(finished(await run())).not.toHaveProperty("reasoning_field");
  });
});

describe("HTTP errors and retries", () => {
  it("[provider.errors.classified-by-code] 400 with code context_length_exceeded → context_window_exceeded, not retried", async () => {
    fake.enqueue(
      errorResponse(400, { code: "context_length_exceeded", type: "invalid_request_error", message: "This model's maximum context length is 8192 tokens." }),
    );
    const r = await run();
    const report = failed(r);
    expect(report.error_class).toBe("context_window_exceeded");
    expect(report.diagnostic).toContain("HTTP 400");
    expect(report.diagnostic).toContain("code=context_length_exceeded");
    expect(r.retries).toEqual([]);
    expect(fake.requests).toHaveLength(1);
  });

  it("[provider.errors.classified-by-code] prose never classifies: a 400 whose message says 'rate limit' or 'context length' is invalid_request", async () => {
    fake.enqueue(errorResponse(400, { code: "invalid_value", message: "rate limit exceeded; maximum context length; server error; timeout" }));
    const r = await run();
    expect(failed(r).error_class).toBe("invalid_request");
    expect(r.retries).toEqual([]);
  });

  it("[provider.errors.classified-by-code] 401 → authentication; 403 → authentication; 404 → invalid_request; code rate_limit_exceeded on a 400 → rate_limited", async () => {
    fake.enqueue(errorResponse(401, { code: "invalid_api_key", type: "invalid_request_error", message: "Incorrect API key provided." }));
    expect(failed(await run()).error_class).toBe("authentication");
    fake.enqueue(errorResponse(403, { message: "forbidden" }));
    expect(failed(await run()).error_class).toBe("authentication");
    fake.enqueue(errorResponse(404, { code: "model_not_found", message: "The model does not exist" }));
    expect(failed(await run()).error_class).toBe("invalid_request");
    fake.enqueue(errorResponse(400, { code: "rate_limit_exceeded" }), textResponse("ok"));
    const r = await run();
    expect(finished(r).text).toBe("ok");
    expect(r.retries).toEqual([{ attempt: 1, delay_ms: expect.any(Number), error_class: "rate_limited" }]);
    expect(fake.requests).toHaveLength(5);
  });

  it("[provider.retry.bounded-terminal-not-retried] 429 then success: retried, onRetry called, Retry-After honoured", async () => {
    fake.enqueue(errorResponse(429, { code: "rate_limit_exceeded", type: "requests" }, { "retry-after-ms": "180" }), textResponse("ok"));
    const started = Date.now();
    const r = await run();
    expect(finished(r).text).toBe("ok");
    expect(r.result.attempts).toBe(2);
    expect(r.retries).toEqual([{ attempt: 1, delay_ms: 180, error_class: "rate_limited" }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(170);
    expect(fake.requests).toHaveLength(2);
  });

  it("[provider.retry.bounded-terminal-not-retried] Retry-After in seconds is honoured; over the cap the round fails without waiting", async () => {
    fake.enqueue(errorResponse(429, { message: "slow down" }, { "retry-after": "1" }), textResponse("ok"));
    const r1 = await run();
    expect(finished(r1).text).toBe("ok");
    expect(r1.retries).toEqual([{ attempt: 1, delay_ms: 1000, error_class: "rate_limited" }]);

    fake.enqueue(errorResponse(429, { message: "slow down" }, { "retry-after": "3600" }));
    const started = Date.now();
    const r2 = await run();
    expect(failed(r2).error_class).toBe("rate_limited");
    expect(failed(r2).diagnostic).toContain("cap");
    expect(r2.retries).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("[provider.retry.bounded-terminal-not-retried] 500 retried with growing back-off until attempts run out → server_error", async () => {
    for (let i = 0; i < 3; i++) fake.enqueue(errorResponse(500, { type: "server_error", message: "boom" }));
    const r = await run(request(), { retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 1_000, random: () => 0 } });
    const report = failed(r);
    expect(report.error_class).toBe("server_error");
    expect(report.diagnostic).toContain("after 3 attempts");
    expect(r.result.attempts).toBe(3);
    expect(fake.requests).toHaveLength(3);
    // Equal jitter with random 0: half of base·2^(n-1).
    expect(r.retries).toEqual([
      { attempt: 1, delay_ms: 5, error_class: "server_error" },
      { attempt: 2, delay_ms: 10, error_class: "server_error" },
    ]);
  });

  it("[provider.retry.bounded-terminal-not-retried] terminal classes are never retried", async () => {
    const terminal = [
      errorResponse(400, { code: "context_length_exceeded" }),
      errorResponse(401, { message: "no" }),
      errorResponse(422, { message: "bad" }),
      { chunks: ["data: {oops\n\n"] },
    ];
    for (const t of terminal) {
      fake.requests.length = 0;
      fake.enqueue(t);
      const r = await run();
      expect(r.result.status).toBe("failed");
      expect(r.retries).toEqual([]);
      expect(fake.requests).toHaveLength(1);
    }
  });

  it("a 429 with code insufficient_quota is rate_limited but not retried", async () => {
    fake.enqueue(errorResponse(429, { code: "insufficient_quota", type: "insufficient_quota" }));
    const r = await run();
    expect(failed(r).error_class).toBe("rate_limited");
    expect(r.retries).toEqual([]);
  });

  it("[provider.errors.diagnostic-redacts-key] a diagnostic never contains the API key, control characters, or more than the bound", async () => {
    const message = `Incorrect API key provided: ${API_KEY}.\u001b[31m Bearer ${API_KEY}\r\n${"x".repeat(3000)}`;
    fake.enqueue(errorResponse(401, { code: "invalid_api_key", message }));
    const report = failed(await run());
    expect(report.error_class).toBe("authentication");
    expect(report.diagnostic).not.toContain(API_KEY);
    expect(report.diagnostic).not.toContain("SECRET");
    expect(report.diagnostic).not.toMatch(/\p{Cc}/u);
    expect(report.diagnostic.length).toBeLessThanOrEqual(MAX_DIAGNOSTIC_CHARS);
  });
});

describe("network failures", () => {
  it("disconnect mid-stream after a delta → network, not retried", async () => {
    fake.enqueue(disconnectAfter([sseEvent(completionChunk({ content: "partial" }))]), textResponse("never"));
    const r = await run();
    const report = failed(r);
    expect(report.error_class).toBe("network");
    expect(report.diagnostic).toContain("not retried");
    expect(r.deltas).toEqual([{ text: "partial" }]);
    expect(r.retries).toEqual([]);
    expect(fake.requests).toHaveLength(1);
    expect(fake.pending).toBe(1);
    // Drain the unused script so the next test starts clean.
    fake.enqueue();
    finished(await run());
  });

  it("disconnect before any delta → network, retried", async () => {
    fake.enqueue(disconnectAfter([sseEvent(completionChunk({ role: "assistant", content: "" }))]), textResponse("second"));
    const r = await run();
    expect(finished(r).text).toBe("second");
    expect(r.retries).toEqual([{ attempt: 1, delay_ms: expect.any(Number), error_class: "network" }]);
  });

  it("connection refused → network after bounded attempts", async () => {
    const closed = await FakeOpenAI.start();
    const baseUrl = closed.baseUrl;
    await closed.close();
    const retries: RetryNotice[] = [];
    const result = await streamChatCompletion(
      request(),
      { baseUrl, apiKey: API_KEY },
      { egress, onRetry: (n) => retries.push(n), retry: { maxAttempts: 2, baseDelayMs: 1, random: () => 0 } },
    );
    expect(result.status).toBe("failed");
    expect(result.status === "failed" && result.report.error_class).toBe("network");
    expect(retries).toHaveLength(1);
  });

  it("a stalled stream → timeout, retried when nothing was emitted", async () => {
    fake.enqueue({ chunks: [sseEvent(completionChunk({ role: "assistant" }))], end: "hang" }, textResponse("after"));
    const r = await run(request(), { timeouts: { idleMs: 200 } });
    expect(finished(r).text).toBe("after");
    expect(r.retries).toEqual([{ attempt: 1, delay_ms: expect.any(Number), error_class: "timeout" }]);
  });

  it("no response headers in time → timeout", async () => {
    fake.enqueue({ headersDelayMs: 2_000, chunks: [] });
    const r = await run(request(), { timeouts: { headersMs: 150 }, retry: { maxAttempts: 1 } });
    expect(failed(r).error_class).toBe("timeout");
  });
});

describe("cancellation", () => {
  it("[provider.cancel.stops-immediately] abort during the stream → cancelled at once", async () => {
    fake.enqueue({ chunks: [sseEvent(completionChunk({ content: "a" })), { data: sseEvent(completionChunk({ content: "b" })), delayMs: 5_000 }] });
    const ac = new AbortController();
    const started = Date.now();
    const r = await run(request(), {
      signal: ac.signal,
      onDelta: () => ac.abort(),
    });
    expect(failed(r).error_class).toBe("cancelled");
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("[provider.cancel.stops-immediately] abort during back-off → cancelled without another attempt", async () => {
    fake.enqueue(errorResponse(503, { message: "busy" }));
    const ac = new AbortController();
    const started = Date.now();
    const r = await run(request(), {
      signal: ac.signal,
      retry: { baseDelayMs: 10_000, maxDelayMs: 10_000 },
      onRetry: () => setTimeout(() => ac.abort(), 20),
    });
    expect(failed(r).error_class).toBe("cancelled");
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(fake.requests).toHaveLength(1);
  });

  it("an already aborted signal sends nothing", async () => {
    const ac = new AbortController();
    ac.abort();
    const r = await run(request(), { signal: ac.signal });
    expect(failed(r).error_class).toBe("cancelled");
    expect(fake.requests).toHaveLength(0);
  });
});

describe("configuration errors", () => {
  it("a bad base URL or a tool result without call_id → invalid_request with no request sent", async () => {
    const r1 = await streamChatCompletion(request(), { baseUrl: "ftp://example" }, { egress });
    expect(r1.status === "failed" && r1.report.error_class).toBe("invalid_request");
    const r2 = await run(request({ messages: [{ role: "tool", text: "x" }] }));
    expect(failed(r2).error_class).toBe("invalid_request");
    expect(fake.requests).toHaveLength(0);
  });
});
