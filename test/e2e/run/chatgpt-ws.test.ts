// `tau provider add --api chatgpt_ws`, `tau provider login` and `tau run` against a loopback
// stand-in of the ChatGPT WebSocket endpoint and its sign-in (SPEC-provider-websocket), through the
// real CLI, daemon, provider and shell extensions: the device code and browser sign-ins write a 0600 token file;
// a run makes a tool call and answers over one kept WebSocket connection; an expired token is
// refreshed and written back; no token is in any output, journal, log or runtime file.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { TAU_BIN } from "../../support/paths.js";
import { waitFor } from "../../support/wait.js";
import { runTau } from "../../support/run-tau.js";
import { waitForOwnedDaemons } from "../../support/daemon.js";
import { attachUi, daemonIn, useCleanups, workspaceIn } from "../../support/e2e.js";
import { FakeCodex, framesOf } from "../../support/fake-codex-ws.js";
import { responsesStream } from "../../support/fake-responses.js";
import { exitCodeOf } from "../../../handwritten/cli/errors.js";

const cleanups = useCleanups();
let fake!: FakeCodex;
beforeEach(async () => {
  fake = await FakeCodex.start();
});
afterEach(async () => {
  await fake.close();
});

const NO_OPENAI = { OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined, OPENAI_MODEL: undefined, TAU_SECRET_OPENAI_API_KEY: undefined };
const mode = (p: string) => statSync(p).mode & 0o777;
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name));

describe("tau on the chatgpt_ws family", () => {
  it("[provider.oauth.device-login] `tau provider login` runs the device code sign-in and writes a 0600 token file; no token is printed", async () => {
    const w = workspaceIn(cleanups, "debug_log:\n  enable: true\n");
    const env = { ...w.env, ...NO_OPENAI };
    const add = await runTau(["provider", "add", "cx", "--api", "chatgpt_ws", "--base-url", fake.baseUrl, "--auth-url", fake.authUrl, "--model", "gpt-fake"], { env });
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toContain("sign in with: tau provider login cx");
    const before = await runTau(["provider", "list", "--json"], { env });
    expect(JSON.parse(before.stdout)).toEqual([{ name: "cx", base_url: fake.baseUrl, models: ["gpt-fake"], key: "not signed in (tau provider login cx)" }]);
    fake.pendingPolls = 1; // the user enters the code after the first poll
    const login = await runTau(["provider", "login", "cx"], { env });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain(`open ${fake.authUrl}/codex/device in a browser and enter the code ABCD-1234`);
    const file = join(w.home, "config", "secrets", "provider-cx-oauth");
    expect(login.stdout).toBe(`signed in; wrote ${file} (mode 0600)\n`);
    expect(mode(file)).toBe(0o600);
    const tokens = JSON.parse(readFileSync(file, "utf8")) as { access_token: string; refresh_token: string; id_token: string; account_id: string };
    expect(fake.valid.has(tokens.access_token)).toBe(true);
    expect(tokens.account_id).toBe("acct-fake-1");
    for (const t of [tokens.access_token, tokens.refresh_token, tokens.id_token]) expect(login.stdout + login.stderr + add.stdout + add.stderr).not.toContain(t);
    const after = await runTau(["provider", "list", "--json"], { env });
    expect(JSON.parse(after.stdout)[0].key).toBe("secrets/provider-cx-oauth");
    expect(after.stdout).not.toContain(tokens.access_token);
    expect(fake.oauthCalls.map((c) => c.path)).toEqual(["/api/accounts/deviceauth/usercode", "/api/accounts/deviceauth/token", "/api/accounts/deviceauth/token", "/oauth/token"]);
    // `tau provider remove` removes the sign-in file with the profile.
    const removed = await runTau(["provider", "remove", "cx"], { env });
    expect(removed.code).toBe(0);
    expect(existsSync(file)).toBe(false);
    // A sign-in the issuer does not offer exits with its code and writes nothing.
    const again = await runTau(["provider", "add", "cx", "--api", "chatgpt_ws", "--base-url", fake.baseUrl, "--auth-url", `${fake.authUrl}/nowhere`, "--model", "gpt-fake"], { env });
    expect(again.code, again.stderr).toBe(0);
    const refused = await runTau(["provider", "login", "cx"], { env });
    expect(refused.code).toBe(exitCodeOf("TAU-E0407"));
    expect(refused.stderr).toBe("tau: provider login: this server does not offer device code sign-in (HTTP 404); the sign-in file was not written [TAU-E0407]\n");
    expect(existsSync(file)).toBe(false);
  });

  it("[provider.oauth.browser-login] `tau provider login --browser` takes the issuer's redirect on the loopback with PKCE; a wrong state is ignored, a refusal writes nothing", async () => {
    const w = workspaceIn(cleanups);
    const env = { ...process.env, ...w.env, ...NO_OPENAI, DISPLAY: undefined, WAYLAND_DISPLAY: undefined };
    const add = await runTau(["provider", "add", "cx", "--api", "chatgpt_ws", "--base-url", fake.baseUrl, "--auth-url", fake.authUrl, "--model", "gpt-fake"], { env });
    expect(add.code, add.stderr).toBe(0);
    const file = join(w.home, "config", "secrets", "provider-cx-oauth");
    // The user's side: the address tau shows, opened by the test as a browser would after signing in.
    const login = () => {
      const child = spawn(process.execPath, [TAU_BIN, "provider", "login", "cx", "--browser", "--port", "0", "--no-open"], { env, stdio: ["ignore", "pipe", "pipe"] });
      const out = { stdout: "", stderr: "" };
      child.stdout.setEncoding("utf8").on("data", (d: string) => (out.stdout += d));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (out.stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
      const address = async (): Promise<URL> => {
        await waitFor(() => /\nhttp\S+\n/.test(out.stderr), "the sign-in address", 20_000);
        return new URL((/\n(http\S+)\n/.exec(out.stderr) as RegExpExecArray)[1] as string);
      };
      return { out, exited, address };
    };
    const visit = async (redirect: string, params: Record<string, string>, path = "/auth/callback") => {
      const u = new URL(redirect);
      const at = new URL(`http://127.0.0.1:${u.port}${path}`);
      for (const [k, v] of Object.entries(params)) at.searchParams.set(k, v);
      const res = await fetch(at);
      return { status: res.status, text: await res.text() };
    };

    const a = login();
    const url = await a.address();
    expect(url.origin + url.pathname).toBe(`${fake.authUrl}/oauth/authorize`);
    const q = Object.fromEntries(url.searchParams);
    expect(q).toMatchObject({ response_type: "code", client_id: expect.any(String), code_challenge_method: "S256", scope: expect.stringContaining("offline_access") });
    expect(q.redirect_uri).toMatch(/^http:\/\/localhost:\d+\/auth\/callback$/);
    expect(q.state?.length).toBeGreaterThanOrEqual(40);
    // Another local process cannot end or steer the sign-in: a wrong state, no state, another path.
    expect((await visit(q.redirect_uri as string, { code: "stolen", state: "x".repeat((q.state as string).length) })).status).toBe(400);
    expect((await visit(q.redirect_uri as string, { code: "stolen" })).status).toBe(400);
    expect((await visit(q.redirect_uri as string, { code: "stolen", state: q.state as string }, "/elsewhere")).status).toBe(404);
    // A request target no URL parser takes is answered, and the sign-in keeps waiting.
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(q.redirect_uri as string).port), "127.0.0.1", () => socket.end("GET http://[ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
      let got = "";
      socket.setEncoding("utf8").on("data", (d: string) => (got += d));
      socket.on("close", () => resolve(got));
      socket.on("error", reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 404 /);
    expect(existsSync(file)).toBe(false);
    const done = await visit(q.redirect_uri as string, { code: "browser-code-1", state: q.state as string });
    expect(done).toMatchObject({ status: 200, text: expect.stringContaining("Signed in to tau") });
    expect(await a.exited, a.out.stderr).toBe(0);
    expect(a.out.stdout).toBe(`signed in; wrote ${file} (mode 0600)\n`);
    expect(mode(file)).toBe(0o600);
    const tokens = JSON.parse(readFileSync(file, "utf8")) as { access_token: string; refresh_token: string; id_token: string };
    expect(fake.valid.has(tokens.access_token)).toBe(true);
    for (const t of [tokens.access_token, tokens.refresh_token, tokens.id_token]) expect(a.out.stdout + a.out.stderr).not.toContain(t);
    // The code was traded with the verifier whose S256 hash the authorization page was given.
    expect(fake.oauthCalls.map((c) => c.path)).toEqual(["/oauth/token"]);
    const form = new URLSearchParams(fake.oauthCalls[0]?.body);
    expect(Object.fromEntries(form)).toMatchObject({ grant_type: "authorization_code", code: "browser-code-1", redirect_uri: q.redirect_uri, client_id: q.client_id });
    expect(createHash("sha256").update(form.get("code_verifier") ?? "").digest("base64url")).toBe(q.code_challenge);

    // The issuer's refusal (with the right state) ends the sign-in: TAU-E0407, nothing written.
    const removed = await runTau(["provider", "remove", "cx"], { env });
    expect(removed.code).toBe(0);
    expect((await runTau(["provider", "add", "cx", "--api", "chatgpt_ws", "--base-url", fake.baseUrl, "--auth-url", fake.authUrl, "--model", "gpt-fake"], { env })).code).toBe(0);
    const b = login();
    const refusedAt = Object.fromEntries((await b.address()).searchParams);
    expect(refusedAt.state).not.toBe(q.state);
    expect((await visit(refusedAt.redirect_uri as string, { error: "access_denied", state: refusedAt.state as string })).status).toBe(400);
    expect(await b.exited).toBe(exitCodeOf("TAU-E0407"));
    expect(b.out.stderr).toContain("tau: provider login: the issuer refused the sign-in (access_denied); the sign-in file was not written [TAU-E0407]");
    expect(existsSync(file)).toBe(false);
  });

  it("[provider.ws.run-e2e] a tool call and an answer over one kept WebSocket; an expired token is refreshed and written back; no token anywhere", async () => {
    const w = workspaceIn(cleanups, `debug_log:\n  enable: true\nproviders:\n  cx:\n    api: chatgpt_ws\n    base_url: ${fake.baseUrl}\n    auth_url: ${fake.authUrl}\n    models: [gpt-fake]\nmodel: cx/gpt-fake\n`);
    const env = { ...w.env, ...NO_OPENAI };
    writeFileSync(join(w.project, "notes.txt"), "the answer is 42\n");
    // Signed in earlier; the access token has expired since.
    const first = fake.issue();
    const file = join(w.home, "config", "secrets", "provider-cx-oauth");
    mkdirSync(join(w.home, "config", "secrets"), { recursive: true, mode: 0o700 });
    writeFileSync(file, JSON.stringify({ access_token: first.access_token, refresh_token: first.refresh_token, id_token: first.id_token, expires_at: Date.now() - 1000, account_id: "acct-fake-1" }), { mode: 0o600 });
    fake.enqueue(
      { frames: framesOf(responsesStream([{ type: "function_call", id: "fc_1", call_id: "call_read_1", name: "read", arguments: '{"path":"notes.txt"}' }], { deltaChars: 5 })) },
      { frames: [JSON.stringify({ type: "codex.rate_limits", rate_limits: { primary: { used_percent: 12, window_minutes: 300, reset_at: Math.floor(Date.now() / 1000) + 3600 } } }), ...framesOf(responsesStream([{ type: "message", id: "msg_2", text: "The notes say 42." }], { usage: { input_tokens: 700, output_tokens: 8 } }))] },
    );
    const r = await runTau(["run", "--json", "-p", "what do the notes say?"], { env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { event?: string; data?: Record<string, unknown> });
    const finished = lines.filter((l) => l.event === "provider.response_finished").map((l) => l.data);
    expect(finished).toEqual([expect.objectContaining({ finish_reason: "tool_calls" }), expect.objectContaining({ finish_reason: "stop", text: "The notes say 42." })]);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests.map((q) => q.connection)).toEqual([fake.connections, fake.connections]); // one kept connection
    const second = fake.requests[1]?.body as { type: string; input: Array<{ type?: string; call_id?: string; output?: string }> };
    expect(second.type).toBe("response.create");
    expect(second.input.at(-1)).toMatchObject({ type: "function_call_output", call_id: "call_read_1", output: expect.stringContaining("the answer is 42") });
    // Refreshed before the first request, and written back 0600.
    const now = JSON.parse(readFileSync(file, "utf8")) as { access_token: string; refresh_token: string };
    expect(now.access_token).not.toBe(first.access_token);
    expect(mode(file)).toBe(0o600);
    expect(fake.upgrades.map((u) => u.headers.authorization)).toEqual([`Bearer ${now.access_token}`]);
    // No token in the run's output, nor in any journal, log or runtime file.
    waitForOwnedDaemons(w.home);
    const tokens = [first.access_token, first.refresh_token, first.id_token, now.access_token, now.refresh_token];
    for (const t of tokens) expect(r.stdout + r.stderr).not.toContain(t);
    const files = [...filesUnder(join(w.home, "state")), ...filesUnder(join(w.home, "runtime"))];
    expect(files.some((f) => f.endsWith("events.jsonl"))).toBe(true);
    for (const f of files) for (const t of tokens) expect(readFileSync(f).includes(t), f).toBe(false);
  });

  it("[provider.ws.lifecycle-notice] the connection's lifecycle reaches an attached UI as a credential-free notice: the endpoint and nothing else", async () => {
    const w = workspaceIn(cleanups, `providers:\n  cx:\n    api: chatgpt_ws\n    base_url: ${fake.baseUrl}\n    auth_url: ${fake.authUrl}\n    models: [gpt-fake]\nmodel: cx/gpt-fake\n`);
    const env = { ...w.env, ...NO_OPENAI };
    const first = fake.issue();
    mkdirSync(join(w.home, "config", "secrets"), { recursive: true, mode: 0o700 });
    writeFileSync(join(w.home, "config", "secrets", "provider-cx-oauth"), JSON.stringify({ access_token: first.access_token, refresh_token: first.refresh_token, id_token: first.id_token, expires_at: Date.now() + 3_600_000, account_id: "acct-fake-1" }), { mode: 0o600 });
    fake.enqueue({ frames: framesOf(responsesStream([{ type: "message", id: "msg_1", text: "hi" }])) });
    const d = await daemonIn(cleanups, env, ["--project-root", w.project]);
    const c = await attachUi(cleanups, d);
    const agent = await c.createAgent("r1");
    c.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text: "hello" });
    await c.next((m) => m.message === "deliver" && m.payload.event.name === "agent.outer_turn_finished", 30_000, "the turn's end");
    const notices = c.deliveries().filter((x) => x.name === "extension.notice").map((x) => String(x.data.text));
    expect(notices).toContain(`chatgpt_ws: connected to ws://127.0.0.1:${fake.port}/backend-api/codex/responses`);
    for (const n of notices) for (const t of [first.access_token, first.refresh_token, first.id_token]) expect(n).not.toContain(t);
  });
});
