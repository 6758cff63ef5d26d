// The egress policy against loopback stand-ins: a recording HTTP proxy, redirecting servers and a
// self-signed TLS server.
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { Server } from "node:http";
import { connect, createServer as createNetServer } from "node:net";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderCall } from "../../../handwritten/protocol/index.js";
import {
  EgressConfigError,
  EgressRedirectError,
  createEgressPolicy,
  streamChatCompletion,
} from "../../../handwritten/extensions/provider/index.js";
import type { EgressEnv } from "../../../handwritten/extensions/provider/index.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";
import { selfSignedCertificate, type SelfSigned } from "../../support/tls.js";
import { waitFor } from "../../support/wait.js";

interface ProxyLog {
  connects: string[];
  /** The Proxy-Authorization header of each CONNECT ("" when absent). */
  authorizations: string[];
  requests: string[];
}

/** A tiny forward proxy: CONNECT tunnels and absolute-form requests, both recorded. */
async function startProxy(options: { refuseConnect?: boolean; silent?: boolean } = {}): Promise<{ url: string; log: ProxyLog; close: () => Promise<void> }> {
  const log: ProxyLog = { connects: [], authorizations: [], requests: [] };
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    log.requests.push(`${req.method} ${req.url}`);
    res.writeHead(502).end();
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.on("connect", (req, client: Socket, head: Buffer) => {
    log.connects.push(req.url ?? "");
    log.authorizations.push(req.headers["proxy-authorization"] ?? "");
    if (options.silent) return; // never answers: the client's connect bound must end it
    if (options.refuseConnect) {
      client.end("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n");
      return;
    }
    const [host, port] = (req.url ?? "").split(":");
    const upstream = connect(Number(port), host ?? "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function request(): ProviderCall {
  return { agent_id: "a", prompt_id: "p", round: 0, model: "m", system: "", messages: [{ role: "user", text: "hi" }], tools: [] };
}

async function runThrough(env: EgressEnv, baseUrl: string, options: { extraCaFile?: string; connectTimeoutMs?: number } = {}) {
  const egress = createEgressPolicy({ env, connectTimeoutMs: 2_000, ...options });
  try {
    return await streamChatCompletion(request(), { baseUrl, apiKey: "k-123456" }, {
      egress,
      retry: { maxAttempts: 2, baseDelayMs: 1, random: () => 0 },
    });
  } finally {
    await egress.close();
  }
}

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await FakeOpenAI.start();
});
afterAll(async () => {
  await fake.close();
});

describe("proxies", () => {
  it("[provider.egress.proxy-no-direct-fallback] a configured HTTP proxy carries the request", async () => {
    const proxy = await startProxy();
    try {
      fake.requests.length = 0;
      fake.enqueue(textResponse("via proxy"));
      const result = await runThrough({ HTTP_PROXY: proxy.url }, fake.baseUrl);
      expect(result.status).toBe("finished");
      expect(result.status === "finished" && result.report.text).toBe("via proxy");
      expect(proxy.log.connects).toEqual([`127.0.0.1:${fake.port}`]);
      expect(fake.requests).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it("[provider.egress.proxy-no-direct-fallback] the lowercase variable wins over the uppercase one", async () => {
    const proxy = await startProxy();
    try {
      fake.enqueue(textResponse("lower"));
      const result = await runThrough({ http_proxy: proxy.url, HTTP_PROXY: "http://127.0.0.1:9" }, fake.baseUrl);
      expect(result.status).toBe("finished");
      expect(proxy.log.connects).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it("[provider.egress.proxy-no-direct-fallback] NO_PROXY bypasses the proxy", async () => {
    const proxy = await startProxy();
    try {
      fake.requests.length = 0;
      fake.enqueue(textResponse("direct"), textResponse("direct2"));
      const r1 = await runThrough({ HTTP_PROXY: proxy.url, NO_PROXY: "example.com, 127.0.0.1" }, fake.baseUrl);
      expect(r1.status).toBe("finished");
      const r2 = await runThrough({ https_proxy: proxy.url, HTTP_PROXY: proxy.url, no_proxy: "*" }, fake.baseUrl);
      expect(r2.status).toBe("finished");
      expect(proxy.log.connects).toEqual([]);
      expect(fake.requests).toHaveLength(2);
    } finally {
      await proxy.close();
    }
  });

  it("[provider.egress.proxy-no-direct-fallback] a proxy that is down fails the request; nothing reaches the origin directly", async () => {
    const dead = await startProxy();
    const deadUrl = dead.url;
    await dead.close();
    fake.requests.length = 0;
    const result = await runThrough({ HTTP_PROXY: deadUrl }, fake.baseUrl);
    expect(result.status).toBe("failed");
    expect(result.status === "failed" && result.report.error_class).toBe("network");
    expect(fake.requests).toHaveLength(0);
  });

  it("[provider.egress.proxy-no-direct-fallback] a proxy that refuses the tunnel fails the request; nothing reaches the origin", async () => {
    const proxy = await startProxy({ refuseConnect: true });
    try {
      fake.requests.length = 0;
      const result = await runThrough({ HTTP_PROXY: proxy.url }, fake.baseUrl);
      expect(result.status).toBe("failed");
      expect(proxy.log.connects.length).toBeGreaterThanOrEqual(1);
      expect(fake.requests).toHaveLength(0);
    } finally {
      await proxy.close();
    }
  });

  it("[provider.egress.proxy-no-direct-fallback] a proxy that never answers the tunnel is a timeout within the connect bound; nothing reaches the origin", async () => {
    const proxy = await startProxy({ silent: true });
    try {
      fake.requests.length = 0;
      const started = Date.now();
      const result = await runThrough({ HTTP_PROXY: proxy.url }, fake.baseUrl, { connectTimeoutMs: 200 });
      expect(result.status === "failed" && result.report).toMatchObject({ error_class: "timeout", diagnostic: expect.stringContaining("TAU_EGRESS_CONNECT_TIMEOUT") });
      expect(Date.now() - started).toBeLessThan(5_000); // two attempts of 200 ms, not the default 10 s
      expect(proxy.log.connects).toHaveLength(2);
      expect(fake.requests).toHaveLength(0);
    } finally {
      await proxy.close();
    }
  });

  it("[provider.egress.proxy-no-direct-fallback] credentials in the proxy URL are sent as Basic proxy authorization", async () => {
    const proxy = await startProxy();
    try {
      fake.enqueue(textResponse("authorized"));
      const withCredentials = proxy.url.replace("http://", "http://us%40er:p%3Ass@");
      const result = await runThrough({ HTTP_PROXY: withCredentials }, fake.baseUrl);
      expect(result.status === "finished" && result.report.text).toBe("authorized");
      expect(proxy.log.authorizations).toEqual([`Basic ${Buffer.from("us@er:p:ss").toString("base64")}`]);
    } finally {
      await proxy.close();
    }
  });

  it("[provider.egress.proxy-no-direct-fallback] an unusable proxy variable is a configuration error, never a direct connection", () => {
    expect(() => createEgressPolicy({ env: { HTTPS_PROXY: "socks5://127.0.0.1:1080" } })).toThrow(EgressConfigError);
    expect(() => createEgressPolicy({ env: { http_proxy: "http://[::1" } })).toThrow(EgressConfigError);
  });
});

describe("redirects", () => {
  async function redirector(target: string): Promise<{ url: string; close: () => Promise<void> }> {
    const server = createServer((_req, res) => {
      res.writeHead(307, { location: target }).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      url,
      close: async () => {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      },
    };
  }

  it("[provider.egress.no-redirects] a 3xx from the provider is a failure and the target is never contacted", async () => {
    const r = await redirector(`${fake.baseUrl}/chat/completions`);
    try {
      fake.requests.length = 0;
      const result = await runThrough({}, `${r.url}/v1`);
      expect(result.status).toBe("failed");
      expect(result.status === "failed" && result.report.error_class).toBe("invalid_request");
      expect(result.status === "failed" && result.report.diagnostic).toContain("redirect not followed");
      expect(result.attempts).toBe(1);
      expect(fake.requests).toHaveLength(0);
    } finally {
      await r.close();
    }
  });

  it("[provider.egress.no-redirects] the policy's own requests refuse every 3xx, whatever the method", async () => {
    const r = await redirector(`${fake.origin}/elsewhere`);
    const egress = createEgressPolicy({ env: {} });
    try {
      fake.requests.length = 0;
      for (const method of ["GET", "POST"]) {
        const failure = egress.request(`${r.url}/x`, { method, headers: {}, ...(method === "POST" ? { body: "{}" } : {}) });
        await expect(failure).rejects.toBeInstanceOf(EgressRedirectError);
        await expect(failure).rejects.toMatchObject({ statusCode: 307 });
      }
      expect(fake.requests).toHaveLength(0);
    } finally {
      await egress.close();
      await r.close();
    }
  });
});

describe("TLS", () => {
  let tls!: SelfSigned;
  let dir = "";
  let tlsFake: FakeOpenAI | undefined;
  let url = "";
  let certFile = "";
  beforeAll(async () => {
    tls = selfSignedCertificate();
    ({ dir, certFile } = tls);
    tlsFake = await FakeOpenAI.start({ tls });
    url = tlsFake.baseUrl;
  });
  afterAll(async () => {
    await tlsFake?.close();
    tls?.dispose();
  });

  /** Runs `body` with process warnings collected instead of printed. */
  async function withWarnings<T>(body: (warnings: string[]) => Promise<T>): Promise<T> {
    const warnings: string[] = [];
    const savedEmit = process.emitWarning;
    process.emitWarning = ((w: string | Error) => void warnings.push(String(w))) as typeof process.emitWarning;
    try {
      return await body(warnings);
    } finally {
      process.emitWarning = savedEmit;
    }
  }

  it("[provider.egress.tls-always-verified] an untrusted certificate fails, even with NODE_TLS_REJECT_UNAUTHORIZED=0", async () => {
    const saved = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
    try {
      const result = await withWarnings(() => runThrough({}, url));
      expect(result.status).toBe("failed");
      expect(result.status === "failed" && result.report.error_class).toBe("network");
      expect(result.status === "failed" && result.report.diagnostic).toContain("TLS");
      expect(result.attempts).toBe(1);
    } finally {
      if (saved === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = saved;
    }
  });

  it("[provider.egress.extra-ca] certificates of a deferred NODE_EXTRA_CA_CERTS are trusted, directly and through a proxy", async () => {
    tlsFake?.enqueue(textResponse("trusted"));
    const direct = await runThrough({}, url, { extraCaFile: certFile });
    expect(direct.status === "finished" && direct.report.text).toBe("trusted");
    const proxy = await startProxy();
    try {
      tlsFake?.enqueue(textResponse("tunnelled"));
      const tunnelled = await runThrough({ HTTPS_PROXY: proxy.url }, url, { extraCaFile: certFile });
      expect(tunnelled.status === "finished" && tunnelled.report.text).toBe("tunnelled");
      expect(proxy.log.connects).toEqual([`127.0.0.1:${tlsFake?.port}`]);
    } finally {
      await proxy.close();
    }
  });

  it("[provider.egress.tls-always-verified] a server that never completes the TLS handshake is a timeout within the connect bound", async () => {
    const sockets = new Set<Socket>();
    const silent = createNetServer((s) => void sockets.add(s)); // accepts, then says nothing
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    try {
      const result = await runThrough({}, `https://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`, { connectTimeoutMs: 200 });
      expect(result.status === "failed" && result.report).toMatchObject({ error_class: "timeout", diagnostic: expect.stringContaining("TAU_EGRESS_CONNECT_TIMEOUT") });
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it("[provider.egress.extra-ca] an unusable certificate file is named in a warning, and node's own store still applies", async () => {
    const notPem = join(dir, "not-a-cert.txt");
    writeFileSync(notPem, "hello\n");
    for (const file of [join(dir, "missing.pem"), notPem]) {
      const [result, warnings] = await withWarnings(async (w) => [await runThrough({}, url, { extraCaFile: file }), w] as const);
      expect(result.status === "failed" && result.report.diagnostic).toContain("TLS");
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`Ignoring extra certs from \`${file}\`, load failed:`);
    }
  });
});

describe("preconnect", () => {
  /**
   * A server answering every request with "ok", counting the connections it accepted (for https,
   * those whose handshake completed) and the TCP connections it accepted and saw close.
   */
  async function countingServer(
    tlsFiles?: { key: Buffer; cert: Buffer },
  ): Promise<{ url: string; connections: () => number; tcp: () => { accepted: number; closed: number }; close: () => Promise<void> }> {
    let connections = 0;
    const tcp = { accepted: 0, closed: 0 };
    const handler = (_req: unknown, res: { end: (s: string) => void }) => res.end("ok");
    const server = (tlsFiles ? createHttpsServer(tlsFiles, handler) : createServer(handler)) as Server;
    server.on(tlsFiles ? "secureConnection" : "connection", () => connections++);
    server.on("connection", (socket: Socket) => {
      tcp.accepted++;
      socket.once("close", () => tcp.closed++);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const scheme = tlsFiles ? "https" : "http";
    return {
      url: `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`,
      connections: () => connections,
      tcp: () => ({ ...tcp }),
      close: async () => {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      },
    };
  }

  async function get(egress: ReturnType<typeof createEgressPolicy>, url: string): Promise<string> {
    const res = await egress.request(url, { method: "GET", headers: {} });
    let body = "";
    for await (const chunk of res.body) body += String(chunk);
    return body;
  }

  it("[provider.egress.preconnect] the first request uses the connection opened ahead of it, over http and verified https", async () => {
    const tls = selfSignedCertificate();
    try {
      const files = { key: tls.key, cert: tls.cert };
      for (const server of [await countingServer(), await countingServer(files)]) {
        const egress = createEgressPolicy({ env: {}, extraCaFile: tls.certFile });
        try {
          egress.preconnect(server.url);
          await waitFor(() => server.connections() === 1, "the spare connection"); // opened before any request
          expect(await get(egress, server.url)).toBe("ok");
          expect(server.connections()).toBe(1); // the request used it: no second connection
        } finally {
          await egress.close();
          await server.close();
        }
      }
      // An untrusted server: the spare fails its verification and is not used; the request fails too.
      const untrusted = await countingServer(files);
      const strict = createEgressPolicy({ env: {} });
      try {
        strict.preconnect(untrusted.url);
        // The client closes a connection whose certificate it refused: the spare is gone.
        await waitFor(() => untrusted.tcp().closed === 1, "the spare to fail its verification and close");
        await expect(get(strict, untrusted.url)).rejects.toMatchObject({ code: "DEPTH_ZERO_SELF_SIGNED_CERT" });
        expect(untrusted.connections()).toBe(0);
        expect(untrusted.tcp().accepted).toBe(2); // the request dialled its own connection
      } finally {
        await strict.close();
        await untrusted.close();
      }
    } finally {
      tls.dispose();
    }
  });

  it("[provider.egress.preconnect] a spare still in its TLS handshake keeps the connect bound for the request that takes it", async () => {
    const sockets = new Set<Socket>();
    const silent = createNetServer((c) => void sockets.add(c)); // accepts, then never answers the handshake
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const url = `https://127.0.0.1:${(silent.address() as AddressInfo).port}/v1/chat/completions`;
    const egress = createEgressPolicy({ env: {}, connectTimeoutMs: 300 });
    try {
      egress.preconnect(url);
      await waitFor(() => sockets.size === 1, "the spare to connect"); // connected, handshake pending
      const started = Date.now();
      await expect(egress.request(url, { method: "GET", headers: {} })).rejects.toMatchObject({ code: "TAU_EGRESS_CONNECT_TIMEOUT" });
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(sockets.size).toBe(1); // the request took the spare rather than opening another
    } finally {
      await egress.close();
      for (const c of sockets) c.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it("[provider.egress.preconnect] opens nothing when a proxy applies: the proxy sees a request's tunnel only", async () => {
    const proxy = await startProxy();
    const server = await countingServer();
    const egress = createEgressPolicy({ env: { HTTP_PROXY: proxy.url } });
    try {
      egress.preconnect(server.url);
      // The request is the barrier: a spare dialled by preconnect would have reached the server before
      // the request's tunnel did, so it would be counted by the time this answers.
      expect(await get(egress, server.url)).toBe("ok");
      expect(proxy.log.connects).toHaveLength(1);
      expect(server.connections()).toBe(1); // the tunnel's connection only
    } finally {
      await egress.close();
      await server.close();
      await proxy.close();
    }
  });
});

