// A swarm on this machine (SPEC-swarm), real Iroh endpoints on loopback, relays disabled.
// 1. Dispatch latency: a `prompt` line written to `tau swarm serve` → the worker's first token
//    (`provider.response_updated` seen by a UI attached to the worker daemon) and → the `result`
//    line back at the coordinator; baseline in the same run: the same prompt submitted locally by
//    that UI (`ui.prompt_submit` → first token), as a local `tau run` would.
// 2. Many workers held by one coordinator: TAU_SWARM_BENCH_WORKERS (default 20) worker links in this
//    process (each its own endpoint, incarnation and memory; the agent answers at once), admitted,
//    then one prompt to each at the same moment; the coordinator's resident memory.
// Rounds: TAU_SWARM_BENCH_ROUNDS (default 20). Prints figures; asserts nothing.
import { readFileSync } from "node:fs";
import { writeSecret } from "../handwritten/config/index.js";
import { SwarmLink } from "../handwritten/extensions/swarm/link.js";
import { SwarmWorker } from "../handwritten/extensions/swarm/worker.js";
import { bindEndpoint, endpointIdOfKey, generateKey, type IrohEndpoint } from "../handwritten/swarm/index.js";
import { FakeOpenAI, textResponse } from "../test/support/fake-openai.js";
import { coordinatorHome, serve, startWorker, workerHome, type Coordinator } from "../test/e2e/swarm/support.js";
import { waitFor } from "../test/support/wait.js";
import { fmt, percentile, report } from "./support.js";

const ROUNDS = Number(process.env.TAU_SWARM_BENCH_ROUNDS ?? 20);
const WORKERS = Number(process.env.TAU_SWARM_BENCH_WORKERS ?? 20);

async function cleanUp(cleanups: Array<() => unknown>): Promise<void> {
  for (const c of cleanups.reverse()) await Promise.resolve().then(c).catch(() => {});
}

async function dispatchLatency(): Promise<void> {
  const cleanups: Array<() => unknown> = [];
  const fake = await FakeOpenAI.start();
  cleanups.push(() => fake.close());
  try {
    // The answer names its prompt, so each round waits for its own first token.
    fake.respondWith((r) => {
      const ms = (r.body as { messages?: Array<{ role: string; content?: unknown }> }).messages ?? [];
      const last = [...ms].reverse().find((m) => m.role === "user");
      return textResponse(`Hello ${String(last?.content ?? "").replace(/^.*?(remote|local) (\d+).*$/s, "$1-$2")}`);
    });
    const home = await coordinatorHome(cleanups, ["w1"]);
    const worker = await workerHome(cleanups, fake, home, "w1");
    const co = await serve(cleanups, home, { w1: worker.endpointId });
    worker.configure(co.port);
    const { c, agentId } = await startWorker(cleanups, worker);
    await co.line((l) => l.kind === "admitted", "admission");
    const firstToken = async (tag: string): Promise<number> => {
      await c.next((m) => m.message === "deliver" && m.payload.event.name === "provider.response_updated" && String(m.payload.event.data.text_delta).includes(tag), 30_000, "the first token");
      return performance.now();
    };
    const remote: number[] = [];
    const results: number[] = [];
    const local: number[] = [];
    for (let i = 0; i < ROUNDS + 2; i++) {
      const done = co.lines.filter((l) => l.update?.kind === "result").length;
      const t0 = performance.now();
      co.send(`prompt w1 remote ${i}`);
      const t1 = await firstToken(`remote-${i}`);
      await waitFor(() => co.lines.filter((l) => l.update?.kind === "result").length > done, "the result", 30_000);
      const t2 = performance.now();
      await c.delivered("agent.outer_turn_finished");
      c.inbox.length = 0;
      const t3 = performance.now();
      c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: `local ${i}` });
      const t4 = await firstToken(`local-${i}`);
      await c.delivered("agent.outer_turn_finished");
      c.inbox.length = 0;
      if (i < 2) continue; // warm-up
      remote.push(t1 - t0);
      results.push(t2 - t0);
      local.push(t4 - t3);
    }
    const p50 = (v: number[]) => percentile(v, 50);
    report("coordinator → worker first token p50 (ms)", fmt(p50(remote)), "local prompt → first token p50 (ms)", fmt(p50(local)), p50(remote) / p50(local));
    console.log(`coordinator → worker first token p99: ${fmt(percentile(remote, 99))} ms; prompt → result line p50/p99: ${fmt(p50(results))}/${fmt(percentile(results, 99))} ms (${ROUNDS} rounds)`);
  } finally {
    await cleanUp(cleanups);
  }
}

/** One in-process worker: its own endpoint and memory; its "agent" finishes every prompt at once. */
async function linkWorker(name: string, key: string, co: Coordinator, credential: string): Promise<{ link: SwarmLink; endpoint: IrohEndpoint }> {
  const endpoint = await bindEndpoint({ key, bind: "127.0.0.1:0" });
  let n = 0;
  let link: SwarmLink | undefined;
  const worker: SwarmWorker = new SwarmWorker(
    { maxCommands: 4096, maxBlockers: 16, maxUnacked: 1024, maxTextBytes: 65536 },
    {
      submit: () => {
        const p = `p${++n}`;
        queueMicrotask(() => (worker.promptSubmitted(p), worker.responseFinished(p, "done"), worker.turnEnded(p, "completed")));
      },
      send: (u) => link?.deliver(u),
      diagnostic: () => {},
    },
  );
  worker.agentId = "a";
  link = new SwarmLink(endpoint, worker, { worker: name, coordinator: co.endpointId, addresses: [`127.0.0.1:${co.port}`], reconnectMs: 200, connectTimeoutMs: 10_000, credential }, { diagnostic: () => {}, refused: () => {} });
  void link.run();
  return { link, endpoint };
}

async function manyWorkers(): Promise<void> {
  const cleanups: Array<() => unknown> = [];
  try {
    const names = Array.from({ length: WORKERS }, (_, i) => `w${i + 1}`);
    const home = await coordinatorHome(cleanups, []);
    const keys = await Promise.all(names.map(() => generateKey()));
    const ids: Record<string, string> = {};
    const credentials: string[] = [];
    for (const [i, name] of names.entries()) {
      ids[name] = await endpointIdOfKey(keys[i] as string);
      credentials.push(`bench-credential-${name}`);
      writeSecret(`${home.home}/config`, `swarm-worker-${name}`, credentials[i] as string);
    }
    const co = await serve(cleanups, home, ids);
    const t0 = performance.now();
    const links = await Promise.all(names.map((name, i) => linkWorker(name, keys[i] as string, co, credentials[i] as string)));
    for (const l of links) cleanups.push(() => (l.link.stop(), l.endpoint.close()));
    await waitFor(() => co.lines.filter((l) => l.kind === "admitted").length === WORKERS, `${WORKERS} admissions`, 60_000);
    const admitted = performance.now() - t0;
    const t1 = performance.now();
    for (const name of names) co.send(`prompt ${name} go`);
    await waitFor(() => co.lines.filter((l) => l.update?.kind === "result").length === WORKERS, `${WORKERS} results`, 60_000);
    const allResults = performance.now() - t1;
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${co.child.pid}/status`, "utf8"))?.[1];
    console.log(`${WORKERS} workers admitted by one coordinator in ${fmt(admitted)} ms; one prompt to each, all results back in ${fmt(allResults)} ms; coordinator RSS ${rss ?? "?"} kB`);
  } finally {
    await cleanUp(cleanups);
  }
}

export async function run(): Promise<void> {
  await dispatchLatency();
  await manyWorkers();
}
