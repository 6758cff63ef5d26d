// The one egress policy for every outbound provider call (DECISION-egress-policy).
//
// - Proxies come from HTTP_PROXY / HTTPS_PROXY / NO_PROXY (lowercase spellings win, as in curl).
//   When a proxy applies to a URL the request goes through it or fails: there is no direct
//   fallback, and a proxy variable that cannot be parsed is a configuration error, never "no proxy".
// - Redirects are never followed: any 3xx response fails the request with EgressRedirectError
//   before its body is read, whatever the caller asked for (maxRedirections is forced to 0).
// - TLS verification is always on, for the origin and for an https proxy. It is set explicitly so
//   NODE_TLS_REJECT_UNAUTHORIZED cannot turn it off, and the policy has no option to disable it.
//   Node's trust store is used, plus the certificates of a NODE_EXTRA_CA_CERTS that tau deferred past
//   node's start-up (protocol/extra-ca-certs.ts), added when the first https connection is made.
import { readFileSync } from "node:fs";
import type { Duplex } from "node:stream";
import { createSecureContext, rootCertificates, type SecureContext } from "node:tls";
import { Agent, Dispatcher, ProxyAgent, buildConnector } from "undici";
import { deferredCaCertsFile } from "../../protocol/extra-ca-certs.js";
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
  /**
   * PEM file of certificates trusted besides node's own store; defaults to a NODE_EXTRA_CA_CERTS that
   * was deferred past this process's start-up (none when node loaded it itself).
   */
  extraCaFile?: string;
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

/**
 * Node's trust store plus the certificates in `file`, or undefined (node's store alone) when the
 * file cannot be used: then, as node does for NODE_EXTRA_CA_CERTS, a warning names it and why.
 */
export function trustWithExtraCa(file: string): SecureContext | undefined {
  try {
    const pem = readFileSync(file, "utf8");
    if (!pem.includes("-----BEGIN CERTIFICATE-----")) throw new Error("no PEM certificate in it");
    return createSecureContext({ ca: [...rootCertificates, pem] });
  } catch (err) {
    process.emitWarning(`Ignoring extra certs from \`${file}\`, load failed: ${(err as Error).message}`);
    return undefined;
  }
}

/** TLS options of every egress connection: verification on, and the trust store (made once, when first needed). */
class TlsOptions {
  #secureContext: SecureContext | undefined;
  #made = false;

  constructor(
    readonly timeout: number,
    readonly extraCaFile: string | undefined,
  ) {}

  get(): { rejectUnauthorized: true; timeout: number; secureContext?: SecureContext } {
    if (!this.#made && this.extraCaFile !== undefined) this.#secureContext = trustWithExtraCa(this.extraCaFile);
    this.#made = true;
    return { rejectUnauthorized: true, timeout: this.timeout, ...(this.#secureContext ? { secureContext: this.#secureContext } : {}) };
  }

  /** Options for connections that may never use TLS: without the trust store, which is costly to make. */
  plain(): { rejectUnauthorized: true; timeout: number } {
    return { rejectUnauthorized: true, timeout: this.timeout };
  }
}

class EgressDispatcher extends Dispatcher {
  readonly #direct: Agent;
  /** Made on first use, so a proxy's TLS options are built only when a request goes through it. */
  readonly #proxies = new Map<string, ProxyAgent>();
  readonly #settings: ProxySettings;
  readonly #tls: TlsOptions;

  constructor(settings: ProxySettings, tls: TlsOptions) {
    super();
    this.#settings = settings;
    this.#tls = tls;
    // Plain http connections never make the trust store; the first https one does.
    const plain = buildConnector(tls.plain());
    let secure: buildConnector.connector | undefined;
    const connect: buildConnector.connector = (opts, callback) =>
      opts.protocol === "https:" ? (secure ??= buildConnector(tls.get()))(opts, callback) : plain(opts, callback);
    this.#direct = new Agent({ connect, maxRedirections: 0 });
  }

  #proxy(proxy: URL): ProxyAgent {
    let agent = this.#proxies.get(proxy.href);
    if (agent === undefined) {
      const tls = this.#tls.get();
      agent = new ProxyAgent({ uri: proxy.href, requestTls: tls, proxyTls: tls, maxRedirections: 0 });
      this.#proxies.set(proxy.href, agent);
    }
    return agent;
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandlers): boolean {
    const origin = options.origin;
    if (origin === undefined) throw new EgressConfigError("egress request without an origin");
    const url = new URL(String(origin));
    const proxy = selectProxy(this.#settings, url);
    const target: Dispatcher = proxy === undefined ? this.#direct : this.#proxy(proxy);
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
  const tls = new TlsOptions(options.connectTimeoutMs ?? EGRESS_CONNECT_TIMEOUT_MS, options.extraCaFile ?? deferredCaCertsFile());
  const dispatcher = new EgressDispatcher(settings, tls);
  return {
    dispatcher,
    settings,
    proxyFor: (url) => selectProxy(settings, typeof url === "string" ? new URL(url) : url),
    close: () => dispatcher.close(),
  };
}
