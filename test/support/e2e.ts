// Set-up shared by the end-to-end and integration tests: a loopback OpenAI-compatible server and an
// egress policy per file or test, fresh TAU_HOME workspaces and their harness.yaml, daemons killed
// with their extensions after each test, attached UIs and agents, agents' journals, and what /proc
// says of a process tree (to stop a daemon and its extensions whatever happens).
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";
import { createEgressPolicy, type EgressPolicy } from "../../handwritten/extensions/provider/index.js";
import { replayJournal, validateJournalRecord, type JournalRecord } from "../../handwritten/store/index.js";
import { TestClient, startDaemon, tauHome, waitFor, type StartedDaemon } from "./daemon.js";
import { FakeOpenAI } from "./fake-openai.js";

/**
 * One loopback server for the whole file (`perTest`: one per test, so a failing test cannot leave
 * scripted answers for the next), handed to `set` once started. Call at the top level of a test file.
 */
export function useFakeOpenAI(set: (server: FakeOpenAI) => void, o: { perTest?: boolean; drainedAfterEach?: boolean } = {}): void {
  let server: FakeOpenAI | undefined;
  const [before, after] = o.perTest ? [beforeEach, afterEach] : [beforeAll, afterAll];
  before(async () => {
    server = await FakeOpenAI.start();
    set(server);
  });
  after(async () => {
    await server?.close();
  });
  // `drainedAfterEach`: after each test the request log is cleared and every scripted answer must have been taken.
  if (o.drainedAfterEach) {
    afterEach(() => {
      if (!server) return;
      server.requests.length = 0;
      expect(server.pending).toBe(0);
    });
  }
}

/** An egress policy (no proxy configured) for the whole file, handed to `set`; closed after its last test. Call at the top level of a test file. */
export function useEgressPolicy(set: (egress: EgressPolicy) => void): void {
  let egress: EgressPolicy | undefined;
  beforeAll(() => {
    egress = createEgressPolicy({ env: {} });
    set(egress);
  });
  afterAll(async () => {
    await egress?.close();
  });
}

/** Cleanups run after each test, newest first (an asynchronous one is awaited). Call at the top level of a test file. */
export function useCleanups(): Array<() => unknown> {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });
  return cleanups;
}

/** What a test undoes after it, newest first (see useCleanups). */
export type Cleanups = Array<() => unknown>;

export interface Workspace {
  readonly env: NodeJS.ProcessEnv;
  readonly home: string;
  readonly project: string;
}

/**
 * A fresh TAU_HOME (removed by `cleanups`) with `harnessYaml` as its harness.yaml — by default
 * the default extensions with the fake server's model — and an empty project folder.
 */
export function workspaceIn(cleanups: Cleanups, harnessYaml = "model: fake-model\n"): Workspace {
  const h = tauHome();
  cleanups.push(h.dispose);
  writeFileSync(join(h.home, "config", "harness.yaml"), harnessYaml);
  const project = join(h.home, "project");
  mkdirSync(project);
  return { env: h.env, home: h.home, project };
}

/** A workspace (see workspaceIn) with the default harness.yaml whose project folder holds notes.txt. */
export function notesWorkspace(cleanups: Cleanups): Workspace {
  const w = workspaceIn(cleanups);
  writeFileSync(join(w.project, "notes.txt"), "remember the milk\n");
  return w;
}

/** The OPENAI_* variables that point tau's default provider at `fake`, model `fake-model`. */
export function openaiEnv(fake: FakeOpenAI, apiKey = "sk-test"): NodeJS.ProcessEnv {
  return { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: apiKey, OPENAI_MODEL: "fake-model" };
}

/** A process's command line, NULs as spaces ("" once it is gone). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/** Whether a process exists and is neither a zombie nor dead. */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !["Z", "X"].includes(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
  } catch {
    return false;
  }
}

/** The pid and every descendant of it, from /proc. */
export function processTree(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, ppid] of parentOf) if (ppid === out[i]) out.push(pid);
  return out;
}

/** The provider extension against a loopback server (chat completions), serving `models`. */
export function providerExtension(baseUrl: string, models: Array<Record<string, unknown>> = [{ id: "fake-model" }], name = "provider"): Record<string, unknown> {
  return { name, kind: "provider", command: ["tau", "ext", "provider"], config: { profile: "chat_completions", base_url: baseUrl, models }, startup_timeout_seconds: 30 };
}

/** The shell tool extension, required. */
export const SHELL_EXTENSION = { name: "shell", kind: "tool", require: true, command: ["tau", "ext", "shell"], startup_timeout_seconds: 30 } as const;

/**
 * A harness.yaml (JSON) whose model is `fake-model` at `fake`: the provider extension serving
 * `models`, then the shell unless `shell: false`, then `extensions`; `settings` are further
 * top-level keys (roles, compaction, agent_limits, …).
 */
export function agentHarnessYaml(
  fake: FakeOpenAI,
  o: { models?: Array<Record<string, unknown>>; shell?: boolean; extensions?: unknown[]; settings?: Record<string, unknown> } = {},
): string {
  const extensions = [providerExtension(fake.baseUrl, o.models), ...(o.shell === false ? [] : [SHELL_EXTENSION]), ...(o.extensions ?? [])];
  return JSON.stringify({ model: "fake-model", extensions, ...o.settings });
}

/** A loopback model server for this test, closed by `cleanups`. */
export async function fakeOpenAIIn(cleanups: Cleanups): Promise<FakeOpenAI> {
  const fake = await FakeOpenAI.start();
  cleanups.push(() => fake.close());
  return fake;
}

/** A fresh tau home (removed by `cleanups`) whose one extension is the provider `llm` against `fake`, serving the `models` ids. */
export function providerHome(cleanups: Cleanups, fake: FakeOpenAI, models: string[] = ["m"]): { home: string; env: NodeJS.ProcessEnv } {
  const h = tauHome();
  cleanups.push(h.dispose);
  writeFileSync(join(h.home, "config", "harness.yaml"), JSON.stringify({ extensions: [providerExtension(fake.baseUrl, models.map((id) => ({ id })), "llm")] }));
  return { home: h.home, env: h.env };
}

/** SIGKILLs a process and every descendant of it, the root first (as a crash of it: its children exiting first would be observed). */
export function killTree(pid: number): void {
  for (const p of processTree(pid)) {
    try {
      // A socat bridge ends on SIGTERM and removes its socket file; killed, it leaves the file in
      // the temp folder (as tau's own kill of it never does: parent-death.ts).
      process.kill(p, /^socat\b/.test(commandLine(p).replace(/^\S*\//, "")) ? "SIGTERM" : "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** `tau daemon --detach` with `args`; its whole process tree is SIGKILLed by `cleanups`. */
export async function daemonIn(cleanups: Cleanups, env: NodeJS.ProcessEnv, args: string[] = []): Promise<StartedDaemon> {
  const d = await startDaemon(env, args);
  cleanups.push(() => killTree(d.pid));
  return d;
}

/**
 * A UI attached to the daemon's session (closed by `cleanups`), subscribed live to everything,
 * once the session has a model and the `tools` have registered.
 */
export async function attachUi(cleanups: Cleanups, d: Pick<StartedDaemon, "socket" | "session_id">, o: { tools?: string[] } = {}): Promise<TestClient> {
  const c = await TestClient.ui(d.socket, d.session_id);
  cleanups.push(() => c.close());
  const tools = o.tools ?? [];
  c.send({ message: "subscribe", payload: { historical: ["harness.models_available", ...(tools.length > 0 ? ["tool.register"] : [])], live: ["*"] } });
  await c.next((m) => m.message === "deliver" && m.payload.event.name === "harness.models_available" && (m.payload.event.data.models as unknown[]).length > 0, 30_000, "the session's models");
  for (const tool of tools) await waitFor(() => c.deliveries().some((x) => x.name === "tool.register" && x.data.name === tool), `tool ${tool} to register`, 30_000);
  return c;
}

/** A daemon started with `args` (see daemonIn), a UI attached to it (see attachUi) and one agent the UI created. */
export async function agentSession(cleanups: Cleanups, env: NodeJS.ProcessEnv, args: string[], o: { tools?: string[] } = {}): Promise<{ d: StartedDaemon; c: TestClient; agentId: string }> {
  const d = await daemonIn(cleanups, env, args);
  const c = await attachUi(cleanups, d, o);
  return { d, c, agentId: await c.createAgent() };
}

/** An agent's journal (state/agents/ID/events.cbor in the tau home), every record validated. */
export function agentJournalFile(home: string, agentId: string): string {
  return join(home, "state", "agents", agentId, "events.cbor");
}
export function agentJournal(home: string, agentId: string): JournalRecord[] {
  return replayJournal<JournalRecord>(agentJournalFile(home, agentId), { validate: validateJournalRecord }).records;
}
