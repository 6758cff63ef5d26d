// Long sessions end to end: sessions of 1, 10 and 100 MiB of agent journal, built by the test
// generator through the store API and checkpointed the way tau's own shutdown does (one resume and
// a SIGTERM), are resumed by a real daemon (`tau daemon --detach --resume`) with the real provider
// extension talking to a loopback OpenAI-compatible server. Per size, median of a few rounds:
//   - resume → attachable: from spawning the daemon to a UI's hello being accepted;
//   - attach → first frame: the real terminal UI (in this process, on a byte-counting terminal)
//     attaching over the socket until it writes the first frame after `session.replay_complete`;
//   - daemon RSS after resume, after the attach, and after the first prompt — the last is the live
//     state: a session that is being worked on holds its agent's transcript in memory;
//   - first prompt after resume: submit → `agent.outer_turn_finished` (the transcript is read from the
//     journal and the whole context is sent to the model), beside the next prompt (the same context,
//     already in memory).
// Baseline: the same steps on a fresh session, in the same run.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { TuiApp } from "../handwritten/cli/tui/app.js";
import { SessionClient } from "../handwritten/cli/session-client.js";
import { isAlive, startDaemon, tauHome, waitFor } from "../test/support/daemon.js";
import { FakeOpenAI, textResponse } from "../test/support/fake-openai.js";
import { generateSession } from "../test/support/session-generator.js";
import { fmt, median, report } from "./support.js";

const MIB = 1024 * 1024;
const ROUNDS = 3;

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024;
}

/** A 120×40 terminal that only notes when it was last written to. */
class Sink extends Writable {
  readonly columns = 120;
  readonly rows = 40;
  writes = 0;
  onWrite: (() => void) | undefined;
  override _write(_chunk: Buffer | string, _enc: BufferEncoding, done: () => void): void {
    this.writes++;
    this.onWrite?.();
    done();
  }
}

interface Round {
  attachableMs: number;
  firstFrameMs: number;
  rssResumed: number;
  rssAttached: number;
  rssLive: number;
  promptMs: number;
  livePromptMs: number;
}

async function stop(pid: number): Promise<void> {
  process.kill(pid, "SIGTERM");
  await waitFor(() => !isAlive(pid), "the daemon's shutdown", 120_000);
}

/** One resume (or fresh start), attach, prompt and shutdown. */
async function round(env: NodeJS.ProcessEnv, args: string[], fake: FakeOpenAI, agentId: string | undefined): Promise<Round> {
  const t0 = performance.now();
  const d = await startDaemon(env, args);
  if (process.env.TAU_BENCH_VERBOSE) console.log(`  (daemon up after ${fmt(performance.now() - t0)} ms)`);
  const probe = await SessionClient.attach(d.socket, d.session_id);
  const attachableMs = performance.now() - t0;
  probe.close();
  const rssResumed = rssMiB(d.pid);

  // The terminal UI attaches as `tau resume` does.
  const sink = new Sink();
  const keyboard = { on: () => keyboard, off: () => keyboard } as unknown as NodeJS.ReadableStream;
  const app = new TuiApp({ input: keyboard, output: sink }, "/nonexistent", 1);
  const t1 = performance.now();
  const client = await SessionClient.attach(d.socket, d.session_id);
  const firstFrame = new Promise<number>((resolve) => {
    client.onDeliver((x) => {
      if (x.event.name !== "session.replay_complete") return;
      const before = sink.writes;
      sink.onWrite = () => {
        if (sink.writes > before) resolve(performance.now() - t1);
      };
    });
  });
  app.start();
  void app.run({ client, sessionId: d.session_id });
  const firstFrameMs = await firstFrame;
  const rssAttached = rssMiB(d.pid);

  // The first prompt: on the resumed agent, or a new one in a fresh session.
  const agent = agentId ?? (await client.request("ui.create_agent", { model: "gen-model" })).agent_id;
  let finished = 0;
  client.onDeliver((x) => {
    if (x.event.name === "agent.outer_turn_finished" && x.event.data.agent_id === agent && !x.replay) finished++;
  });
  const prompt = async (text: string): Promise<number> => {
    fake.enqueue(textResponse("noted"));
    const before = finished;
    const t = performance.now();
    client.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text });
    await waitFor(() => finished > before, "the prompt's turn", 300_000);
    return performance.now() - t;
  };
  const promptMs = await prompt("what did we find?");
  const rssLive = rssMiB(d.pid);
  // The same again, now that the transcript is live: what the whole context costs without the resume.
  const livePromptMs = await prompt("and then?");
  app.stop();
  client.close();
  await stop(d.pid);
  return { attachableMs, firstFrameMs, rssResumed, rssAttached, rssLive, promptMs, livePromptMs };
}

function summary(rounds: Round[]): Round {
  const m = (f: (r: Round) => number) => median(rounds.map(f));
  return {
    attachableMs: m((r) => r.attachableMs),
    firstFrameMs: m((r) => r.firstFrameMs),
    rssResumed: m((r) => r.rssResumed),
    rssAttached: m((r) => r.rssAttached),
    rssLive: m((r) => r.rssLive),
    promptMs: m((r) => r.promptMs),
    livePromptMs: m((r) => r.livePromptMs),
  };
}

export async function run(): Promise<void> {
  const fake = await FakeOpenAI.start();
  const homes: Array<() => void> = [];
  const setup = () => {
    const h = tauHome();
    homes.push(h.dispose);
    const project = join(h.home, "project");
    mkdirSync(project);
    writeFileSync(
      join(h.home, "config", "harness.yaml"),
      JSON.stringify({
        model: "gen-model",
        extensions: [{ name: "llm", kind: "provider", command: ["tau", "ext", "provider"], config: { profile: "chat_completions", base_url: fake.baseUrl, models: [{ id: "gen-model" }] }, startup_timeout_seconds: 60 }],
      }),
    );
    return { ...h, project };
  };
  try {
    const fresh = setup();
    const base: Round[] = [];
    for (let r = 0; r < ROUNDS; r++) base.push(await round(fresh.env, ["--project-root", fresh.project], fake, undefined));
    const b = summary(base);
    console.log(`fresh session: attachable ${fmt(b.attachableMs)} ms, first frame ${fmt(b.firstFrameMs)} ms, RSS ${fmt(b.rssResumed)} / ${fmt(b.rssAttached)} / ${fmt(b.rssLive)} MiB, first prompt ${fmt(b.promptMs)} ms`);
    for (const mib of (process.env.TAU_BENCH_SIZES ?? "1,10,100").split(",").map(Number)) {
      const h = setup();
      const g = generateSession(join(h.home, "state"), { targetBytes: mib * MIB, outputBytes: 16 * 1024, projectRoot: h.project });
      const args = ["--resume", g.sessionId, "--project-root", h.project];
      // The checkpoint tau's own shutdown writes: one resume, then SIGTERM.
      const first = await startDaemon(h.env, args);
      await stop(first.pid);
      const rounds: Round[] = [];
      for (let r = 0; r < ROUNDS; r++) rounds.push(await round(h.env, args, fake, g.agentId));
      const s = summary(rounds);
      console.log(`${mib} MiB (${g.records.toLocaleString("en-US")} records, ${g.turns} turns, ${g.shellCommands} !cmds), median of ${ROUNDS}:`);
      report(`  resume → attachable`, `${fmt(s.attachableMs)} ms`, "fresh session", `${fmt(b.attachableMs)} ms`, s.attachableMs / b.attachableMs);
      report(`  attach → first frame`, `${fmt(s.firstFrameMs)} ms`, "fresh session", `${fmt(b.firstFrameMs)} ms`, s.firstFrameMs / b.firstFrameMs);
      report(`  daemon RSS after resume`, `${fmt(s.rssResumed)} MiB`, "live state (after the first prompt)", `${fmt(s.rssLive)} MiB`, s.rssResumed / s.rssLive);
      report(`  daemon RSS after attach`, `${fmt(s.rssAttached)} MiB`, "live state (after the first prompt)", `${fmt(s.rssLive)} MiB`, s.rssAttached / s.rssLive);
      report(`  daemon RSS, live state`, `${fmt(s.rssLive)} MiB`, "fresh session, live", `${fmt(b.rssLive)} MiB`, s.rssLive / b.rssLive);
      report(`  first prompt after resume`, `${fmt(s.promptMs)} ms`, "the next prompt (transcript live)", `${fmt(s.livePromptMs)} ms`, s.promptMs / s.livePromptMs);
    }
  } finally {
    for (const dispose of homes) dispose();
    await fake.close();
  }
}
