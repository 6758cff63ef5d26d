// One round's tau session: a fresh TAU_HOME under the soak's root (its own TMPDIR inside, so the
// sandbox runtime's socket files are the round's), real daemons started and resumed with the real
// `tau` binary, attached UIs, and read-only views of its journals.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient, isAlive, startDaemon, waitFor } from "../../test/support/daemon.js";
import { replayJournal, validateJournalRecord, type JournalRecord } from "../../handwritten/store/index.js";
import { procInfo, treeOf, type ProcInfo } from "./procs.js";

export type ExtensionName = "provider" | "shell" | "handoff";

export interface Delivery {
  readonly name: string;
  readonly data: Record<string, unknown>;
  readonly boot: number;
  /** A catch-up delivery (current state, or history) rather than a live one. */
  readonly replay: boolean;
}

export interface DaemonRun {
  readonly pid: number;
  readonly socket: string;
  readonly sid: number;
  readonly boot: number;
  /** How it ended: still running, SIGKILLed by the soak, or stopped with SIGTERM. */
  end: "running" | "killed" | "stopped";
}

export interface SessionOptions {
  readonly baseUrl: string;
  readonly handoff: boolean;
  readonly sandbox: boolean;
}

export function harnessYaml(o: SessionOptions): string {
  const extensions: unknown[] = [
    { name: "provider", kind: "provider", command: ["tau", "ext", "provider"], config: { profile: "chat_completions", base_url: o.baseUrl, models: [{ id: "fake-model", context_window: 10_000 }] }, startup_timeout_seconds: 30 },
    { name: "shell", kind: "tool", require: true, command: ["tau", "ext", "shell"], startup_timeout_seconds: 30 },
  ];
  if (o.handoff) extensions.push({ name: "handoff", kind: "tool", require: true, command: ["tau", "ext", "handoff"], config: {}, startup_timeout_seconds: 30 });
  return JSON.stringify({ model: "fake-model", extensions, compaction: { auto_threshold: 0.8, keep_recent_tokens: 300 } }, null, 2);
}

const OWN_SID = procInfo(process.pid)?.sid ?? -1;

export class SoakSession {
  readonly daemons: DaemonRun[] = [];
  /** Every process seen in a daemon's tree (at each kill and stop). */
  readonly seen: ProcInfo[] = [];
  readonly sids = new Set<number>();
  sessionId = "";
  leadId = "";
  private clients: Array<{ client: TestClient; boot: number }> = [];
  private logs: Delivery[][] = [];
  private requests = 0;

  private constructor(
    readonly home: string,
    readonly project: string,
    readonly env: NodeJS.ProcessEnv,
    readonly o: SessionOptions,
  ) {}

  /** A new workspace and session with one agent, ready for prompts. */
  static async create(home: string, o: SessionOptions): Promise<SoakSession> {
    const project = join(home, "project");
    for (const d of [join(home, "config"), project, join(home, "tmp")]) mkdirSync(d, { recursive: true });
    writeFileSync(join(home, "config", "harness.yaml"), harnessYaml(o));
    writeFileSync(join(project, "notes.txt"), "the soak's notes: remember the milk\n");
    const s = new SoakSession(home, project, { TAU_HOME: home, TMPDIR: join(home, "tmp") }, o);
    await s.start(false);
    s.leadId = await s.createAgent();
    return s;
  }

  get daemon(): DaemonRun {
    return this.daemons.at(-1) as DaemonRun;
  }

  get client(): TestClient {
    return (this.clients.at(-1) as { client: TestClient }).client;
  }

  get boot(): number {
    return this.daemons.length;
  }

  /** Starts the session's daemon (resuming it after the first) and attaches once its tools are there. */
  async start(resume: boolean): Promise<void> {
    const args = ["--project-root", this.project, ...(resume ? ["--resume", this.sessionId] : []), ...(this.o.sandbox ? [] : ["--harness-config", "sandbox.enabled=false"])];
    const d = await startDaemon(this.env, args);
    this.sessionId = d.session_id;
    const sid = procInfo(d.pid)?.sid;
    if (sid !== undefined && sid !== OWN_SID) this.sids.add(sid);
    this.daemons.push({ pid: d.pid, socket: d.socket, sid: sid ?? -1, boot: this.daemons.length + 1, end: "running" });
    const c = await TestClient.ui(d.socket, d.session_id);
    this.clients.push({ client: c, boot: this.boot });
    const log: Delivery[] = [];
    this.logs.push(log);
    const boot = this.boot;
    c.conn.onMessage((m) => {
      if (m.message === "deliver") log.push({ name: m.payload.event.name, data: m.payload.event.data, boot, replay: m.payload.replay === true });
    });
    c.send({ message: "subscribe", payload: { historical: ["harness.models_available", "tool.register"], live: ["*"] } });
    await this.ready();
  }

  /**
   * Waits until the model is declared and the extensions' tools are registered, counting only
   * deliveries of this boot from index `from` on (after a respawn: the comeback of `only`).
   */
  async ready(from = 0, only?: ExtensionName, ms = 30_000): Promise<void> {
    const log = this.deliveries(this.boot);
    const has = (pred: (d: Delivery) => boolean) => {
      for (let i = from; i < log.length; i++) if (pred(log[i] as Delivery)) return true;
      return false;
    };
    const models = () => has((d) => d.name === "harness.models_available" && (d.data.models as unknown[]).length > 0);
    const tool = (t: string) => () => has((d) => d.name === "tool.register" && d.data.name === t);
    const needs = only === "provider" ? [models] : only === "shell" ? [tool("shell")] : only === "handoff" ? [tool("session_handoff_finish")] : [models, tool("shell"), ...(this.o.handoff ? [tool("session_handoff_finish")] : [])];
    await waitFor(() => needs.every((f) => f()), `the ${only ?? "session's"} extension${only ? "" : "s"} ready`, ms);
  }

  private async createAgent(): Promise<string> {
    const request_id = `agent-${++this.requests}`;
    this.client.emit("ui.create_agent", { request_id, display_name: "lead" });
    const m = await this.client.next((x) => x.message === "direct" && x.payload.event.data.request_id === request_id, 20_000, "the new agent");
    if (m.message !== "direct" || m.payload.event.data.ok !== true) throw new Error("agent not created");
    return String(m.payload.event.data.agent_id);
  }

  submit(agentId: string, text: string, mode: "queue" | "steer" = "queue"): void {
    this.client.emit("ui.prompt_submit", { agent_id: agentId, mode, text });
  }

  compactRequest(agentId: string, instructions: string): void {
    this.client.emit("ui.compact_request", { agent_id: agentId, instructions });
  }

  handoffCommand(agentId: string, ...args: string[]): string {
    const request_id = `handoff-${++this.requests}`;
    this.client.emit("handoff.command_request", { request_id, agent_id: agentId, args });
    return request_id;
  }

  /** The deliveries to the UI of boot `boot` (this one by default), in order; append-only. */
  deliveries(boot = this.boot): readonly Delivery[] {
    return this.logs[boot - 1] ?? [];
  }

  /** The deliveries of every boot. */
  allDeliveries(): Delivery[] {
    return this.logs.flat();
  }

  /** Waits for a delivery of this boot's UI that matches. */
  async delivered(pred: (d: Delivery) => boolean, what: string, ms = 30_000): Promise<Delivery> {
    let found: Delivery | undefined;
    await waitFor(() => (found = this.deliveries().find(pred)) !== undefined, what, ms);
    return found as Delivery;
  }

  /** The pid of extension `name` of the running daemon. */
  extensionPid(name: ExtensionName): number | undefined {
    const re = new RegExp(`\\bext ${name}\\b`);
    return treeOf(this.daemon.pid).find((p) => p.pid !== this.daemon.pid && re.test(p.cmd))?.pid;
  }

  remember(): void {
    for (const p of treeOf(this.daemon.pid)) if (!this.seen.some((q) => q.pid === p.pid && q.start === p.start)) this.seen.push(p);
  }

  /** SIGKILL of the daemon alone: its extensions see their input end, as after a real crash. */
  async killDaemon(): Promise<void> {
    this.remember();
    const d = this.daemon;
    process.kill(d.pid, "SIGKILL");
    d.end = "killed";
    await waitFor(() => !isAlive(d.pid) || procInfo(d.pid)?.state === "Z", "the killed daemon to be gone", 10_000);
    await waitFor(() => !this.client.conn.isOpen, "the UI's connection to end", 10_000).catch(() => undefined);
  }

  /** An orderly stop (SIGTERM): the daemon shuts its extensions down and removes its socket pair. */
  async stop(): Promise<boolean> {
    const d = this.daemon;
    if (d.end !== "running") return true;
    this.remember();
    for (const c of this.clients) c.client.close();
    process.kill(d.pid, "SIGTERM");
    d.end = "stopped";
    try {
      await waitFor(() => !isAlive(d.pid) || procInfo(d.pid)?.state === "Z", "the stopped daemon to exit", 15_000);
      return true;
    } catch {
      process.kill(d.pid, "SIGKILL");
      return false;
    }
  }

  closeClients(): void {
    for (const c of this.clients) c.client.close();
  }

  /** The whole history of an agent as a UI pages it back (`ui_history_request`). */
  async history(agentId: string): Promise<JournalRecord[]> {
    const out: JournalRecord[] = [];
    let before: number | undefined;
    for (;;) {
      const request_id = `history-${++this.requests}`;
      this.client.send({ message: "ui_history_request", payload: { request_id, agent_id: agentId, limit: 1000, ...(before !== undefined ? { before } : {}) } });
      const m = await this.client.next((x) => (x.message === "ui_history_result" || x.message === "error") && JSON.stringify(x.payload).includes(request_id), 20_000, "a history page");
      if (m.message !== "ui_history_result") throw new Error(`history of ${agentId} refused: ${JSON.stringify(m.payload)}`);
      out.unshift(...(m.payload.records as unknown as JournalRecord[]));
      if (m.payload.first === 0 || m.payload.records.length === 0) return out;
      before = m.payload.first;
    }
  }

  agentJournal(agentId: string): JournalRecord[] {
    return readJournal(join(this.home, "state", "agents", agentId, "events.cbor"));
  }

  sessionJournal(sessionId = this.sessionId): JournalRecord[] {
    return readJournal(join(this.home, "state", "sessions", sessionId, "events.cbor"));
  }

  restoreStream(sessionId = this.sessionId): JournalRecord[] {
    return readJournal(join(this.home, "state", "sessions", sessionId, "restore-events.cbor"));
  }

  /** The agents loaded in the session, from its journal. */
  members(sessionId = this.sessionId): string[] {
    const m = new Set<string>();
    for (const r of this.sessionJournal(sessionId)) {
      if (r.event.name === "session.agent_loaded") m.add(String(r.event.data.agent_id));
      if (r.event.name === "session.agent_unloaded") m.delete(String(r.event.data.agent_id));
    }
    return [...m].sort();
  }

  recoveryFile(): string {
    return join(this.home, "config", "handoff", "recovery", `recovery-${this.sessionId}.md`);
  }

  /** Sessions in the state root other than this one (a handoff's replacement). */
  otherSessions(): string[] {
    const dir = join(this.home, "state", "sessions");
    if (!existsSync(dir)) return [];
    return readdirSync(dir).sort().filter((s) => s !== this.sessionId);
  }
}

/** A journal read strictly, read-only (a live writer's torn tail is left alone and not read). */
export function readJournal(file: string): JournalRecord[] {
  if (!existsSync(file)) return [];
  return replayJournal<JournalRecord>(file, { validate: validateJournalRecord }).records;
}
