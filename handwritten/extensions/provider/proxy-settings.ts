// Proxy settings from HTTP_PROXY / HTTPS_PROXY / NO_PROXY (lowercase spellings win, as in curl):
// parsing and matching only, without the HTTP client, so the provider can refuse an unusable proxy
// variable before it declares itself ready and load the client afterwards (DECISION-egress-policy).

export type EgressEnv = Readonly<Record<string, string | undefined>>;

export interface ProxySettings {
  httpProxy?: URL;
  httpsProxy?: URL;
  /** Parsed NO_PROXY entries; `"*"` bypasses every host. */
  noProxy: NoProxyEntry[] | "*";
}

export interface NoProxyEntry {
  /** Lowercase host without a leading `.` or `*.`; matches itself and its sub-domains. */
  host: string;
  /** 0 when any port matches. */
  port: number;
}

/** A proxy variable that is set but unusable: refusing is the only safe answer. */
export class EgressConfigError extends Error {
  override readonly name = "EgressConfigError";
}

function envValue(env: EgressEnv, lower: string): string | undefined {
  const v = env[lower] ?? env[lower.toUpperCase()];
  if (v === undefined) return undefined;
  const trimmed = v.trim();
  return trimmed === "" ? undefined : trimmed;
}

function parseProxyUrl(name: string, value: string): URL {
  // curl accepts a bare host:port; treat it as http://host:port.
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new EgressConfigError(`${name} is not a valid proxy URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new EgressConfigError(`${name} uses unsupported proxy scheme ${url.protocol.slice(0, 16)}`);
  }
  if (url.hostname === "") throw new EgressConfigError(`${name} names no proxy host`);
  return url;
}

export function parseNoProxy(value: string | undefined): NoProxyEntry[] | "*" {
  if (value === undefined) return [];
  const entries: NoProxyEntry[] = [];
  for (const raw of value.split(/[,\s]+/)) {
    const item = raw.trim().toLowerCase();
    if (item === "") continue;
    if (item === "*") return "*";
    let host = item;
    let port = 0;
    const m = /^(.*?)(?::(\d{1,5}))?$/.exec(item);
    if (m && m[2] !== undefined && !item.endsWith("]")) {
      host = m[1] ?? "";
      port = Number(m[2]);
    }
    host = host.replace(/^\*?\./, "").replace(/^\[(.*)\]$/, "$1");
    if (host === "") continue;
    entries.push({ host, port });
  }
  return entries;
}

/** Reads the proxy settings from an environment. Throws EgressConfigError on an unusable proxy. */
export function readProxySettings(env: EgressEnv = process.env): ProxySettings {
  const http = envValue(env, "http_proxy");
  const https = envValue(env, "https_proxy");
  const settings: ProxySettings = { noProxy: parseNoProxy(envValue(env, "no_proxy")) };
  if (http !== undefined) settings.httpProxy = parseProxyUrl("HTTP_PROXY", http);
  if (https !== undefined) settings.httpsProxy = parseProxyUrl("HTTPS_PROXY", https);
  return settings;
}

function defaultPort(protocol: string): number {
  return protocol === "https:" ? 443 : 80;
}

/** Whether NO_PROXY exempts this URL from the proxy. */
export function bypassesProxy(settings: ProxySettings, url: URL): boolean {
  if (settings.noProxy === "*") return true;
  const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  const port = url.port === "" ? defaultPort(url.protocol) : Number(url.port);
  for (const entry of settings.noProxy) {
    if (entry.port !== 0 && entry.port !== port) continue;
    if (host === entry.host || host.endsWith(`.${entry.host}`)) return true;
  }
  return false;
}
