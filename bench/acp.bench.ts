// Prompt to first answer chunk through `tau acp` (SPEC-acp), against a loopback model that answers at
// once: an editor's cold start (the process spawned, `initialize`, `session/new`, `session/prompt`,
// the first `agent_message_chunk`) and a warm prompt in an open session. Baseline in the same run:
// `tau run --json` from its spawn to its first `provider.response_updated` line. Prints medians;
// asserts nothing. Rounds: TAU_ACP_BENCH_ROUNDS (default 10).
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream, type ClientContext } from "@agentclientprotocol/sdk";
import { fmt, median, report } from "./support.js";

const ROUNDS = Number(process.env.TAU_ACP_BENCH_ROUNDS ?? 10);
const TAU = join(import.meta.dirname, "..", "bin", "tau.cjs");

/** A model server answering every chat request with one short streamed answer, at once. */
async function modelServer(): Promise<{ baseUrl: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.method === "GET") return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: [{ id: "m" }] }));
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "Hello" } }] })}\n\n`);
      res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}

function home(baseUrl: string): { env: NodeJS.ProcessEnv; project: string; dispose: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "tau-acp-bench-"));
  mkdirSync(join(dir, "config"));
  writeFileSync(join(dir, "config", "harness.yaml"), "model: m\n");
  mkdirSync(join(dir, "project"));
  return { env: { ...process.env, TAU_HOME: dir, OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: "sk-bench", OPENAI_MODEL: "m" }, project: join(dir, "project"), dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** One editor: cold (spawn to first chunk) and then `warm` prompts in the same session. */
async function acpRound(env: NodeJS.ProcessEnv, project: string, warm: number): Promise<{ cold: number; warm: number[] }> {
  const start = performance.now();
  const child = spawn(process.execPath, [TAU, "acp"], { env, cwd: project, stdio: ["pipe", "pipe", "ignore"] });
  const stream = ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>);
  let firstChunk: (() => void) | undefined;
  const app = client({ name: "bench" }).onNotification("session/update", ({ params }) => {
    if (params.update.sessionUpdate === "agent_message_chunk") firstChunk?.();
  });
  const prompt = async (ctx: ClientContext, sessionId: string, from: number) => {
    const chunk = new Promise<number>((resolve) => (firstChunk = () => resolve(performance.now() - from)));
    const [ms] = await Promise.all([chunk, ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] })]);
    firstChunk = undefined;
    return ms;
  };
  const result = await app.connectWith(stream, async (ctx) => {
    await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await ctx.request("session/new", { cwd: project, mcpServers: [] });
    const cold = await prompt(ctx, sessionId, start);
    const times: number[] = [];
    for (let i = 0; i < warm; i++) times.push(await prompt(ctx, sessionId, performance.now()));
    return { cold, warm: times };
  });
  child.stdin.end();
  await new Promise((r) => child.once("exit", r));
  return result;
}

/** `tau run --json`: spawn to its first answer delta. */
async function runRound(env: NodeJS.ProcessEnv, project: string): Promise<number> {
  const start = performance.now();
  const child = spawn(process.execPath, [TAU, "run", "--json", "hi"], { env, cwd: project, stdio: ["ignore", "pipe", "ignore"] });
  let first: number | undefined;
  let buffered = "";
  child.stdout.on("data", (b: Buffer) => {
    buffered += b.toString("utf8");
    if (first === undefined && buffered.includes('"event":"provider.response_updated"')) first = performance.now() - start;
  });
  await new Promise((r) => child.once("exit", r));
  if (first === undefined) throw new Error("tau run printed no answer delta");
  return first;
}

export async function run(): Promise<void> {
  const { baseUrl, server } = await modelServer();
  const h = home(baseUrl);
  try {
    const cold: number[] = [];
    const warm: number[] = [];
    const runs: number[] = [];
    // Interleaved, so both see the same machine.
    for (let i = 0; i < ROUNDS; i++) {
      runs.push(await runRound(h.env, h.project));
      const r = await acpRound(h.env, h.project, 3);
      cold.push(r.cold);
      warm.push(...r.warm);
    }
    report(`acp cold: spawn to first chunk, median of ${ROUNDS}`, `${fmt(median(cold))} ms`, "tau run --json: spawn to first delta", `${fmt(median(runs))} ms`, median(cold) / median(runs));
    console.log(`acp warm: prompt to first chunk in an open session, median of ${warm.length}: ${fmt(median(warm))} ms`);
  } finally {
    h.dispose();
    server.close();
  }
}
