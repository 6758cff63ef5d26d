// The one egress policy for every outbound provider call (DECISION-egress-policy).
//
// - Proxies come from HTTP_PROXY / HTTPS_PROXY / NO_PROXY (lowercase spellings win, as in curl).
//   When a proxy applies to a URL the request goes through it or fails: there is no direct
//   fallback, and a proxy variable that cannot be parsed is a configuration error, never "no proxy".
// - Redirects are never followed: any 3xx response fails the request with EgressRedirectError
//   before its body is read, whatever the caller asked for (maxRedirections is forced to 0).
// - TLS verification is always on, for the origin and for an https proxy. It is set explicitly so
//   NODE_TLS_REJECT_UNAUTHORIZED cannot turn it off, and the policy has no option to disable it.
import type { Duplex } from "node:stream";
import { Agent, Dispatcher, ProxyAgent } from "undici";
import { EgressConfigError, bypassesProxy, readProxySettings, type EgressEnv, type ProxySettings } from "./proxy-settings.js";

export { EgressConfigError, bypassesProxy, parseNoProxy, readProxySettings } from "./proxy-settings.js";
export type { EgressEnv, NoProxyEntry, ProxySettings } from "./proxy-settings.js";

/** Time allowed to establish a TCP (and TLS) connection, to the origin or to the proxy. */
export const EGRESS_CONNECT_TIMEOUT_MS = 10_000;

export interface EgressOptions {
  /** Environment to read proxy settings from; defaults to process.env. */
  env?: EgressEnv;
  /** Connect timeout override (tests); defaults to EGRESS_CONNECT_TIMEOUT_MS. */
  connectTimeoutMs?: number;
}

export interface EgressPolicy {
  /** The dispatcher every provider request must use. */
  readonly dispatcher: Dispatcher;
  readonly settings: ProxySettings;
  /** The proxy URL a request to `url` goes through, or undefined for a direct connection. */
  proxyFor(url: URL | string): URL | undefined;
  close(): Promise<void>;
}

/** A 3xx response: redirects are not followed. */
export class EgressRedirectError extends Error {
  override readonly name = "EgressRedirectError";
  readonly code = "TAU_EGRESS_REDIRECT";
  constructor(readonly statusCode: number) {
    super(`redirect not followed (HTTP ${statusCode})`);
  }
}

/** The proxy for a URL under these settings (HTTPS_PROXY for https, HTTP_PROXY for http). */
export function selectProxy(settings: ProxySettings, url: URL): URL | undefined {
  const proxy = url.protocol === "https:" ? settings.httpsProxy : url.protocol === "http:" ? settings.httpProxy : undefined;
  if (proxy === undefined) return undefined;
  return bypassesProxy(settings, url) ? undefined : proxy;
}

/** Fails any 3xx before its body is delivered, through the request's own abort path. */
class NoRedirectHandler implements Dispatcher.DispatchHandlers {
  #abort: ((err?: Error) => void) | undefined;
  readonly #inner: Dispatcher.DispatchHandlers;
  #redirected = false;

  constructor(handler: Dispatcher.DispatchHandlers) {
    this.#inner = handler;
  }

  onConnect(abort: (err?: Error) => void): void {
    this.#abort = abort;
    this.#inner.onConnect?.(abort);
  }

  onError(err: Error): void {
    this.#inner.onError?.(err);
  }

  onUpgrade(statusCode: number, headers: Buffer[] | string[] | null, socket: Duplex): void {
    this.#inner.onUpgrade?.(statusCode, headers, socket);
  }

  onResponseStarted(): void {
    this.#inner.onResponseStarted?.();
  }

  onHeaders(statusCode: number, headers: Buffer[], resume: () => void, statusText: string): boolean {
    if (statusCode >= 300 && statusCode < 400) {
      this.#redirected = true;
      const err = new EgressRedirectError(statusCode);
      if (this.#abort) this.#abort(err);
      else this.#inner.onError?.(err);
      return false;
    }
    return this.#inner.onHeaders?.(statusCode, headers, resume, statusText) ?? true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#redirected) return false;
    return this.#inner.onData?.(chunk) ?? true;
  }

  onComplete(trailers: string[] | null): void {
    if (this.#redirected) return;
    this.#inner.onComplete?.(trailers);
  }

  onBodySent(chunkSize: number, totalBytesSent: number): void {
    this.#inner.onBodySent?.(chunkSize, totalBytesSent);
  }
}

class EgressDispatcher extends Dispatcher {
  readonly #direct: Agent;
  readonly #proxies = new Map<string, ProxyAgent>();
  readonly #settings: ProxySettings;

  constructor(settings: ProxySettings, connectTimeoutMs: number) {
    super();
    this.#settings = settings;
    const tls = { rejectUnauthorized: true, timeout: connectTimeoutMs };
    this.#direct = new Agent({ connect: tls, maxRedirections: 0 });
    for (const proxy of [settings.httpProxy, settings.httpsProxy]) {
      if (proxy === undefined || this.#proxies.has(proxy.href)) continue;
      this.#proxies.set(
        proxy.href,
        new ProxyAgent({ uri: proxy.href, requestTls: tls, proxyTls: tls, maxRedirections: 0 }),
      );
    }
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandlers): boolean {
    const origin = options.origin;
    if (origin === undefined) throw new EgressConfigError("egress request without an origin");
    const url = new URL(String(origin));
    const proxy = selectProxy(this.#settings, url);
    const target: Dispatcher = proxy === undefined ? this.#direct : (this.#proxies.get(proxy.href) as ProxyAgent);
    const opts = { ...options, maxRedirections: 0 } as Dispatcher.DispatchOptions;
    return target.dispatch(opts, new NoRedirectHandler(handler));
  }

  override async close(): Promise<void> {
    await Promise.all([this.#direct.close(), ...[...this.#proxies.values()].map((p) => p.close())]);
  }

  override async destroy(): Promise<void> {
    await Promise.all([this.#direct.destroy(), ...[...this.#proxies.values()].map((p) => p.destroy())]);
  }
}

/** Builds the egress policy from the environment. Throws EgressConfigError on a bad proxy. */
export function createEgressPolicy(options: EgressOptions = {}): EgressPolicy {
  const settings = readProxySettings(options.env ?? process.env);
  const dispatcher = new EgressDispatcher(settings, options.connectTimeoutMs ?? EGRESS_CONNECT_TIMEOUT_MS);
  return {
    dispatcher,
    settings,
    proxyFor: (url) => selectProxy(settings, typeof url === "string" ? new URL(url) : url),
    close: () => dispatcher.close(),
  };
}
