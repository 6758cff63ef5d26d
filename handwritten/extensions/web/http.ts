// The web extension's HTTP (SPEC-web, "Egress"): every request through the one egress policy
// (DECISION-egress-policy: proxy, TLS always verified, bounded connect, headers and silences),
// every body read only up to WEB_MAX_BODY_BYTES — the bytes past it are never read, whatever
// Content-Length says — and, for `web_fetch` only, redirects followed one hop at a time, each new
// URL checked against the host policy before anything is sent to it.
import type { IncomingMessage } from "node:http";
import { ToolFailure } from "../../sdk/index.js";
import { EgressRedirectError, createEgressPolicy, type EgressPolicy } from "../provider/egress.js";
import { WEB_HEADERS_TIMEOUT_MS, WEB_IDLE_TIMEOUT_MS, WEB_MAX_BODY_BYTES, WEB_MAX_REDIRECTS } from "./limits.js";

export interface ReadBody {
  readonly bytes: Buffer;
  /** The body went on past the bound; what is here is its start. */
  readonly cut: boolean;
}

/** Reads at most `max` bytes of `body`, then stops (the rest is never read: the stream is destroyed). */
export async function readBounded(body: IncomingMessage, max: number = WEB_MAX_BODY_BYTES): Promise<ReadBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  let cut = false;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const room = max - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        size += room;
        cut = true;
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } finally {
    body.destroy();
  }
  return { bytes: Buffer.concat(chunks, size), cut };
}

export interface Fetched {
  readonly url: URL;
  readonly status: number;
  readonly contentType: string;
  readonly body: ReadBody;
}

/** What a hop's URL must pass before a request is sent to it (the host policy). */
export type HopCheck = (url: URL) => Promise<void>;

/** Why an egress failure happened, in words for the model (never a header or a key). */
export function egressProblem(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string };
  if (e.name === "AbortError" || e.code === "ABORT_ERR") return "the call was cancelled or ran out of time";
  if (e.code?.startsWith("TAU_EGRESS_") === true) return e.message ?? e.code;
  if (typeof e.code === "string") return `${e.code}${e.message ? `: ${e.message.slice(0, 200)}` : ""}`;
  return (e.message ?? String(err)).slice(0, 200);
}

/** The one egress policy, made on first use (a proxy variable that cannot be read fails the call with its reason). */
export class LazyEgress {
  private egress: EgressPolicy | undefined;

  policy(): EgressPolicy {
    try {
      return (this.egress ??= createEgressPolicy());
    } catch (err) {
      throw new ToolFailure(`the proxy settings cannot be used: ${(err as Error).message}`);
    }
  }

  async close(): Promise<void> {
    await this.egress?.close();
  }
}

export class WebHttp {
  private readonly egress = new LazyEgress();

  private policy(): EgressPolicy {
    return this.egress.policy();
  }

  /**
   * GETs `start` for `web_fetch`: each hop's URL passes `check` first; a redirect's Location is
   * followed (http and https only, at most WEB_MAX_REDIRECTS hops) only once it passed too.
   */
  async get(start: URL, check: HopCheck, signal: AbortSignal): Promise<Fetched> {
    let url = start;
    for (let hop = 0; ; hop++) {
      await check(url);
      try {
        const res = await this.policy().request(url, {
          method: "GET",
          headers: { accept: "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5", "user-agent": "tau-web/1" },
          signal,
          headersTimeoutMs: WEB_HEADERS_TIMEOUT_MS,
          idleTimeoutMs: WEB_IDLE_TIMEOUT_MS,
        });
        const body = await readBounded(res.body);
        return { url, status: res.statusCode, contentType: String(res.headers["content-type"] ?? ""), body };
      } catch (err) {
        if (!(err instanceof EgressRedirectError)) throw new ToolFailure(`${url.host} could not be fetched: ${egressProblem(err)}`);
        if (err.location === undefined) throw new ToolFailure(`${url.host} answered HTTP ${err.statusCode} without a Location to go to`);
        if (hop >= WEB_MAX_REDIRECTS) throw new ToolFailure(`more than ${WEB_MAX_REDIRECTS} redirects from ${start.host}; the last pointed on from ${url.host}`);
        let next: URL;
        try {
          next = new URL(err.location, url);
        } catch {
          throw new ToolFailure(`${url.host} redirected to a Location that is not a URL`);
        }
        if (next.protocol !== "http:" && next.protocol !== "https:") throw new ToolFailure(`${url.host} redirected to a ${next.protocol.slice(0, 16)} URL; only http and https are followed`);
        url = next;
      }
    }
  }

  /** POSTs JSON to an adapter's API (no redirect is followed); the status and the bounded body. */
  async postJson(url: URL, headers: Readonly<Record<string, string>>, body: unknown, signal: AbortSignal): Promise<{ status: number; body: ReadBody }> {
    const res = await this.policy().request(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...headers },
      body: JSON.stringify(body),
      signal,
      headersTimeoutMs: WEB_HEADERS_TIMEOUT_MS,
      idleTimeoutMs: WEB_IDLE_TIMEOUT_MS,
    });
    return { status: res.statusCode, body: await readBounded(res.body) };
  }

  async close(): Promise<void> {
    await this.egress.close();
  }
}
