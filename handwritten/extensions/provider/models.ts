// The server's model listing, `GET <base URL>/models` (SPEC-provider-chat-completions, "Model
// listing"): read once per provider process, under the same egress policy as completions, bounded in
// time, size and entries. Any failure is an answer too (`ok: false` with a short reason that never
// holds the key): the caller falls back to the configured models.
import type { ModelInfo } from "../../../generated/index.js";
import type { EgressPolicy } from "./egress.js";
import { ProviderFailure, classifyThrown, sanitizeDiagnostic } from "./errors.js";
import type { ModelListingResult } from "./declared-models.js";

/** The whole listing (connect, headers, body) must arrive within this time. */
export const MODELS_TIMEOUT_MS = 5_000;
/** Largest listing body read; a larger one (by its content-length or as it arrives) is no listing. */
export const MAX_MODELS_BODY_BYTES = 4 * 1024 * 1024;
/** Most models taken from a listing (room is left for the configured ones in a declaration of 1,024). */
export const MAX_LISTED_MODELS = 960;
/** Longest model id taken from a listing (ShortText). */
const MAX_MODEL_ID_CHARS = 1024;

export type { ModelListingResult } from "./declared-models.js";

export interface ListModelsOptions {
  readonly egress: EgressPolicy;
  readonly signal?: AbortSignal;
  /** Overrides MODELS_TIMEOUT_MS (tests). */
  readonly timeoutMs?: number;
  /** Overrides MAX_MODELS_BODY_BYTES (tests). */
  readonly maxBytes?: number;
  /** Given a listing's body when it parsed as one (the listing cache keeps it). */
  readonly onListed?: (body: string) => void;
}

/** The listing URL for a base URL: its path plus `/models`, query kept (as chatCompletionsUrl). */
export function modelsUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ProviderFailure("invalid_request", "the provider base URL is not a valid URL", false);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ProviderFailure("invalid_request", "the provider base URL must be http or https", false);
  if (url.username !== "" || url.password !== "") throw new ProviderFailure("invalid_request", "the provider base URL must not carry credentials", false);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/models`;
  url.hash = "";
  return url;
}

type Body = AsyncIterable<Uint8Array> & { destroy(): unknown; on(event: "error", fn: () => void): unknown };

function drop(body: Body): void {
  body.on("error", () => {});
  body.destroy();
}

/** Reads the whole body, or undefined once it passes `max` bytes. */
async function readCapped(body: Body, max: number): Promise<Buffer | undefined> {
  const parts: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of body) {
      total += chunk.length;
      if (total > max) return undefined;
      parts.push(chunk);
    }
  } finally {
    drop(body);
  }
  return Buffer.concat(parts);
}

const count = (v: unknown): number | undefined => (typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : undefined);

/** A per-token price as OpenRouter writes it (a decimal string), per million tokens. */
function perMillion(v: unknown): number | undefined {
  const n = typeof v === "string" && /^\d+(\.\d+)?(e-?\d+)?$/i.test(v) ? Number(v) : typeof v === "number" ? v : undefined;
  return n !== undefined && Number.isFinite(n) && n >= 0 ? Math.round(n * 1e6 * 1e6) / 1e6 : undefined;
}

/**
 * One entry of `data`: its id, and what servers say of it beside the OpenAI fields — the context
 * window (`context_window` Groq, `context_length` OpenRouter, `max_model_len` vLLM), the output
 * bound (`max_completion_tokens`, OpenRouter's `top_provider.max_completion_tokens`) and
 * OpenRouter's per-token `pricing`.
 */
function entry(raw: unknown): ModelInfo | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const e = raw as Record<string, unknown>;
  const id = e.id;
  // eslint-disable-next-line no-control-regex
  if (typeof id !== "string" || id === "" || id.length > MAX_MODEL_ID_CHARS || /[\u0000-\u001f\u007f-\u009f]/.test(id)) return undefined;
  const info: ModelInfo = { id };
  const context = count(e.context_window) ?? count(e.context_length) ?? count(e.max_model_len);
  if (context !== undefined) info.context_window = context;
  const top = typeof e.top_provider === "object" && e.top_provider !== null ? (e.top_provider as Record<string, unknown>) : {};
  const output = count(e.max_completion_tokens) ?? count(top.max_completion_tokens);
  if (output !== undefined) info.max_output_tokens = output;
  if (typeof e.pricing === "object" && e.pricing !== null) {
    const p = e.pricing as Record<string, unknown>;
    const input = perMillion(p.prompt);
    const out = perMillion(p.completion);
    const cached = perMillion(p.input_cache_read);
    if (input !== undefined) info.input_cost = input;
    if (out !== undefined) info.output_cost = out;
    if (cached !== undefined) info.cached_input_cost = cached;
  }
  return info;
}

/** The models of a listing body (`{"data": [{"id": …}, …]}`), or why it is none. */
export function parseModelListing(text: string): ModelListingResult {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { ok: false, reason: "the answer is not JSON" };
  }
  const data = typeof doc === "object" && doc !== null ? (doc as Record<string, unknown>).data : undefined;
  if (!Array.isArray(data)) return { ok: false, reason: "the answer has no data list" };
  const models: ModelInfo[] = [];
  const seen = new Set<string>();
  let skipped = 0;
  for (const raw of data) {
    const m = entry(raw);
    if (m === undefined || seen.has(m.id)) {
      skipped++;
      continue;
    }
    if (models.length >= MAX_LISTED_MODELS) {
      skipped++;
      continue;
    }
    seen.add(m.id);
    models.push(m);
  }
  // A server serves some model: an empty list says nothing about which.
  if (models.length === 0) return { ok: false, reason: "the list names no model" };
  return { ok: true, models, skipped };
}

/**
 * Asks the endpoint for its models. Never rejects: a failure (a status other than 2xx, a timeout,
 * an oversize or malformed answer, a refused connection) is `ok: false` with its reason.
 */
export async function listModels(profile: { baseUrl: string; apiKey?: string }, o: ListModelsOptions): Promise<ModelListingResult> {
  const timeoutMs = o.timeoutMs ?? MODELS_TIMEOUT_MS;
  const maxBytes = o.maxBytes ?? MAX_MODELS_BODY_BYTES;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const signal = o.signal ? AbortSignal.any([o.signal, deadline.signal]) : deadline.signal;
  const failed = (reason: string, unusable?: "key" | "unreachable"): ModelListingResult => ({ ok: false, reason: sanitizeDiagnostic(reason, [profile.apiKey]), ...(unusable ? { unusable } : {}) });
  try {
    const headers: Record<string, string> = { accept: "application/json" };
    if (profile.apiKey !== undefined && profile.apiKey !== "") headers.authorization = `Bearer ${profile.apiKey}`;
    const res = await o.egress.request(modelsUrl(profile.baseUrl), { method: "GET", headers, signal, headersTimeoutMs: timeoutMs, idleTimeoutMs: timeoutMs });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      drop(res.body);
      // 401/403: the key is refused (a server without a listing answers 404, and is not a problem).
      return failed(`HTTP ${res.statusCode}`, res.statusCode === 401 || res.statusCode === 403 ? "key" : undefined);
    }
    const declared = Number(res.headers["content-length"]);
    if (Number.isFinite(declared) && declared > maxBytes) {
      drop(res.body);
      return failed(`the answer is larger than ${maxBytes} bytes`);
    }
    const body = await readCapped(res.body, maxBytes);
    if (body === undefined) return failed(`the answer is larger than ${maxBytes} bytes`);
    const text = body.toString("utf8");
    const parsed = parseModelListing(text);
    if (parsed.ok) o.onListed?.(text);
    return parsed.ok ? parsed : failed(parsed.reason);
  } catch (err) {
    if (deadline.signal.aborted && !o.signal?.aborted) return failed(`no answer within ${timeoutMs} ms`);
    const f = classifyThrown(err, o.signal);
    return failed(f.detail, f.errorClass === "network" ? "unreachable" : undefined);
  } finally {
    clearTimeout(timer);
  }
}
