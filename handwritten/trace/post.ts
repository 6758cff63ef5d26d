// Posting an OTLP trace to a collector over OTLP/HTTP (SPEC-trace-export, "Posting to a
// collector"): protobuf export requests, one at a time, each bounded in time, with a few retries on
// the answers OTLP names retryable. Credentials come only from the standard environment variables,
// and no message ever shows them: the endpoint is named by scheme, host, port and path alone.
import type { OtlpSerializers } from "./otlp.js";
import { TraceError } from "./snapshot.js";

export interface OtlpEndpoint {
  url: URL;
  /** The endpoint as messages name it: no user info, query or fragment. */
  shown: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

export const OTLP_DEFAULT_TIMEOUT_MS = 10_000;
/** Attempts per request (the first and two retries). */
export const OTLP_ATTEMPTS = 3;
/** Most bytes of a collector's answer that are read. */
export const OTLP_MAX_RESPONSE_BYTES = 64 * 1024;
const MAX_RETRY_DELAY_MS = 5_000;
const RETRYABLE = new Set([429, 502, 503, 504]);

const clean = (s: string, max = 200) => s.slice(0, max).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, "?");

/**
 * OTLP/HTTP headers from `OTEL_EXPORTER_OTLP_HEADERS`, overridden key by key by
 * `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (`key=value,key2=value2`, values percent-decoded).
 */
function headersFrom(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"]) {
    const text = env[name];
    if (!text) continue;
    for (const [i, pair] of text.split(",").entries()) {
      if (pair.trim() === "") continue;
      const eq = pair.indexOf("=");
      const key = eq > 0 ? pair.slice(0, eq).trim() : "";
      let value: string;
      try {
        value = decodeURIComponent(pair.slice(eq + 1).trim());
      } catch {
        value = "\u0000";
      }
      // Never echo a value: it is usually a token.
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key) || /[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)) throw new TraceError(`${name}: entry ${i + 1} is not a valid key=value header`);
      out[key.toLowerCase()] = value;
    }
  }
  return out;
}

function timeoutFrom(env: NodeJS.ProcessEnv): number {
  const name = env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ? "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT" : env.OTEL_EXPORTER_OTLP_TIMEOUT ? "OTEL_EXPORTER_OTLP_TIMEOUT" : null;
  if (name === null) return OTLP_DEFAULT_TIMEOUT_MS;
  const ms = Number(env[name]);
  if (!Number.isInteger(ms) || ms < 1 || ms > 600_000) throw new TraceError(`${name}: expected milliseconds between 1 and 600000`);
  return ms;
}

/**
 * The collector endpoint of `--otlp-endpoint`: an http or https URL; a URL without a path gets
 * OTLP's traces path `/v1/traces`, any other path is used as given. Credentials in the URL are
 * refused (they would show wherever the command line does); headers carry them instead.
 */
export function otlpEndpoint(raw: string, env: NodeJS.ProcessEnv = process.env): OtlpEndpoint {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TraceError("--otlp-endpoint: not a URL (expected http://host:port or https://host:port/path)");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TraceError(`--otlp-endpoint: the scheme must be http or https, not ${clean(url.protocol.slice(0, -1), 20)}`);
  if (url.username || url.password) throw new TraceError("--otlp-endpoint: the URL carries credentials; pass them in OTEL_EXPORTER_OTLP_HEADERS instead");
  url.hash = "";
  if (url.pathname === "" || url.pathname === "/") url.pathname = "/v1/traces";
  return { url, shown: clean(`${url.protocol}//${url.host}${url.pathname}`, 300), headers: headersFrom(env), timeoutMs: timeoutFrom(env) };
}

/** Up to `max` bytes of a response body; the rest is not read. */
async function boundedBody(res: Response, max: number): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, max);
}

/** Seconds of a Retry-After header (an HTTP date is not honoured), capped. */
function retryAfterMs(res: Response, fallback: number): number {
  const s = Number(res.headers.get("retry-after"));
  return Number.isFinite(s) && s >= 0 ? Math.min(s * 1000, MAX_RETRY_DELAY_MS) : fallback;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a system error code means, said plainly; the code follows in parentheses. */
const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection closed",
  UND_ERR_SOCKET: "connection closed",
  ETIMEDOUT: "connection timed out",
  UND_ERR_CONNECT_TIMEOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  EADDRNOTAVAIL: "address not available",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
};

/**
 * Why a request to the collector got no answer, named (`connection refused to URL (ECONNREFUSED)`)
 * from fetch's error and its causes, never a bare error class: a system error code said plainly, a
 * TLS failure, or a port fetch never connects to.
 */
export function networkFailure(err: unknown, ep: Pick<OtlpEndpoint, "url" | "shown">): string {
  const causes: Array<{ code?: unknown; message?: unknown }> = [];
  for (let c = (err as { cause?: unknown } | null)?.cause; c !== null && typeof c === "object" && causes.length < 8; c = (c as { cause?: unknown }).cause) {
    causes.push(c as (typeof causes)[number]);
    const inner = (c as { errors?: unknown }).errors; // an AggregateError: one per address tried
    if (Array.isArray(inner)) for (const e of inner) if (e !== null && typeof e === "object") causes.push(e as (typeof causes)[number]);
  }
  const code = causes.map((c) => c.code).find((c): c is string => typeof c === "string");
  if (code !== undefined && NETWORK_CODES[code] !== undefined) return `${NETWORK_CODES[code]} to ${ep.shown} (${code})`;
  if (code !== undefined && /CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return `TLS handshake with ${ep.shown} failed (${clean(code, 60)})`;
  if (causes.some((c) => c.message === "bad port")) return `port ${ep.url.port} is one fetch never connects to (${ep.shown})`;
  return `network error reaching ${ep.shown} (${code !== undefined ? clean(code, 60) : "no system error code"})`;
}

export interface PostOptions {
  /** Delay before the first retry, doubled for each next (default 500 ms). */
  backoffMs?: number;
}

/**
 * A function that posts one protobuf ExportTraceServiceRequest to `ep` and resolves once the
 * collector accepted all of it; it throws a TraceError that names the endpoint (never its
 * credentials) on a refusal, a partial success, a timeout or an unreachable collector.
 */
export function otlpPoster(ep: OtlpEndpoint, otlp: OtlpSerializers, opts: PostOptions = {}): (request: Uint8Array) => Promise<void> {
  const backoff = opts.backoffMs ?? 500;
  return async (request) => {
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      let body: Uint8Array;
      try {
        // The deadline covers the answer's body too: a collector that stalls mid-answer times out.
        res = await fetch(ep.url, {
          method: "POST",
          headers: { ...ep.headers, "content-type": "application/x-protobuf", "user-agent": "tau" },
          body: new Uint8Array(request), // a copy on its own ArrayBuffer, as BodyInit wants
          redirect: "manual", // a redirect could carry the headers elsewhere
          signal: AbortSignal.timeout(ep.timeoutMs),
        });
        body = await boundedBody(res, OTLP_MAX_RESPONSE_BYTES);
      } catch (err) {
        if (attempt < OTLP_ATTEMPTS) {
          await sleep(backoff * 2 ** (attempt - 1));
          continue;
        }
        const e = err as Error;
        if (e.name === "TimeoutError") throw new TraceError(`the collector at ${ep.shown} did not answer within ${ep.timeoutMs} ms`);
        throw new TraceError(`${networkFailure(err, ep)} after ${attempt} attempts`);
      }
      if (res.status >= 200 && res.status < 300) {
        let partial: { rejectedSpans?: number; errorMessage?: string } | undefined;
        try {
          partial = body.length > 0 && (res.headers.get("content-type") ?? "").includes("protobuf") ? otlp.protobuf.deserializeResponse(body).partialSuccess : undefined;
        } catch {
          partial = undefined; // an answer that is not an export response still accepted the request
        }
        const rejected = Number(partial?.rejectedSpans ?? 0);
        if (rejected > 0) throw new TraceError(`the collector at ${ep.shown} rejected ${rejected} span${rejected === 1 ? "" : "s"}${partial?.errorMessage ? `: ${clean(partial.errorMessage)}` : ""}`);
        return;
      }
      if (RETRYABLE.has(res.status) && attempt < OTLP_ATTEMPTS) {
        await sleep(retryAfterMs(res, backoff * 2 ** (attempt - 1)));
        continue;
      }
      const redirect = res.status >= 300 && res.status < 400 ? " (a redirect, not followed)" : "";
      throw new TraceError(`the collector at ${ep.shown} answered HTTP ${res.status}${redirect}${attempt > 1 ? ` after ${attempt} attempts` : ""}`);
    }
  };
}
