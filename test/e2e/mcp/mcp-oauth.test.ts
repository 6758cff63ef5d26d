// Signing in to remote MCP servers (SPEC-mcp, "Sign-in"), end to end: the real `tau mcp login`,
// `tau run`, its daemon and `tau ext mcp`, against a Streamable HTTP server with its own OAuth
// authorization server on loopback (test/fixtures/mcp/oauth-server.mjs, a child process built on
// the SDK's server auth helpers), which reports every Authorization header and grant it saw.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI, type Workspace } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse } from "../../support/fake-openai.js";
import { extensionsLog, mcpWorkspace, toolMessage, toolsOf } from "../../support/mcp.js";
import { runTau, type TauRun } from "../../support/run-tau.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();
const FIXTURE = join(import.meta.dirname, "../../fixtures/mcp/oauth-server.mjs");

interface OAuthServer {
  base: string;
  /** Each MCP request's path and Authorization header (null without one). */
  seen: Array<{ path: string; authorization: string | null }>;
  /** The client id of each client registered. */
  registered: string[];
  /** Each token issued: its grant and access token. */
  grants: Array<{ grant: string; access_token: string }>;
  /** Every access token issued so far expires; `then` also makes every later refresh go unanswered, or the refresh tokens unknown. */
  expire(then?: "hang-refresh" | "revoke"): Promise<void>;
}

async function oauthServer(): Promise<OAuthServer> {
  const child = spawn(process.execPath, [FIXTURE], { stdio: ["pipe", "pipe", "inherit"] });
  cleanups.push(() => child.kill("SIGKILL"));
  const server: OAuthServer = { base: "", seen: [], registered: [], grants: [], expire: async () => {} };
  let expired = 0;
  createInterface({ input: child.stdout }).on("line", (line) => {
    const v = JSON.parse(line) as { base?: string; seen?: OAuthServer["seen"][number]; registered?: string; grant?: string; access_token?: string; expired?: boolean };
    if (v.registered !== undefined) server.registered.push(v.registered);
    if (v.base !== undefined) server.base = v.base;
    if (v.seen !== undefined) server.seen.push(v.seen);
    if (v.grant !== undefined) server.grants.push({ grant: v.grant, access_token: v.access_token ?? "" });
    if (v.expired === true) expired++;
  });
  server.expire = async (then) => {
    const before = expired;
    child.stdin.write(`${then ?? "expire"}\n`);
    await waitFor(() => expired > before, "the tokens to expire");
  };
  await waitFor(() => server.base !== "", "the OAuth fixture to listen", 30_000);
  return server;
}

/**
 * `tau mcp login NAME`, its printed address followed with a plain GET (the authorize endpoint
 * redirects back at once), after a request with a wrong state was turned away.
 */
async function login(w: Workspace, name: string): Promise<TauRun> {
  let address: string | undefined;
  const run = runTau(["mcp", "login", name], {
    env: w.env,
    cwd: w.project,
    onSpawn: (child) => createInterface({ input: child.stderr! }).on("line", (line) => (address ??= line.startsWith("http://") ? line : undefined)),
  });
  await waitFor(() => address !== undefined, "the sign-in address", 30_000);
  // A stranger's request to the loopback listener, with another state, is turned away and changes nothing.
  const callback = new URL(new URL(address!).searchParams.get("redirect_uri")!);
  expect(callback.hostname).toBe("127.0.0.1");
  callback.search = new URLSearchParams({ code: "planted", state: "not-the-one" }).toString();
  expect((await fetch(callback)).status).toBe(400);
  const page = await fetch(address!);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain("Signed in to the MCP server");
  return run;
}

/** The one sign-in file under the config root's secrets. */
function signInFile(w: Workspace): string {
  const dir = join(w.home, "config", "secrets");
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith("mcp-oauth-")) : [];
  expect(files).toHaveLength(1);
  return join(dir, files[0]!);
}
const storedAccessToken = (w: Workspace): string => (JSON.parse(readFileSync(signInFile(w), "utf8")) as { tokens: { access_token: string } }).tokens.access_token;

/** A `tau run` whose model calls `tool` once and then answers. */
async function callOnce(w: Workspace, tool: string): Promise<TauRun> {
  fake.enqueue(toolCallResponse([{ id: "call_1", name: tool, arguments: "{}" }]), textResponse("called it"));
  return runTau(["run", "-p", "call the tool"], { env: w.env, cwd: w.project });
}

describe("MCP sign-in", () => {
  it("[mcp.oauth.login-and-call] tau mcp login turns away a stranger's redirect, completes through the printed address and stores the tokens 0600; a scripted model then lists and calls the server's tool with them", async () => {
    const server = await oauthServer();
    const w = mcpWorkspace(cleanups, fake, { docs: { url: `${server.base}/mcp`, wait_at_start: true } });
    const signedIn = await login(w, "docs");
    expect(signedIn.code, signedIn.stderr).toBe(0);
    expect(signedIn.stdout).toContain("signed in to MCP server docs; it offers 1 tool");
    expect(statSync(signInFile(w)).mode & 0o777).toBe(0o600);
    const token = storedAccessToken(w);
    expect(server.grants).toEqual([{ grant: "authorization_code", access_token: token }]);
    expect(server.registered).toHaveLength(1);

    const r = await callOnce(w, "mcp__docs__whoami");
    expect(r.code, r.stderr).toBe(0);
    expect(toolsOf(fake.chatRequests[0]!)).toContain("mcp__docs__whoami");
    expect(toolMessage(fake.chatRequests[1]!, "call_1")).toContain("signed-in tool at /mcp");
    // Every request after the sign-in's first carried the token; no output or log holds it.
    expect(server.seen.slice(1).map((s) => s.authorization)).toEqual(server.seen.slice(1).map(() => `Bearer ${token}`));
    for (const text of [signedIn.stdout, signedIn.stderr, r.stdout, r.stderr, extensionsLog(w.home)]) expect(text).not.toContain(token.slice(3));
  }, 120_000);

  it("[mcp.oauth.refresh] an access token the server no longer takes is refreshed with the stored refresh token, stored again, and the call goes through", async () => {
    const server = await oauthServer();
    const w = mcpWorkspace(cleanups, fake, { docs: { url: `${server.base}/mcp`, wait_at_start: true } });
    expect((await login(w, "docs")).code).toBe(0);
    const first = storedAccessToken(w);
    await server.expire();
    const r = await callOnce(w, "mcp__docs__whoami");
    expect(r.code, r.stderr).toBe(0);
    expect(toolMessage(fake.chatRequests[1]!, "call_1")).toContain("signed-in tool at /mcp");
    expect(server.grants.map((g) => g.grant)).toEqual(["authorization_code", "refresh_token"]);
    const fresh = storedAccessToken(w);
    expect(fresh).not.toBe(first);
    expect(fresh).toBe(server.grants[1]!.access_token);
    expect(server.seen.at(-1)!.authorization).toBe(`Bearer ${fresh}`);
  }, 120_000);

  it("[mcp.oauth.refresh-refused] a refresh the authorization server refuses drops the stored tokens, and the server is failed naming tau mcp login", async () => {
    const server = await oauthServer();
    const w = mcpWorkspace(cleanups, fake, { docs: { url: `${server.base}/mcp`, wait_at_start: true } });
    expect((await login(w, "docs")).code).toBe(0);
    await server.expire("revoke");
    fake.enqueue(textResponse("still here"));
    const r = await runTau(["run", "-p", "hello"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    expect(extensionsLog(w.home)).toContain("mcp server docs: failed (could not start: it needs sign-in: run `tau mcp login docs`)");
    const stored = JSON.parse(readFileSync(signInFile(w), "utf8")) as { tokens?: unknown; client?: unknown };
    expect(stored.tokens).toBeUndefined();
    expect(stored.client).toBeDefined();
    expect(server.grants.map((g) => g.grant)).toEqual(["authorization_code"]);
  }, 120_000);

  it("[mcp.oauth.refresh-bounded] a refresh the authorization server never answers is ended by the server's start-up timeout: the server is failed and the session answers", async () => {
    const server = await oauthServer();
    const w = mcpWorkspace(cleanups, fake, { docs: { url: `${server.base}/mcp`, wait_at_start: true, startup_timeout_ms: 2_000 } });
    expect((await login(w, "docs")).code).toBe(0);
    await server.expire("hang-refresh");
    fake.enqueue(textResponse("still here"));
    const r = await runTau(["run", "-p", "hello"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("still here");
    expect(extensionsLog(w.home)).toContain("mcp server docs: failed (did not become ready within its start-up timeout (2000 ms))");
    expect(toolsOf(fake.chatRequests[0]!).filter((t) => t.startsWith("mcp__"))).toEqual([]);
  }, 120_000);

  it("[mcp.oauth.bound-to-url] a sign-in stored for one URL is never sent to another URL of the same server and authorization server", async () => {
    const server = await oauthServer();
    const w = mcpWorkspace(cleanups, fake, { docs: { url: `${server.base}/mcp`, wait_at_start: true }, other: { url: `${server.base}/other/mcp`, wait_at_start: true } });
    expect((await login(w, "docs")).code).toBe(0);
    const r = await callOnce(w, "mcp__docs__whoami");
    expect(r.code, r.stderr).toBe(0);
    expect(toolsOf(fake.chatRequests[0]!).filter((t) => t.startsWith("mcp__"))).toEqual(["mcp__docs__whoami"]);
    const other = server.seen.filter((s) => s.path === "/other/mcp");
    expect(other.length).toBeGreaterThan(0);
    expect(new Set(other.map((s) => s.authorization))).toEqual(new Set([null]));
    expect(extensionsLog(w.home)).toContain("mcp server other: failed (could not start: it needs sign-in: run `tau mcp login other`)");
  }, 120_000);

  it("[mcp.oauth.needs-login] a server that asks for a sign-in tau does not have is failed naming tau mcp login; nothing is registered or signed in, and the session answers", async () => {
    const server = await oauthServer();
    const w = mcpWorkspace(cleanups, fake, { docs: { url: `${server.base}/mcp`, wait_at_start: true } });
    fake.enqueue(textResponse("still here"));
    const r = await runTau(["run", "-p", "hello"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("still here");
    expect(extensionsLog(w.home)).toContain("mcp server docs: failed (could not start: it needs sign-in: run `tau mcp login docs`)");
    expect(server.grants).toEqual([]);
    expect(server.registered).toEqual([]);
    expect(existsSync(join(w.home, "config", "secrets"))).toBe(false);
  }, 120_000);

  it("[mcp.cli.login-logout] tau mcp login refuses an unknown server, a stdio server and a server that asks for no sign-in; tau mcp logout removes a sign-in", async () => {
    const server = await oauthServer();
    const w = mcpWorkspace(cleanups, fake, { docs: { url: `${server.base}/mcp` }, open: { url: `${server.base}/open/mcp` }, local: { command: "some-server" } });
    const tau = (args: string[]) => runTau(args, { env: w.env, cwd: w.project });
    const unknown = await tau(["mcp", "login", "nope"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.replace(/\s*\n\s*›\s*/g, " ")).toContain("no MCP server named nope is configured");
    const local = await tau(["mcp", "login", "local"]);
    expect(local.code).toBe(2);
    expect(local.stderr.replace(/\s*\n\s*›\s*/g, " ")).toContain("MCP server local is a local server (stdio): it has no sign-in");
    const open = await tau(["mcp", "login", "open"]);
    expect(open.code).not.toBe(0);
    expect(open.stderr).toContain("MCP server open did not ask for a sign-in: it answers without one (nothing was stored) [TAU-E0410]");

    expect((await login(w, "docs")).code).toBe(0);
    const file = signInFile(w);
    const out = await tau(["mcp", "logout", "docs"]);
    expect(out.stdout).toContain("signed out of MCP server docs");
    expect(existsSync(file)).toBe(false);
    expect((await tau(["mcp", "logout", "docs"])).stdout).toContain("MCP server docs has no sign-in stored");
  }, 120_000);
});
