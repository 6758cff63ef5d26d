// The interactive UI attaching to a session with a long, dense history: every historical event is
// delivered (replay), folded into the transcript, and the frame after `session.replay_complete` is
// the first one that shows the session. Deliveries are built in memory and fed to the real TuiApp
// in wire-sized chunks with event-loop turns between them (as the socket delivers them, so the
// UI's 16 ms frame timer fires meanwhile); the terminal is a byte-counting sink. Figures at 1, 10
// and 100 MiB of history, with 1 MiB as the baseline of the ratio, in the same run.
import { Writable } from "node:stream";
import { TuiApp } from "../handwritten/cli/tui/app.js";
import type { Delivery, SessionClient } from "../handwritten/cli/session-client.js";
import { encodeFrame } from "../handwritten/protocol/index.js";
import { fmt, median, report } from "./support.js";

const MIB = 1024 * 1024;
/** Bytes the socket hands over per read, about; the UI gets an event-loop turn between reads. */
const CHUNK_BYTES = 64 * 1024;
const AGENT = "a-bench";

/** `n` lines of compiler-like output, each about `width` characters. */
function lines(n: number, width: number, tag: string): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`${tag} ${i}: src/module_${i % 97}/file.ts:${i}:7 warning: value is never read `.padEnd(width, "x"));
  return `${out.join("\n")}\n`;
}

/** A dense history of about `bytes` bytes of payload text: prompts, answers, tool calls, shell commands. */
function history(bytes: number): Delivery[] {
  const out: Delivery[] = [];
  let seq = 0;
  let size = 0;
  const push = (name: string, data: Record<string, unknown>): void => {
    out.push({ event: { name, data }, seq: seq++, recorded_at: seq, publisher: { class: "harness" }, replay: true } as unknown as Delivery);
  };
  push("agent.started", { agent_id: AGENT, model: "fake-model" });
  push("harness.models_available", { models: [{ provider: "p", id: "fake-model" }] });
  const answer = "The build fails because the module cannot be resolved. ".repeat(20);
  for (let turn = 0; size < bytes; turn++) {
    const prompt = `p-${turn}`;
    push("agent.prompt_submitted", { agent_id: AGENT, prompt_id: prompt, text: `run the tests again (${turn})` });
    push("agent.prompt_started", { agent_id: AGENT, prompt_id: prompt, model: "fake-model" });
    const tool = lines(60, 70, "test");
    push("tool.started", { agent_id: AGENT, call_id: `call_${turn}`, tool: "shell", arguments_json: JSON.stringify({ command: "npm test" }) });
    push("tool.result", { agent_id: AGENT, call_id: `call_${turn}`, tool: "shell", outcome: turn % 5 === 0 ? "error" : "ok", output: tool });
    push("provider.response_finished", { agent_id: AGENT, prompt_id: prompt, round: 1, text: answer, reasoning: "", model: "bench-model", tool_calls: [], finish_reason: "stop" });
    const small = lines(6, 60, "ls");
    const large = lines(300, 80, "build");
    push("shell.command_finished", { agent_id: AGENT, request_id: `r-${turn}-1`, command: "ls -la", output: small, exit_code: 0, include_in_context: true });
    push("shell.command_finished", { agent_id: AGENT, request_id: `r-${turn}-2`, command: "npm run build", output: large, exit_code: 1, include_in_context: true });
    size += tool.length + answer.length + small.length + large.length;
    // Now and then one very long line (minified output).
    if (turn % 25 === 0) {
      const long = `${"{\"k\":\"v\",".repeat(25_000)}\n`;
      push("shell.command_finished", { agent_id: AGENT, request_id: `r-${turn}-3`, command: "cat bundle.min.js", output: long, exit_code: 0, include_in_context: false });
      size += long.length;
    }
    push("agent.outer_turn_finished", { agent_id: AGENT, prompt_id: prompt, outcome: "completed" });
    push("agent.stats_updated", { agent_id: AGENT, usage: { input_tokens: 1000 * turn, output_tokens: 50 * turn }, cost_usd: 0.001 * turn });
  }
  push("session.replay_complete", { replayed: out.length, last_seq: seq - 1 });
  return out;
}

/** Groups deliveries into socket-read-sized chunks by their encoded frame size. */
function chunks(deliveries: Delivery[]): Delivery[][] {
  const out: Delivery[][] = [];
  let cur: Delivery[] = [];
  let bytes = 0;
  for (const d of deliveries) {
    cur.push(d);
    bytes += encodeFrame({ message: "deliver", payload: d } as never).length;
    if (bytes >= CHUNK_BYTES) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/** A 120×40 terminal that only counts what it is sent. */
class Sink extends Writable {
  bytes = 0;
  readonly columns = 120;
  readonly rows = 40;
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: () => void): void {
    const s = typeof chunk === "string" ? chunk : chunk.toString("utf8");
    this.bytes += Buffer.byteLength(s);
    done();
  }
}

interface Attach {
  /** Milliseconds from the first delivery to the frame after `session.replay_complete`. */
  readyMs: number;
  /** Milliseconds of that last step: from the boundary's delivery to its frame written. */
  frameMs: number;
  /** Bytes written to the terminal by then. */
  bytes: number;
}

async function attach(batches: Delivery[][]): Promise<Attach> {
  const sink = new Sink();
  const keyboard = { on: () => keyboard, off: () => keyboard } as unknown as NodeJS.ReadableStream;
  const app = new TuiApp({ input: keyboard, output: sink }, "/nonexistent", 1);
  let listener: ((d: Delivery) => void) | undefined;
  const client = {
    onDeliver: (l: (d: Delivery) => void) => (listener = l),
    onReply: () => () => {},
    conn: { closed: new Promise(() => {}), send: () => {} },
    subscribe: () => {},
    emit: () => {},
    close: () => {},
  } as unknown as SessionClient;
  app.start();
  void app.run({ client, sessionId: "s-bench" });
  const started = performance.now();
  let frameMs = 0;
  for (const batch of batches) {
    for (const d of batch) {
      // The boundary's delivery draws the first frame that shows the session.
      const t = d.event.name === "session.replay_complete" ? performance.now() : 0;
      listener?.(d);
      if (t > 0) frameMs = performance.now() - t;
    }
    await new Promise((r) => setImmediate(r));
  }
  const readyMs = performance.now() - started;
  app.stop();
  return { readyMs, frameMs, bytes: sink.bytes };
}

export async function run(): Promise<void> {
  const sizes = [1, 10, 100];
  const rounds = 5;
  const histories = new Map<number, Delivery[][]>();
  for (const mib of sizes) {
    const batches = chunks(history(mib * MIB));
    histories.set(mib, batches);
    console.log(`${mib} MiB history: ${batches.reduce((n, b) => n + b.length, 0)} events`);
  }
  // One warm-up attach, then rounds interleaved across sizes so load on the machine falls on all.
  await attach(histories.get(1) as Delivery[][]);
  const results = new Map<number, Attach[]>(sizes.map((mib) => [mib, []]));
  for (let r = 0; r < rounds; r++) for (const mib of sizes) results.get(mib)?.push(await attach(histories.get(mib) as Delivery[][]));
  const base = median((results.get(1) as Attach[]).map((a) => a.readyMs));
  const baseFrame = median((results.get(1) as Attach[]).map((a) => a.frameMs));
  for (const mib of sizes) {
    const runs = results.get(mib) as Attach[];
    const ms = median(runs.map((a) => a.readyMs));
    const frame = median(runs.map((a) => a.frameMs));
    report(`attach with ${mib} MiB dense history → ready frame, median of ${rounds}`, `${fmt(ms)} ms (${fmt((runs[0] as Attach).bytes / 1024, 0)} KiB to the terminal)`, "1 MiB", `${fmt(base)} ms`, ms / base);
    report(`  of which replay boundary → its frame`, `${fmt(frame, 2)} ms`, "1 MiB", `${fmt(baseFrame, 2)} ms`, frame / baseFrame);
  }
}
