// The Streamable HTTP transport of one server (SPEC-mcp, "Sign-in", "Policy, secrets and the
// sandbox"): the configured headers go to the server's URL only (not to its authorization server),
// no redirect is followed by any request (the OAuth ones included), a dropped SSE stream is resumed
// with `Last-Event-ID`, and closing the transport aborts every request it made, so the start-up
// timeout bounds a token refresh too.
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { resolveRoots } from "../../config/index.js";
import type { McpServerConfig } from "../../../generated/index.js";
import { MCP_SSE_RECONNECTION } from "./limits.js";
import { McpOAuthProvider } from "./oauth.js";

/** A fetch for `url`'s server: headers to `url` only, redirects refused, aborted by `closing`. */
export function serverFetch(url: URL, headers: Readonly<Record<string, string>>, closing: AbortSignal): FetchLike {
  return (input, init) => {
    const target = new URL(input instanceof URL ? input.href : String(input));
    const merged = new Headers(init?.headers);
    if (target.href === url.href) for (const [k, v] of Object.entries(headers)) merged.set(k, v);
    const signal = init?.signal ? AbortSignal.any([init.signal, closing]) : closing;
    return fetch(target, { ...init, headers: merged, redirect: "error", signal });
  };
}

/**
 * The transport of server `name` at `def.url`, signed in through `auth` (by default the stored
 * sign-in of that exact URL, which never starts a new one).
 */
export function httpTransport(name: string, def: McpServerConfig, auth?: McpOAuthProvider): StreamableHTTPClientTransport {
  const url = new URL(def.url ?? "");
  const closing = new AbortController();
  const transport = new StreamableHTTPClientTransport(url, {
    authProvider: auth ?? new McpOAuthProvider(resolveRoots().config, name, url.href),
    fetch: serverFetch(url, def.headers ?? {}, closing.signal),
    requestInit: { redirect: "error" },
    reconnectionOptions: { ...MCP_SSE_RECONNECTION },
  });
  const close = transport.close.bind(transport);
  transport.close = async () => {
    closing.abort();
    await close();
  };
  return transport;
}
