// A WebSocket opened under the one egress policy (SPEC-provider-websocket,
// DECISION-egress-policy): through the proxy's tunnel when one applies, TLS verified, a redirect
// answering the upgrade refused, an HTTP answer classified as a provider failure, the whole upgrade
// bounded.
import WebSocket from "ws";
import type { IncomingMessage } from "node:http";
import { EGRESS_CONNECT_TIMEOUT_MS, EgressRedirectError, EgressTimeoutError } from "./egress.js";
import { MAX_ERROR_BODY_BYTES, ProviderFailure, classifyHttp, errorFields } from "./errors.js";
import { windowsFromHeaders, type QuotaWindow } from "./quota.js";
import { parseRetryAfter } from "./retry.js";
import { HEADERS_TIMEOUT_MS, describeFields, type Attempt } from "./round.js";
import type { WsLifecycle } from "./ws-transport.js";

/** What opening and reading a connection need of the transport. */
export interface WsSide {
  readonly maxFrame: number;
  readonly connectTimeoutMs?: number;
  readonly lifecycle: (e: WsLifecycle) => void;
  /** Reports rate-limit windows (none: nothing reported). */
  readonly quota: (w: QuotaWindow[]) => void;
}

/** An endpoint as lifecycle notices name it: scheme, host and path; no query (it may carry a key). */
export function endpointName(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`.slice(0, 200);
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

/** Opens a connection under the egress policy: resolves when the upgrade succeeded. */
export async function openWebSocket(a: Attempt, headers: Record<string, string>, o: WsSide): Promise<WebSocket> {
  const { maxFrame, lifecycle, quota } = o;
  const { url, opts } = a;
  const endpoint = endpointName(url);
  lifecycle({ state: "connecting", endpoint });
  const connectOptions = await opts.egress.webSocketOptions(url, opts.signal);
  const upgradeMs = (o.connectTimeoutMs ?? EGRESS_CONNECT_TIMEOUT_MS) + (opts.timeouts?.headersMs ?? HEADERS_TIMEOUT_MS);
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

