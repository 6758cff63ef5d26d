// The Gmail extension's HTTP (SPEC-gmail, "Egress"): every request through the one egress policy
// (DECISION-egress-policy: proxy, TLS always verified, bounded connect, headers and silences), no
// redirect followed, every body read only up to GMAIL_MAX_BODY_BYTES. Errors never carry a token.
import { ToolFailure } from "../../sdk/index.js";
import { LazyEgress, egressProblem, readBounded } from "../web/http.js";
import { GMAIL_HEADERS_TIMEOUT_MS, GMAIL_IDLE_TIMEOUT_MS, GMAIL_MAX_BODY_BYTES, GMAIL_MAX_ERROR_CHARS } from "./limits.js";

export interface JsonAnswer {
  readonly status: number;
  /** The parsed body, or undefined when it was not JSON (or was cut). */
  readonly json: unknown;
  /** The body's start as text, for an error message (bounded, one line). */
  readonly excerpt: string;
}

export class GmailHttp {
  private readonly egress = new LazyEgress();

  /** One request; the answer's JSON. `secrets` are replaced in the excerpt should a service echo one. */
  async request(url: URL, init: { method: string; headers?: Record<string, string>; body?: string; signal: AbortSignal; secrets?: readonly string[] }): Promise<JsonAnswer> {
    let res;
    try {
      res = await this.egress.policy().request(url, {
        method: init.method,
        headers: { accept: "application/json", "user-agent": "tau-gmail/1", ...init.headers },
        ...(init.body !== undefined ? { body: init.body } : {}),
        signal: init.signal,
        headersTimeoutMs: GMAIL_HEADERS_TIMEOUT_MS,
        idleTimeoutMs: GMAIL_IDLE_TIMEOUT_MS,
      });
    } catch (err) {
      throw new ToolFailure(`${url.host} could not be reached: ${scrub(egressProblem(err), init.secrets)}`);
    }
    const body = await readBounded(res.body, GMAIL_MAX_BODY_BYTES);
    const text = body.bytes.toString("utf8");
    let json: unknown;
    if (!body.cut) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    return { status: res.statusCode, json, excerpt: scrub(text.replace(/\s+/g, " ").slice(0, GMAIL_MAX_ERROR_CHARS), init.secrets) };
  }

  async close(): Promise<void> {
    await this.egress.close();
  }
}

/** `text` with every secret replaced (a service may echo what it was sent). */
export function scrub(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secrets) if (s.length >= 6) out = out.split(s).join("[redacted]");
  return out;
}
