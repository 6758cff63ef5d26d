// Retry policy for provider calls (SPEC-provider-chat-completions): bounded attempts, exponential
// back-off with jitter, Retry-After honoured within a cap, cancellable waits.

/** Total attempts for one provider round, the first one included. */
export const RETRY_MAX_ATTEMPTS = 4;
/** Back-off before the first retry; doubled for each further one. */
export const RETRY_BASE_DELAY_MS = 500;
/** Largest computed back-off (before Retry-After is considered). */
export const RETRY_MAX_DELAY_MS = 8_000;
/** Largest server-requested delay (Retry-After) tau waits; a longer request ends the round. */
export const RETRY_AFTER_CAP_MS = 30_000;

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  retryAfterCapMs: number;
  /** Uniform random in [0, 1); injectable for deterministic tests. */
  random: () => number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: RETRY_MAX_ATTEMPTS,
  baseDelayMs: RETRY_BASE_DELAY_MS,
  maxDelayMs: RETRY_MAX_DELAY_MS,
  retryAfterCapMs: RETRY_AFTER_CAP_MS,
  random: Math.random,
};

/**
 * Back-off before retry number `retry` (1 = first retry): "equal jitter" — half of the capped
 * exponential delay fixed, the other half random — so concurrent clients spread out.
 */
export function backoffDelay(policy: RetryPolicy, retry: number): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  const r = Math.min(Math.max(policy.random(), 0), 1);
  return Math.round(exp / 2 + (exp / 2) * r);
}

/**
 * The delay a response asks for: `retry-after-ms` (milliseconds, as some OpenAI-compatible servers
 * send) or `retry-after` (delta-seconds or an HTTP date). Undefined when absent or unparseable.
 */
export function parseRetryAfter(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  now: number = Date.now(),
): number | undefined {
  const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v)?.trim();
  const ms = first(headers["retry-after-ms"]);
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const value = first(headers["retry-after"]);
  if (value === undefined || value === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

export class AbortedWait extends Error {
  override readonly name = "AbortedWait";
}

/** Waits `ms`, rejecting with AbortedWait as soon as the signal aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AbortedWait("aborted"));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortedWait("aborted"));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
