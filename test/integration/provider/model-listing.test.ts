// The provider's model listing (GET <base>/models) against a loopback server, through the real egress
// policy: what it takes from an answer, and every answer it does not take (SPEC-provider-chat-completions,
// "Model listing"), at its bounds.
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { useEgressPolicy, useFakeOpenAI } from "../../support/e2e.js";
import { MAX_LISTED_MODELS, createEgressPolicy, listModels, type EgressPolicy } from "../../../handwritten/extensions/provider/index.js";
import { FakeOpenAI, jsonResponse } from "../../support/fake-openai.js";

const KEY = "sk-listing-7c0ffee1234";
let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s));
let egress!: EgressPolicy;
useEgressPolicy((e) => (egress = e));

const list = (o: { timeoutMs?: number; maxBytes?: number } = {}) => listModels({ baseUrl: fake.baseUrl, apiKey: KEY }, { egress, ...o });
const json = (body: string) => ({ status: 200, headers: { "content-type": "application/json" }, chunks: [body] });

describe("the model listing", () => {
  it("[provider.models.listing-parsed] takes the ids in the server's order, once each, with what servers say of them", async () => {
    fake.setModels(
      jsonResponse(200, {
        object: "list",
        data: [
          { id: "vllm-served", object: "model", max_model_len: 32768 },
          { id: "groq-model", context_window: 131072, max_completion_tokens: 8192 },
          { id: "router/model", context_length: 200000, top_provider: { max_completion_tokens: 64000 }, pricing: { prompt: "0.000003", completion: "0.000015", input_cache_read: "0.0000003" } },
          { id: "vllm-served" },
          { id: "" },
          { id: "bad\u0007bell" },
          { name: "no id" },
          "not an object",
        ],
      }),
    );
    const before = fake.modelRequests.length;
    const r = await list();
    expect(r).toEqual({
      ok: true,
      skipped: 5,
      models: [
        { id: "vllm-served", context_window: 32768 },
        { id: "groq-model", context_window: 131072, max_output_tokens: 8192 },
        { id: "router/model", context_window: 200000, max_output_tokens: 64000, input_cost: 3, output_cost: 15, cached_input_cost: 0.3 },
      ],
    });
    const req = fake.modelRequests[before]!;
    expect([req.method, req.path, req.headers.authorization, req.headers.accept]).toEqual(["GET", "/v1/models", `Bearer ${KEY}`, "application/json"]);
  });

  it("[provider.models.listing-bounded] refuses an answer past the size cap (declared or streamed) and keeps at most MAX_LISTED_MODELS entries", async () => {
    // A body of exactly `cap` bytes is read; one byte more is no listing, however it arrives.
    const body = (bytes: number) => {
      const head = '{"data":[{"id":"m"}],"pad":"';
      return `${head}${"x".repeat(bytes - head.length - 2)}"}`;
    };
    const cap = 1000;
    fake.setModels(json(body(cap)));
    expect(await list({ maxBytes: cap })).toMatchObject({ ok: true, models: [{ id: "m" }] });
    fake.setModels(json(body(cap + 1)));
    expect(await list({ maxBytes: cap })).toEqual({ ok: false, reason: "the answer is larger than 1000 bytes" });
    fake.setModels({ status: 200, headers: { "content-type": "application/json", "content-length": String(cap + 1) }, chunks: [body(cap + 1)] });
    expect(await list({ maxBytes: cap })).toEqual({ ok: false, reason: "the answer is larger than 1000 bytes" });
    // Entries: exactly the bound are all taken; one more is skipped.
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `model-${i}`);
    fake.setModels(ids(MAX_LISTED_MODELS));
    expect(await list()).toMatchObject({ ok: true, skipped: 0 });
    fake.setModels(ids(MAX_LISTED_MODELS + 1));
    const over = await list();
    expect(over.ok && [over.models.length, over.skipped, over.models.at(-1)?.id]).toEqual([MAX_LISTED_MODELS, 1, `model-${MAX_LISTED_MODELS - 1}`]);
  });

  it("[provider.models.listing-failures] a status, a redirect, garbage, an empty list or silence is no listing, and the reason never holds the key; a refused key is marked unusable", async () => {
    const cases: Array<[Parameters<FakeOpenAI["setModels"]>[0], string, ("key" | "unreachable")?]> = [
      [jsonResponse(404, { error: { message: `unknown route for ${KEY}` } }), "HTTP 404"],
      [jsonResponse(401, { error: { message: `Incorrect API key provided: ${KEY}`, code: "invalid_api_key" } }), "HTTP 401", "key"],
      [jsonResponse(403, { error: { message: "forbidden" } }), "HTTP 403", "key"],
      [{ status: 302, headers: { location: `https://elsewhere.example/?key=${KEY}` }, chunks: [] }, "redirect not followed (HTTP 302)"],
      [json("<html>models</html>"), "the answer is not JSON"],
      [json('{"data": "none"}'), "the answer has no data list"],
      [json('{"object": "list", "data": []}'), "the list names no model"],
      [{ headersDelayMs: 30_000, chunks: [] }, "no answer within 300 ms"],
      [{ status: 200, headers: { "content-type": "application/json" }, chunks: ['{"data": ['], end: "hang" }, "no answer within 300 ms"],
    ];
    for (const [answer, reason, unusable] of cases) {
      fake.setModels(answer);
      const r = await list({ timeoutMs: 300 });
      expect(r, reason).toEqual({ ok: false, reason, ...(unusable ? { unusable } : {}) });
    }
  });

  it("[provider.models.listing-egress] goes through the configured proxy or not at all", async () => {
    // A proxy that is not there: the listing fails, and the server is never asked directly.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const proxied = createEgressPolicy({ env: { HTTP_PROXY: `http://127.0.0.1:${port}` } });
    fake.setModels(["m"]);
    const before = fake.modelRequests.length;
    const r = await listModels({ baseUrl: fake.baseUrl, apiKey: KEY }, { egress: proxied, timeoutMs: 2000 });
    await proxied.close();
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/^connection failed/);
    expect(!r.ok && r.unusable).toBe("unreachable");
    expect(fake.modelRequests.length).toBe(before);
  });
});
