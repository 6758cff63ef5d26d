// A loopback stand-in for Google's OAuth 2.0 endpoints and the Gmail REST API, for the Gmail
// extension's tests (SPEC-gmail). Wire shapes from Google's public references:
// - authorization (`GET /o/oauth2/v2/auth`): client_id, redirect_uri, response_type=code, scope,
//   code_challenge + code_challenge_method=S256, state; the user's consent is the test's call to
//   `consent(authUrl)`, which answers the 302 Google would: `redirect_uri?code=…&state=…`;
// - token (`POST /token`, form-encoded): grant_type=authorization_code (code, code_verifier,
//   redirect_uri, client_id) and grant_type=refresh_token; answers `{access_token, expires_in,
//   token_type, scope, refresh_token?}` or `{error, error_description}` with HTTP 400;
// - Gmail (`/gmail/v1/users/me/…`, `Authorization: Bearer`): messages.list (q, maxResults →
//   `{messages:[{id,threadId}], resultSizeEstimate}`), messages.get (format full|metadata),
//   drafts.create (`{message:{raw}}` → `{id, message:{id,threadId,labelIds}}`), drafts.get and
//   drafts.send (`{id}` → the sent Message). A bad or expired token is answered 401 with Google's
//   error shape.
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface FakeMail {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly subject: string;
  readonly date: string;
  /** Messages match a query when every word of it is in their subject, sender or text. */
  readonly text: string;
}

export interface FakeDraft {
  readonly id: string;
  readonly raw: string;
  /** The draft's headers and text, decoded from `raw`. */
  readonly to: string;
  readonly subject: string;
  readonly body: string;
}

interface Logged {
  readonly method: string;
  readonly path: string;
  readonly form?: Record<string, string>;
  readonly json?: unknown;
}

const b64url = (s: string): string => Buffer.from(s, "utf8").toString("base64url");

export class FakeGoogle {
  readonly requests: Logged[] = [];
  readonly mails: FakeMail[] = [];
  readonly drafts = new Map<string, FakeDraft>();
  readonly sent: FakeDraft[] = [];
  readonly clientId = "1234-tau-test.apps.googleusercontent.com";
  /** Codes handed out at consent, with what the token request must match. */
  private readonly codes = new Map<string, { challenge: string; redirectUri: string }>();
  private readonly refreshTokens = new Set<string>();
  private readonly accessTokens = new Map<string, number>();
  private readonly sockets = new Set<Socket>();
  private nextId = 1;
  /** Gmail API calls answered 401 (a bad or expired access token). */
  unauthorized = 0;
  /** API calls left before every access token expires (undefined: never). */
  private expiresIn: number | undefined;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {
    server.on("connection", (s) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
  }

  static async start(): Promise<FakeGoogle> {
    let self: FakeGoogle | undefined;
    const server = createServer((req, res) => void self?.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    self = new FakeGoogle(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return self;
  }

  /** harness.yaml's `gmail:` entry pointing at this stand-in. */
  get config(): Record<string, string> {
    return { client_id: this.clientId, auth_url: `${this.url}/o/oauth2/v2/auth`, token_url: `${this.url}/token`, api_url: `${this.url}/` };
  }

  /** A refresh token the token endpoint accepts (as a past sign-in would have stored). */
  issueRefreshToken(): string {
    const t = `1//refresh-${randomBytes(12).toString("hex")}`;
    this.refreshTokens.add(t);
    return t;
  }

  /** Every access token issued so far stops working (as after its hour), so the next call refreshes. */
  expireAccessTokens(): void {
    this.accessTokens.clear();
  }

  /** After `calls` more answered Gmail API calls, every access token expires (a 401, then a refresh). */
  expireAfter(calls: number): void {
    this.expiresIn = calls;
  }

  grants(type: string): Logged[] {
    return this.requests.filter((r) => r.path === "/token" && r.form?.grant_type === type);
  }

  addMail(m: Omit<FakeMail, "id">): string {
    const id = `m${(this.nextId++).toString(16).padStart(6, "0")}`;
    this.mails.push({ id, ...m });
    return id;
  }

  /**
   * The user's consent at `authUrl` (what the extension printed): checks it as Google would and
   * returns the address the browser is sent to (`redirect_uri?code=…&state=…`).
   */
  consent(authUrl: string): string {
    const u = new URL(authUrl);
    const p = u.searchParams;
    if (!authUrl.startsWith(`${this.url}/o/oauth2/v2/auth?`)) throw new Error(`not this stand-in's authorization endpoint: ${u.origin}${u.pathname}`);
    if (p.get("client_id") !== this.clientId || p.get("response_type") !== "code" || p.get("code_challenge_method") !== "S256") throw new Error("a malformed authorization request");
    if (!(p.get("scope") ?? "").includes("gmail")) throw new Error("no gmail scope asked for");
    const redirect = new URL(p.get("redirect_uri") ?? "");
    if (redirect.protocol !== "http:" || redirect.hostname !== "127.0.0.1") throw new Error("the redirect is not a loopback address");
    const code = `4/0Ab-${randomBytes(16).toString("base64url")}`;
    this.codes.set(code, { challenge: p.get("code_challenge") ?? "", redirectUri: redirect.href });
    redirect.searchParams.set("code", code);
    redirect.searchParams.set("state", p.get("state") ?? "");
    redirect.searchParams.set("scope", p.get("scope") ?? "");
    return redirect.href;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const url = new URL(req.url ?? "/", this.url);
    const isForm = String(req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded");
    const form = isForm ? Object.fromEntries(new URLSearchParams(text)) : undefined;
    let json: unknown;
    if (!isForm && text !== "") json = JSON.parse(text);
    this.requests.push({ method: req.method ?? "", path: url.pathname, ...(form ? { form } : {}), ...(json !== undefined ? { json } : {}) });
    const send = (status: number, body: unknown): void => void res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
    if (url.pathname === "/token" && req.method === "POST") return this.token(form ?? {}, send);
    if (!url.pathname.startsWith("/gmail/v1/users/me/")) return send(404, { error: { code: 404, message: "Not Found", status: "NOT_FOUND" } });
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ""))?.[1];
    if (bearer === undefined || !this.accessTokens.has(bearer) || (this.accessTokens.get(bearer) as number) < Date.now()) {
      this.unauthorized++;
      return send(401, { error: { code: 401, message: "Request had invalid authentication credentials.", status: "UNAUTHENTICATED" } });
    }
    if (this.expiresIn !== undefined && --this.expiresIn <= 0) {
      this.expiresIn = undefined;
      this.accessTokens.clear();
    }
    return this.gmail(req.method ?? "", url, json, send);
  }

  private token(form: Record<string, string>, send: (status: number, body: unknown) => void): void {
    if (form.client_id !== this.clientId) return send(401, { error: "invalid_client", error_description: "The OAuth client was not found." });
    const access = (): string => {
      const t = `ya29.${randomBytes(18).toString("base64url")}`;
      this.accessTokens.set(t, Date.now() + 3_600_000);
      return t;
    };
    const scope = "https://www.googleapis.com/auth/gmail.readonly https://www.googleapis.com/auth/gmail.compose";
    if (form.grant_type === "authorization_code") {
      const c = this.codes.get(form.code ?? "");
      if (c === undefined) return send(400, { error: "invalid_grant", error_description: "Malformed auth code." });
      this.codes.delete(form.code as string);
      const challenge = createHash("sha256")
        .update(form.code_verifier ?? "")
        .digest("base64url");
      if (challenge !== c.challenge) return send(400, { error: "invalid_grant", error_description: "Invalid code verifier." });
      if (form.redirect_uri !== c.redirectUri) return send(400, { error: "redirect_uri_mismatch", error_description: "Bad Request" });
      const refresh = this.issueRefreshToken();
      return send(200, { access_token: access(), expires_in: 3599, token_type: "Bearer", scope, refresh_token: refresh });
    }
    if (form.grant_type === "refresh_token") {
      if (!this.refreshTokens.has(form.refresh_token ?? "")) return send(400, { error: "invalid_grant", error_description: "Token has been expired or revoked." });
      return send(200, { access_token: access(), expires_in: 3599, token_type: "Bearer", scope });
    }
    return send(400, { error: "unsupported_grant_type", error_description: "Invalid grant_type" });
  }

  private message(m: FakeMail, format: string): Record<string, unknown> {
    const headers = [
      { name: "From", value: m.from },
      { name: "To", value: m.to },
      { name: "Subject", value: m.subject },
      { name: "Date", value: m.date },
    ];
    const base = { id: m.id, threadId: `t${m.id}`, labelIds: ["INBOX"], snippet: m.text.slice(0, 100), sizeEstimate: m.text.length };
    if (format === "metadata") return { ...base, payload: { mimeType: "multipart/alternative", headers } };
    const parts = [
      { partId: "0", mimeType: "text/plain", filename: "", headers: [], body: { size: m.text.length, data: b64url(m.text) } },
      { partId: "1", mimeType: "text/html", filename: "", headers: [], body: { size: 0, data: b64url(`<p>${m.text}</p>`) } },
    ];
    return { ...base, payload: { partId: "", mimeType: "multipart/alternative", filename: "", headers, body: { size: 0 }, parts } };
  }

  private gmail(method: string, url: URL, json: unknown, send: (status: number, body: unknown) => void): void {
    const rest = url.pathname.slice("/gmail/v1/users/me/".length);
    if (method === "GET" && rest === "messages") {
      const words = (url.searchParams.get("q") ?? "").toLowerCase().split(/\s+/).filter(Boolean);
      const max = Number(url.searchParams.get("maxResults") ?? "100");
      const hits = this.mails.filter((m) => words.every((w) => `${m.subject} ${m.from} ${m.text}`.toLowerCase().includes(w))).slice(0, max);
      return send(200, hits.length === 0 ? { resultSizeEstimate: 0 } : { messages: hits.map((m) => ({ id: m.id, threadId: `t${m.id}` })), resultSizeEstimate: hits.length });
    }
    const msg = /^messages\/([^/]+)$/.exec(rest);
    if (method === "GET" && msg) {
      const m = this.mails.find((x) => x.id === decodeURIComponent(msg[1] as string));
      return m === undefined ? send(404, { error: { code: 404, message: "Requested entity was not found.", status: "NOT_FOUND" } }) : send(200, this.message(m, url.searchParams.get("format") ?? "full"));
    }
    if (method === "POST" && rest === "drafts") {
      const raw = (json as { message?: { raw?: string } }).message?.raw;
      if (typeof raw !== "string") return send(400, { error: { code: 400, message: "Invalid draft", status: "INVALID_ARGUMENT" } });
      const id = `r-${(this.nextId++).toString(16)}`;
      this.drafts.set(id, { id, raw, ...decodeRaw(raw) });
      return send(200, { id, message: { id: `d${id}`, threadId: `t${id}`, labelIds: ["DRAFT"] } });
    }
    const draft = /^drafts\/([^/]+)$/.exec(rest);
    if (method === "GET" && draft) {
      const d = this.drafts.get(decodeURIComponent(draft[1] as string));
      if (d === undefined) return send(404, { error: { code: 404, message: "Requested entity was not found.", status: "NOT_FOUND" } });
      return send(200, { id: d.id, message: { id: `d${d.id}`, labelIds: ["DRAFT"], payload: { headers: [{ name: "To", value: d.to }, { name: "Subject", value: d.subject }] } } });
    }
    if (method === "POST" && rest === "drafts/send") {
      const d = this.drafts.get(String((json as { id?: unknown }).id));
      if (d === undefined) return send(404, { error: { code: 404, message: "Requested entity was not found.", status: "NOT_FOUND" } });
      this.drafts.delete(d.id);
      this.sent.push(d);
      return send(200, { id: `s${d.id}`, threadId: `t${d.id}`, labelIds: ["SENT"] });
    }
    return send(404, { error: { code: 404, message: "Not Found", status: "NOT_FOUND" } });
  }
}

/** A raw draft's To, Subject and text (base64 body), as the stand-in checks what it was given. */
function decodeRaw(raw: string): { to: string; subject: string; body: string } {
  const text = Buffer.from(raw, "base64url").toString("utf8");
  const [head = "", body = ""] = text.split("\r\n\r\n");
  const h = (name: string): string => new RegExp(`^${name}: (.*)$`, "mi").exec(head)?.[1] ?? "";
  const subject = h("Subject").replace(/^=\?UTF-8\?B\?(.*)\?=$/, (_m, b: string) => Buffer.from(b, "base64").toString("utf8"));
  return { to: h("To"), subject, body: Buffer.from(body.replace(/\r\n/g, ""), "base64").toString("utf8") };
}
