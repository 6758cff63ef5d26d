// Starts real `tau daemon` processes and connects real socket clients to them.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectUnix, parseStem, type Connection } from "../../handwritten/transport/index.js";
import { REVISION } from "../../handwritten/protocol/index.js";
import type { WireMessage } from "../../generated/index.js";
import { TAU_BIN } from "./paths.js";
import { runTau } from "./run-tau.js";

export interface StartedDaemon {
  session_id: string;
  pid: number;
  socket: string;
}

/**
 * Removes a TAU_HOME. A daemon a `tau run` owned may still be shutting down after the CLI exited
 * (the CLI does not wait for it): give the daemons listed in the runtime folder a moment to finish
 * writing their session files, then remove everything (retrying a folder that was still filling).
 */
function disposeHome(home: string): void {
  let stems: string[] = [];
  try {
    stems = readdirSync(join(home, "runtime")).filter((f) => f.endsWith(".sock")).map((f) => f.slice(0, -".sock".length));
  } catch {
    // no runtime folder: nothing ran
  }
  const deadline = Date.now() + 5000;
  for (const stem of stems) {
    const pid = parseStem(stem)?.pid;
    while (pid !== undefined && isAlive(pid) && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  }
  rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
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

export async function waitFor(pred: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A socket client that keeps every message it receives and can wait for one. */
export class TestClient {
  readonly inbox: WireMessage[] = [];
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
  async next(pred: (m: WireMessage) => boolean, ms = 10_000): Promise<WireMessage> {
    let found: WireMessage | undefined;
    await waitFor(() => {
      const i = this.inbox.findIndex(pred);
      if (i >= 0) found = this.inbox.splice(i, 1)[0];
      return found !== undefined;
    }, "a matching message", ms);
    return found as WireMessage;
  }

  deliveries(): Array<{ name: string; data: Record<string, unknown>; replay: boolean }> {
    return this.inbox.flatMap((m) =>
      m.message === "deliver" ? [{ name: m.payload.event.name, data: m.payload.event.data, replay: m.payload.replay === true }] : [],
    );
  }

  close(): void {
    this.conn.close("test done");
  }
}

export { spawn, TAU_BIN };
