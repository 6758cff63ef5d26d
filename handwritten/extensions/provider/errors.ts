// Failure classification and safe diagnostics for provider calls (SPEC-provider-chat-completions).
//
// HTTP failures are classified from the status code and the JSON body's `error.code` /
// `error.type` fields only — never from message prose. Transport failures are classified from
// error codes (node's, OpenSSL's and the egress policy's), never from messages.
import type { ErrorClass } from "../../../generated/index.js";
import { EgressConfigError, EgressProxyError, EgressRedirectError } from "./egress.js";
import { SseError } from "./sse.js";

/** Longest diagnostic, in UTF-16 code units (the ShortText bound of the failure report). */
export const MAX_DIAGNOSTIC_CHARS = 1024;
/** Longest HTTP error body read to classify a failure; the rest is discarded unread. */
export const MAX_ERROR_BODY_BYTES = 65_536;

export const RETRYABLE_CLASSES: ReadonlySet<ErrorClass> = new Set<ErrorClass>([
  "rate_limited",
  "server_error",
  "network",
  "timeout",
]);

/** A classified failure of one attempt. */
export class ProviderFailure extends Error {
  override readonly name = "ProviderFailure";
  constructor(
    readonly errorClass: ErrorClass,
    readonly detail: string,
    /** False for failures that must not be retried even though their class usually is. */
    readonly retryable: boolean = RETRYABLE_CLASSES.has(errorClass),
    /** A server-requested delay before retrying (Retry-After), in milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(detail);
  }
}

export interface HttpErrorFields {
  code?: string;
  type?: string;
  message?: string;
}

/** Extracts `error.code`, `error.type`, `error.message` (or top-level ones) from an error body. */
export function errorFields(body: unknown): HttpErrorFields {
  const out: HttpErrorFields = {};
  if (typeof body !== "object" || body === null) return out;
  const record = body as Record<string, unknown>;
  const inner = typeof record.error === "object" && record.error !== null ? (record.error as Record<string, unknown>) : record;
  const str = (v: unknown): string | undefined =>
    typeof v === "string" && v !== "" ? v : typeof v === "number" && Number.isFinite(v) ? String(v) : undefined;
  const code = str(inner.code);
  const type = str(inner.type);
  const message = str(inner.message) ?? (typeof record.error === "string" ? record.error : undefined);
  if (code !== undefined) out.code = code;
  if (type !== undefined) out.type = type;
  if (message !== undefined) out.message = message;
  return out;
}

const CONTEXT_CODES = new Set(["context_length_exceeded", "context_window_exceeded", "string_above_max_length", "exceed_context_size_error"]);
const RATE_CODES = new Set(["rate_limit_exceeded", "rate_limit_error", "rate_limited", "too_many_requests"]);
const QUOTA_CODES = new Set(["insufficient_quota", "billing_hard_limit_reached"]);
const AUTH_CODES = new Set([
  "invalid_api_key",
  "authentication_error",
  "permission_error",
  "permission_denied",
  "unauthorized",
  "invalid_authentication",
]);
const SERVER_CODES = new Set(["server_error", "internal_error", "overloaded_error", "service_unavailable", "api_error"]);

/**
 * Classifies an HTTP error response. `status` is the response status; `fields` come from the JSON
 * body. Codes win over the status when they are specific (a 400 with `context_length_exceeded` is
 * a context-window failure); otherwise the status decides.
 */
export function classifyHttp(status: number, fields: HttpErrorFields): { errorClass: ErrorClass; retryable: boolean } {
  const keys = [fields.code, fields.type].filter((k): k is string => k !== undefined).map((k) => k.toLowerCase());
  const has = (set: Set<string>): boolean => keys.some((k) => set.has(k));
  if (has(CONTEXT_CODES)) return { errorClass: "context_window_exceeded", retryable: false };
  if (has(QUOTA_CODES)) return { errorClass: "rate_limited", retryable: false };
  if (status === 429 || has(RATE_CODES)) return { errorClass: "rate_limited", retryable: true };
  if (status === 401 || status === 403 || has(AUTH_CODES)) return { errorClass: "authentication", retryable: false };
  if (status >= 500 || has(SERVER_CODES)) return { errorClass: "server_error", retryable: true };
  if (status === 408) return { errorClass: "timeout", retryable: true };
  if (status >= 300 && status < 400) return { errorClass: "invalid_request", retryable: false };
  return { errorClass: "invalid_request", retryable: false };
}

const TIMEOUT_CODES = new Set(["TAU_EGRESS_CONNECT_TIMEOUT", "TAU_EGRESS_HEADERS_TIMEOUT", "TAU_EGRESS_BODY_TIMEOUT", "ETIMEDOUT"]);
/** Certificate verification failures whose code names no CERT (node passes OpenSSL's codes through). */
const TLS_CODES = new Set(["UNABLE_TO_VERIFY_LEAF_SIGNATURE"]);

function errorCode(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

/** Classifies a thrown transport error (connect, TLS, socket, timeout, abort, SSE framing). */
export function classifyThrown(err: unknown, signal: AbortSignal | undefined): ProviderFailure {
  if (err instanceof ProviderFailure) return err;
  if (signal?.aborted) return new ProviderFailure("cancelled", "request cancelled");
  if (err instanceof SseError) return new ProviderFailure("protocol", `malformed event stream: ${err.message}`);
  if (err instanceof EgressRedirectError) return new ProviderFailure("invalid_request", err.message, false);
  if (err instanceof EgressConfigError) return new ProviderFailure("invalid_request", `egress configuration: ${err.message}`, false);
  if (err instanceof EgressProxyError) return new ProviderFailure("network", err.message);
  const code = errorCode(err);
  const cause = errorCode((err as { cause?: unknown } | null)?.cause);
  for (const c of [code, cause]) {
    if (c === undefined) continue;
    if (TIMEOUT_CODES.has(c)) return new ProviderFailure("timeout", `timed out (${c})`);
    if (TLS_CODES.has(c) || c.startsWith("ERR_TLS") || c.includes("CERT")) {
      // TLS verification failures are not transient: retrying cannot make a certificate valid.
      return new ProviderFailure("network", `TLS verification failed (${c})`, false);
    }
  }
  const label = code ?? cause ?? (err instanceof Error ? err.name : "error");
  return new ProviderFailure("network", `connection failed (${label})`);
}

/**
 * Makes a diagnostic safe to publish: secrets replaced, control and bidi-format characters
 * removed, whitespace collapsed, and bounded to MAX_DIAGNOSTIC_CHARS without splitting a
 * surrogate pair.
 */
export function sanitizeDiagnostic(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret === undefined || secret.length < 4) continue;
    out = out.split(secret).join("[redacted]");
  }
  // Bearer tokens and sk- style keys that are not the configured key (or a masked echo of it).
  out = out.replace(/\b(Bearer\s+)\S+/gi, "$1[redacted]").replace(/\bsk-[A-Za-z0-9_*.-]{4,}/g, "sk-[redacted]");
  out = out
    .replace(/[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]+/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (out.length > MAX_DIAGNOSTIC_CHARS) {
    let cut = MAX_DIAGNOSTIC_CHARS - 1;
    const last = out.charCodeAt(cut - 1);
    if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
    out = `${out.slice(0, cut)}…`;
  }
  return out === "" ? "provider failure" : out;
}
