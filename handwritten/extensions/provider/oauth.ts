// ChatGPT sign-in for the chatgpt_ws family (SPEC-provider-websocket, "Sign-in"): the OAuth device
// code flow that `tau provider login NAME` runs, the token file it writes (a secret of the config
// root, `secrets/provider-NAME-oauth`, mode 0600, written atomically), and the refresh of an access
// token that has expired or that the server refused. Every request goes through the egress policy.
// Tokens never leave this module except as the `authorization` header of a provider request: no
// error, log line or notice carries one (each message here is built from fixed words and statuses).
import { SecretError, readSecret, writeSecret } from "../../config/index.js";
import type { EgressPolicy } from "./egress.js";
import { MAX_ERROR_BODY_BYTES } from "./errors.js";

/** The issuer of ChatGPT sign-in, unless a profile names another (`auth_url`). */
export const DEFAULT_AUTH_URL = "https://auth.openai.com";
/** The public OAuth client id of ChatGPT sign-in for command-line coding agents (unverified, see the SPEC). */
export const OAUTH_CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann";
/** A token this close to its expiry is refreshed before it is used. */
export const REFRESH_MARGIN_MS = 60_000;
/** Longest a sign-in waits for the user to enter the code. */
export const DEVICE_LOGIN_MAX_MS = 15 * 60_000;
/** Bounds of the poll interval a server asks for. */
const MIN_POLL_MS = 1000;
const MAX_POLL_MS = 30_000;
/** Time allowed for one sign-in request (headers and body). */
const OAUTH_REQUEST_TIMEOUT_MS = 30_000;

/** What the token file holds. */
export interface OAuthTokens {
  access_token: string;
  refresh_token: string;
  id_token?: string;
  /** When the access token expires, epoch milliseconds. */
  expires_at: number;
  /** The ChatGPT account the tokens are for (sent as `chatgpt-account-id`). */
  account_id?: string;
}

/** A sign-in or refresh that did not work; its message never holds a token. */
export class OAuthError extends Error {
  override readonly name = "OAuthError";
  constructor(
    message: string,
    /** The sign-in is gone (no file, a refresh the server refused): `tau provider login` again. */
    readonly needsLogin = false,
  ) {
    super(message);
  }
}

/** The secret holding a profile's tokens. */
export const oauthSecretName = (profile: string): string => `provider-${profile}-oauth`;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** The claims of a JWT, unverified (only read for an expiry and an account id; the server checks it). */
function jwtClaims(token: string | undefined): Record<string, unknown> {
  const part = token?.split(".")[1];
  if (part === undefined || part.length > 16_384) return {};
  try {
    const v: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

/** Tokens from a token endpoint's answer (and what is kept of the previous ones). */
export function tokensFrom(body: unknown, previous: OAuthTokens | undefined, nowMs: number): OAuthTokens {
  if (!isObject(body)) throw new OAuthError("the token endpoint's answer is not a JSON object");
  const access = str(body.access_token);
  const refresh = str(body.refresh_token) ?? previous?.refresh_token;
  if (access === undefined || refresh === undefined) throw new OAuthError("the token endpoint's answer has no access or refresh token");
  const idToken = str(body.id_token) ?? previous?.id_token;
  const expiresIn = typeof body.expires_in === "number" && body.expires_in > 0 ? body.expires_in : undefined;
  const exp = jwtClaims(access).exp;
  const expiresAt = expiresIn !== undefined ? nowMs + expiresIn * 1000 : typeof exp === "number" ? exp * 1000 : nowMs + 3600_000;
  const auth = jwtClaims(idToken)["https://api.openai.com/auth"];
  const account = (isObject(auth) ? str(auth.chatgpt_account_id) : undefined) ?? previous?.account_id;
  return { access_token: access, refresh_token: refresh, ...(idToken ? { id_token: idToken } : {}), expires_at: expiresAt, ...(account ? { account_id: account } : {}) };
}

/** Reads a profile's tokens; undefined when it has never signed in. Throws OAuthError for a file that cannot be used. */
export function readTokens(configRoot: string, secret: string): OAuthTokens | undefined {
  let text: string | undefined;
  try {
    text = readSecret(configRoot, secret);
  } catch (err) {
    throw new OAuthError(err instanceof SecretError ? `the sign-in file: ${err.message}` : "the sign-in file cannot be read");
  }
  if (text === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new OAuthError(`the sign-in file (secrets/${secret}) is not valid JSON; sign in again`, true);
  }
  const access = isObject(v) ? str(v.access_token) : undefined;
  const refresh = isObject(v) ? str(v.refresh_token) : undefined;
  if (!isObject(v) || access === undefined || refresh === undefined || typeof v.expires_at !== "number") {
    throw new OAuthError(`the sign-in file (secrets/${secret}) is incomplete; sign in again`, true);
  }
  const id = str(v.id_token);
  const account = str(v.account_id);
  return { access_token: access, refresh_token: refresh, expires_at: v.expires_at, ...(id !== undefined ? { id_token: id } : {}), ...(account !== undefined ? { account_id: account } : {}) };
}

/** Writes a profile's tokens (one JSON line, 0600, atomically). */
export function writeTokens(configRoot: string, secret: string, tokens: OAuthTokens): string {
  return writeSecret(configRoot, secret, JSON.stringify(tokens));
}

/** One bounded JSON request under the egress policy: the status and the parsed body (undefined when not JSON). */
async function call(egress: EgressPolicy, url: URL, body: string, contentType: string, signal?: AbortSignal): Promise<{ status: number; body: unknown }> {
  const res = await egress.request(url, {
    method: "POST",
    headers: { "content-type": contentType, accept: "application/json" },
    body,
    ...(signal ? { signal } : {}),
    headersTimeoutMs: OAUTH_REQUEST_TIMEOUT_MS,
    idleTimeoutMs: OAUTH_REQUEST_TIMEOUT_MS,
  });
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > MAX_ERROR_BODY_BYTES) {
      res.body.destroy();
      throw new OAuthError(`the answer of ${url.pathname} is larger than ${MAX_ERROR_BODY_BYTES} bytes`);
    }
    parts.push(chunk);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.concat(parts).toString("utf8"));
  } catch {
    parsed = undefined;
  }
  return { status: res.statusCode, body: parsed };
}

/** The issuer's URL from a profile's `auth_url`, checked (http or https, no credentials). */
export function issuerUrl(authUrl: string): URL {
  let url: URL;
  try {
    url = new URL(authUrl);
  } catch {
    throw new OAuthError("auth_url is not a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new OAuthError("auth_url must be http or https");
  if (url.username !== "" || url.password !== "") throw new OAuthError("auth_url must not carry credentials");
  return url;
}
const at = (base: URL, path: string): URL => new URL(`${base.pathname.replace(/\/+$/, "")}${path}`, base);

/** Trades a refresh token for new tokens. A refusal (400/401) means the sign-in is gone. */
export async function refreshTokens(egress: EgressPolicy, authUrl: string, tokens: OAuthTokens, nowMs = Date.now(), signal?: AbortSignal): Promise<OAuthTokens> {
  const body = JSON.stringify({ client_id: OAUTH_CLIENT_ID, grant_type: "refresh_token", refresh_token: tokens.refresh_token, scope: "openid profile email" });
  const res = await call(egress, at(issuerUrl(authUrl), "/oauth/token"), body, "application/json", signal);
  if (res.status === 400 || res.status === 401) throw new OAuthError(`the sign-in was refused when refreshed (HTTP ${res.status}); run \`tau provider login\` again`, true);
  if (res.status < 200 || res.status >= 300) throw new OAuthError(`refreshing the sign-in failed (HTTP ${res.status})`);
  return tokensFrom(res.body, tokens, nowMs);
}

/** What the user is asked to do to sign in. */
export interface DeviceCode {
  readonly verificationUrl: string;
  /** The one-time code the user types in (shown to them; it is not a credential of tau's). */
  readonly userCode: string;
  readonly deviceAuthId: string;
  readonly intervalMs: number;
}

export async function requestDeviceCode(egress: EgressPolicy, authUrl: string): Promise<DeviceCode> {
  const base = issuerUrl(authUrl);
  const res = await call(egress, at(base, "/api/accounts/deviceauth/usercode"), JSON.stringify({ client_id: OAUTH_CLIENT_ID }), "application/json");
  if (res.status === 404) throw new OAuthError("this server does not offer device code sign-in (HTTP 404)");
  if (res.status < 200 || res.status >= 300 || !isObject(res.body)) throw new OAuthError(`asking for a device code failed (HTTP ${res.status})`);
  const id = str(res.body.device_auth_id);
  const code = str(res.body.user_code) ?? str(res.body.usercode);
  if (id === undefined || code === undefined || code.length > 64 || id.length > 1024) throw new OAuthError("the device code answer is incomplete");
  const interval = Number(res.body.interval);
  const intervalMs = Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, Number.isFinite(interval) ? interval * 1000 : 5000));
  return { verificationUrl: at(base, "/codex/device").href, userCode: code, deviceAuthId: id, intervalMs };
}

/**
 * Waits for the user to enter the code (polling as the server asked, DEVICE_LOGIN_MAX_MS at most),
 * then trades the authorization code for tokens.
 */
export async function completeDeviceLogin(egress: EgressPolicy, authUrl: string, code: DeviceCode, sleep: (ms: number) => Promise<void>, nowMs: () => number = Date.now): Promise<OAuthTokens> {
  const base = issuerUrl(authUrl);
  const deadline = nowMs() + DEVICE_LOGIN_MAX_MS;
  let grant: Record<string, unknown> | undefined;
  for (;;) {
    const res = await call(egress, at(base, "/api/accounts/deviceauth/token"), JSON.stringify({ device_auth_id: code.deviceAuthId, user_code: code.userCode }), "application/json");
    if (res.status >= 200 && res.status < 300 && isObject(res.body)) {
      grant = res.body;
      break;
    }
    if (res.status !== 403 && res.status !== 404) throw new OAuthError(`the sign-in failed (HTTP ${res.status})`);
    if (nowMs() + code.intervalMs > deadline) throw new OAuthError(`the code was not entered within ${DEVICE_LOGIN_MAX_MS / 60_000} minutes`);
    await sleep(code.intervalMs);
  }
  const authorization = str(grant.authorization_code);
  const verifier = str(grant.code_verifier);
  if (authorization === undefined || verifier === undefined) throw new OAuthError("the sign-in answer has no authorization code");
  return exchangeAuthorizationCode(egress, base, { code: authorization, redirectUri: at(base, "/deviceauth/callback").href, verifier }, nowMs);
}

/** Trades an authorization code and its PKCE verifier for tokens (both sign-ins end here). */
export async function exchangeAuthorizationCode(egress: EgressPolicy, base: URL, grant: { code: string; redirectUri: string; verifier: string }, nowMs: () => number = Date.now): Promise<OAuthTokens> {
  const form = new URLSearchParams({
    grant_type: "authorization_code",
    code: grant.code,
    redirect_uri: grant.redirectUri,
    client_id: OAUTH_CLIENT_ID,
    code_verifier: grant.verifier,
  }).toString();
  const res = await call(egress, at(base, "/oauth/token"), form, "application/x-www-form-urlencoded");
  if (res.status < 200 || res.status >= 300) throw new OAuthError(`trading the authorization code for tokens failed (HTTP ${res.status})`);
  return tokensFrom(res.body, undefined, nowMs());
}

/**
 * A profile's current tokens for the provider process: read from the file when needed, refreshed
 * when about to expire or refused, one refresh at a time, written back before they are used.
 */
export class TokenSource {
  #tokens: OAuthTokens | undefined;
  #refreshing: Promise<OAuthTokens> | undefined;

  constructor(
    private readonly egress: EgressPolicy,
    private readonly configRoot: string,
    private readonly secret: string,
    private readonly profile: string,
    private readonly authUrl: string,
    private readonly onRefreshed?: () => void,
  ) {}

  /** Tokens fit for a request; `refused` forces a refresh (the server refused the access token). */
  async current(refused = false): Promise<OAuthTokens> {
    // The file is the authority: a new `tau provider login` replaces it under a running session.
    const onDisk = readTokens(this.configRoot, this.secret);
    if (onDisk === undefined) throw new OAuthError(`not signed in: run \`tau provider login ${this.profile}\``, true);
    if (this.#tokens === undefined || onDisk.access_token !== this.#tokens.access_token) this.#tokens = onDisk;
    const tokens = this.#tokens;
    if (!refused && tokens.expires_at - Date.now() > REFRESH_MARGIN_MS) return tokens;
    this.#refreshing ??= refreshTokens(this.egress, this.authUrl, tokens)
      .then((fresh) => {
        writeTokens(this.configRoot, this.secret, fresh);
        this.#tokens = fresh;
        this.onRefreshed?.();
        return fresh;
      })
      .finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }
}
