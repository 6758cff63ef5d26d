// With only OPENAI_API_KEY set, tau uses OpenAI's own endpoint, as other coding agents do (issue: it
// gave the offline demo, whose text told the user to set that very key). OpenAI is stood in for by a
// loopback TLS server with a certificate for api.openai.com, reached through an HTTPS proxy that
// tunnels `CONNECT api.openai.com:443` to it: the request goes where a user's would, with their key
// and the named default model, and the answer is the server's, not the demo's.
import { createServer, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useCleanups, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";
import { runTau } from "../../support/run-tau.js";
import { selfSignedCertificate, type SelfSigned } from "../../support/tls.js";

const cleanups = useCleanups();
let tls!: SelfSigned;
let openai!: FakeOpenAI;
let proxy!: Server;
const connects: string[] = [];

beforeAll(async () => {
  tls = selfSignedCertificate(["api.openai.com"]);
  openai = await FakeOpenAI.start({ tls });
  const sockets = new Set<Socket>();
  proxy = createServer((_req, res) => res.writeHead(502).end());
  proxy.on("connect", (req, client: Socket) => {
    connects.push(req.url ?? "");
    // Every tunnel goes to the stand-in, whatever it names: what it named is what the test checks.
    const upstream = connect(openai.port, "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => {
    for (const s of sockets) s.destroy();
  });
});
afterAll(async () => {
  await new Promise((r) => proxy.close(r));
  await openai.close();
  tls.dispose();
});

describe("an OpenAI key alone", () => {
  it("[config.defaults.openai-key-alone] reaches OpenAI's endpoint with the key and the default model, not the offline demo", async () => {
    // No configuration at all: a new user's machine with only the key set.
    const { env, project } = workspaceIn(cleanups, "{}\n");
    const port = (proxy.address() as { port: number }).port;
    openai.enqueue(textResponse("Hello from OpenAI."));
    const { OPENAI_BASE_URL: _url, OPENAI_MODEL: _model, ...rest } = env;
    const r = await runTau(["run", "-p", "hi", "--no-sandbox"], {
      env: { ...rest, OPENAI_API_KEY: "sk-test-key", HTTPS_PROXY: `http://127.0.0.1:${port}`, NODE_EXTRA_CA_CERTS: tls.certFile },
      cwd: project,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Hello from OpenAI.\n");
    expect(new Set(connects)).toEqual(new Set(["api.openai.com:443"]));
    const chat = openai.chatRequests.at(-1);
    expect(chat?.path).toBe("/v1/chat/completions");
    expect(chat?.headers.authorization).toBe("Bearer sk-test-key");
    expect((chat?.body as { model: string }).model).toBe("gpt-5");
  });
});
