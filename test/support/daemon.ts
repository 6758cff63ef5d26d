// Starts real `tau daemon` processes and connects real socket clients to them.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectUnix, listSessions, type Connection } from "../../handwritten/transport/index.js";
import { REVISION } from "../../handwritten/protocol/index.js";
import type { WireMessage } from "../../generated/index.js";
import { TAU_BIN } from "./paths.js";
import { runTau } from "./run-tau.js";
import { waitFor } from "./wait.js";

export { waitFor };

export type RosterPage = Extract<WireMessage, { message: "ui_roster_result" }>["payload"];

export interface StartedDaemon {
  session_id: string;
  pid: number;
  socket: string;
}

/** Removes a TAU_HOME once its owned daemons are gone (retrying a folder that was still filling). */
function disposeHome(home: string): void {
  waitForOwnedDaemons(home);
  rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
}

/**
 * Waits (at most 5 s) until no process of this TAU_HOME is left: a daemon a `tau run` owned (and its
 * extensions) finish their shutdown after the CLI is gone, and a daemon removes its runtime pair
 * before it exits, so the processes are found by their environment (Linux /proc).
 */
export function waitForOwnedDaemons(home: string): void {
  const deadline = Date.now() + 5000;
  while (processesOf(home).length > 0 && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
}

/** Live processes (other than this one) started with this TAU_HOME in their environment. */
export function processesOf(home: string): number[] {
  const marker = Buffer.from(`TAU_HOME=${home}\0`);
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`).includes(marker)) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** A fresh TAU_HOME whose harness.yaml configures no extensions (tests that need some write their own). */
export function tauHome(): { home: string; env: NodeJS.ProcessEnv; dispose: () => void } {
  const home = mkdtempSync(join(tmpdir(), "tau-home-"));
  mkdirSync(join(home, "config"), { recursive: true });
  writeFileSync(join(home, "config", "harness.yaml"), "extensions: []\n");
  return { home, env: { TAU_HOME: home }, dispose: () => disposeHome(home) };
}

export async function startDaemon(env: NodeJS.ProcessEnv, args: string[] = []): Promise<StartedDaemon> {
  const r = await runTau(["daemon", "--detach", ...args], { env });
  if (r.code !== 0) throw new Error(`tau daemon failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as StartedDaemon;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}


/** A socket client that keeps every message it receives and can wait for one. */
export class TestClient {
  readonly inbox: WireMessage[] = [];
  private syncs = 0;
  private rosters = 0;
  private constructor(readonly conn: Connection) {
    conn.onMessage((m) => this.inbox.push(m));
  }

  static async connect(socket: string): Promise<TestClient> {
    return new TestClient(await connectUnix(socket));
  }

  /** Connects and attaches as a UI; resolves once the harness accepted it. */
  static async ui(socket: string, sessionId?: string): Promise<TestClient> {
    const c = await TestClient.connect(socket);
    c.send({ message: "hello", payload: { revision: { ...REVISION }, role: "ui", ...(sessionId ? { session_id: sessionId } : {}) } });
    await c.next((m) => m.message === "ui_session_accepted");
    return c;
  }

  static async client(socket: string): Promise<TestClient> {
    const c = await TestClient.connect(socket);
    c.send({ message: "hello", payload: { revision: { ...REVISION }, role: "client" } });
    return c;
  }

  send(m: WireMessage): void {
    if (this.conn.send(m) !== "queued") throw new Error("send failed");
  }

  emit(name: string, data: Record<string, unknown>): void {
    this.send({ message: "emit", payload: { event: { name: name as never, data } } });
  }

  /** Waits for (and removes from the inbox) the first message matching `pred`. */
  async next(pred: (m: WireMessage) => boolean, ms = 10_000, what = "a matching message"): Promise<WireMessage> {
    let found: WireMessage | undefined;
    await waitFor(() => {
      const i = this.inbox.findIndex(pred);
      if (i >= 0) found = this.inbox.splice(i, 1)[0];
      return found !== undefined;
    }, what, ms);
    return found as WireMessage;
  }

  /**
   * A round trip on this attached UI's connection: the daemon handles a connection's messages in
   * order, so once the answer is here everything sent before it (a subscribe, an intercept, a
   * detach) has taken effect.
   */
  async sync(): Promise<void> {
    const request_id = `sync-${++this.syncs}`;
    this.send({ message: "ui_roster_request", payload: { request_id, include_unloaded: false } });
    await this.next((m) => m.message === "ui_roster_result" && m.payload.request_id === request_id, 10_000, `the daemon's answer to ${request_id}`);
  }

  /** Waits for (and removes from the inbox) the first delivery of `name` whose data matches `pred`; resolves with its data. */
  async delivered(name: string, pred: (data: Record<string, unknown>) => boolean = () => true, ms = 60_000): Promise<Record<string, unknown>> {
    const m = await this.next((x) => x.message === "deliver" && x.payload.event.name === name && pred(x.payload.event.data), ms, name);
    return m.message === "deliver" ? m.payload.event.data : {};
  }

  /** Asks for a new agent (`fields`: its display_name, role, …) and resolves with its id; throws when it is refused. */
  async createAgent(request_id = "r-agent", fields: Record<string, unknown> = {}): Promise<string> {
    this.emit("ui.create_agent", { request_id, ...fields });
    const m = await this.next((x) => x.message === "direct" && x.payload.event.data.request_id === request_id);
    if (m.message !== "direct" || m.payload.event.data.ok !== true) throw new Error("agent not created");
    return String(m.payload.event.data.agent_id);
  }

  /** One page of the session's roster (loaded agents only unless `include_unloaded`). */
  async roster(o: { cursor?: string; limit?: number; include_unloaded?: boolean } = {}, ms = 10_000): Promise<RosterPage> {
    const request_id = `roster-${++this.rosters}`;
    this.send({ message: "ui_roster_request", payload: { request_id, include_unloaded: false, ...o } });
    const m = await this.next((x) => x.message === "ui_roster_result" && x.payload.request_id === request_id, ms, "the roster");
    return (m as Extract<WireMessage, { message: "ui_roster_result" }>).payload;
  }

  deliveries(): Array<{ name: string; data: Record<string, unknown>; replay: boolean }> {
    return this.inbox.flatMap((m) =>
      m.message === "deliver" ? [{ name: m.payload.event.name, data: m.payload.event.data, replay: m.payload.replay === true }] : [],
    );
  }

  /** The deliveries of `name` so far whose data matches `pred` (left in the inbox). */
  deliveriesOf(name: string, pred: (data: Record<string, unknown>) => boolean = () => true): Array<{ name: string; data: Record<string, unknown>; replay: boolean }> {
    return this.deliveries().filter((d) => d.name === name && pred(d.data));
  }

  close(): void {
    this.conn.close("test done");
  }
}

export { spawn, TAU_BIN };

/**
 * A second UI of the one session running in tau home `home` (its interface started it), subscribed
 * to every event, replay included: a debug subscriber. Closed by `cleanups`.
 */
export async function subscriberOf(home: string, cleanups: Array<() => unknown>): Promise<TestClient> {
  let socket = "";
  await waitFor(async () => ((socket = (await listSessions(join(home, "runtime"))).rows[0]?.socket ?? "") !== ""), "the session's socket", { timeoutMs: 15_000, pollMs: 100 });
  const watcher = await TestClient.ui(socket);
  cleanups.push(() => watcher.close());
  watcher.send({ message: "subscribe", payload: { historical: ["*"], live: ["*"] } });
  await watcher.sync();
  return watcher;
}

/** A UI watching everything of the daemon's session, including current state (tool registrations, mandatory notices). */
export async function watchSession(d: StartedDaemon): Promise<TestClient> {
  const ui = await TestClient.ui(d.socket);
  ui.send({ message: "subscribe", payload: { historical: ["tool.register", "harness.notice"], live: ["*"] } });
  return ui;
}

/**
 * A daemon in a fresh tau home whose harness configuration lists `extensions`; what it leaves
 * (the home, a live daemon: SIGKILL) is undone by the functions pushed onto `cleanups`.
 */
export async function startDaemonWithExtensions(extensions: unknown[], cleanups: Array<() => unknown>): Promise<StartedDaemon & { env: NodeJS.ProcessEnv }> {
  const h = tauHome();
  cleanups.push(h.dispose);
  mkdirSync(join(h.home, "config"), { recursive: true });
  writeFileSync(join(h.home, "config", "harness.yaml"), JSON.stringify({ extensions }, null, 2));
  const d = await startDaemon(h.env);
  cleanups.push(() => {
    if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
  });
  return { ...d, env: h.env };
}
