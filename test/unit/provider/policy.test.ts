// Pure pieces of the provider client: classification, diagnostics, retry timing, request mapping,
// usage mapping and proxy selection.
import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY_POLICY,
  MAX_DIAGNOSTIC_CHARS,
  RETRY_AFTER_CAP_MS,
  RETRY_BASE_DELAY_MS,
  RETRY_MAX_ATTEMPTS,
  RETRY_MAX_DELAY_MS,
  EgressProxyError,
  backoffDelay,
  buildChatCompletionBody,
  buildResponsesBody,
  bypassesProxy,
  chatCompletionsUrl,
  classifyHttp,
  classifyThrown,
  errorFields,
  mapUsage,
  parseNoProxy,
  parseRetryAfter,
  readProxySettings,
  sanitizeDiagnostic,
  selectProxy,
} from "../../../handwritten/extensions/provider/index.js";
import { CHATGPT_WS } from "../../../handwritten/extensions/provider/chatgpt-ws.js";

describe("classifyHttp", () => {
  it("[provider.errors.classified-by-code] codes and types decide before the status; prose is never read", () => {
    const cases: [number, ReturnType<typeof errorFields>, string, boolean][] = [
      [400, { code: "context_length_exceeded" }, "context_window_exceeded", false],
      [413, { type: "context_length_exceeded" }, "context_window_exceeded", false],
      [429, {}, "rate_limited", true],
      [400, { code: "rate_limit_exceeded" }, "rate_limited", true],
      [429, { code: "insufficient_quota" }, "rate_limited", false],
      [401, {}, "authentication", false],
      [403, {}, "authentication", false],
      [400, { code: "invalid_api_key" }, "authentication", false],
      [500, {}, "server_error", true],
      [502, {}, "server_error", true],
      [503, { type: "overloaded_error" }, "server_error", true],
      [408, {}, "timeout", true],
      [400, {}, "invalid_request", false],
      [404, { code: "model_not_found" }, "invalid_request", false],
      [422, {}, "invalid_request", false],
      [400, { message: "rate limit; context length exceeded; please retry; server error" }, "invalid_request", false],
    ];
    for (const [status, fields, errorClass, retryable] of cases) {
      expect({ status, fields, ...classifyHttp(status, fields) }).toEqual({ status, fields, errorClass, retryable });
    }
  });

  it("errorFields reads error.code / error.type / error.message, or top-level ones", () => {
    expect(errorFields({ error: { code: "x", type: "y", message: "m", param: null } })).toEqual({ code: "x", type: "y", message: "m" });
    expect(errorFields({ error: { code: null, type: "t" } })).toEqual({ type: "t" });
    expect(errorFields({ code: 429, message: "m" })).toEqual({ code: "429", message: "m" });
    expect(errorFields({ error: "plain" })).toEqual({ message: "plain" });
    expect(errorFields("nope")).toEqual({});
  });

  it("transport errors are classified by their code", () => {
    const e = (code: string) => Object.assign(new Error("anything at all"), { code });
    expect(classifyThrown(e("TAU_EGRESS_HEADERS_TIMEOUT"), undefined).errorClass).toBe("timeout");
    expect(classifyThrown(e("TAU_EGRESS_BODY_TIMEOUT"), undefined).errorClass).toBe("timeout");
    expect(classifyThrown(e("TAU_EGRESS_CONNECT_TIMEOUT"), undefined).errorClass).toBe("timeout");
    expect(classifyThrown(e("ECONNREFUSED"), undefined).errorClass).toBe("network");
    expect(classifyThrown(e("ECONNRESET"), undefined).retryable).toBe(true);
    expect(classifyThrown(e("DEPTH_ZERO_SELF_SIGNED_CERT"), undefined).retryable).toBe(false);
    expect(classifyThrown(e("UNABLE_TO_VERIFY_LEAF_SIGNATURE"), undefined).retryable).toBe(false);
    expect(classifyThrown(new EgressProxyError(403), undefined)).toMatchObject({ errorClass: "network", detail: "the proxy refused the tunnel (HTTP 403)" });
    const ac = new AbortController();
    ac.abort();
    expect(classifyThrown(e("ECONNRESET"), ac.signal).errorClass).toBe("cancelled");
  });
});

describe("sanitizeDiagnostic", () => {
  it("[provider.errors.diagnostic-redacts-key] removes secrets, bearer tokens and control characters, and bounds the length", () => {
    const key = "sk-proj-AAAABBBBCCCCDDDD";
    const out = sanitizeDiagnostic(`bad key ${key}\n\tAuthorization: Bearer abc.def \u001b[2J\u202e end`, [key]);
    expect(out).not.toContain(key);
    expect(out).not.toContain("abc.def");
    expect(out).not.toMatch(/[\p{Cc}\u202e]/u);
    expect(out).toBe("bad key [redacted] Authorization: Bearer [redacted] [2J end");
    const custom = sanitizeDiagnostic("token=zz-custom-secret-value!", ["zz-custom-secret-value"]);
    expect(custom).toBe("token=[redacted]!");
  });

  it("bounds: exactly at the limit kept, one above truncated, surrogate pairs never split", () => {
    expect(sanitizeDiagnostic("a".repeat(MAX_DIAGNOSTIC_CHARS))).toHaveLength(MAX_DIAGNOSTIC_CHARS);
    expect(sanitizeDiagnostic("a".repeat(MAX_DIAGNOSTIC_CHARS - 1))).toHaveLength(MAX_DIAGNOSTIC_CHARS - 1);
    const over = sanitizeDiagnostic("a".repeat(MAX_DIAGNOSTIC_CHARS + 1));
    expect(over).toHaveLength(MAX_DIAGNOSTIC_CHARS);
    expect(over.endsWith("…")).toBe(true);
    const emoji = sanitizeDiagnostic("😀".repeat(MAX_DIAGNOSTIC_CHARS));
    expect(emoji.length).toBeLessThanOrEqual(MAX_DIAGNOSTIC_CHARS);
    expect(emoji).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/u);
    expect(sanitizeDiagnostic("\u0000\u0001")).toBe("provider failure");
  });
});

describe("retry timing", () => {
  it("named bounds", () => {
    expect([RETRY_MAX_ATTEMPTS, RETRY_BASE_DELAY_MS, RETRY_MAX_DELAY_MS, RETRY_AFTER_CAP_MS]).toEqual([4, 500, 8_000, 30_000]);
  });

  it("exponential back-off with equal jitter, capped", () => {
    const p = (r: number) => ({ ...DEFAULT_RETRY_POLICY, random: () => r });
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(p(0), n))).toEqual([250, 500, 1000, 2000, 4000, 4000]);
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(p(0.999999), n))).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
  });

  it("parses retry-after-ms, delta-seconds and HTTP dates", () => {
    expect(parseRetryAfter({ "retry-after-ms": "250" })).toBe(250);
    expect(parseRetryAfter({ "retry-after": "2" })).toBe(2000);
    expect(parseRetryAfter({ "retry-after": "0.5" })).toBe(500);
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(parseRetryAfter({ "retry-after": "Wed, 01 Jan 2025 00:00:03 GMT" }, now)).toBe(3000);
    expect(parseRetryAfter({ "retry-after": "soon" })).toBeUndefined();
    expect(parseRetryAfter({})).toBeUndefined();
  });
});

describe("request mapping", () => {
  it("keeps tool-call arguments as the exact string and orders system first", () => {
    const raw = '{"a" :1,"b":"\\u00e9"}';
    const body = buildChatCompletionBody({
      agent_id: "a",
      prompt_id: "p",
      round: 1,
      model: "m",
      system: "S",
      messages: [
        { role: "assistant", text: "thinking", tool_calls: [{ call_id: "c1", tool: "t", arguments_json: raw }] },
        { role: "tool", call_id: "c1", text: "failed", is_error: true },
      ],
      tools: [],
    });
    expect(body.messages[0]).toEqual({ role: "system", content: "S" });
    expect(body.messages[1]).toEqual({
      role: "assistant",
      content: "thinking",
      tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: raw } }],
    });
    expect(JSON.stringify(body)).toContain(JSON.stringify(raw));
    expect(body).not.toHaveProperty("tools");
  });

  it("[provider.request.output-bound] a request's max_output_tokens is max_completion_tokens of chat completions and max_output_tokens of Responses, never sent to the ChatGPT backend, and absent when the request has none", () => {
    const call = { agent_id: "a", prompt_id: "p", round: 0, model: "m", system: "", messages: [{ role: "user" as const, text: "hi" }], tools: [] };
    expect(buildChatCompletionBody({ ...call, max_output_tokens: 200 }).max_completion_tokens).toBe(200);
    expect(buildChatCompletionBody(call)).not.toHaveProperty("max_completion_tokens");
    expect(buildResponsesBody({ ...call, max_output_tokens: 200 }).max_output_tokens).toBe(200);
    expect(buildResponsesBody(call)).not.toHaveProperty("max_output_tokens");
    expect(JSON.parse(CHATGPT_WS.payload({ ...call, max_output_tokens: 200 }, {} as never))).not.toHaveProperty("max_output_tokens");
  });

  it("builds the endpoint from the base URL, keeping its query", () => {
    expect(chatCompletionsUrl("http://127.0.0.1:1/v1").href).toBe("http://127.0.0.1:1/v1/chat/completions");
    expect(chatCompletionsUrl("https://x.example/openai/v1/?api-version=1").href).toBe("https://x.example/openai/v1/chat/completions?api-version=1");
    expect(() => chatCompletionsUrl("file:///etc")).toThrow();
    expect(() => chatCompletionsUrl("https://user:pw@x.example/v1")).toThrow();
  });

  it("maps usage, ignoring unusable counts", () => {
    expect(mapUsage({ prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 })).toEqual({ input_tokens: 10, output_tokens: 2 });
    expect(
      mapUsage({
        prompt_tokens: 10,
        completion_tokens: 2,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 1 },
      }),
    ).toEqual({ input_tokens: 10, output_tokens: 2, cache_read_tokens: 4, reasoning_tokens: 1 });
    // Where other servers put the same counts, when the details objects do not hold them.
    expect(mapUsage({ prompt_tokens: 10, completion_tokens: 2, cached_tokens: 3 })).toEqual({ input_tokens: 10, output_tokens: 2, cache_read_tokens: 3 }); // Together
    expect(mapUsage({ prompt_tokens: 10, completion_tokens: 2, prompt_cache_hit_tokens: 6, prompt_cache_miss_tokens: 4 })).toEqual({ input_tokens: 10, output_tokens: 2, cache_read_tokens: 6 }); // DeepSeek
    expect(mapUsage({ prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: null, reasoning_tokens: 1 })).toEqual({ input_tokens: 10, output_tokens: 2, reasoning_tokens: 1 }); // SGLang
    expect(mapUsage({ prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 4 }, prompt_cache_hit_tokens: 6 })).toEqual({ input_tokens: 10, output_tokens: 2, cache_read_tokens: 4 });
    expect(mapUsage({ prompt_tokens: -1, completion_tokens: 2 })).toBeUndefined();
    expect(mapUsage({ prompt_tokens: 1.5, completion_tokens: 2 })).toBeUndefined();
    expect(mapUsage(null)).toBeUndefined();
  });
});

describe("proxy selection", () => {
  it("parses NO_PROXY entries with ports, leading dots and wildcards", () => {
    expect(parseNoProxy("example.com, .internal ,*.corp:8080 [::1] 10.0.0.1:3128")).toEqual([
      { host: "example.com", port: 0 },
      { host: "internal", port: 0 },
      { host: "corp", port: 8080 },
      { host: "::1", port: 0 },
      { host: "10.0.0.1", port: 3128 },
    ]);
    expect(parseNoProxy(" * ")).toBe("*");
    expect(parseNoProxy(undefined)).toEqual([]);
  });

  it("matches hosts and sub-domains, honours ports, and picks the proxy by scheme", () => {
    const s = readProxySettings({ HTTP_PROXY: "proxy:3128", HTTPS_PROXY: "https://sproxy:443", NO_PROXY: "example.com,.corp:8443" });
    expect(s.httpProxy?.href).toBe("http://proxy:3128/");
    expect(bypassesProxy(s, new URL("https://example.com/x"))).toBe(true);
    expect(bypassesProxy(s, new URL("https://api.example.com/x"))).toBe(true);
    expect(bypassesProxy(s, new URL("https://notexample.com/x"))).toBe(false);
    expect(bypassesProxy(s, new URL("https://a.corp:8443/"))).toBe(true);
    expect(bypassesProxy(s, new URL("https://a.corp/"))).toBe(false);
    expect(selectProxy(s, new URL("http://api.openai.com/"))?.href).toBe("http://proxy:3128/");
    expect(selectProxy(s, new URL("https://api.openai.com/"))?.href).toBe("https://sproxy/");
    expect(selectProxy(readProxySettings({ HTTP_PROXY: "http://p:1" }), new URL("https://api.openai.com/"))).toBeUndefined();
    expect(readProxySettings({ HTTP_PROXY: "  " }).httpProxy).toBeUndefined();
  });
});
