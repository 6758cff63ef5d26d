// The one egress policy for every outbound provider call (DECISION-egress-policy), on node's own
// http client (node:http; node:https and node:tls are loaded on the first https connection).
//
// - Proxies come from HTTP_PROXY / HTTPS_PROXY / NO_PROXY (lowercase spellings win, as in curl).
//   When a proxy applies to a URL the request goes through a CONNECT tunnel of that proxy or fails:
//   there is no direct fallback, and a proxy variable that cannot be parsed is a configuration
//   error, never "no proxy".
// - Redirects are never followed: any 3xx response fails the request with EgressRedirectError
//   before its body is read (node's client never follows one by itself).
// - TLS verification is always on, for the origin and for an https proxy. It is set explicitly so
//   NODE_TLS_REJECT_UNAUTHORIZED cannot turn it off, and the policy has no option to disable it.
//   Node's trust store is used, plus the certificates of a NODE_EXTRA_CA_CERTS that tau deferred past
//   node's start-up (startup/extra-ca-certs.ts), added when the first https connection is made.
// - Connecting (TCP, TLS, the tunnel) is bounded; so are the wait for response headers and every
//   silence while the body streams (per request).
import { readFileSync } from "node:fs";
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type RequestOptions } from "node:http";
import type { Agent as HttpsAgent } from "node:https";
import { isIP, type Socket } from "node:net";
import type { SecureContext } from "node:tls";
import { builtin } from "../../startup/builtin.js";
import { deferredCaCertsFile } from "../../startup/extra-ca-certs.js";
import { EgressConfigError, bypassesProxy, readProxySettings, type EgressEnv, type ProxySettings } from "./proxy-settings.js";

export { EgressConfigError, bypassesProxy, parseNoProxy, readProxySettings } from "./proxy-settings.js";
export type { EgressEnv, NoProxyEntry, ProxySettings } from "./proxy-settings.js";

// node:https and node:tls are loaded on the first https connection: loading them starts node's crypto.
const https = (): typeof import("node:https") => builtin("https");
const tls = (): typeof import("node:tls") => builtin("tls");

/** Time allowed to establish a connection (TCP, TLS, and a proxy's tunnel), to the origin or to the proxy. */
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

export interface EgressRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly signal?: AbortSignal;
  /** Longest wait from sending the request to the response headers. */
  readonly headersTimeoutMs?: number;
  /** Longest silence while the response body streams. */
  readonly idleTimeoutMs?: number;
}

export interface EgressResponse {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  /** The body as it streams (an async iterable of Buffers); destroy it when done. */
  readonly body: IncomingMessage;
}

export interface EgressPolicy {
  readonly settings: ProxySettings;
  /** The proxy URL a request to `url` goes through, or undefined for a direct connection. */
  proxyFor(url: URL | string): URL | undefined;
  /** Sends one request under the policy; rejects on a redirect, a connection failure or a timeout. */
  request(url: URL | string, request: EgressRequest): Promise<EgressResponse>;
  /**
   * Opens (TCP, and TLS for https) the connection the next request to `url`'s origin will use, so
   * that request does not wait for it. Direct connections only: through a proxy, nothing happens
   * until a request is made. Best effort: a spare that fails or closes is simply not used.
   */
  preconnect(url: URL | string): void;
  /**
   * How a WebSocket client opens `url` (ws: or wss:) under the policy: through the proxy's tunnel
   * when one applies (already TLS-secured for wss:), else directly with the policy's TLS options.
   * Redirects and bounds are the client's to enforce (ws-transport.ts).
   */
  webSocketOptions(url: URL, signal?: AbortSignal): Promise<WebSocketConnectOptions>;
  close(): Promise<void>;
}

/** What a WebSocket client is given to connect under the policy. */
export interface WebSocketConnectOptions {
  /** The tunnel through the proxy, when one applies to the URL. */
  readonly createConnection?: () => Socket;
  readonly rejectUnauthorized: true;
  readonly secureContext?: SecureContext;
}

/** The http(s) URL a ws(s) URL is reached through (what proxy selection and the tunnel see). */
export function httpUrlOf(url: URL): URL {
  const out = new URL(url.href);
  if (url.protocol === "ws:") out.protocol = "http:";
  else if (url.protocol === "wss:") out.protocol = "https:";
  return out;
}

/**
 * A 3xx response: redirects are not followed by the policy. `location` (its Location header, as
 * sent) lets a caller that may follow one (web_fetch) check the next hop against its own rules first.
 */
export class EgressRedirectError extends Error {
  override readonly name = "EgressRedirectError";
  readonly code = "TAU_EGRESS_REDIRECT";
  constructor(
    readonly statusCode: number,
    readonly location?: string,
  ) {
    super(`redirect not followed (HTTP ${statusCode})`);
  }
}

/** A connection, header or body deadline that passed; `code` says which. */
export class EgressTimeoutError extends Error {
  override readonly name = "EgressTimeoutError";
  constructor(
    readonly code: "TAU_EGRESS_CONNECT_TIMEOUT" | "TAU_EGRESS_HEADERS_TIMEOUT" | "TAU_EGRESS_BODY_TIMEOUT",
    what: string,
  ) {
    super(`${what} timed out`);
  }
}

/** A proxy that answered its CONNECT with anything but 200. */
export class EgressProxyError extends Error {
  override readonly name = "EgressProxyError";
  readonly code = "TAU_EGRESS_PROXY_REFUSED";
  constructor(readonly statusCode: number) {
    super(`the proxy refused the tunnel (HTTP ${statusCode})`);
  }
}

/** The proxy for a URL under these settings (HTTPS_PROXY for https, HTTP_PROXY for http). */
export function selectProxy(settings: ProxySettings, url: URL): URL | undefined {
  const proxy = url.protocol === "https:" ? settings.httpsProxy : url.protocol === "http:" ? settings.httpProxy : undefined;
  if (proxy === undefined) return undefined;
  return bypassesProxy(settings, url) ? undefined : proxy;
}

/**
 * Node's trust store plus the certificates in `file`, or undefined (node's store alone) when the
 * file cannot be used: then, as node does for NODE_EXTRA_CA_CERTS, a warning names it and why.
 */
export function trustWithExtraCa(file: string): SecureContext | undefined {
  const { createSecureContext, rootCertificates } = tls();
  try {
    const pem = readFileSync(file, "utf8");
    if (!pem.includes("-----BEGIN CERTIFICATE-----")) throw new Error("no PEM certificate in it");
    return createSecureContext({ ca: [...rootCertificates, pem] });
  } catch (err) {
    process.emitWarning(`Ignoring extra certs from \`${file}\`, load failed: ${(err as Error).message}`);
    return undefined;
  }
}

type TlsOptions = { rejectUnauthorized: true; secureContext?: SecureContext };

/** A URL's hostname as a socket address (without the brackets of an IPv6 literal). */
const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, "$1");
const portOf = (url: URL): number => Number(url.port || (url.protocol === "https:" ? 443 : 80));

/** A connection opened ahead of its request, per origin (`host:port`), handed out by the agent. */
type Spares = Map<string, Socket>;

type Open = (options: object, done?: unknown) => Socket;
/** How each agent opens a connection itself (its own createConnection, before usingSpares). */
const openers = new WeakMap<HttpAgent, Open>();

/**
 * Makes `agent` hand out a spare connection to a request for its origin before it opens a new one
 * (createConnection is the method node documents for an agent to override).
 */
function usingSpares<A extends HttpAgent>(agent: A, spares: Spares): A {
  const open = agent.createConnection.bind(agent) as Open;
  openers.set(agent, open);
  agent.createConnection = ((options: { host?: string; port?: number | string }, done?: unknown) => {
    const key = `${options.host}:${options.port}`;
    const spare = spares.get(key);
    spares.delete(key);
    return spare !== undefined && !spare.destroyed ? spare.ref() : open(options, done);
  }) as typeof agent.createConnection;
  return agent;
}

class Egress implements EgressPolicy {
  readonly #spares: Spares = new Map();
  readonly #http = usingSpares(new HttpAgent({ keepAlive: true }), this.#spares);
  #https: HttpsAgent | undefined;
  #tls: TlsOptions | undefined;
  #closed = false;

  constructor(
    readonly settings: ProxySettings,
    readonly connectTimeoutMs: number,
    readonly extraCaFile: string | undefined,
  ) {}

  proxyFor(url: URL | string): URL | undefined {
    return selectProxy(this.settings, typeof url === "string" ? new URL(url) : url);
  }

  async request(target: URL | string, r: EgressRequest): Promise<EgressResponse> {
    const url = typeof target === "string" ? new URL(target) : target;
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new EgressConfigError(`unsupported URL scheme ${url.protocol.slice(0, 16)}`);
    if (this.#closed) throw new EgressConfigError("the egress policy is closed");
    r.signal?.throwIfAborted();
    const proxy = selectProxy(this.settings, url);
    const headers: Record<string, string> = { ...r.headers, host: url.host };
    if (r.body !== undefined) headers["content-length"] = String(Buffer.byteLength(r.body));
    const common = { method: r.method, headers, path: `${url.pathname}${url.search}`, ...(r.signal ? { signal: r.signal } : {}) };
    let options: RequestOptions;
    let send: typeof httpRequest = httpRequest;
    if (proxy !== undefined) {
      // The tunnel carries plain HTTP for an http: URL, TLS (made here) for an https: one.
      const socket = await this.#tunnel(proxy, url, r.signal);
      options = { ...common, host: hostOf(url), port: portOf(url), createConnection: () => socket };
    } else if (url.protocol === "https:") {
      send = https().request;
      options = { ...common, host: hostOf(url), port: portOf(url), agent: this.#httpsAgent() };
    } else {
      options = { ...common, host: hostOf(url), port: portOf(url), agent: this.#http };
    }
    return new Promise<EgressResponse>((resolve, reject) => {
      let settled = false;
      const fail = (err: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(headersTimer);
        reject(err);
      };
      const req: ClientRequest = send(options, (res) => {
        if (settled) return void res.destroy();
        settled = true;
        clearTimeout(headersTimer);
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          res.destroy();
          const location = res.headers.location;
          reject(new EgressRedirectError(status, typeof location === "string" ? location : undefined));
          return;
        }
        if (r.idleTimeoutMs !== undefined) {
          const ms = r.idleTimeoutMs;
          res.setTimeout(ms, () => res.destroy(new EgressTimeoutError("TAU_EGRESS_BODY_TIMEOUT", `the response body (idle ${ms} ms)`)));
        }
        resolve({ statusCode: status, headers: res.headers, body: res });
      });
      const headersTimer =
        r.headersTimeoutMs === undefined
          ? undefined
          : setTimeout(() => req.destroy(new EgressTimeoutError("TAU_EGRESS_HEADERS_TIMEOUT", `waiting for the response headers (${r.headersTimeoutMs} ms)`)), r.headersTimeoutMs);
      req.on("error", fail);
      if (proxy === undefined) req.on("socket", (socket) => this.#boundConnect(req, socket, url.protocol === "https:"));
      req.end(r.body);
    });
  }

  preconnect(target: URL | string): void {
    const url = typeof target === "string" ? new URL(target) : target;
    if (this.#closed || (url.protocol !== "http:" && url.protocol !== "https:") || selectProxy(this.settings, url) !== undefined) return;
    const host = hostOf(url);
    const port = portOf(url);
    const key = `${host}:${port}`;
    if (this.#spares.has(key)) return;
    const secure = url.protocol === "https:";
    // Opened exactly as the agent would open it for a request (its options, the same name checks).
    const agent: HttpAgent = secure ? this.#httpsAgent() : this.#http;
    const options = { ...(agent as HttpAgent & { options: object }).options, host, port, ...(secure && !isIP(host) ? { servername: host } : {}) };
    const socket = (openers.get(agent) as Open)(options);
    this.#spares.set(key, socket);
    socket.unref(); // a spare never keeps the process alive
    socket.on("error", () => {}); // reported by the request that uses it, or by none
    // Bounded like any connection, from when it was opened; a request that took it sees the timeout.
    const timer = setTimeout(
      () => socket.destroy(new EgressTimeoutError("TAU_EGRESS_CONNECT_TIMEOUT", `connecting (${this.connectTimeoutMs} ms)`)),
      this.connectTimeoutMs,
    );
    timer.unref();
    socket.once(secure ? "secureConnect" : "connect", () => clearTimeout(timer));
    socket.once("close", () => {
      clearTimeout(timer);
      if (this.#spares.get(key) === socket) this.#spares.delete(key);
    });
  }

  async webSocketOptions(target: URL, signal?: AbortSignal): Promise<WebSocketConnectOptions> {
    if (target.protocol !== "ws:" && target.protocol !== "wss:") throw new EgressConfigError(`unsupported URL scheme ${target.protocol.slice(0, 16)}`);
    if (this.#closed) throw new EgressConfigError("the egress policy is closed");
    signal?.throwIfAborted();
    const url = httpUrlOf(target);
    // node's TLS (and crypto) is loaded for wss: only
    const tlsOptions: TlsOptions = target.protocol === "wss:" ? this.#tlsOptions() : { rejectUnauthorized: true };
    const proxy = selectProxy(this.settings, url);
    if (proxy === undefined) return tlsOptions;
    const socket = await this.#tunnel(proxy, url, signal);
    return { ...tlsOptions, createConnection: () => socket };
  }

  /** Destroys `req` when its new connection is not established (and, for https, secured) in time. */
  #boundConnect(req: ClientRequest, socket: Socket, secure: boolean): void {
    if (!socket.connecting) return; // a kept-alive connection
    const timer = setTimeout(() => req.destroy(new EgressTimeoutError("TAU_EGRESS_CONNECT_TIMEOUT", `connecting (${this.connectTimeoutMs} ms)`)), this.connectTimeoutMs);
    socket.once(secure ? "secureConnect" : "connect", () => clearTimeout(timer));
    socket.once("close", () => clearTimeout(timer));
  }

  /** TLS options of every egress connection: verification on, and the trust store (made once). */
  #tlsOptions(): TlsOptions {
    if (this.#tls === undefined) {
      const secureContext = this.extraCaFile === undefined ? undefined : trustWithExtraCa(this.extraCaFile);
      this.#tls = { rejectUnauthorized: true, ...(secureContext ? { secureContext } : {}) };
    }
    return this.#tls;
  }

  #httpsAgent(): HttpsAgent {
    return (this.#https ??= usingSpares(new (https().Agent)({ keepAlive: true, ...this.#tlsOptions() }), this.#spares));
  }

  /** A socket through `proxy` to `url`'s host and port (TLS-wrapped for an https: URL), within the connect bound. */
  async #tunnel(proxy: URL, url: URL, signal: AbortSignal | undefined): Promise<Socket> {
    const authority = `${url.hostname}:${portOf(url)}`;
    const headers: Record<string, string> = { host: authority };
    if (proxy.username !== "" || proxy.password !== "") {
      const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
      headers["proxy-authorization"] = `Basic ${Buffer.from(credentials).toString("base64")}`;
    }
    const tlsOptions = proxy.protocol === "https:" || url.protocol === "https:" ? this.#tlsOptions() : undefined;
    const send = proxy.protocol === "https:" ? https().request : httpRequest;
    const proxyHost = hostOf(proxy);
    return new Promise<Socket>((resolve, reject) => {
      let done = false;
      const finish = (err: Error | undefined, socket?: Socket): void => {
        if (done) return void socket?.destroy();
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        if (err) {
          socket?.destroy();
          connect.destroy();
          reject(err);
        } else resolve(socket as Socket);
      };
      const connect = send({
        method: "CONNECT",
        host: proxyHost,
        port: portOf(proxy),
        path: authority,
        headers,
        agent: false,
        ...(proxy.protocol === "https:" ? { ...tlsOptions, ...(isIP(proxyHost) ? {} : { servername: proxyHost }) } : {}),
      });
      const timer = setTimeout(() => finish(new EgressTimeoutError("TAU_EGRESS_CONNECT_TIMEOUT", `connecting through the proxy (${this.connectTimeoutMs} ms)`)), this.connectTimeoutMs);
      const onAbort = (): void => finish(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
      signal?.addEventListener("abort", onAbort, { once: true });
      connect.once("error", (err) => finish(err));
      connect.once("connect", (res: IncomingMessage, socket: Socket, head: Buffer) => {
        if (res.statusCode !== 200) return finish(new EgressProxyError(res.statusCode ?? 0), socket);
        if (head.length > 0) socket.unshift(head);
        if (url.protocol !== "https:") return finish(undefined, socket);
        const host = hostOf(url);
        // `host` is the name the certificate is checked against; SNI is sent for a name, never an address
        const secured = tls().connect({ socket, host, ...tlsOptions, ...(isIP(host) ? {} : { servername: host }) });
        secured.once("secureConnect", () => finish(undefined, secured));
        secured.once("error", (err) => finish(err, secured));
      });
      connect.end();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const spare of this.#spares.values()) spare.destroy();
    this.#spares.clear();
    this.#http.destroy();
    this.#https?.destroy();
  }
}

/** Builds the egress policy from the environment. Throws EgressConfigError on a bad proxy. */
export function createEgressPolicy(options: EgressOptions = {}): EgressPolicy {
  const settings = readProxySettings(options.env ?? process.env);
  return new Egress(settings, options.connectTimeoutMs ?? EGRESS_CONNECT_TIMEOUT_MS, options.extraCaFile ?? deferredCaCertsFile());
}
