// A hostile socket client (test/fixtures/hostile/socket-client.ts, its own process) against a real
// daemon: idle and half-sent connections, the worst legal frame, and a UI interceptor that never
// answers. The daemon stays up, bounded and serving: a UI can attach, `tau session list` answers,
// and the session's work goes on.
import { afterEach, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient, isAlive, startDaemonWithExtensions, waitFor, type StartedDaemon } from "../../support/daemon.js";
import { runTau } from "../../support/run-tau.js";
import { REPO_ROOT } from "../../support/paths.js";
import { HELLO_DEADLINE_MS, MAX_CLIENT_PEERS, MAX_PENDING_PEERS } from "../../../handwritten/harness/daemon.js";

const CLIENT = join(REPO_ROOT, "test/fixtures/hostile/socket-client.ts");
const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()?.();
});

async function daemon(extensions: unknown[] = []): Promise<{ d: StartedDaemon; env: NodeJS.ProcessEnv }> {
  const d = await startDaemonWithExtensions(extensions, cleanups);
  return { d, env: d.env };
}

interface Hostile {
  readonly child: ChildProcess;
  readonly lines: Array<Record<string, unknown>>;
}

/** Starts the hostile client and waits until its connections are set up. */
async function hostile(socket: string, mode: string, count: number): Promise<Hostile> {
  const child = spawn(process.execPath, ["--import", "tsx", CLIENT, socket, mode, String(count)], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "inherit"] });
  cleanups.push(() => child.kill("SIGKILL"));
  const lines: Array<Record<string, unknown>> = [];
  let rest = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => {
    rest += d;
    const parts = rest.split("\n");
    rest = parts.pop() as string;
    for (const p of parts) if (p) lines.push(JSON.parse(p) as Record<string, unknown>);
  });
  await waitFor(() => lines.some((l) => "open" in l), `the hostile client (${mode})`, 60_000);
  return { child, lines };
}

const closedCount = (h: Hostile) => Math.max(0, ...h.lines.map((l) => (typeof l.closed === "number" ? l.closed : 0)));

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) / 1024;
}

async function listed(env: NodeJS.ProcessEnv, sessionId: string): Promise<boolean> {
  const r = await runTau(["session", "list", "--json"], { env });
  return r.code === 0 && r.stdout.includes(sessionId);
}

describe("a hostile socket client", () => {
  it("[daemon.peers.classes-reserved] 255 idle connections crowd out neither a UI nor a session listing, and silence past the hello deadline is closed", async () => {
    const { d, env } = await daemon();
    const silent = await hostile(d.socket, "silent", 255);
    // The pending class holds 64: the rest were closed as newer ones came, oldest first.
    await waitFor(() => closedCount(silent) >= 255 - MAX_PENDING_PEERS, "the oldest silent connections to be evicted");
    const ui = await TestClient.ui(d.socket);
    expect(await listed(env, d.session_id)).toBe(true);
    const clients = await hostile(d.socket, "clients", 255);
    await waitFor(() => closedCount(clients) >= 255 - MAX_CLIENT_PEERS, "the oldest idle clients to be evicted");
    expect(await listed(env, d.session_id)).toBe(true);
    const second = await TestClient.ui(d.socket);
    // The silent ones that are left never said hello: the deadline closes them.
    await waitFor(() => closedCount(silent) === 255, "the hello deadline", HELLO_DEADLINE_MS + 5_000);
    second.send({ message: "ui_tree_request", payload: { request_id: "t" } });
    await second.next((m) => m.message === "notice" && m.payload.request_id === "t");
    expect(isAlive(d.pid)).toBe(true);
    ui.close();
    second.close();
  }, 60_000);

  it("[daemon.peers.partial-frames-bounded] half-sent 16 MiB frames on many connections are bounded in total, and the daemon keeps serving", async () => {
    const { d, env } = await daemon();
    const before = rssMiB(d.pid);
    const partial = await hostile(d.socket, "partial", 32); // 32 × 12 MiB = 384 MiB announced
    // 256 MiB is the most partial frames may hold together: at most 21 of the 32 fit.
    await waitFor(() => closedCount(partial) >= 11, "connections past the shared bound to be closed", 30_000);
    expect(rssMiB(d.pid) - before).toBeLessThan(256 + 128);
    const ui = await TestClient.ui(d.socket);
    expect(await listed(env, d.session_id)).toBe(true);
    ui.close();
  }, 60_000);

  it("[daemon.peers.worst-frame] frames of 16 MiB of empty maps are refused from their bytes, cheaply, and the daemon keeps serving", async () => {
    const { d } = await daemon();
    const flood = await hostile(d.socket, "empty-maps", 4);
    await waitFor(() => flood.lines.filter((l) => l.error === "bad_cbor").length === 4, "four bad_cbor answers", 30_000);
    expect(rssMiB(d.pid)).toBeLessThan(400);
    const ui = await TestClient.ui(d.socket);
    ui.send({ message: "ui_tree_request", payload: { request_id: "t" } });
    await ui.next((m) => m.message === "notice" && m.payload.request_id === "t");
    ui.close();
  }, 60_000);

  it("[bus.intercept.silent-ui-interceptor] a UI that intercepts everything and stops reading delays the session by one deadline at most", async () => {
    const { d } = await daemon([{ name: "driver", command: ["tau", "ext", "test-dummy"], config: { tools: ["echo"], driver: true }, call_tools: ["*"], startup_timeout_seconds: 20 }]);
    const ui = await TestClient.ui(d.socket);
    ui.send({ message: "subscribe", payload: { historical: ["tool.register"], live: ["*"] } });
    await waitFor(() => ui.deliveries().some((x) => x.name === "tool.register" && x.data.name === "echo"), "echo", 30_000);
    await hostile(d.socket, "interceptor", 1);
    ui.emit("ui.create_agent", { request_id: "r" });
    const created = await ui.next((m) => m.message === "direct" && m.payload.event.name === "ui.create_agent_result", 20_000);
    if (created.message !== "direct") throw new Error("unreachable");
    const agent = String(created.payload.event.data.agent_id);
    ui.emit("extension.event", { category: "test", name: "call", payload: { agent_id: agent, call_id: "c-1", tool: "echo", arguments: { text: "through" } } });
    await waitFor(() => ui.deliveries().some((x) => x.name === "tool.result" && x.data.call_id === "c-1"), "the call to complete", 20_000);
    expect(ui.deliveries().find((x) => x.name === "tool.result" && x.data.call_id === "c-1")?.data).toMatchObject({ outcome: "ok", output: "through" });
    ui.close();
  }, 60_000);
});
