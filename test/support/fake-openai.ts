// A loopback fake OpenAI-compatible server for tests (node:http on 127.0.0.1, port 0; node:https
// with the `tls` option).
//
// Usage:
//   const fake = await FakeOpenAI.start();
//   fake.enqueue(textResponse(["Hel", "lo"], { usage: { prompt_tokens: 3, completion_tokens: 2 } }));
//   … point the client at fake.baseUrl (`http://127.0.0.1:PORT/v1`) …
//   expect(fake.requests[0]?.body).toMatchObject({ model: "m", stream: true });
//   await fake.close();
//
// Every POST whose path ends in `/chat/completions` or `/responses` takes the next scripted
// response from the queue, in order (builders for the Responses stream: fake-responses.ts). With the queue empty the server answers 400 with
// `{"error":{"code":"fake_unscripted"}}` (a terminal, non-retried failure) and counts it in
// `unscripted`. `GET …/models` answers the `models` list given to start() (or setModels), or the
// scripted `modelsResponse`. Anything else is 404.
// Every request is logged in `requests` (method, path, headers, raw and parsed body) before it is
// answered. close() destroys open connections, including hanging ones.
import { createServer, type IncomingMessage } from "node:http";
import type { IncomingHttpHeaders, Server, ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { ReplayResponse } from "../../handwritten/extensions/provider/index.js";

export interface ScriptedChunk {
  data: string | Uint8Array;
  /** Milliseconds to wait before writing this chunk. */
  delayMs?: number;
}

export interface ScriptedResponse {
  /** HTTP status; default 200. */
  status?: number;
  /** Response headers; default `content-type: text/event-stream` (JSON bodies set their own). */
  headers?: Record<string, string>;
  /** Milliseconds to wait before sending the status line and headers. */
  headersDelayMs?: number;
  /** Sends nothing until this settles (a test holds a response until it has done something else). */
  gate?: Promise<unknown>;
  /** Body chunks, written in order (a string is a chunk with no delay). */
  chunks?: (string | ScriptedChunk)[];
  /**
   * After the last chunk: `close` ends the response normally (default); `destroy` drops the
   * connection without finishing the body (a disconnect mid-stream); `hang` keeps it open with no
   * further bytes until the client gives up or the server closes.
   */
  end?: "close" | "destroy" | "hang";
  /** Called when the client closes the connection before the response ended (a request it cancelled). */
  onClientClose?: () => void;
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
}

export interface FakeOpenAIOptions {
  /** Model ids listed by `GET …/models`. */
  models?: string[];
  /** What `GET …/models` answers instead of the `models` list (an error, a slow or oversize answer). */
  modelsResponse?: ScriptedResponse;
  /** Serve https with this key and certificate (PEM). */
  tls?: { key: string | Buffer; cert: string | Buffer };
}

export class FakeOpenAI {
  readonly requests: ReceivedRequest[] = [];
  /** Chat-completion requests that found the queue empty. */
  unscripted = 0;
  readonly #queue: ScriptedResponse[] = [];
  #responder: ((request: ReceivedRequest) => ScriptedResponse | undefined) | undefined;
  readonly #server: Server;
  #models: string[];
  #modelsResponse: ScriptedResponse | undefined;
  readonly #waiters: (() => void)[] = [];
  #port = 0;
  readonly #scheme: "http" | "https";

  private constructor(options: FakeOpenAIOptions) {
    this.#models = options.models ?? [];
    this.#modelsResponse = options.modelsResponse;
    this.#scheme = options.tls ? "https" : "http";
    const handle = (req: IncomingMessage, res: ServerResponse) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => {
        const rawBody = Buffer.concat(parts).toString("utf8");
        let body: unknown;
        try {
          body = rawBody === "" ? undefined : JSON.parse(rawBody);
        } catch {
          body = undefined;
        }
        const path = req.url ?? "/";
        this.requests.push({ method: req.method ?? "", path, headers: req.headers, rawBody, body });
        for (const w of this.#waiters.splice(0)) w();
        this.#answer(req.method ?? "", path.split("?")[0] ?? "", res);
      });
    };
    // An https server has every method of an http one that is used here.
    this.#server = options.tls ? (createTlsServer(options.tls, handle) as unknown as Server) : createServer(handle);
  }

  /** Starts a server on 127.0.0.1 with an OS-assigned port. */
  static async start(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
    const fake = new FakeOpenAI(options);
    await new Promise<void>((resolve, reject) => {
      fake.#server.once("error", reject);
      fake.#server.listen(0, "127.0.0.1", () => resolve());
    });
    fake.#port = (fake.#server.address() as AddressInfo).port;
    return fake;
  }

  get port(): number {
    return this.#port;
  }

  /** `http://127.0.0.1:PORT` (https with the `tls` option) */
  get origin(): string {
    return `${this.#scheme}://127.0.0.1:${this.#port}`;
  }

  /** `http://127.0.0.1:PORT/v1`, the value for OPENAI_BASE_URL. */
  get baseUrl(): string {
    return `${this.origin}/v1`;
  }

  /** Appends scripted responses to the queue. */
  enqueue(...responses: ScriptedResponse[]): this {
    this.#queue.push(...responses);
    return this;
  }

  /**
   * Answers chat requests by their content (several agents' requests in flight at once arrive in no
   * fixed order); a request it answers undefined for takes the queue's next response.
   */
  respondWith(responder: ((request: ReceivedRequest) => ScriptedResponse | undefined) | undefined): this {
    this.#responder = responder;
    return this;
  }

  /** Scripted responses not yet used. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Sets what `GET …/models` answers from now on: a list of ids, or a scripted response. */
  setModels(models: string[] | ScriptedResponse): this {
    if (Array.isArray(models)) {
      this.#models = [...models];
      this.#modelsResponse = undefined;
    } else this.#modelsResponse = models;
    return this;
  }

  /** Model listing requests (`GET …/models`) received so far. */
  get modelRequests(): ReceivedRequest[] {
    return this.requests.filter((r) => r.method === "GET" && (r.path.split("?")[0] ?? "").endsWith("/models"));
  }

  /** Chat-completion requests received so far. */
  get chatRequests(): ReceivedRequest[] {
    return this.requests.filter((r) => r.method === "POST" && (r.path.split("?")[0] ?? "").endsWith("/chat/completions"));
  }

  /** Responses API requests (`POST …/responses`) received so far. */
  get responsesRequests(): ReceivedRequest[] {
    return this.requests.filter((r) => r.method === "POST" && (r.path.split("?")[0] ?? "").endsWith("/responses"));
  }

  /** Resolves once at least `n` requests have been received. */
  async waitForRequests(n: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < n) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`fake-openai: expected ${n} requests, got ${this.requests.length}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #answer(method: string, path: string, res: ServerResponse): void {
    if (method === "POST" && (path.endsWith("/chat/completions") || path.endsWith("/responses"))) {
      const request = this.requests.at(-1);
      const scripted = (request && this.#responder?.(request)) ?? this.#queue.shift();
      if (scripted === undefined) {
        this.unscripted += 1;
        void serve(res, errorResponse(400, { code: "fake_unscripted", message: "no scripted response left" }));
        return;
      }
      void serve(res, scripted);
      return;
    }
    if (method === "GET" && path.endsWith("/models")) {
      void serve(res, this.#modelsResponse ?? jsonResponse(200, { object: "list", data: this.#models.map((id) => ({ id, object: "model", owned_by: "fake" })) }));
      return;
    }
    void serve(res, errorResponse(404, { code: "not_found", message: "unknown path" }));
  }
}

function wait(ms: number): Promise<void> {
  return ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}

async function serve(res: ServerResponse, s: ScriptedResponse): Promise<void> {
  let gone = false;
  res.on("close", () => {
    gone = true;
    if (!res.writableEnded) s.onClientClose?.();
  });
  // timing-under-test: a scripted delay is the slow server a test asked for
  await wait(s.headersDelayMs ?? 0);
  if (s.gate) await s.gate;
  if (gone) return;
  res.writeHead(s.status ?? 200, s.headers ?? { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.flushHeaders();
  for (const c of s.chunks ?? []) {
    const chunk = typeof c === "string" ? { data: c } : c;
    // timing-under-test: a scripted delay between chunks is the slow stream a test asked for
    await wait(chunk.delayMs ?? 0);
    if (gone) return;
    await new Promise<void>((resolve) => res.write(chunk.data, () => resolve()));
  }
  if (gone) return;
  switch (s.end ?? "close") {
    case "close":
      res.end();
      break;
    case "destroy":
      res.socket?.destroy();
      break;
    case "hang":
      break;
  }
}

// -------------------------------------------------------------------------------------------------
// Builders for scripted responses in the real OpenAI streaming format.

/** One SSE event: `data: <json>\n\n` (a string is sent as-is after `data: `). */
export function sseEvent(data: unknown): string {
  return `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}

export const SSE_DONE = "data: [DONE]\n\n";

export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

/** A `chat.completion.chunk` object with one choice. */
export function completionChunk(
  delta: Record<string, unknown>,
  opts: { finishReason?: string | null; model?: string; id?: string } = {},
): Record<string, unknown> {
  return {
    id: opts.id ?? "chatcmpl-fake",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: opts.model ?? "fake-model",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: opts.finishReason ?? null }],
  };
}

/** The final usage chunk sent when `stream_options.include_usage` is set (empty choices). */
export function usageChunk(usage: OpenAiUsage, opts: { model?: string } = {}): Record<string, unknown> {
  return {
    id: "chatcmpl-fake",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: opts.model ?? "fake-model",
    choices: [],
    usage: { total_tokens: usage.prompt_tokens + usage.completion_tokens, ...usage },
  };
}

export interface TextResponseOptions {
  usage?: OpenAiUsage;
  /** Default `stop`. */
  finishReason?: string;
  /** Reasoning fragments streamed (as `reasoning_content`) before the text. */
  reasoning?: string[];
  /** Delay before each content chunk (a slow stream). */
  delayMs?: number;
  model?: string;
}

/** A streamed text answer: a role chunk, one chunk per fragment, finish, optional usage, [DONE]. */
export function textResponse(text: string | string[], opts: TextResponseOptions = {}): ScriptedResponse {
  const fragments = typeof text === "string" ? [text] : text;
  const m = opts.model === undefined ? {} : { model: opts.model };
  const chunks: ScriptedChunk[] = [{ data: sseEvent(completionChunk({ role: "assistant", content: "" }, m)) }];
  for (const r of opts.reasoning ?? []) chunks.push({ data: sseEvent(completionChunk({ reasoning_content: r }, m)), delayMs: opts.delayMs ?? 0 });
  for (const f of fragments) chunks.push({ data: sseEvent(completionChunk({ content: f }, m)), delayMs: opts.delayMs ?? 0 });
  chunks.push({ data: sseEvent(completionChunk({}, { ...m, finishReason: opts.finishReason ?? "stop" })) });
  if (opts.usage) chunks.push({ data: sseEvent(usageChunk(opts.usage, m)) });
  chunks.push({ data: SSE_DONE });
  return { chunks };
}

export interface ScriptedToolCall {
  id: string;
  name: string;
  /** Raw argument JSON, whole or as the fragments to stream. */
  arguments: string | string[];
}

/**
 * A streamed tool-call answer in OpenAI's shape: the first chunk of each call carries `index`,
 * `id`, `type` and `function.name` with empty arguments; argument fragments follow with only
 * `index` and `function.arguments`; then `finish_reason: "tool_calls"`, optional usage, [DONE].
 */
export function toolCallResponse(
  calls: ScriptedToolCall[],
  opts: { usage?: OpenAiUsage; text?: string; model?: string; delayMs?: number } = {},
): ScriptedResponse {
  const m = opts.model === undefined ? {} : { model: opts.model };
  const chunks: ScriptedChunk[] = [{ data: sseEvent(completionChunk({ role: "assistant", content: opts.text ?? null }, m)) }];
  calls.forEach((call, index) => {
    chunks.push({
      data: sseEvent(
        completionChunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }, m),
      ),
      delayMs: opts.delayMs ?? 0,
    });
    for (const frag of typeof call.arguments === "string" ? [call.arguments] : call.arguments) {
      chunks.push({ data: sseEvent(completionChunk({ tool_calls: [{ index, function: { arguments: frag } }] }, m)), delayMs: opts.delayMs ?? 0 });
    }
  });
  chunks.push({ data: sseEvent(completionChunk({}, { ...m, finishReason: "tool_calls" })) });
  if (opts.usage) chunks.push({ data: sseEvent(usageChunk(opts.usage, m)) });
  chunks.push({ data: SSE_DONE });
  return { chunks };
}

/** A JSON response with any status. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): ScriptedResponse {
  return { status, headers: { "content-type": "application/json", ...headers }, chunks: [JSON.stringify(body)] };
}

/** An OpenAI-style error: `{"error": {"message", "type", "param": null, "code"}}`. */
export function errorResponse(
  status: number,
  error: { code?: string | null; type?: string; message?: string },
  headers: Record<string, string> = {},
): ScriptedResponse {
  return jsonResponse(
    status,
    { error: { message: error.message ?? "error", type: error.type ?? "invalid_request_error", param: null, code: error.code ?? null } },
    headers,
  );
}

/** A stream whose chunks are sent and then the connection is dropped without finishing the body. */
export function disconnectAfter(chunks: (string | ScriptedChunk)[]): ScriptedResponse {
  return { chunks, end: "destroy" };
}

/** Serves a cassette replay (see handwritten/extensions/provider/cassette.ts). */
export function replayResponse(replay: ReplayResponse): ScriptedResponse {
  return {
    status: replay.status,
    headers: replay.headers,
    chunks: replay.chunks.map((c) => ({ data: c.data, delayMs: c.delayMs })),
  };
}
