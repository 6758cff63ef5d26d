// The WebSocket transport (SPEC-provider-websocket): a wire family's request sent as one text frame
// on a WebSocket, its stream of events read from the text frames that answer it. Under the one
// egress policy (DECISION-egress-policy): the upgrade request goes through the proxy's tunnel when
// one applies, TLS verification is on, a redirect answering the upgrade is refused, and the upgrade,
// every silence and every frame are bounded. A connection whose response completed is kept for the
// next request to the same endpoint with the same headers, and closed after a while unused.
import WebSocket from "ws";
import type { IncomingMessage } from "node:http";
import type { ProviderResponseFinishedReported } from "../../../generated/index.js";
import { EGRESS_CONNECT_TIMEOUT_MS, EgressRedirectError, EgressTimeoutError } from "./egress.js";
import { MAX_ERROR_BODY_BYTES, ProviderFailure, classifyHttp, classifyThrown, errorFields } from "./errors.js";
import { windowFromError, windowsFromEvent, windowsFromHeaders, type QuotaWindow } from "./quota.js";
import { parseRetryAfter } from "./retry.js";
import { CallbackError, HEADERS_TIMEOUT_MS, STREAM_IDLE_TIMEOUT_MS, describeFields, type Attempt, type Transport } from "./round.js";

/** Largest frame accepted from the server (the whole completed response can come in one). */
export const WS_MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** How long a connection whose response completed is kept for the next request. */
export const WS_IDLE_CLOSE_MS = 60_000;

/** What the connection did, for credential-free lifecycle notices: never a header, a token or a frame. */
export type WsLifecycle =
  | { readonly state: "connecting"; readonly endpoint: string }
  | { readonly state: "connected"; readonly endpoint: string }
  | { readonly state: "reused"; readonly endpoint: string }
  | { readonly state: "closed"; readonly endpoint: string; readonly code: number; readonly reason: string };

export interface WsTransportOptions {
  /** Largest frame accepted; WS_MAX_FRAME_BYTES when absent. */
  readonly maxFrameBytes?: number;
  /** How long an unused connection is kept; WS_IDLE_CLOSE_MS when absent. */
  readonly idleCloseMs?: number;
  readonly connectTimeoutMs?: number;
  readonly onLifecycle?: (event: WsLifecycle) => void;
  /** Every rate-limit window the server reported (upgrade headers, `codex.rate_limits`, usage-limit errors). */
  readonly onQuota?: (windows: QuotaWindow[]) => void;
}

export interface WsTransport extends Transport {
  /** Closes the kept connections. */
  close(): void;
}

/** An endpoint as lifecycle notices name it: scheme, host and path; no query (it may carry a key). */
export function endpointName(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`.slice(0, 200);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Headers for the upgrade: the family's, less those that describe an HTTP body. */
function upgradeHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (k !== "content-type" && k !== "accept") out[k] = v;
  return out;
}

async function readBounded(res: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    parts.push(chunk.subarray(0, MAX_ERROR_BODY_BYTES - total));
    total += Math.min(chunk.length, MAX_ERROR_BODY_BYTES - total);
    if (total >= MAX_ERROR_BODY_BYTES) break;
  }
  res.destroy();
  return Buffer.concat(parts);
}

export function webSocketTransport(options: WsTransportOptions = {}): WsTransport {
  const kept = new Map<string, { ws: WebSocket; timer: NodeJS.Timeout; onClose: () => void }>();
  const maxFrame = options.maxFrameBytes ?? WS_MAX_FRAME_BYTES;
  const lifecycle = (e: WsLifecycle) => options.onLifecycle?.(e);
  const quota = (w: QuotaWindow[]) => {
    if (w.length > 0) options.onQuota?.(w);
  };

  /** Opens a connection under the egress policy: resolves when the upgrade succeeded. */
  async function connect(a: Attempt, headers: Record<string, string>): Promise<WebSocket> {
    const { url, opts } = a;
    const endpoint = endpointName(url);
    lifecycle({ state: "connecting", endpoint });
    const connectOptions = await opts.egress.webSocketOptions(url, opts.signal);
    const upgradeMs = (options.connectTimeoutMs ?? EGRESS_CONNECT_TIMEOUT_MS) + (opts.timeouts?.headersMs ?? HEADERS_TIMEOUT_MS);
    return new Promise<WebSocket>((resolve, reject) => {
      let settled = false;
      const ws = new WebSocket(url, {
        headers,
        ...connectOptions,
        followRedirects: false,
        maxPayload: maxFrame,
        perMessageDeflate: false,
        handshakeTimeout: upgradeMs,
      });
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener("abort", onAbort);
        ws.removeAllListeners();
        ws.on("error", () => {});
        ws.terminate();
        reject(err);
      };
      // The whole upgrade (connecting, TLS, the server's answer) is bounded, whatever ws's own timers do.
      const timer = setTimeout(() => fail(new EgressTimeoutError("TAU_EGRESS_HEADERS_TIMEOUT", `the WebSocket upgrade (${upgradeMs} ms)`)), upgradeMs);
      const onAbort = () => fail(new ProviderFailure("cancelled", "request cancelled"));
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      ws.on("upgrade", (res: IncomingMessage) => quota(windowsFromHeaders(res.headers, Date.now())));
      ws.on("unexpected-response", (req, res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          req.destroy();
          return fail(new EgressRedirectError(status));
        }
        quota(windowsFromHeaders(res.headers, Date.now()));
        const retryAfterMs = parseRetryAfter(res.headers);
        void readBounded(res)
          .then((raw) => {
            let fields: ReturnType<typeof errorFields> = {};
            try {
              fields = errorFields(JSON.parse(raw.toString("utf8")));
            } catch {
              // not JSON: the status alone classifies it
            }
            const { errorClass, retryable } = classifyHttp(status, fields);
            fail(new ProviderFailure(errorClass, `HTTP ${status} answering the WebSocket upgrade${describeFields(fields)}`, retryable, retryAfterMs));
          })
          .catch((err: unknown) => fail(err))
          .finally(() => req.destroy());
      });
      ws.once("open", () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener("abort", onAbort);
        ws.removeAllListeners("unexpected-response");
        ws.removeAllListeners("upgrade");
        lifecycle({ state: "connected", endpoint });
        ws.once("close", (code, reason) => lifecycle({ state: "closed", endpoint, code, reason: reason.toString("utf8").slice(0, 120) }));
        resolve(ws);
      });
      ws.on("error", fail);
    });
  }

  /** Sends the request on `ws` and reads its events until the response completes. */
  function exchange(ws: WebSocket, a: Attempt, sawFrame: { value: boolean }): Promise<ProviderResponseFinishedReported> {
    const { req, opts, shared, family } = a;
    const state = family.stream(shared, opts.onDelta);
    const idleMs = opts.timeouts?.idleMs ?? STREAM_IDLE_TIMEOUT_MS;
    return new Promise<ProviderResponseFinishedReported>((resolve, reject) => {
      let settled = false;
      let idle: NodeJS.Timeout | undefined;
      const cleanup = () => {
        clearTimeout(idle);
        ws.off("message", onMessage);
        ws.off("close", onClose);
        ws.off("error", onError);
        opts.signal?.removeEventListener("abort", onAbort);
      };
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        cleanup();
        ws.on("error", () => {});
        ws.terminate(); // a half-read stream cannot carry the next request
        reject(err);
      };
      const finish = () => {
        if (settled) return;
        let report: ProviderResponseFinishedReported;
        try {
          report = state.report(req);
        } catch (err) {
          return fail(err);
        }
        settled = true;
        cleanup();
        resolve(report);
      };
      const arm = () => {
        clearTimeout(idle);
        idle = setTimeout(() => fail(new EgressTimeoutError("TAU_EGRESS_BODY_TIMEOUT", `the WebSocket stream (idle ${idleMs} ms)`)), idleMs);
      };
      const onMessage = (data: WebSocket.RawData, isBinary: boolean) => {
        sawFrame.value = true;
        arm();
        if (isBinary) return fail(new ProviderFailure("protocol", "a binary WebSocket frame where text events were expected"));
        const text = Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.from(data as ArrayBuffer).toString("utf8");
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          return fail(new ProviderFailure("protocol", "a WebSocket event is not valid JSON"));
        }
        if (isObject(parsed)) {
          if (parsed.type === "codex.rate_limits") return quota(windowsFromEvent(parsed, Date.now()));
          if (parsed.type === "error") {
            const failure = wrappedError(parsed);
            if (failure) return fail(failure);
          }
        }
        try {
          state.event({ event: "message", data: text });
        } catch (err) {
          return fail(err);
        }
        if (state.done) finish();
      };
      const onClose = (code: number) => {
        if (state.complete) return finish();
        fail(new ProviderFailure("network", `the WebSocket closed before the response completed (code ${code})`));
      };
      const onError = (err: Error & { code?: string }) => {
        if (err.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH") return fail(new ProviderFailure("protocol", `a WebSocket frame larger than ${maxFrame} bytes`, false));
        fail(err);
      };
      const onAbort = () => fail(new ProviderFailure("cancelled", "request cancelled"));
      ws.on("message", onMessage);
      ws.on("close", onClose);
      ws.on("error", onError);
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      arm();
      ws.send(a.payload, (err) => {
        if (err) fail(err);
      });
    });

    /** A wrapped error event (`{type: "error", status, error, headers}`): classified by its status. */
    function wrappedError(ev: Record<string, unknown>): ProviderFailure | undefined {
      const error = isObject(ev.error) ? ev.error : {};
      const now = Date.now();
      if (isObject(ev.headers)) {
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(ev.headers)) if (typeof v === "string" || typeof v === "number") h[k.toLowerCase()] = String(v);
        quota(windowsFromHeaders(h, now));
      }
      if (error.code === "websocket_connection_limit_reached") return new ProviderFailure("network", "the server ended this WebSocket connection's time; a new one is opened");
      const status = typeof ev.status === "number" ? ev.status : typeof ev.status_code === "number" ? ev.status_code : undefined;
      if (status === undefined || status < 400) return undefined; // the family reads it as a stream error
      const limit = status === 429 ? windowFromError(error, now) : undefined;
      if (limit) quota([limit]);
      const fields = errorFields(ev);
      const { errorClass, retryable } = classifyHttp(status, fields);
      const retryAfterMs = limit?.resetsAtMs !== undefined ? Math.max(0, limit.resetsAtMs - now) : undefined;
      return new ProviderFailure(errorClass, `HTTP ${status} in the WebSocket stream${describeFields(fields)}`, retryable, retryAfterMs);
    }
  }

  const take = (key: string): WebSocket | undefined => {
    const k = kept.get(key);
    if (!k) return undefined;
    kept.delete(key);
    clearTimeout(k.timer);
    k.ws.off("close", k.onClose);
    return k.ws.readyState === WebSocket.OPEN ? k.ws : undefined;
  };

  const keep = (key: string, ws: WebSocket) => {
    if (ws.readyState !== WebSocket.OPEN || kept.has(key)) return void ws.close(1000);
    const timer = setTimeout(() => {
      kept.delete(key);
      ws.close(1000);
    }, options.idleCloseMs ?? WS_IDLE_CLOSE_MS);
    timer.unref();
    const onClose = () => {
      if (kept.get(key)?.ws !== ws) return;
      clearTimeout(timer);
      kept.delete(key);
    };
    kept.set(key, { ws, timer, onClose });
    ws.once("close", onClose);
  };

  return {
    async attempt(a) {
      const headers = upgradeHeaders(a.headers);
      // In memory only: the key holds the authorization header so a refreshed token opens a new connection.
      const key = `${a.url.href}\n${JSON.stringify(headers)}`;
      let ws = take(key);
      if (ws) lifecycle({ state: "reused", endpoint: endpointName(a.url) });
      for (;;) {
        const reused = ws !== undefined;
        ws ??= await connect(a, headers);
        const sawFrame = { value: false };
        try {
          const report = await exchange(ws, a, sawFrame);
          keep(key, ws);
          return report;
        } catch (err) {
          if (err instanceof CallbackError || err instanceof ProviderFailure) {
            // a kept connection the server had already let go: open a new one, once, at no cost
            if (!(reused && !sawFrame.value && err instanceof ProviderFailure && err.errorClass === "network")) throw err;
          } else if (!reused || sawFrame.value || a.opts.signal?.aborted) throw classifyThrown(err, a.opts.signal);
          ws = undefined;
        }
      }
    },
    close() {
      for (const { ws, timer } of kept.values()) {
        clearTimeout(timer);
        ws.close(1000);
      }
      kept.clear();
    },
  };
}
