// Builds real tau sessions of a chosen size through the store API, deterministically (the same seed
// gives the same bytes), for tests and benchmarks of long sessions: a session journal, one agent's
// journal of turns (a prompt, a shell tool call with a large output, an answer) mixed with dense
// `!cmd` histories, the restore stream, and the session manifest — what tau's own daemon writes.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openFileStateStore, type EventLog, type FileJournal, type JournalRecord } from "../../handwritten/store/index.js";

export interface SessionShape {
  /** Stop once the agent journal reaches this many bytes (about). */
  readonly targetBytes: number;
  /** Bytes of each tool result and shell output (default 16 KiB). */
  readonly outputBytes?: number;
  /** One `!cmd` in this many items is a shell command instead of a tool turn (default 3: dense). */
  readonly shellEvery?: number;
  readonly seed?: number;
  readonly projectRoot?: string;
}

export interface GeneratedSession {
  readonly sessionId: string;
  readonly agentId: string;
  /** Records in the agent journal. */
  readonly records: number;
  readonly turns: number;
  readonly shellCommands: number;
  /** The first prompt's text (so a test can look for the first turn). */
  readonly firstPrompt: string;
  readonly lastPrompt: string;
}

/** A small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ["alpha", "beta", "gamma", "delta", "src", "test", "build", "error", "ok", "file.ts", "line", "value", "return", "const", "42", "undefined"];

/** About `bytes` bytes of output lines. */
function output(next: () => number, bytes: number): string {
  const lines: string[] = [];
  let n = 0;
  while (n < bytes) {
    const words = 4 + Math.floor(next() * 10);
    let line = "";
    for (let i = 0; i < words; i++) line += `${WORDS[Math.floor(next() * WORDS.length)]} `;
    lines.push(line.trimEnd());
    n += line.length;
  }
  return lines.join("\n");
}

/** Writes a session of about `shape.targetBytes` of agent journal under `stateDir`. */
export function generateSession(stateDir: string, shape: SessionShape): GeneratedSession {
  const next = rng(shape.seed ?? 1);
  const outBytes = shape.outputBytes ?? 16 * 1024;
  const shellEvery = shape.shellEvery ?? 3;
  const projectRoot = shape.projectRoot ?? "/work/project";
  const hex = (n: number) => Math.floor(next() * 16 ** n).toString(16).padStart(n, "0");
  const sessionId = `s-gen${(shape.seed ?? 1).toString(36)}-${hex(12)}`;
  const agentId = `a-gen${(shape.seed ?? 1).toString(36)}-${hex(12)}`;
  let clock = 1_780_000_000_000_000;
  const at = () => (clock += 1000);
  const store = openFileStateStore({ stateDir });
  const harness = { class: "harness" } as const;
  const put = (log: EventLog, name: string, data: Record<string, unknown>, parent = true) =>
    log.append({ event: { name, data }, source: harness, recorded_at: at(), parent: parent && log.nextSeq > 0 ? log.nextSeq - 1 : null });
  const session = store.openSession(sessionId);
  const restore = store.openRestore(sessionId);
  const agent = store.openAgent(agentId);
  const agentBytes = () => (agent.journal as FileJournal<JournalRecord>).end;
  put(session, "session.started", { session_id: sessionId, project_root: projectRoot, resumed: false, ephemeral: false }, false);
  put(agent, "agent.started", { agent_id: agentId, session_id: sessionId, creator: "ui", cwd: projectRoot, ephemeral: false }, false);
  put(session, "session.agent_loaded", { agent_id: agentId }, false);
  let turns = 0;
  let shellCommands = 0;
  let firstPrompt = "";
  let lastPrompt = "";
  let i = 0;
  while (agentBytes() < shape.targetBytes) {
    i++;
    if (i % shellEvery === 0) {
      shellCommands++;
      put(agent, "shell.command_finished", {
        agent_id: agentId,
        request_id: `r-gen-${i}`,
        command: `cat file-${i}.log`,
        output: output(next, outBytes),
        exit_code: 0,
        include_in_context: next() < 0.5,
      });
      continue;
    }
    turns++;
    const promptId = `p-gen-${i}`;
    const callId = `call-gen-${i}`;
    const text = `turn ${turns}: look at file-${i}.ts and tell me what ${WORDS[i % WORDS.length]} does`;
    if (turns === 1) firstPrompt = text;
    lastPrompt = text;
    const args = JSON.stringify({ command: `grep -n ${WORDS[i % WORDS.length]} -r src` });
    put(agent, "agent.prompt_submitted", { agent_id: agentId, prompt_id: promptId, source: "human_ui", mode: "queue", text });
    put(agent, "agent.prompt_started", { agent_id: agentId, prompt_id: promptId, round: 0, model: "gen-model" });
    put(agent, "provider.response_finished", {
      agent_id: agentId,
      prompt_id: promptId,
      round: 0,
      model: "gen-model",
      text: "",
      tool_calls: [{ call_id: callId, tool: "shell", arguments_json: args }],
      finish_reason: "tool_calls",
      usage: { input_tokens: 1000 + i, output_tokens: 20 },
    });
    put(restore, "tool.request", { agent_id: agentId, prompt_id: promptId, call_id: callId, tool: "shell", arguments_json: args }, false);
    put(restore, "tool.started", { agent_id: agentId, prompt_id: promptId, call_id: callId, tool: "shell", owner: "shell", arguments_json: args }, false);
    put(agent, "provider.tool_result", { agent_id: agentId, prompt_id: promptId, call_id: callId, tool: "shell", output: output(next, outBytes) });
    put(agent, "agent.prompt_started", { agent_id: agentId, prompt_id: promptId, round: 1, model: "gen-model" });
    put(agent, "provider.response_finished", {
      agent_id: agentId,
      prompt_id: promptId,
      round: 1,
      model: "gen-model",
      text: output(next, 400),
      tool_calls: [],
      finish_reason: "stop",
      usage: { input_tokens: 1200 + i, output_tokens: 100 },
    });
    put(agent, "agent.outer_turn_finished", { agent_id: agentId, prompt_id: promptId, outcome: "completed", rounds: 2 });
  }
  put(session, "session.shutdown", { session_id: sessionId, reason: "requested" }, false);
  const records = agent.nextSeq;
  store.close();
  const dir = join(stateDir, "sessions", sessionId);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, "manifest.json"), `${JSON.stringify({ session_id: sessionId, project_root: projectRoot }, null, 2)}\n`, { mode: 0o600 });
  return { sessionId, agentId, records, turns, shellCommands, firstPrompt, lastPrompt };
}
