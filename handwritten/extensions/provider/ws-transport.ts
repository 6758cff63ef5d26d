// The WebSocket transport (SPEC-provider-websocket): a wire family's request sent as one text frame
// on a WebSocket, its stream of events read from the text frames that answer it. Under the one
// egress policy (DECISION-egress-policy): the upgrade request goes through the proxy's tunnel when
// one applies, TLS verification is on, a redirect answering the upgrade is refused, and the upgrade,
// every silence and every frame are bounded. A connection whose response completed is kept for the
// next request to the same endpoint with the same headers, and closed after a while unused.
import WebSocket from "ws";
import { ProviderFailure, classifyThrown } from "./errors.js";
import type { QuotaWindow } from "./quota.js";
import { CallbackError, type Transport } from "./round.js";
import { endpointName, openWebSocket, type WsSide } from "./ws-connect.js";
import { exchangeOnWebSocket } from "./ws-exchange.js";

export { endpointName } from "./ws-connect.js";

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

/** Headers for the upgrade: the family's, less those that describe an HTTP body. */
function upgradeHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (k !== "content-type" && k !== "accept") out[k] = v;
  return out;
}

export function webSocketTransport(options: WsTransportOptions = {}): WsTransport {
  const kept = new Map<string, { ws: WebSocket; timer: NodeJS.Timeout; onClose: () => void }>();
  const maxFrame = options.maxFrameBytes ?? WS_MAX_FRAME_BYTES;
  const lifecycle = (e: WsLifecycle) => options.onLifecycle?.(e);
  const quota = (w: QuotaWindow[]) => {
    if (w.length > 0) options.onQuota?.(w);
  };
  const side: WsSide = { maxFrame, lifecycle, quota, ...(options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {}) };

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
        ws ??= await openWebSocket(a, headers, side);
        const sawFrame = { value: false };
        try {
          const report = await exchangeOnWebSocket(ws, a, sawFrame, side);
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
