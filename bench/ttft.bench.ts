// Time to first token through tau, per provider wire family (SPEC-provider-chat-completions,
// SPEC-provider-responses, SPEC-provider-websocket): from the moment a loopback model server writes the first answer bytes
// of a streamed response to the moment an attached UI client receives them as
// `provider.response_updated` — through the provider extension's parsing, its report to the daemon,
// the harness and the UI connection. Baseline in the same run: the same bytes over a raw loopback
// TCP socket (server write → client read). Prints p50/p99; asserts nothing.
import { createServer, type ServerResponse } from "node:http";
import { mkdirSync } from "node:fs";
import { WebSocketServer } from "ws";
import { createConnection, createServer as createTcpServer, type AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient, startDaemon, tauHome, type StartedDaemon } from "../test/support/daemon.js";
import { processTree } from "../test/support/e2e.js";
import { fmt, percentile } from "./support.js";

const ROUNDS = Number(process.env.TAU_TTFT_BENCH_ROUNDS ?? 40);

/** A model server that streams one answer per POST and notes when its first answer bytes left. */
async function modelServer(): Promise<{ baseUrl: string; firstWrite: number[]; close: () => Promise<void> }> {
  const firstWrite: number[] = [];
  const chat = (res: ServerResponse) => {
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: "assistant" } }] })}\n\n`);
    setTimeout(() => {
      firstWrite.push(performance.now());
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "Hello" } }] })}\n\n`);
      res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`);
    }, 20);
  };
  const responses = (res: ServerResponse) => {
    const ev = (type: string, d: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...d })}\n\n`;
    res.write(ev("response.created", { response: { id: "r", status: "in_progress" } }) + ev("response.output_item.added", { output_index: 0, item: { type: "message", id: "m", content: [] } }));
    setTimeout(() => {
      firstWrite.push(performance.now());
      res.write(ev("response.output_text.delta", { item_id: "m", output_index: 0, content_index: 0, delta: "Hello" }));
      res.end(ev("response.completed", { response: { id: "r", status: "completed", output: [{ type: "message", id: "m", content: [{ type: "output_text", text: "Hello" }] }] } }));
    }, 20);
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.method === "GET") return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
      (req.url?.endsWith("/responses") ? responses : chat)(res);
    });
  });
  // chatgpt_ws: the same events, one JSON text frame each, on a WebSocket upgraded from GET …/responses.
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  wss.on("connection", (ws) => {
    ws.on("message", () => {
      const ev = (type: string, d: Record<string, unknown>) => JSON.stringify({ type, ...d });
      ws.send(ev("response.created", { response: { id: "r", status: "in_progress" } }));
      ws.send(ev("response.output_item.added", { output_index: 0, item: { type: "message", id: "m", content: [] } }));
      setTimeout(() => {
        firstWrite.push(performance.now());
        ws.send(ev("response.output_text.delta", { item_id: "m", output_index: 0, content_index: 0, delta: "Hello" }));
        ws.send(ev("response.completed", { response: { id: "r", status: "completed", output: [{ type: "message", id: "m", content: [{ type: "output_text", text: "Hello" }] }] } }));
      }, 20);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    firstWrite,
    close: () =>
      new Promise((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function family(profile: "chat_completions" | "responses" | "chatgpt_ws"): Promise<number[]> {
  const server = await modelServer();
  const h = tauHome();
  let d: StartedDaemon | undefined;
  try {
    // chatgpt_ws reads a sign-in's tokens from its 0600 file; the stand-in accepts any.
    const oauth = profile === "chatgpt_ws" ? { oauth_secret: "provider-bench-oauth" } : {};
    if (profile === "chatgpt_ws") {
      mkdirSync(join(h.home, "config", "secrets"), { recursive: true, mode: 0o700 });
      writeFileSync(join(h.home, "config", "secrets", "provider-bench-oauth"), JSON.stringify({ access_token: "bench-access", refresh_token: "bench-refresh", expires_at: Date.now() + 86_400_000 }), { mode: 0o600 });
    }
    writeFileSync(
      join(h.home, "config", "harness.yaml"),
      JSON.stringify({ model: "m", extensions: [{ name: "provider", kind: "provider", command: ["tau", "ext", "provider"], config: { profile, base_url: server.baseUrl, models: [{ id: "m" }], list_models: false, ...oauth } }] }),
    );
    d = await startDaemon(h.env, ["--project-root", h.home]);
    const c = await TestClient.ui(d.socket, d.session_id);
    c.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: ["harness.models_available", "provider.response_updated", "agent.outer_turn_finished"] } });
    await c.next((m) => m.message === "deliver" && m.payload.event.name === "harness.models_available" && (m.payload.event.data.models as unknown[]).length > 0, 30_000);
    c.emit("ui.create_agent", { request_id: "r" });
    const made = await c.next((m) => m.message === "direct" && m.payload.event.data.request_id === "r");
    const agentId = made.message === "direct" ? String(made.payload.event.data.agent_id) : "";
    const out: number[] = [];
    for (let i = 0; i < ROUNDS + 3; i++) {
      c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: `hi ${i}` });
      await c.next((m) => m.message === "deliver" && m.payload.event.name === "provider.response_updated" && String(m.payload.event.data.text_delta).includes("Hello"), 30_000, "the first token");
      const seen = performance.now();
      const wrote = server.firstWrite.at(-1) as number;
      await c.next((m) => m.message === "deliver" && m.payload.event.name === "agent.outer_turn_finished", 30_000, "the turn's end");
      if (i >= 3) out.push(seen - wrote); // the first rounds warm the connection and the JIT
    }
    c.close();
    return out;
  } finally {
    if (d) for (const pid of processTree(d.pid)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    h.dispose();
    await server.close();
  }
}

/** The same few bytes over a raw loopback TCP socket: server write → client data. */
async function rawSocket(): Promise<number[]> {
  let peer: import("node:net").Socket | undefined;
  const server = createTcpServer((s) => (peer = s));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const client = createConnection((server.address() as AddressInfo).port, "127.0.0.1");
  await new Promise<void>((r) => client.once("connect", r));
  while (!peer) await new Promise((r) => setImmediate(r));
  const out: number[] = [];
  for (let i = 0; i < ROUNDS + 3; i++) {
    const got = new Promise<number>((r) => client.once("data", () => r(performance.now())));
    const t0 = performance.now();
    peer.write(`data: {"delta":"Hello"}\n\n`);
    const t1 = await got;
    if (i >= 3) out.push(t1 - t0);
  }
  client.destroy();
  server.close();
  return out;
}

export async function run(): Promise<void> {
  const raw = await rawSocket();
  const rawP50 = percentile(raw, 50);
  console.log(`raw loopback socket (baseline)   p50 ${fmt(rawP50, 3).padStart(8)} ms   p99 ${fmt(percentile(raw, 99), 3).padStart(8)} ms   (${raw.length} rounds)`);
  for (const f of ["chat_completions", "responses", "chatgpt_ws"] as const) {
    const t = await family(f);
    const p50 = percentile(t, 50);
    console.log(`${f.padEnd(16)} first token  p50 ${fmt(p50, 2).padStart(8)} ms   p99 ${fmt(percentile(t, 99), 2).padStart(8)} ms   (${t.length} rounds; p50 ${fmt(p50 - rawP50, 2)} ms over the raw socket, ${(p50 / rawP50).toFixed(0)}x)`);
  }
}
