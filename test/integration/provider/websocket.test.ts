// The chatgpt_ws family (SPEC-provider-websocket) against a loopback stand-in speaking WebSocket
// (the `ws` server) and the sign-in's token endpoint: the request frame and upgrade headers, a
// kept connection, the egress rules on the upgrade (a refused redirect, a proxy's tunnel) and on
// frames (the size bound), wrapped errors, quota pacing, token refresh and its file — and no token
// in any diagnostic or notice.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useEgressPolicy } from "../../support/e2e.js";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { connect, type AddressInfo, type Socket } from "node:net";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProviderCall } from "../../../handwritten/protocol/index.js";
import { createEgressPolicy, type EgressPolicy } from "../../../handwritten/extensions/provider/index.js";
import { ChatgptWsClient } from "../../../handwritten/extensions/provider/chatgpt-ws.js";
import { TokenSource, readTokens, writeTokens, type OAuthTokens } from "../../../handwritten/extensions/provider/oauth.js";
import type { RoundResult } from "../../../handwritten/extensions/provider/round.js";
import { FakeCodex, framesOf } from "../../support/fake-codex-ws.js";
import { replay } from "../../support/recorded-streams.js";
import { selfSignedCertificate } from "../../support/tls.js";
import { responsesStream } from "../../support/fake-responses.js";

const SECRET = "provider-cx-oauth";
let fake: FakeCodex;
let root: string;
let egress!: EgressPolicy;
let notices: string[];

beforeAll(async () => {
  fake = await FakeCodex.start();
});
afterAll(async () => {
  await fake.close();
});
useEgressPolicy((e) => (egress = e));
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "tau-ws-"));
  notices = [];
  fake.requests.length = 0;
  fake.upgrades.length = 0;
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function signIn(expiresInMs = 3600_000): OAuthTokens {
  const t = fake.issue();
  const tokens: OAuthTokens = { access_token: t.access_token, refresh_token: t.refresh_token, id_token: t.id_token, expires_at: Date.now() + expiresInMs, account_id: "acct-fake-1" };
  writeTokens(root, SECRET, tokens);
  return tokens;
}

function client(o: { maxFrameBytes?: number; maxQuotaWaitMs?: number; egress?: EgressPolicy } = {}): ChatgptWsClient {
  const tokens = new TokenSource(o.egress ?? egress, root, SECRET, "cx", fake.authUrl);
  return new ChatgptWsClient({
    baseUrl: fake.baseUrl,
    tokens,
    notice: (level, text) => notices.push(`${level}: ${text}`),
    ...(o.maxFrameBytes ? { transport: { maxFrameBytes: o.maxFrameBytes } } : {}),
    ...(o.maxQuotaWaitMs ? { maxQuotaWaitMs: o.maxQuotaWaitMs } : {}),
  });
}

const request = (text = "hello"): ProviderCall => ({ agent_id: "a", prompt_id: "p", round: 0, model: "gpt-fake", system: "You are tau.", messages: [{ role: "user", text }], tools: [] });
const answer = (text: string) => ({ frames: framesOf(responsesStream([{ type: "message", id: "m1", text }])) });

async function run(c: ChatgptWsClient, e: EgressPolicy = egress): Promise<RoundResult> {
  return c.run(request(), { egress: e, retry: { maxAttempts: 2, baseDelayMs: 1, random: () => 0 } });
}

/** Nothing a test can see holds a token of the sign-in file. */
function expectNoToken(tokens: OAuthTokens, ...texts: unknown[]): void {
  const all = JSON.stringify([texts, notices]);
  for (const t of [tokens.access_token, tokens.refresh_token, tokens.id_token ?? "x-none"]) expect(all).not.toContain(t);
}

describe("the chatgpt_ws family", () => {
  it("[provider.ws.stream] a response.create frame carries the Responses body; the upgrade carries the bearer, the beta and the account; text and a tool call come back", async () => {
    const tokens = signIn();
    const c = client();
    fake.enqueue({ frames: framesOf(responsesStream([{ type: "function_call", id: "fc1", call_id: "call_1", name: "read", arguments: '{"path":"a"}' }])) });
    const r = await run(c);
    c.close();
    expect(r.status).toBe("finished");
    if (r.status !== "finished") return;
    expect(r.report.tool_calls).toEqual([{ call_id: "call_1", tool: "read", arguments_json: '{"path":"a"}' }]);
    expect(r.report.finish_reason).toBe("tool_calls");
    expect(fake.requests[0]?.body).toMatchObject({ type: "response.create", model: "gpt-fake", instructions: "You are tau.", stream: true, store: false });
    const h = fake.upgrades[0]?.headers ?? {};
    expect(fake.upgrades[0]?.url).toBe("/backend-api/codex/responses");
    expect(h.authorization).toBe(`Bearer ${tokens.access_token}`);
    expect(h["openai-beta"]).toBe("responses_websockets=2026-02-06");
    expect(h["chatgpt-account-id"]).toBe("acct-fake-1");
    expect(notices).toEqual([expect.stringMatching(/^info: connected to ws:\/\/127\.0\.0\.1:\d+\/backend-api\/codex\/responses$/)]);
    expectNoToken(tokens, r);
  });

  it("[provider.ws.recorded-streams] streams recorded from Responses API servers, one event a frame, are read as over HTTP; a connection closed before response.completed is no answer", async () => {
    signIn();
    const c = client();
    const frames = (file: string) => framesOf(replay(`recorded-responses/${file}`)).filter((f) => f !== "[DONE]");
    fake.enqueue({ frames: frames("github-copilot-id-rotation.sse") }, { frames: frames("lmstudio-reasoning-tool-call.sse") }, { frames: frames("openai-error-insufficient-quota.sse") });
    const copilot = await run(c);
    expect(copilot.status === "finished" && copilot.report).toMatchObject({
      text: expect.stringMatching(/^There are \*\*3\*\* letter .*positions \*\*3, 8, and 9\*\*\.$/s),
      reasoning: "**Counting character occurrences**",
      finish_reason: "stop",
      usage: { input_tokens: 19, output_tokens: 105, cache_read_tokens: 0, reasoning_tokens: 44 },
    });
    const lmstudio = await run(c);
    expect(lmstudio.status === "finished" && lmstudio.report).toMatchObject({
      text: "I'll get the current weather information for San Francisco for you.",
      tool_calls: [{ call_id: "call_2025306790300011", tool: "weather", arguments_json: '{"location":"San Francisco"}' }],
      finish_reason: "tool_calls",
    });
    const quota = await run(c);
    expect(quota.status === "failed" && quota.report).toMatchObject({ error_class: "rate_limited", diagnostic: expect.stringContaining("code=insufficient_quota") });
    fake.enqueue({ frames: frames("deepseek-reasoning-text.sse").filter((f) => !f.includes('"type":"response.completed"')), closeWith: 1000 });
    const cut = await run(c);
    c.close();
    expect(cut.status === "failed" && cut.report).toMatchObject({ error_class: "network", diagnostic: expect.stringContaining("closed before the response completed") });
  });

  it("[provider.ws.reuse] the connection is kept for the next request; one the server let go is reopened at no cost", async () => {
    signIn();
    const c = client();
    fake.enqueue(answer("one"), answer("two"), answer("three"));
    const before = fake.connections;
    expect((await run(c)).status).toBe("finished");
    expect((await run(c)).status).toBe("finished");
    expect(fake.connections - before).toBe(1);
    fake.dropConnections();
    const third = await run(c);
    c.close();
    expect(third.status === "finished" && third.report.text).toBe("three");
    expect(fake.connections - before).toBe(2);
    expect(third.attempts).toBe(1); // no retry was spent on the dead connection
  });

  it("[provider.ws.no-redirect] a redirect answering the upgrade is refused, not followed", async () => {
    const tokens = signIn();
    const c = client();
    fake.enqueueUpgrade({ kind: "redirect", location: "http://127.0.0.1:9/elsewhere" });
    const r = await run(c);
    c.close();
    expect(r.status).toBe("failed");
    expect(r.report).toMatchObject({ error_class: "invalid_request", diagnostic: expect.stringContaining("redirect not followed (HTTP 302)") });
    expect(fake.upgrades).toHaveLength(1);
    expectNoToken(tokens, r);
  });

  it("[provider.ws.frame-bound] a frame over the bound fails the round as a protocol error, unretried; a silence over the idle bound is a timeout", async () => {
    signIn();
    const c = client({ maxFrameBytes: 1024 });
    fake.enqueue({ frames: [JSON.stringify({ type: "response.output_text.delta", output_index: 0, delta: "x".repeat(4096) })] });
    const r = await run(c);
    c.close();
    expect(r.report).toMatchObject({ error_class: "protocol", diagnostic: expect.stringContaining("larger than 1024 bytes") });
    expect(r.attempts).toBe(1);
    // A silence longer than the idle bound ends the round as a timeout.
    const c2 = client();
    fake.enqueue({ frames: [JSON.stringify({ type: "response.created", response: { id: "r", status: "in_progress" } })] });
    const silent = await c2.run(request(), { egress, retry: { maxAttempts: 1 }, timeouts: { idleMs: 200 } });
    c2.close();
    expect(silent.report).toMatchObject({ error_class: "timeout", diagnostic: expect.stringContaining("TAU_EGRESS_BODY_TIMEOUT") });
  });

  it("[provider.ws.proxy] the upgrade goes through the configured proxy's tunnel", async () => {
    signIn();
    const connects: string[] = [];
    const sockets = new Set<Socket>();
    const proxy = createServer((_req, res) => res.writeHead(502).end());
    proxy.on("connect", (req, clientSocket: Socket) => {
      connects.push(req.url ?? "");
      const [host, port] = (req.url ?? "").split(":");
      const up = connect(Number(port), host ?? "127.0.0.1", () => {
        clientSocket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        up.pipe(clientSocket);
        clientSocket.pipe(up);
      });
      sockets.add(up).add(clientSocket);
      up.on("error", () => clientSocket.destroy());
      clientSocket.on("error", () => up.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    const viaProxy = createEgressPolicy({ env: { HTTP_PROXY: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` } });
    try {
      const c = client({ egress: viaProxy });
      fake.enqueue(answer("via proxy"));
      const r = await run(c, viaProxy);
      c.close();
      expect(r.status === "finished" && r.report.text).toBe("via proxy");
      expect(connects).toEqual([`127.0.0.1:${fake.port}`]);
    } finally {
      await viaProxy.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });

  it("[provider.ws.tls] wss verifies the server's certificate whatever NODE_TLS_REJECT_UNAUTHORIZED says; a deferred extra CA is trusted", async () => {
    const pki = selfSignedCertificate();
    const secure = await FakeCodex.start({ tls: { key: pki.key, cert: pki.cert } });
    const saved = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    const plain = createEgressPolicy({ env: {}, extraCaFile: pki.dir + "/none.pem" });
    const trusting = createEgressPolicy({ env: {}, extraCaFile: pki.certFile });
    const t = secure.issue();
    writeTokens(root, SECRET, { access_token: t.access_token, refresh_token: t.refresh_token, expires_at: Date.now() + 3600_000 });
    const on = (e: EgressPolicy) => new ChatgptWsClient({ baseUrl: secure.baseUrl, tokens: new TokenSource(e, root, SECRET, "cx", secure.authUrl), notice: (l, text) => notices.push(`${l}: ${text}`) });
    const warnings = process.listeners("warning");
    process.removeAllListeners("warning"); // node warns about the missing extra CA file and the variable
    try {
      process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
      const c = on(plain);
      const refused = await run(c, plain);
      c.close();
      expect(refused.report).toMatchObject({ error_class: "network", diagnostic: expect.stringContaining("TLS") });
      expect(refused.attempts).toBe(1);
      expect(secure.requests).toHaveLength(0);
      const c2 = on(trusting);
      secure.enqueue(answer("over wss"));
      const ok = await run(c2, trusting);
      c2.close();
      expect(ok.status === "finished" && ok.report.text).toBe("over wss");
      expect(secure.upgrades).toHaveLength(1);
    } finally {
      if (saved === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = saved;
      for (const w of warnings) process.on("warning", w);
      await plain.close();
      await trusting.close();
      await secure.close();
      pki.dispose();
    }
  });

  it("[provider.ws.errors] a wrapped error event is classified by its status; a usage limit is not retried past the cap and holds the next request back; a close before completion is retried on a new connection", async () => {
    const tokens = signIn();
    const c = client();
    fake.enqueue({ frames: [JSON.stringify({ type: "error", status: 400, error: { type: "invalid_request_error", code: "bad_thing", message: "no" } })] });
    const bad = await run(c);
    expect(bad.report).toMatchObject({ error_class: "invalid_request", diagnostic: expect.stringContaining("code=bad_thing") });
    fake.enqueue({ frames: [JSON.stringify({ type: "error", status: 429, error: { type: "usage_limit_reached", message: "limit", resets_in_seconds: 7200 } })] });
    const limited = await run(c);
    expect(limited.report).toMatchObject({ error_class: "rate_limited" });
    expect(limited.attempts).toBe(1);
    // The usage limit is remembered: the next request is refused unsent, naming the reset.
    const sent = fake.requests.length;
    const paced = await run(c);
    c.close();
    expect(paced.report).toMatchObject({ error_class: "rate_limited", diagnostic: expect.stringMatching(/^quota codex\.usage_limit at 100% \(resets in \d+ s\): not sent/) });
    expect(fake.requests.length).toBe(sent);
    // A close before the response completed, nothing streamed yet: retried on a new connection.
    const c2 = client();
    const created = JSON.stringify({ type: "response.created", response: { id: "r", status: "in_progress" } });
    fake.enqueue({ frames: [created], closeWith: 1011 }, answer("second try"));
    const before = fake.connections;
    const closed = await run(c2);
    c2.close();
    expect(closed.status === "finished" && closed.report.text).toBe("second try");
    expect(closed.attempts).toBe(2);
    expect(fake.connections - before).toBe(2);
    expect(notices.some((n) => /^info: retrying ws:\/\/127\.0\.0\.1:\d+\/backend-api\/codex\/responses in \d+ ms \(network\)$/.test(n))).toBe(true);
    expectNoToken(tokens, bad, limited, closed);
  });

  it("[provider.ws.quota-pacing] an exhausted window makes the next request wait for its reset with a notice; one resetting past the bound is refused unsent", async () => {
    signIn();
    const c = client({ maxQuotaWaitMs: 60_000 });
    const resetAt = Math.ceil(Date.now() / 1000) + 2;
    const limits = { type: "codex.rate_limits", rate_limits: { primary: { used_percent: 100, window_minutes: 300, reset_at: resetAt } } };
    fake.enqueue({ frames: [JSON.stringify(limits), ...answer("spent it all").frames] }, answer("after the reset"));
    expect((await run(c)).status).toBe("finished");
    expect(notices.some((n) => /^warning: quota codex\.primary at 100%/.test(n))).toBe(true);
    const second = await run(c);
    expect(second.status === "finished" && second.report.text).toBe("after the reset");
    expect(notices.some((n) => /^warning: quota codex\.primary at 100% \(resets in \d+ s\): waiting \d+ s before sending$/.test(n))).toBe(true);
    expect(Date.now()).toBeGreaterThanOrEqual(resetAt * 1000); // it went only after the reset
    // A window that resets an hour from now: refused at once, nothing sent.
    c.quota([{ name: "codex.secondary", usedPercent: 100, resetsAtMs: Date.now() + 3600_000 }]);
    const sent = fake.requests.length;
    const refused = await run(c);
    c.close();
    expect(refused.report).toMatchObject({ error_class: "rate_limited", diagnostic: expect.stringContaining("codex.secondary at 100%") });
    expect(fake.requests.length).toBe(sent);
  });
});

describe("the sign-in's tokens", () => {
  it("[provider.oauth.refresh] an expired access token is refreshed before the request and written back 0600; a refused one is refreshed once", async () => {
    const old = signIn(-1000); // expired
    const c = client();
    fake.enqueue(answer("fresh"));
    const r = await run(c);
    expect(r.status === "finished" && r.report.text).toBe("fresh");
    const now = readTokens(root, SECRET) as OAuthTokens;
    expect(now.access_token).not.toBe(old.access_token);
    expect(statSync(join(root, "secrets", SECRET)).mode & 0o777).toBe(0o600);
    expect(fake.upgrades.at(-1)?.headers.authorization).toBe(`Bearer ${now.access_token}`);
    // The server stops accepting the access token before it expires: one refresh, then the answer.
    fake.valid.delete(now.access_token);
    fake.dropConnections();
    fake.enqueue(answer("after a refusal"));
    const again = await run(c);
    c.close();
    expect(again.status === "finished" && again.report.text).toBe("after a refusal");
    expect((readTokens(root, SECRET) as OAuthTokens).access_token).not.toBe(now.access_token);
    expectNoToken(old, r, again);
    expectNoToken(now, r, again);
  });

  it("[provider.oauth.refused] a refused refresh fails the round as authentication, naming `tau provider login`; never signed in says so", async () => {
    const c = client();
    const none = await run(c);
    expect(none.report).toMatchObject({ error_class: "authentication", diagnostic: "not signed in: run `tau provider login cx`" });
    const t = signIn(-1000);
    fake.revoked.add(t.refresh_token);
    const r = await run(c);
    c.close();
    expect(r.report).toMatchObject({ error_class: "authentication", diagnostic: expect.stringContaining("tau provider login") });
    expectNoToken(t, none, r);
  });
});
