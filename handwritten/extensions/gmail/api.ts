// A small client of the Gmail REST API (SPEC-gmail; DECISION-gmail): users.messages.list and get,
// users.drafts.create and users.drafts.send, each with the held access token; a 401 drops that
// token and the request is made once more with a fresh one.
import { ToolFailure } from "../../sdk/index.js";
import { scrub, type GmailHttp, type JsonAnswer } from "./http.js";
import type { GmailAuth } from "./oauth.js";

export interface MessageRef {
  readonly id: string;
  readonly threadId?: string;
}

/** A message part as users.messages.get (format=full) returns it. */
export interface MessagePart {
  readonly mimeType?: string;
  readonly filename?: string;
  readonly headers?: ReadonlyArray<{ name: string; value: string }>;
  readonly body?: { data?: string; size?: number; attachmentId?: string };
  readonly parts?: readonly MessagePart[];
}

export interface Message {
  readonly id: string;
  readonly threadId?: string;
  readonly snippet?: string;
  readonly labelIds?: readonly string[];
  readonly payload?: MessagePart;
}

/** Gmail's ids are short letters and digits; anything else is refused before a request is built. */
export const GMAIL_ID = /^[A-Za-z0-9_-]{1,128}$/;

export class GmailApi {
  constructor(
    private readonly http: GmailHttp,
    private readonly auth: GmailAuth,
    private readonly base: URL,
  ) {}

  async search(query: string, max: number, signal: AbortSignal): Promise<MessageRef[]> {
    const url = this.url("gmail/v1/users/me/messages");
    url.searchParams.set("q", query);
    url.searchParams.set("maxResults", String(max));
    const j = (await this.call("GET", url, undefined, signal)) as { messages?: MessageRef[] };
    return Array.isArray(j.messages) ? j.messages.filter((m) => typeof m?.id === "string" && GMAIL_ID.test(m.id)).slice(0, max) : [];
  }

  async message(id: string, format: "full" | "metadata", signal: AbortSignal): Promise<Message> {
    const url = this.url(`gmail/v1/users/me/messages/${encodeURIComponent(id)}`);
    url.searchParams.set("format", format);
    if (format === "metadata") for (const h of ["From", "To", "Subject", "Date"]) url.searchParams.append("metadataHeaders", h);
    return (await this.call("GET", url, undefined, signal)) as Message;
  }

  async createDraft(raw: string, signal: AbortSignal): Promise<{ id: string }> {
    const j = (await this.call("POST", this.url("gmail/v1/users/me/drafts"), { message: { raw } }, signal)) as { id?: unknown };
    if (typeof j.id !== "string") throw new ToolFailure("Gmail's answer to drafts.create has no draft id");
    return { id: j.id };
  }

  async draftSummary(id: string, signal: AbortSignal): Promise<Message> {
    const url = this.url(`gmail/v1/users/me/drafts/${encodeURIComponent(id)}`);
    url.searchParams.set("format", "metadata");
    const j = (await this.call("GET", url, undefined, signal)) as { message?: Message };
    if (j.message === undefined) throw new ToolFailure(`Gmail has no draft ${id}`);
    return j.message;
  }

  async sendDraft(id: string, signal: AbortSignal): Promise<{ id: string }> {
    const j = (await this.call("POST", this.url("gmail/v1/users/me/drafts/send"), { id }, signal)) as { id?: unknown };
    return { id: typeof j.id === "string" ? j.id : "" };
  }

  private url(path: string): URL {
    return new URL(path, this.base.href.endsWith("/") ? this.base : new URL(`${this.base.href}/`));
  }

  private async call(method: string, url: URL, body: unknown, signal: AbortSignal): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.auth.accessToken(signal);
      const r = await this.http.request(url, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal,
        secrets: [token],
      });
      if (r.status === 401 && attempt === 0) {
        this.auth.rejected(token);
        continue;
      }
      if (r.status >= 200 && r.status < 300 && r.json !== undefined) return r.json;
      throw new ToolFailure(apiProblem(r, token));
    }
  }
}

/** What a refusal says, in words for the model (never a token). */
function apiProblem(r: JsonAnswer, token: string): string {
  const e = (r.json as { error?: { message?: unknown; status?: unknown } } | undefined)?.error;
  const said = typeof e?.message === "string" ? scrub(e.message.slice(0, 300).replace(/\s+/g, " "), [token]) : r.excerpt;
  if (r.status === 401) return `Gmail refused the sign-in (HTTP 401: ${said}); the user may need to type :gmail login again`;
  if (r.status === 403) return `Gmail refused this (HTTP 403: ${said}); the sign-in may lack the scope, or the API is not enabled for the OAuth client's project`;
  if (r.status === 404) return `Gmail has no such message or draft (HTTP 404)`;
  if (r.status >= 200 && r.status < 300) return `Gmail's answer could not be read (not JSON, or larger than tau reads)`;
  return `Gmail answered HTTP ${r.status}: ${said}`;
}
