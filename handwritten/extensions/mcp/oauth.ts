// OAuth for Streamable HTTP servers (SPEC-mcp, "Sign-in"): the SDK's `auth()` drives discovery,
// dynamic client registration, PKCE and refresh; this provider keeps what it hands over in one
// secret of the config root per server URL (`secrets/mcp-oauth-HASH`, 0600, written whole), the
// exact URL inside it too, so a sign-in stored for one URL is never read for another. Outside
// `tau mcp login` nothing starts a sign-in: a server that needs one fails naming the command.
// Tokens leave this module only as the `Authorization` header the SDK sends to the server's URL.
import { randomBytes } from "node:crypto";
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { mcpSignInSecret, normalizedMcpUrl, readSecret, removeMcpSignIn, writeSecret } from "../../config/index.js";

/** What one server URL's secret holds. */
interface SignIn {
  url: string;
  /** The loopback redirect the client was registered with (the token grants need none). */
  redirect_url?: string;
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  /** The PKCE verifier of a sign-in under way. */
  verifier?: string;
}

/** The loopback side of `tau mcp login`: where the browser comes back, and the address to show. */
export interface LoginSide {
  readonly redirectUrl: string;
  readonly state: string;
  onAuthorizationUrl(url: URL): void;
}

/** The server needs a sign-in tau does not have; the message names the command that makes one. */
export class LoginNeeded extends Error {
  override readonly name = "LoginNeeded";
  constructor(server: string) {
    super(`it needs sign-in: run \`tau mcp login ${server}\``);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The stored sign-in of `url`; empty when there is none or it was stored for another URL. */
function readSignIn(configRoot: string, url: string): SignIn {
  const href = normalizedMcpUrl(url);
  const text = readSecret(configRoot, mcpSignInSecret(href));
  let v: unknown;
  try {
    v = text === undefined ? undefined : JSON.parse(text);
  } catch {
    v = undefined;
  }
  if (!isObject(v) || v.url !== href) return { url: href };
  const tokens = isObject(v.tokens) && typeof v.tokens.access_token === "string" ? (v.tokens as OAuthTokens) : undefined;
  const client = isObject(v.client) && typeof v.client.client_id === "string" ? (v.client as OAuthClientInformationMixed) : undefined;
  return {
    url: href,
    ...(typeof v.redirect_url === "string" ? { redirect_url: v.redirect_url } : {}),
    ...(client ? { client } : {}),
    ...(tokens ? { tokens } : {}),
    ...(typeof v.verifier === "string" ? { verifier: v.verifier } : {}),
  };
}

/** Where a redirect would go when none was registered (no sign-in runs outside `tau mcp login`). */
const NO_REDIRECT = "http://127.0.0.1/callback";

export class McpOAuthProvider implements OAuthClientProvider {
  readonly url: string;
  /** The tokens last handed out, so a refresh refused does not drop newer ones written meanwhile. */
  private handed: OAuthTokens | undefined;
  /** What discovery found, kept for the code exchange of the same sign-in. */
  private discovery: OAuthDiscoveryState | undefined;
  /** What this sign-in obtained itself (a sign-in under way uses nothing stored before it). */
  private readonly fresh = { client: false, tokens: false };
  /** Whether a sign-in started: the user was shown where to sign in. */
  redirected = false;

  constructor(
    private readonly configRoot: string,
    private readonly server: string,
    url: string,
    private readonly login?: LoginSide,
  ) {
    this.url = normalizedMcpUrl(url);
  }

  get redirectUrl(): string {
    return this.login?.redirectUrl ?? this.stored().redirect_url ?? NO_REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "tau",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  state(): string {
    return this.login?.state ?? randomBytes(16).toString("base64url");
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    // A new sign-in registers again: an old registration names another loopback port.
    return this.login !== undefined && !this.fresh.client ? undefined : this.stored().client;
  }

  saveClientInformation(client: OAuthClientInformationMixed): void {
    this.update({ client, ...(this.login !== undefined ? { redirect_url: this.login.redirectUrl } : {}) });
    this.fresh.client = true;
  }

  tokens(): OAuthTokens | undefined {
    if (this.login !== undefined && !this.fresh.tokens) return undefined;
    this.handed = this.stored().tokens;
    return this.handed;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.update({ tokens, verifier: undefined });
    this.fresh.tokens = true;
  }

  redirectToAuthorization(url: URL): void {
    if (this.login === undefined) throw new LoginNeeded(this.server);
    this.redirected = true;
    this.login.onAuthorizationUrl(url);
  }

  saveCodeVerifier(verifier: string): void {
    if (this.login !== undefined) this.update({ verifier });
  }

  codeVerifier(): string {
    const verifier = this.stored().verifier;
    if (verifier === undefined) throw new Error("no sign-in is under way for this server");
    return verifier;
  }

  /**
   * The first thing `auth()` asks: outside a sign-in, only a refresh can help, so without a refresh
   * token and the registration it belongs to nothing is tried (no registration, no address).
   */
  discoveryState(): OAuthDiscoveryState | undefined {
    const { tokens, client } = this.stored();
    if (this.login === undefined && (tokens?.refresh_token === undefined || client === undefined)) throw new LoginNeeded(this.server);
    return this.discovery;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if (scope === "discovery") return void (this.discovery = undefined);
    // Tokens stored by another refresh meanwhile are newer than the ones refused: they stay.
    const refused = this.stored().tokens?.access_token === this.handed?.access_token ? { tokens: undefined } : {};
    if (scope === "verifier") this.update({ verifier: undefined });
    else if (scope === "client") this.update({ client: undefined });
    else if (scope === "tokens") this.update(refused);
    else this.update({ client: undefined, verifier: undefined, ...refused });
  }

  private stored(): SignIn {
    return readSignIn(this.configRoot, this.url);
  }

  private update(change: Partial<SignIn>): void {
    const next: SignIn = { ...this.stored(), ...change };
    for (const key of Object.keys(next) as Array<keyof SignIn>) if (next[key] === undefined) delete next[key];
    if (next.client === undefined && next.tokens === undefined && next.verifier === undefined) removeMcpSignIn(this.configRoot, this.url);
    else writeSecret(this.configRoot, mcpSignInSecret(this.url), JSON.stringify(next));
  }
}
