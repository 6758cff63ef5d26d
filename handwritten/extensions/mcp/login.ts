// `tau ext mcp --login`, which `tau mcp login NAME` runs (SPEC-mcp, "Sign-in"): the OAuth
// authorization code flow with PKCE against a Streamable HTTP server, its redirect taken by a
// one-shot listener on 127.0.0.1 (a random port). The SDK's `auth()` discovers the authorization
// server, registers tau as a client and builds the address; the code's exchange stores the tokens
// (McpOAuthProvider). A connection with the stored sign-in then proves it works. The request is one
// JSON line on standard input, what the user must do goes to standard error, the answer is one JSON
// line on standard output; no output carries a token.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError, auth } from "@modelcontextprotocol/sdk/client/auth.js";
import type { McpServerConfig } from "../../../generated/index.js";
import { openBrowser } from "../provider/open-browser.js";
import { httpTransport, serverFetch } from "./http.js";
import { MCP_LOGIN_MAX_MS, MCP_MAX_ERROR_CHARS } from "./limits.js";
import { McpOAuthProvider } from "./oauth.js";

const CALLBACK = "/callback";
/** Longest authorization code taken from the redirect. */
const MAX_CODE_CHARS = 4096;

/** A sign-in that did not complete; the message never holds a token or a code. */
export class McpLoginError extends Error {
  override readonly name = "McpLoginError";
}

export interface McpLoginOptions {
  /** Called once with the address the user must open. */
  onUrl(url: string): void;
  /** Longest wait for the redirect (MCP_LOGIN_MAX_MS). */
  maxWaitMs?: number;
  /** Bound of each connection to the server (its start-up timeout). */
  connectTimeoutMs: number;
}

const page = (title: string): string => `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif;margin:3em"><h1>${title}</h1><p>You can close this tab and go back to the terminal.</p></body>`;
const bounded = (text: string): string => text.slice(0, MCP_MAX_ERROR_CHARS);

/** The one redirect whose `state` matches: its code; a stranger's request is answered 400 and ignored. */
class Redirect {
  readonly state = randomBytes(32).toString("base64url");
  readonly code: Promise<string>;
  private settle!: { resolve: (code: string) => void; reject: (err: Error) => void };
  private pending: ServerResponse | undefined;
  private readonly server: Server;

  constructor() {
    this.code = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    this.code.catch(() => {});
    this.server = createServer((req, res) => this.take(req, res));
    this.server.on("clientError", (_err, socket) => socket.destroy());
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", (err: NodeJS.ErrnoException) => reject(new McpLoginError(`could not listen on the loopback (${err.code ?? "error"})`)));
      this.server.listen(0, "127.0.0.1", resolve);
    });
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${CALLBACK}`;
  }

  fail(err: Error): void {
    this.settle.reject(err);
  }

  /** Answers the browser's tab once the exchange is done. */
  finish(ok: boolean): void {
    this.pending?.writeHead(ok ? 200 : 502, { "content-type": "text/html" }).end(page(ok ? "Signed in to the MCP server" : "The sign-in failed"));
    this.server.closeAllConnections();
    this.server.close();
  }

  private take(req: IncomingMessage, res: ServerResponse): void {
    let url: URL | undefined;
    try {
      url = new URL(req.url ?? "/", "http://127.0.0.1");
    } catch {
      // A request target no URL parser takes: answered like any other stranger's.
    }
    if (url === undefined || req.method !== "GET" || url.pathname !== CALLBACK || this.pending !== undefined) return void res.writeHead(404).end("not found\n");
    const got = Buffer.from(url.searchParams.get("state") ?? "");
    const want = Buffer.from(this.state);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return void res.writeHead(400).end("this address does not belong to the sign-in that is waiting\n");
    const code = url.searchParams.get("code");
    this.pending = res;
    if (code === null || code === "" || code.length > MAX_CODE_CHARS) {
      const error = url.searchParams.get("error");
      this.settle.reject(new McpLoginError(`the authorization server refused the sign-in (${error !== null && /^[a-z0-9_.-]{1,64}$/i.test(error) ? error : "no code"})`));
    } else this.settle.resolve(code);
  }
}

/** Runs the sign-in of server `name` (a Streamable HTTP entry) and stores its tokens; says how many tools it offers. */
export async function mcpLogin(configRoot: string, name: string, def: McpServerConfig, o: McpLoginOptions): Promise<{ tools: number }> {
  const redirect = new Redirect();
  const redirectUrl = await redirect.listen();
  const provider = new McpOAuthProvider(configRoot, name, def.url ?? "", { redirectUrl, state: redirect.state, onAuthorizationUrl: (url) => o.onUrl(url.href) });
  const maxWaitMs = o.maxWaitMs ?? MCP_LOGIN_MAX_MS;
  const timer = setTimeout(() => redirect.fail(new McpLoginError(`the sign-in was not completed within ${Math.round(maxWaitMs / 60_000)} minutes`)), maxWaitMs);
  let ok = false;
  try {
    await startSignIn(name, def, provider, o.connectTimeoutMs);
    const code = await redirect.code;
    const closing = new AbortController();
    const result = await auth(provider, { serverUrl: provider.url, authorizationCode: code, fetchFn: serverFetch(new URL(provider.url), def.headers ?? {}, closing.signal) }).catch((err: Error) => {
      throw new McpLoginError(`trading the authorization code for tokens failed: ${bounded(err.message)}`);
    });
    if (result !== "AUTHORIZED") throw new McpLoginError("the authorization server did not issue tokens");
    const tools = await connectedTools(name, def, new McpOAuthProvider(configRoot, name, provider.url), o.connectTimeoutMs);
    ok = true;
    return { tools };
  } finally {
    clearTimeout(timer);
    redirect.finish(ok);
  }
}

/** Connects without a sign-in, so the server asks for one and `auth()` shows the address; anything else is an error. */
async function startSignIn(name: string, def: McpServerConfig, provider: McpOAuthProvider, timeoutMs: number): Promise<void> {
  const client = new Client({ name: "tau", version: "1" }, { capabilities: {} });
  try {
    await client.connect(httpTransport(name, def, provider), { timeout: timeoutMs });
  } catch (err) {
    if (err instanceof UnauthorizedError && provider.redirected) return;
    throw new McpLoginError(`the server's OAuth sign-in could not start: ${bounded((err as Error).message)}`);
  } finally {
    await client.close().catch(() => {});
  }
  throw new McpLoginError(`MCP server ${name} did not ask for a sign-in: it answers without one (nothing was stored)`);
}

/** Connects with the stored sign-in and counts the server's tools (one page is enough to prove it). */
async function connectedTools(name: string, def: McpServerConfig, stored: McpOAuthProvider, timeoutMs: number): Promise<number> {
  const client = new Client({ name: "tau", version: "1" }, { capabilities: {} });
  try {
    await client.connect(httpTransport(name, def, stored), { timeout: timeoutMs });
    return (await client.listTools({}, { timeout: timeoutMs })).tools.length;
  } catch (err) {
    throw new McpLoginError(`the tokens were stored, but connecting with them failed: ${bounded((err as Error).message)}`);
  } finally {
    await client.close().catch(() => {});
  }
}

const MAX_REQUEST_BYTES = 256 * 1024;

interface LoginRequest {
  config_root: string;
  server: string;
  definition: McpServerConfig;
  /** Whether to open the address in a browser (the command is run in a terminal). */
  open: boolean;
}

async function readRequest(stdin: NodeJS.ReadableStream): Promise<LoginRequest> {
  let text = "";
  for await (const chunk of stdin) {
    text += typeof chunk === "string" ? chunk : (chunk as Buffer).toString("utf8");
    if (text.length > MAX_REQUEST_BYTES) throw new Error(`the request is larger than ${MAX_REQUEST_BYTES} bytes`);
  }
  const v = JSON.parse(text) as Partial<LoginRequest>;
  if (typeof v.config_root !== "string" || typeof v.server !== "string" || typeof v.definition?.url !== "string") throw new Error("config_root, server and definition.url are required");
  return { config_root: v.config_root, server: v.server, definition: v.definition, open: v.open === true };
}

/** The `--login` mode: one sign-in, answered `{ok, tools}` or `{ok: false, reason}`; the exit status says which. */
export async function signIn(stdin: NodeJS.ReadableStream = process.stdin, stdout: NodeJS.WritableStream = process.stdout, stderr: NodeJS.WritableStream = process.stderr): Promise<number> {
  const answer = (v: object): void => void stdout.write(`${JSON.stringify(v)}\n`);
  let request: LoginRequest;
  try {
    request = await readRequest(stdin);
  } catch (err) {
    answer({ ok: false, reason: `malformed login request: ${bounded((err as Error).message)}` });
    return 2;
  }
  const { config_root, server, definition } = request;
  try {
    const { tools } = await mcpLogin(config_root, server, definition, {
      connectTimeoutMs: definition.startup_timeout_ms ?? 30_000,
      onUrl: (url) => {
        stderr.write(`To sign in to MCP server ${server}, open this address in a browser on this machine (it waits ${MCP_LOGIN_MAX_MS / 60_000} minutes at most):\n${url}\n`);
        if (request.open) openBrowser(url);
      },
    });
    answer({ ok: true, tools });
    return 0;
  } catch (err) {
    // Other errors are named by their kind only: their text is not known to be free of secrets.
    answer({ ok: false, reason: err instanceof McpLoginError ? err.message : `the sign-in failed (${(err as NodeJS.ErrnoException).code ?? (err as Error).name})` });
    return 1;
  }
}
