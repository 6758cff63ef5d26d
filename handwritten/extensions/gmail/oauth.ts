// Gmail sign-in (SPEC-gmail, "Sign-in"; DECISION-gmail): Google's installed-app flow — an
// authorization code with PKCE (S256) and `state`, redirected to a one-shot listener on 127.0.0.1.
// When the browser runs on another machine its redirect cannot reach that listener: the user types
// the code (or the address the browser landed on) as `:gmail code CODE`, which reaches this
// extension only (SPEC-extension-commands). The refresh token is the secret `gmail-token`
// (`<config>/secrets/`, 0600, written atomically); the access token lives in memory only. No
// code, verifier or token is ever put in a notice, an answer, an error or a log.
import { createServer, type Server } from "node:http";
import { createHash, randomBytes } from "node:crypto";
import { ToolFailure, type CommandAnswer } from "../../sdk/index.js";
import { readSecret, removeSecret, writeSecret } from "../../config/secrets.js";
import { scrub, type GmailHttp } from "./http.js";
import { GMAIL_LOGIN_WAIT_MS, GMAIL_MAX_ERROR_CHARS, GMAIL_SCOPES, TOKEN_SECRET } from "./limits.js";

export interface OAuthClient {
  readonly authUrl: URL;
  readonly tokenUrl: URL;
  readonly clientId: string;
  readonly clientSecret?: string;
}

interface PendingLogin {
  readonly verifier: string;
  readonly state: string;
  readonly redirectUri: string;
  readonly server: Server;
  readonly timer: NodeJS.Timeout;
}

/** Seconds before its stated expiry an access token is no longer used. */
const EXPIRY_MARGIN_MS = 60_000;
/** Longest code or pasted address taken. */
const MAX_CODE_CHARS = 1024;

const base64url = (b: Buffer): string => b.toString("base64url");

export class GmailAuth {
  private access: { token: string; expiresAt: number } | undefined;
  private pending: PendingLogin | undefined;
  /** One refresh at a time: calls at once share it. */
  private refreshing: Promise<string> | undefined;

  constructor(
    private readonly http: GmailHttp,
    private readonly client: OAuthClient,
    private readonly configRoot: string,
    private readonly say: (level: "info" | "warning" | "error", text: string) => void,
  ) {}

  /** The stored refresh token, or undefined (a file with a wider mode throws, naming the fix). */
  private refreshToken(): string | undefined {
    try {
      return readSecret(this.configRoot, TOKEN_SECRET);
    } catch (err) {
      throw new ToolFailure((err as Error).message);
    }
  }

  status(): CommandAnswer {
    const signedIn = this.refreshToken() !== undefined;
    return { level: "info", text: signedIn ? "gmail: signed in (the refresh token is in the config root's secrets/gmail-token); :gmail logout forgets it" : "gmail: not signed in; :gmail login starts a sign-in" };
  }

  logout(): CommandAnswer {
    this.access = undefined;
    const had = removeSecret(this.configRoot, TOKEN_SECRET);
    return { level: "info", text: had ? "gmail: signed out (the stored refresh token is deleted; Google's own access list may still show tau until you remove it there)" : "gmail: not signed in" };
  }

  /** `:gmail login`: a fresh verifier, state and listener; the address to open. */
  async login(): Promise<CommandAnswer> {
    this.endPending();
    const verifier = base64url(randomBytes(48));
    const state = base64url(randomBytes(24));
    const server = createServer((req, res) => void this.onRedirect(req.url ?? "/", res));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    const port = (server.address() as { port: number }).port;
    const redirectUri = `http://127.0.0.1:${port}/`;
    const timer = setTimeout(() => {
      if (this.pending?.state !== state) return;
      this.endPending();
      this.say("warning", "gmail: the sign-in was not finished within 10 minutes; :gmail login starts another");
    }, GMAIL_LOGIN_WAIT_MS);
    timer.unref();
    this.pending = { verifier, state, redirectUri, server, timer };
    const url = new URL(this.client.authUrl);
    const params = {
      client_id: this.client.clientId,
      redirect_uri: redirectUri,
      response_type: "code",
      scope: GMAIL_SCOPES.join(" "),
      code_challenge: base64url(createHash("sha256").update(verifier).digest()),
      code_challenge_method: "S256",
      state,
      access_type: "offline",
      prompt: "consent",
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return {
      level: "info",
      text: `gmail: open this address in a browser and allow tau:\n${url.href}\nIf the browser is on another machine, its last page will not load: copy that page's address (or its code=… value) and type :gmail code followed by it (with ':', never '/').`,
    };
  }

  /** `:gmail code CODE|ADDRESS`: finishes the sign-in under way. */
  async finish(input: string): Promise<CommandAnswer> {
    const pending = this.pending;
    if (pending === undefined) return { level: "error", text: "gmail: no sign-in is under way; :gmail login starts one" };
    if (input.length > MAX_CODE_CHARS) return { level: "error", text: `gmail: that is longer than ${MAX_CODE_CHARS} characters; copy the code only` };
    let code = input;
    if (/^https?:\/\//i.test(input)) {
      let url: URL;
      try {
        url = new URL(input);
      } catch {
        return { level: "error", text: "gmail: that address cannot be read; copy it whole, or the code=… value only" };
      }
      if (url.searchParams.get("state") !== pending.state) return { level: "error", text: "gmail: that address belongs to another sign-in (its state differs); use the one :gmail login printed last" };
      const error = url.searchParams.get("error");
      if (error !== null) return this.failed(`Google answered ${error.slice(0, 64)}`);
      code = url.searchParams.get("code") ?? "";
    }
    if (!/^[\w./~+-]{4,}$/.test(code)) return { level: "error", text: "gmail: that is not an authorization code; copy the code=… value of the address (or the whole address)" };
    return this.exchange(pending, code);
  }

  private async onRedirect(path: string, res: import("node:http").ServerResponse): Promise<void> {
    const pending = this.pending;
    const url = new URL(path, "http://127.0.0.1/");
    // Another sign-in's redirect (or a stray request) is ignored: this one goes on waiting.
    if (pending === undefined || url.pathname !== "/" || url.searchParams.get("state") !== pending.state) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not a sign-in tau is waiting for\n");
      return;
    }
    const error = url.searchParams.get("error");
    const answer = error !== null ? this.failed(`Google answered ${error.slice(0, 64)}`) : await this.exchange(pending, url.searchParams.get("code") ?? "");
    res.writeHead(answer.level === "info" ? 200 : 400, { "content-type": "text/plain; charset=utf-8" }).end(`tau: ${answer.text}\nYou can close this tab.\n`);
    this.say(answer.level, answer.text);
  }

  private failed(why: string): CommandAnswer {
    this.endPending();
    return { level: "error", text: `gmail: the sign-in failed: ${why}; :gmail login starts another` };
  }

  /** Trades the code for tokens (the pending sign-in's verifier and redirect), stores the refresh token. */
  private async exchange(pending: PendingLogin, code: string): Promise<CommandAnswer> {
    if (this.pending !== pending) return { level: "error", text: "gmail: that sign-in is over; :gmail login starts another" };
    this.endPending();
    const form = new URLSearchParams({ grant_type: "authorization_code", code, code_verifier: pending.verifier, redirect_uri: pending.redirectUri, client_id: this.client.clientId });
    if (this.client.clientSecret !== undefined) form.set("client_secret", this.client.clientSecret);
    let tokens: { access_token: string; expires_in: number; refresh_token?: string };
    try {
      tokens = await this.tokenRequest(form, [code, pending.verifier], AbortSignal.timeout(30_000));
    } catch (err) {
      return this.failed((err as Error).message);
    }
    if (tokens.refresh_token === undefined) return this.failed("Google gave no refresh token (remove tau's access in your Google account, then sign in again)");
    try {
      writeSecret(this.configRoot, TOKEN_SECRET, tokens.refresh_token);
    } catch (err) {
      return this.failed(`the token could not be stored: ${(err as Error).message}`);
    }
    this.access = { token: tokens.access_token, expiresAt: Date.now() + tokens.expires_in * 1000 };
    return { level: "info", text: "gmail: signed in; the gmail_* tools can be used now" };
  }

  /** A usable access token: the one held, or a fresh one from the stored refresh token. */
  async accessToken(signal: AbortSignal): Promise<string> {
    if (this.access !== undefined && this.access.expiresAt - EXPIRY_MARGIN_MS > Date.now()) return this.access.token;
    this.refreshing ??= this.refresh(signal).finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** The API refused `token` (401): it is dropped, so the next call refreshes. */
  rejected(token: string): void {
    if (this.access?.token === token) this.access = undefined;
  }

  private async refresh(signal: AbortSignal): Promise<string> {
    const refreshToken = this.refreshToken();
    if (refreshToken === undefined) throw new ToolFailure("Gmail is not signed in: the user types :gmail login in tau's interactive UI first");
    const form = new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: this.client.clientId });
    if (this.client.clientSecret !== undefined) form.set("client_secret", this.client.clientSecret);
    let tokens;
    try {
      tokens = await this.tokenRequest(form, [refreshToken], signal);
    } catch (err) {
      throw new ToolFailure(`Gmail's sign-in could not be renewed (${(err as Error).message}); the user may need to type :gmail login again`);
    }
    this.access = { token: tokens.access_token, expiresAt: Date.now() + tokens.expires_in * 1000 };
    return tokens.access_token;
  }

  private async tokenRequest(form: URLSearchParams, secrets: readonly string[], signal: AbortSignal): Promise<{ access_token: string; expires_in: number; refresh_token?: string }> {
    const all = [...secrets, ...(this.client.clientSecret !== undefined ? [this.client.clientSecret] : [])];
    const r = await this.http.request(this.client.tokenUrl, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: form.toString(), signal, secrets: all });
    const j = (r.json ?? {}) as Record<string, unknown>;
    if (r.status !== 200) {
      const what = typeof j.error === "string" ? `${j.error.slice(0, 64)}${typeof j.error_description === "string" ? `: ${j.error_description.slice(0, GMAIL_MAX_ERROR_CHARS)}` : ""}` : r.excerpt;
      throw new Error(`the token endpoint answered HTTP ${r.status} (${scrub(what.replace(/\s+/g, " "), all)})`);
    }
    if (typeof j.access_token !== "string" || j.access_token === "") throw new Error("the token endpoint's answer has no access_token");
    const expiresIn = typeof j.expires_in === "number" && j.expires_in > 0 ? Math.min(j.expires_in, 86_400) : 3_600;
    return { access_token: j.access_token, expires_in: expiresIn, ...(typeof j.refresh_token === "string" && j.refresh_token !== "" ? { refresh_token: j.refresh_token } : {}) };
  }

  private endPending(): void {
    const p = this.pending;
    if (p === undefined) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    p.server.close();
  }

  close(): void {
    this.endPending();
  }
}
