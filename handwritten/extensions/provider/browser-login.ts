// The browser sign-in of `tau provider login NAME --browser` (SPEC-provider-websocket, "Sign-in"):
// OAuth authorization code with PKCE (RFC 7636) and a one-shot redirect listener on this machine's
// loopback. Loaded only by the `--login` mode, so node:crypto and node:http stay out of the
// provider's start-up. The token exchange goes out under the egress policy like every sign-in call.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { EgressPolicy } from "./egress.js";
import { DEVICE_LOGIN_MAX_MS, OAUTH_CLIENT_ID, OAuthError, exchangeAuthorizationCode, issuerUrl, type OAuthTokens } from "./oauth.js";

/** The redirect port the ChatGPT sign-in client is registered with (unverified, see the SPEC). */
export const BROWSER_LOGIN_PORT = 1455;
export const BROWSER_LOGIN_CALLBACK = "/auth/callback";
/** Longest authorization code or error code taken from the redirect. */
const MAX_CODE_CHARS = 4096;

export interface BrowserLoginOptions {
  /** The loopback port to listen on (0: any free one). */
  port: number;
  /** Called once with the address the user must open (before the wait). */
  onUrl: (url: string) => void;
  /** Longest wait for the browser's redirect. */
  maxWaitMs?: number;
}

const base64url = (b: Buffer): string => b.toString("base64url");

/** The PKCE verifier (86 characters from 64 random bytes) and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = base64url(randomBytes(64));
  return { verifier, challenge: base64url(createHash("sha256").update(verifier).digest()) };
}

const page = (title: string, text: string): string =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif;margin:3em"><h1>${title}</h1><p>${text}</p></body>`;

/** An error code from the redirect, kept only when it is a plain token (it is shown to the user). */
const errorCode = (v: string | null): string => (v !== null && /^[a-z0-9_.-]{1,64}$/i.test(v) ? v : "unnamed error");

/**
 * Listens on the loopback, has the user open the issuer's authorization page, takes the one redirect
 * whose `state` matches, and trades its code (with the PKCE verifier) for tokens. A redirect with a
 * wrong or missing `state` is answered 400 and ignored, so another local process cannot end or
 * steer the sign-in; an `error` redirect with the right state ends it.
 */
/** The issuer's authorization address the user opens: a code flow with PKCE (S256) back to `redirectUri`. */
function authorizeUrl(issuer: URL, redirectUri: string, challenge: string, state: string): URL {
  const authorize = new URL(`${issuer.pathname.replace(/\/+$/, "")}/oauth/authorize`, issuer);
  for (const [k, v] of Object.entries({
    response_type: "code",
    client_id: OAUTH_CLIENT_ID,
    redirect_uri: redirectUri,
    scope: "openid profile email offline_access",
    code_challenge: challenge,
    code_challenge_method: "S256",
    id_token_add_organizations: "true",
    codex_cli_simplified_flow: "true",
    state,
  }))
    authorize.searchParams.set(k, v);
  return authorize;
}

export async function browserLogin(egress: EgressPolicy, authUrl: string, o: BrowserLoginOptions): Promise<OAuthTokens> {
  const issuer = issuerUrl(authUrl);
  const { verifier, challenge } = pkcePair();
  const state = base64url(randomBytes(32));
  const expected = Buffer.from(state);
  let settle: { resolve: (code: string) => void; reject: (err: Error) => void } | undefined;
  const redirected = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  // The browser's tab is answered once the exchange is done, so it can say how it ended.
  let pending: ServerResponse | undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let url: URL | undefined;
    try {
      url = new URL(req.url ?? "/", "http://localhost");
    } catch {
      // A request target no URL parser takes: answered like any other stranger's.
    }
    if (url === undefined || req.method !== "GET" || url.pathname !== BROWSER_LOGIN_CALLBACK || pending !== undefined) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    const got = Buffer.from(url.searchParams.get("state") ?? "");
    if (got.length !== expected.length || !timingSafeEqual(got, expected)) {
      res.writeHead(400, { "content-type": "text/html" }).end(page("tau sign-in", "This address does not belong to the sign-in that is waiting."));
      return;
    }
    const error = url.searchParams.get("error");
    const code = url.searchParams.get("code");
    if (error !== null || code === null || code === "" || code.length > MAX_CODE_CHARS) {
      res.writeHead(400, { "content-type": "text/html" }).end(page("tau sign-in failed", "The sign-in did not complete; see the terminal."));
      settle?.reject(new OAuthError(error !== null ? `the issuer refused the sign-in (${errorCode(error)})` : "the sign-in's redirect carried no authorization code"));
      return;
    }
    pending = res;
    settle?.resolve(code);
  });
  server.on("clientError", (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        new OAuthError(
          err.code === "EADDRINUSE"
            ? `port ${o.port} on this machine is in use (another sign-in?); end it, or choose another with --port (the issuer must accept that redirect)`
            : `the sign-in could not listen on port ${o.port} (${err.code ?? "error"})`,
        ),
      ),
    );
    server.listen(o.port, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : o.port;
  const redirectUri = `http://localhost:${port}${BROWSER_LOGIN_CALLBACK}`;
  const authorize = authorizeUrl(issuer, redirectUri, challenge, state);
  const maxWaitMs = o.maxWaitMs ?? DEVICE_LOGIN_MAX_MS;
  const timer = setTimeout(() => settle?.reject(new OAuthError(`the sign-in was not completed within ${Math.round(maxWaitMs / 60_000)} minutes`)), maxWaitMs);
  try {
    o.onUrl(authorize.href);
    const code = await redirected;
    try {
      const tokens = await exchangeAuthorizationCode(egress, issuer, { code, redirectUri, verifier });
      pending?.writeHead(200, { "content-type": "text/html" }).end(page("Signed in to tau", "You can close this tab and go back to the terminal."));
      return tokens;
    } catch (err) {
      pending?.writeHead(502, { "content-type": "text/html" }).end(page("tau sign-in failed", "The sign-in did not complete; see the terminal."));
      throw err;
    }
  } finally {
    clearTimeout(timer);
    server.closeAllConnections();
    server.close();
  }
}
