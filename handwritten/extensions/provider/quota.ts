// Quota pacing from the server's rate-limit reports (SPEC-provider-websocket, "Quota pacing"): the
// windows a server reports — in `x-codex-*` response headers, in `codex.rate_limits` stream events,
// or in a usage-limit error — are kept per limit; a request made while a window is exhausted waits
// for its reset (bounded, with a notice) instead of being sent to fail.

/** One rate-limit window as the server reported it. */
export interface QuotaWindow {
  /** The limit and window it belongs to, e.g. `codex.primary`. */
  readonly name: string;
  readonly usedPercent: number;
  readonly windowMinutes?: number;
  /** When the window resets, in epoch milliseconds. */
  readonly resetsAtMs?: number;
}

/** At or over this share of a window used, the window is near its limit (a notice, once per window). */
export const QUOTA_NEAR_PERCENT = 90;
/** Longest a request waits for an exhausted window to reset; a later reset fails the request at once. */
export const QUOTA_MAX_WAIT_MS = 5 * 60_000;
/** Most windows kept (a server cannot grow the table without bound). */
const MAX_WINDOWS = 32;

const num = (v: unknown): number | undefined => {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : Number.NaN;
  return Number.isFinite(n) ? n : undefined;
};
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const limitName = (v: unknown): string => (typeof v === "string" && /^[A-Za-z0-9_-]{1,64}$/.test(v) ? v.toLowerCase().replace(/-/g, "_") : "codex");

function window(name: string, usedPercent: unknown, windowMinutes: unknown, resetAt: unknown, resetAfterSeconds: unknown, nowMs: number): QuotaWindow | undefined {
  const used = num(usedPercent);
  if (used === undefined || used < 0) return undefined;
  const minutes = num(windowMinutes);
  const at = num(resetAt);
  const after = num(resetAfterSeconds);
  const resetsAtMs = at !== undefined && at > 0 ? at * 1000 : after !== undefined && after >= 0 ? nowMs + after * 1000 : undefined;
  return { name, usedPercent: Math.min(used, 1000), ...(minutes !== undefined ? { windowMinutes: minutes } : {}), ...(resetsAtMs !== undefined ? { resetsAtMs } : {}) };
}

/** The windows in response headers (`x-codex-primary-used-percent`, `x-codex-secondary-…`, and other limits' `x-NAME-primary-…`). */
export function windowsFromHeaders(headers: Record<string, string | string[] | undefined>, nowMs: number): QuotaWindow[] {
  const h = (k: string): string | undefined => {
    const v = headers[k];
    return Array.isArray(v) ? v[0] : v;
  };
  const out: QuotaWindow[] = [];
  for (const key of Object.keys(headers)) {
    const m = /^x-([a-z0-9-]{1,64})-(primary|secondary)-used-percent$/.exec(key.toLowerCase());
    if (!m) continue;
    const prefix = `x-${m[1]}-${m[2]}`;
    const w = window(`${limitName(m[1])}.${m[2]}`, h(key), h(`${prefix}-window-minutes`), h(`${prefix}-reset-at`), h(`${prefix}-reset-after-seconds`), nowMs);
    if (w) out.push(w);
    if (out.length >= MAX_WINDOWS) break;
  }
  return out;
}

/** The windows of a `codex.rate_limits` event. */
export function windowsFromEvent(data: Record<string, unknown>, nowMs: number): QuotaWindow[] {
  const limit = limitName(data.metered_limit_name ?? data.limit_name);
  const limits = isObject(data.rate_limits) ? data.rate_limits : {};
  const out: QuotaWindow[] = [];
  for (const which of ["primary", "secondary"] as const) {
    const w = limits[which];
    if (!isObject(w)) continue;
    const parsed = window(`${limit}.${which}`, w.used_percent, w.window_minutes, w.reset_at ?? w.resets_at, w.reset_after_seconds ?? w.resets_in_seconds, nowMs);
    if (parsed) out.push(parsed);
  }
  return out;
}

/** The window a usage-limit error names (`resets_at` / `resets_in_seconds`), as exhausted. */
export function windowFromError(error: Record<string, unknown>, nowMs: number): QuotaWindow | undefined {
  return window("codex.usage_limit", 100, undefined, error.resets_at, error.resets_in_seconds, nowMs);
}

export type PacingPlan =
  | { readonly kind: "go" }
  | { readonly kind: "wait"; readonly ms: number; readonly window: QuotaWindow }
  | { readonly kind: "refuse"; readonly window: QuotaWindow };

/** What the server last said of each window, and what a request should do about it. */
export class QuotaPacer {
  readonly #windows = new Map<string, QuotaWindow>();
  readonly #warned = new Set<string>();

  constructor(private readonly maxWaitMs = QUOTA_MAX_WAIT_MS) {}

  /** Takes the windows of one report; returns those newly near their limit (each named once until it drops below). */
  update(windows: readonly QuotaWindow[]): QuotaWindow[] {
    const near: QuotaWindow[] = [];
    for (const w of windows) {
      if (!this.#windows.has(w.name) && this.#windows.size >= MAX_WINDOWS) continue;
      this.#windows.set(w.name, w);
      if (w.usedPercent >= QUOTA_NEAR_PERCENT) {
        if (!this.#warned.has(w.name)) near.push(w);
        this.#warned.add(w.name);
      } else this.#warned.delete(w.name);
    }
    return near;
  }

  /** Whether a request made now goes, waits for a window's reset, or is refused (a reset past the bound or unknown). */
  plan(nowMs: number): PacingPlan {
    let worst: PacingPlan = { kind: "go" };
    for (const w of this.#windows.values()) {
      if (w.usedPercent < 100) continue;
      if (w.resetsAtMs !== undefined && w.resetsAtMs <= nowMs) {
        this.#windows.delete(w.name); // reset since: the next report says how it stands
        continue;
      }
      if (w.resetsAtMs === undefined || w.resetsAtMs - nowMs > this.maxWaitMs) return { kind: "refuse", window: w };
      const ms = w.resetsAtMs - nowMs;
      if (worst.kind === "go" || (worst.kind === "wait" && ms > worst.ms)) worst = { kind: "wait", ms, window: w };
    }
    return worst;
  }
}

/** A window in words, for notices and diagnostics (never a header value verbatim). */
export function describeWindow(w: QuotaWindow, nowMs: number): string {
  const reset = w.resetsAtMs === undefined ? "no reset time given" : `resets in ${Math.max(0, Math.ceil((w.resetsAtMs - nowMs) / 1000))} s`;
  return `${w.name} at ${Math.round(w.usedPercent)}% (${reset})`;
}
