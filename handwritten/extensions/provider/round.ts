// What every wire family of the provider shares (SPEC-provider-execution): the bounds, the endpoint
// URL, the transport interface with its HTTP + SSE transport (one streamed attempt through the
// egress policy), and the round with its retries. A family (chat completions, responses) says only
// how its request body is built and its stream is read; a transport (HTTP_SSE here, a WebSocket in
// ws-transport.ts) says how the request is carried (SPEC-provider-websocket).
import { mark } from "../../startup/timeline.js";
import type { ErrorClass, ProviderResponseFailedReported, ProviderResponseFinishedReported, ReasoningReplay } from "../../../generated/index.js";
import type { ProviderCall } from "../../protocol/provider-request.js";
import type { EgressPolicy } from "./egress.js";
import { MAX_ERROR_BODY_BYTES, ProviderFailure, classifyHttp, classifyThrown, errorFields, sanitizeDiagnostic } from "./errors.js";
import { AbortedWait, DEFAULT_RETRY_POLICY, backoffDelay, parseRetryAfter, sleep } from "./retry.js";
import type { RetryPolicy } from "./retry.js";
import { SseParser, type SseEvent } from "./sse.js";

/** Time allowed between sending the request and receiving the response headers. */
export const HEADERS_TIMEOUT_MS = 120_000;
/** Longest silence allowed between two body chunks of a streaming response. */
export const STREAM_IDLE_TIMEOUT_MS = 120_000;
/** Largest answer accepted: text, reasoning and tool-call arguments together, in UTF-16 units. */
export const MAX_RESPONSE_CHARS = 4_194_304;
/** Most tool calls in one response (the report's schema bound); a higher `index` is a protocol error. */
export const MAX_TOOL_CALLS = 128;
/** Longest tool name accepted from the model (ShortText). */
export const MAX_TOOL_NAME_CHARS = 1024;

/** The shape of a tau identifier (`Id` in spec/common.tsp); tool-call ids must match it. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export interface ProviderProfile {
  /** e.g. `https://api.openai.com/v1`; the family's endpoint path is appended to its path. */
  baseUrl: string;
  apiKey?: string;
  /** Extra request headers (an `authorization` from apiKey always wins). */
  headers?: Record<string, string>;
  /** How kept reasoning is sent back (`auto` when absent: decided per message by what the server streamed, see reasoningReplayFor). */
  reasoningReplay?: ReasoningReplay;
}

export interface RetryNotice {
  /** 1-based ordinal of the retry being scheduled (1 = the first retry). */
  attempt: number;
  delay_ms: number;
  error_class: ErrorClass;
}

export interface StreamRoundOptions {
  signal?: AbortSignal;
  /** The egress policy every request goes through. */
  egress: EgressPolicy;
  /** Called for every non-empty text or reasoning fragment, in stream order. */
  onDelta?: (text: string | undefined, reasoning: string | undefined) => void;
  /** Called before each back-off wait. */
  onRetry?: (notice: RetryNotice) => void;
  /** Retry policy overrides (tests use short delays and a fixed random). */
  retry?: Partial<RetryPolicy>;
  /** Timeout overrides in milliseconds. */
  timeouts?: { headersMs?: number; idleMs?: number };
}

export type Finished = { status: "finished"; report: ProviderResponseFinishedReported; attempts: number };
export type Failed = { status: "failed"; report: ProviderResponseFailedReported; attempts: number };
export type RoundResult = Finished | Failed;

/** One streamed response being read: SSE events in, the finished report out. */
export interface RoundStream {
  event(ev: SseEvent): void;
  /** The stream said it ended (`[DONE]`, `response.completed`): stop reading. */
  readonly done: boolean;
  /** What came is a whole answer, so a connection lost now loses nothing. */
  readonly complete: boolean;
  /** The finished report, or a ProviderFailure when what came is not a whole answer. */
  report(req: ProviderCall): ProviderResponseFinishedReported;
}

/** What one attempt of a round is given, whatever carries it. */
export interface Attempt {
  readonly req: ProviderCall;
  readonly url: URL;
  readonly headers: Record<string, string>;
  readonly payload: string;
  readonly opts: StreamRoundOptions;
  readonly shared: { emitted: boolean };
  readonly family: WireFamily;
}

/**
 * What carries a wire family's request and its stream of events: HTTP with a server-sent event
 * stream (HTTP_SSE), or a WebSocket (ws-transport.ts). It throws ProviderFailure (or anything
 * classifyThrown understands) for a failed attempt; the round decides about retries.
 */
export interface Transport {
  attempt(a: Attempt): Promise<ProviderResponseFinishedReported>;
}

/** A wire family: its endpoint, its request body and how its stream is read. */
export interface WireFamily {
  url(baseUrl: string): URL;
  payload(request: ProviderCall, profile: ProviderProfile): string;
  stream(shared: { emitted: boolean }, onDelta: StreamRoundOptions["onDelta"]): RoundStream;
}

/** The endpoint URL for a profile: the base URL's path plus `suffix` (e.g. `/chat/completions`), query kept. */
export function endpointUrl(baseUrl: string, suffix: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ProviderFailure("invalid_request", "the provider base URL is not a valid URL", false);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ProviderFailure("invalid_request", "the provider base URL must be http or https", false);
  }
  if (url.username !== "" || url.password !== "") {
    throw new ProviderFailure("invalid_request", "the provider base URL must not carry credentials", false);
  }
  url.pathname = `${url.pathname.replace(/\/+$/, "")}${suffix}`;
  url.hash = "";
  return url;
}

export function requestHeaders(profile: ProviderProfile): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(profile.headers ?? {})) headers[k.toLowerCase()] = v;
  headers["content-type"] = "application/json";
  headers.accept = "text/event-stream";
  if (profile.apiKey !== undefined && profile.apiKey !== "") headers.authorization = `Bearer ${profile.apiKey}`;
  return headers;
}

export class CallbackError extends Error {
  constructor(readonly original: unknown) {
    super("callback failed");
  }
}

/** An HTTP status carried inside an error object (`status_code`, or a numeric `code`), if any. */
export function statusIn(body: unknown): number | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const outer = body as Record<string, unknown>;
  const inner = typeof outer.error === "object" && outer.error !== null ? (outer.error as Record<string, unknown>) : outer;
  for (const v of [inner.status_code, inner.status, inner.code, outer.status_code]) {
    const n = typeof v === "number" ? v : typeof v === "string" && /^\d{3}$/.test(v) ? Number(v) : undefined;
    if (n !== undefined && Number.isInteger(n) && n >= 400 && n <= 599) return n;
  }
  return undefined;
}

/**
 * An error object inside the stream: classified like an HTTP error body (with the status it carries,
 * else as a server failure), its code, type and message kept in the diagnostic.
 */
export function streamError(body: unknown): ProviderFailure {
  const fields = errorFields(body);
  const { errorClass, retryable } = classifyHttp(statusIn(body) ?? 500, fields);
  return new ProviderFailure(errorClass, `stream error${describeFields(fields)}`, retryable);
}

/** Arguments that are empty or whole JSON: a call that was not cut off. */
export function argumentsComplete(args: string): boolean {
  if (args.trim() === "") return true;
  try {
    JSON.parse(args);
    return true;
  } catch {
    return false;
  }
}

export function count(v: unknown): number | undefined {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

export function describeFields(f: { code?: string; type?: string; message?: string }): string {
  const parts: string[] = [];
  if (f.code !== undefined) parts.push(`code=${f.code}`);
  if (f.type !== undefined) parts.push(`type=${f.type}`);
  let s = parts.length > 0 ? ` (${parts.join(", ")})` : "";
  if (f.message !== undefined) s += `: ${f.message.slice(0, 600)}`;
  return s;
}

// ---------------------------------------------------------------------------------------------
// One attempt

function headerRecord(headers: Record<string, string | string[] | undefined>): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = {};
  for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v;
  return out;
}

type ResponseBody = AsyncIterable<Uint8Array> & { destroy(): unknown; on(event: "error", fn: () => void): unknown };

/** Drops a response body; its abort error, if any, is expected and swallowed. */
function discard(body: ResponseBody): void {
  body.on("error", () => {});
  body.destroy();
}

async function readBounded(body: ResponseBody): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    const room = MAX_ERROR_BODY_BYTES - total;
    parts.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    total += Math.min(chunk.length, room);
    if (total >= MAX_ERROR_BODY_BYTES) break;
  }
  discard(body);
  return Buffer.concat(parts);
}

/** HTTP POST with a server-sent event stream as the answer. */
export const HTTP_SSE: Transport = { attempt: ({ req, url, headers, payload, opts, shared, family }) => attempt(req, url, headers, payload, opts, shared, family) };

async function attempt(
  req: ProviderCall,
  url: URL,
  headers: Record<string, string>,
  payload: string,
  opts: StreamRoundOptions,
  shared: { emitted: boolean },
  family: WireFamily,
): Promise<ProviderResponseFinishedReported> {
  const res = await opts.egress.request(url, {
    method: "POST",
    headers,
    body: payload,
    ...(opts.signal ? { signal: opts.signal } : {}),
    headersTimeoutMs: opts.timeouts?.headersMs ?? HEADERS_TIMEOUT_MS,
    idleTimeoutMs: opts.timeouts?.idleMs ?? STREAM_IDLE_TIMEOUT_MS,
  });
  mark("provider http headers");
  const resHeaders = headerRecord(res.headers);
  if (res.statusCode < 200 || res.statusCode >= 300) {
    let fields: ReturnType<typeof errorFields> = {};
    try {
      const raw = await readBounded(res.body);
      fields = errorFields(JSON.parse(Buffer.from(raw).toString("utf8")));
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      // An unreadable or non-JSON error body: the status alone classifies it.
    }
    const { errorClass, retryable } = classifyHttp(res.statusCode, fields);
    const retryAfterMs = parseRetryAfter(resHeaders);
    throw new ProviderFailure(errorClass, `HTTP ${res.statusCode}${describeFields(fields)}`, retryable, retryAfterMs);
  }
  const contentType = resHeaders["content-type"];
  const ct = (Array.isArray(contentType) ? contentType[0] : contentType)?.toLowerCase() ?? "";
  if (ct !== "" && !ct.startsWith("text/event-stream")) {
    discard(res.body);
    throw new ProviderFailure("protocol", `expected an event stream, got content-type ${ct.slice(0, 100)}`);
  }

  const state = family.stream(shared, opts.onDelta);
  const parser = new SseParser();
  try {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      for (const ev of parser.push(chunk)) state.event(ev);
      if (state.done) break;
    }
    if (!state.done) for (const ev of parser.end()) state.event(ev);
  } catch (err) {
    if (err instanceof ProviderFailure || err instanceof CallbackError) throw err;
    const failure = classifyThrown(err, opts.signal);
    // A connection lost after the response said it was complete still delivered a whole answer.
    if (!(state.complete && (failure.errorClass === "network" || failure.errorClass === "timeout"))) {
      throw failure;
    }
  } finally {
    discard(res.body);
  }
  return state.report(req);
}

// ---------------------------------------------------------------------------------------------
// The round, with retries

/** Failures whose diagnostic names the endpoint: those a wrong base URL or key would cause. */
const NAMES_ENDPOINT: ReadonlySet<string> = new Set(["network", "timeout", "authentication"]);

/**
 * Runs one provider round against an endpoint of `family`: streams it, retries retryable failures
 * that happen before any delta was emitted, and returns the finished or failed report. Never
 * rejects for provider, network or protocol failures; a throwing callback is rethrown.
 */
export async function streamRound(request: ProviderCall, profile: ProviderProfile, opts: StreamRoundOptions, family: WireFamily, transport: Transport = HTTP_SSE): Promise<RoundResult> {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...opts.retry };
  const shared = { emitted: false };
  const secrets = [profile.apiKey];
  let url: URL | undefined;
  const failed = (failure: ProviderFailure, attempts: number, suffix = ""): Failed => ({
    status: "failed",
    attempts,
    report: {
      prompt_id: request.prompt_id,
      round: request.round,
      error_class: failure.errorClass,
      // Where it went when the endpoint itself may be wrong (closed, unreachable, refusing the
      // key): never its credentials or query.
      diagnostic: sanitizeDiagnostic(
        `${failure.detail}${url !== undefined && NAMES_ENDPOINT.has(failure.errorClass) ? ` at ${url.origin}${url.pathname}` : ""}${suffix}${attempts > 1 ? ` (after ${attempts} attempts)` : ""}`,
        secrets,
      ),
    },
  });

  let payload: string;
  try {
    url = family.url(profile.baseUrl);
    payload = family.payload(request, profile);
  } catch (err) {
    return failed(classifyThrown(err, opts.signal), 0);
  }
  const headers = requestHeaders(profile);

  for (let n = 1; ; n++) {
    if (opts.signal?.aborted) return failed(new ProviderFailure("cancelled", "request cancelled"), n - 1);
    let failure: ProviderFailure;
    try {
      const report = await transport.attempt({ req: request, url, headers, payload, opts, shared, family });
      return { status: "finished", report, attempts: n };
    } catch (err) {
      if (err instanceof CallbackError) throw err.original;
      failure = classifyThrown(err, opts.signal);
    }
    if (opts.signal?.aborted || failure.errorClass === "cancelled") {
      return failed(new ProviderFailure("cancelled", "request cancelled"), n);
    }
    if (!failure.retryable) return failed(failure, n);
    if (shared.emitted) return failed(failure, n, "; not retried after output was streamed");
    if (n >= policy.maxAttempts) return failed(failure, n);
    if (failure.retryAfterMs !== undefined && failure.retryAfterMs > policy.retryAfterCapMs) {
      return failed(failure, n, `; server asked to wait ${failure.retryAfterMs} ms, over the ${policy.retryAfterCapMs} ms cap`);
    }
    const delay = Math.max(backoffDelay(policy, n), failure.retryAfterMs ?? 0);
    opts.onRetry?.({ attempt: n, delay_ms: delay, error_class: failure.errorClass });
    try {
      await sleep(delay, opts.signal);
    } catch (err) {
      if (err instanceof AbortedWait) return failed(new ProviderFailure("cancelled", "request cancelled during back-off"), n);
      throw err;
    }
  }
}
