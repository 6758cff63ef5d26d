import { afterEach, describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient, isAlive, startDaemon, tauHome, waitFor, type StartedDaemon } from "../../support/daemon.js";
import { runTau } from "../../support/run-tau.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()?.();
});

function home() {
  const h = tauHome();
  cleanups.push(h.dispose);
  return h;
}

async function daemon(env: NodeJS.ProcessEnv, args: string[] = []): Promise<StartedDaemon> {
  const d = await startDaemon(env, args);
  cleanups.push(() => {
    if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
  });
  return d;
}

async function createAgent(ui: TestClient, requestId: string, extra: Record<string, unknown> = {}): Promise<string> {
  ui.emit("ui.create_agent", { request_id: requestId, ...extra });
  const m = await ui.next((x) => x.message === "direct" && x.payload.event.data.request_id === requestId);
  if (m.message !== "direct") throw new Error("unreachable");
  const data = m.payload.event.data as { ok: boolean; agent_id?: string; error?: string };
  if (!data.ok) throw new Error(data.error);
  return data.agent_id as string;
}

describe("tau daemon over its socket", () => {
  it("[daemon.authority.protected-refused] refuses protected and canonical events from UIs and every event from other socket peers", async () => {
    const { env } = home();
    const d = await daemon(env);
    const ui = await TestClient.ui(d.socket, d.session_id);
    const watcher = await TestClient.ui(d.socket);
    watcher.send({ message: "subscribe", payload: { historical: [], live: ["*"] } });
    const protectedEvents: Array<[string, Record<string, unknown>]> = [
      ["session.started", { session_id: d.session_id, project_root: "/x", resumed: false, ephemeral: false }],
      ["agent.prompt_submitted", { agent_id: "a-1", prompt_id: "p-1", source: "human_ui", mode: "queue", text: "hi" }],
      ["provider.tool_result", { agent_id: "a-1", prompt_id: "p", call_id: "c", tool: "t", output: "forged" }],
      ["tool.result_reported", { call_id: "c", output: "not a tool" }],
      ["agent.metadata_set", { agent_id: "a-1", key: "k", value: "v", by: { class: "harness" } }],
    ];
    for (const [name, data] of protectedEvents) {
      ui.emit(name, data);
      const err = await ui.next((m) => m.message === "error");
      expect(err.payload).toEqual({ code: "unauthorized" });
    }
    const client = await TestClient.client(d.socket);
    client.emit("ui.focus", { focused: true });
    client.emit("session.started", { session_id: "s", project_root: "/", resumed: false, ephemeral: false });
    client.send({ message: "ui_roster_request", payload: { request_id: "r1", include_unloaded: true } });
    for (const expected of [{ code: "unauthorized" }, { code: "unauthorized" }, { code: "unauthorized", request_id: "r1" }]) {
      expect((await client.next((m) => m.message === "error")).payload).toEqual(expected);
    }
    // nothing forged was committed
    ui.emit("ui.focus", { focused: true });
    await watcher.next((m) => m.message === "deliver" && m.payload.event.name === "ui.focus");
    expect(watcher.deliveries().map((x) => x.name)).toEqual([]);
    for (const c of [ui, watcher, client]) c.close();
  });

  it("[daemon.create-agent.requester-only] answers ui.create_agent only to the requesting UI and refuses non-UI sockets", async () => {
    const { env } = home();
    const d = await daemon(env);
    const a = await TestClient.ui(d.socket);
    const b = await TestClient.ui(d.socket);
    b.send({ message: "subscribe", payload: { historical: [], live: ["*"] } });
    const agentId = await createAgent(a, "req-a", { display_name: "first" });
    await b.next((m) => m.message === "deliver" && m.payload.event.name === "session.agent_loaded");
    expect(b.inbox.some((m) => m.message === "direct")).toBe(false);
    expect(b.deliveries().some((x) => x.name === "ui.create_agent_result")).toBe(false);
    expect(agentId).toMatch(/^a-/);

    const client = await TestClient.client(d.socket);
    client.emit("ui.create_agent", { request_id: "req-c" });
    expect((await client.next((m) => m.message === "error")).payload).toEqual({ code: "unauthorized" });
    expect(client.inbox.some((m) => m.message === "direct")).toBe(false);
    for (const c of [a, b, client]) c.close();
  });

  it("[daemon.intercept.pass-drop-replace] lets an interceptor pass, drop or replace, but never drop a protected fact", async () => {
    const { env } = home();
    const d = await daemon(env);
    const interceptor = await TestClient.ui(d.socket);
    const publisher = await TestClient.ui(d.socket);
    const watcher = await TestClient.ui(d.socket);
    watcher.send({ message: "subscribe", payload: { historical: [], live: ["ui.prompt_draft", "agent.*", "session.*"] } });
    interceptor.send({ message: "intercept", payload: { selectors: ["ui.prompt_draft", "agent.started"], priority: 0 } });
    interceptor.conn.onMessage((m) => {
      if (m.message !== "intercept_request") return;
      const text = String(m.payload.event.data.text ?? "");
      const reply =
        m.payload.event.name === "agent.started"
          ? { action: "drop" as const }
          : text === "drop me"
            ? { action: "drop" as const }
            : text === "rewrite me"
              ? { action: "replace" as const, replacement: { name: m.payload.event.name, data: { ...m.payload.event.data, text: "rewritten" } } }
              : { action: "pass" as const };
      interceptor.send({ message: "intercept_reply", payload: { id: m.payload.id, ...reply } });
    });
    await interceptor.sync(); // its interception is in place
    await watcher.sync(); // and the watcher's subscription
    for (const text of ["keep me", "drop me", "rewrite me", "last"]) publisher.emit("ui.prompt_draft", { agent_id: "a-x", text });
    await watcher.next((m) => m.message === "deliver" && m.payload.event.data.text === "last");
    const agentId = await createAgent(publisher, "r1");
    await watcher.next((m) => m.message === "deliver" && m.payload.event.name === "session.agent_loaded");
    const seen = watcher.deliveries();
    expect(seen.filter((x) => x.name === "ui.prompt_draft").map((x) => x.data.text)).toEqual(["keep me", "rewritten"]);
    expect(seen.find((x) => x.name === "agent.started")?.data.agent_id).toBe(agentId);
    for (const c of [interceptor, publisher, watcher]) c.close();
  });

  it("[daemon.replay.boundaries] marks catch-up deliveries as replay and ends them with session.replay_complete", async () => {
    const { env } = home();
    const d = await daemon(env);
    const ui = await TestClient.ui(d.socket);
    const a1 = await createAgent(ui, "r1");
    const a2 = await createAgent(ui, "r2", { parent_id: a1 });
    const late = await TestClient.ui(d.socket);
    late.send({ message: "subscribe", payload: { historical: ["session.*", "agent.*"], live: ["session.*"] } });
    await late.next((m) => m.message === "deliver" && m.payload.event.name === "session.replay_complete");
    const replayed = late.deliveries();
    expect(replayed.every((x) => x.replay)).toBe(true);
    expect(replayed.filter((x) => x.name === "session.agent_loaded").map((x) => x.data.agent_id)).toEqual([a1, a2]);
    expect(replayed.map((x) => x.name)).toContain("session.started");
    late.inbox.length = 0;
    const a3 = await createAgent(ui, "r3");
    const live = await late.next((m) => m.message === "deliver" && m.payload.event.name === "session.agent_loaded");
    if (live.message !== "deliver") throw new Error("unreachable");
    expect(live.payload.replay).toBeUndefined();
    expect(live.payload.event.data.agent_id).toBe(a3);
    ui.close();
    late.close();
  });

  it("[daemon.replay.long-history] replays a history longer than the live queue's item bound, all of it, then goes live", async () => {
    const { env } = home();
    const d = await daemon(env);
    const ui = await TestClient.ui(d.socket);
    const agents: string[] = [];
    for (let i = 0; i < 560; i++) agents.push(await createAgent(ui, `r${i}`)); // two events each
    const late = await TestClient.ui(d.socket);
    late.send({ message: "subscribe", payload: { historical: ["*"], live: ["session.*"] } });
    const done = await late.next((m) => m.message === "deliver" && m.payload.event.name === "session.replay_complete", 20_000);
    if (done.message !== "deliver") throw new Error("unreachable");
    const replayed = late.deliveries().filter((x) => x.name !== "session.replay_complete");
    expect(replayed.length).toBeGreaterThan(1024);
    expect(done.payload.event.data.replayed).toBe(replayed.length);
    expect(replayed.every((x) => x.replay)).toBe(true);
    expect(replayed.filter((x) => x.name === "session.agent_loaded").map((x) => x.data.agent_id)).toEqual(agents);
    // Still connected and live afterwards.
    late.inbox.length = 0;
    const next = await createAgent(ui, "after");
    const live = await late.next((m) => m.message === "deliver" && m.payload.event.name === "session.agent_loaded");
    if (live.message !== "deliver") throw new Error("unreachable");
    expect(live.payload.event.data.agent_id).toBe(next);
    ui.close();
    late.close();
  });

  it("[daemon.subscriber.slow-bounded] cuts off a subscriber that stops reading without stalling the others", async () => {
    const { env } = home();
    const d = await daemon(env);
    const slow = await TestClient.ui(d.socket);
    slow.send({ message: "subscribe", payload: { historical: [], live: ["ui.prompt_draft"] } });
    const fast = await TestClient.ui(d.socket);
    fast.send({ message: "subscribe", payload: { historical: [], live: ["ui.prompt_draft"] } });
    const producer = await TestClient.ui(d.socket);
    await slow.sync(); // both subscriptions are in place
    await fast.sync();
    pauseReading(slow);
    const body = "x".repeat(2048);
    const total = 3000;
    // The fast subscriber keeps up (the producer waits for it every 100 events); the slow one never reads.
    for (let i = 0; i < total; i++) {
      await producer.conn.sendAsync({ message: "emit", payload: { event: { name: "ui.prompt_draft", data: { agent_id: "a", text: `${i} ${body}` } } } });
      if (i % 100 === 99) await waitFor(() => fast.deliveries().length > i - 50, "the fast subscriber to keep up", 20_000);
    }
    await waitFor(() => fast.deliveries().length === total, "all deliveries to the fast subscriber", 60_000);
    resumeReading(slow); // it reads what the kernel held, then finds its connection closed by the daemon
    await waitFor(() => !slow.conn.isOpen, "the slow subscriber to be cut off", 20_000);
    expect(fast.deliveries().map((x) => Number(String(x.data.text).split(" ")[0]))).toEqual(Array.from({ length: total }, (_, i) => i));
    expect(slow.deliveries().length).toBeLessThan(total);
    fast.close();
    producer.close();
  });

  it("[daemon.crash.sigkill-resume] restores the same agents and transcript after SIGKILL", async () => {
    const { env, home: root } = home();
    const d = await daemon(env);
    const ui = await TestClient.ui(d.socket);
    ui.send({ message: "subscribe", payload: { historical: [], live: ["agent.metadata_set"] } });
    const a1 = await createAgent(ui, "r1", { display_name: "lead" });
    await createAgent(ui, "r2", { parent_id: a1 });
    ui.emit("agent.metadata_request", { agent_id: a1, key: "cwd", value: "/work/sub" });
    // Committed means journaled: the append comes before the broadcast.
    await ui.next((m) => m.message === "deliver" && m.payload.event.name === "agent.metadata_set" && m.payload.event.data.key === "cwd", 10_000, "the cwd metadata to commit");
    const durable = async (socket: string) => {
      const c = await TestClient.ui(socket);
      c.send({ message: "subscribe", payload: { historical: ["agent.*", "session.agent_loaded", "session.agent_unloaded"], live: [] } });
      await c.next((m) => m.message === "deliver" && m.payload.event.name === "session.replay_complete");
      const rows = c.deliveries().map((x) => ({ name: x.name, data: x.data }));
      c.close();
      return rows;
    };
    const before = await durable(d.socket);
    expect(before.filter((r) => r.name === "agent.metadata_set").map((r) => r.data.key)).toEqual(["display_name", "cwd"]);
    process.kill(d.pid, "SIGKILL");
    await waitFor(() => !isAlive(d.pid), "the daemon to die");
    const runtime = join(root, "runtime");
    const leftovers = readdirSync(runtime).sort();
    expect(leftovers.length).toBe(2); // the killed daemon's pair stays; nobody unlinks it

    const resumed = await daemon(env, ["--resume", d.session_id]);
    expect(resumed.session_id).toBe(d.session_id);
    const after = await durable(resumed.socket);
    expect(after).toEqual(before);
    const listed = await runTau(["session", "list", "--json"], { env });
    const rows = JSON.parse(listed.stdout) as Array<{ session_id: string; pid: number }>;
    expect(rows.map((r) => r.pid)).toEqual([resumed.pid]);
    for (const f of leftovers) expect(existsSync(join(runtime, f))).toBe(true);
  });

  it("[daemon.resume.unknown-session] a --resume of a session with no journal fails at once, starting no extension", async () => {
    const { env, home: root } = home();
    const timeline = join(root, "timeline.txt");
    const r = await runTau(["daemon", "--resume", "s-none-000000000000"], { env: { ...env, TAU_TIMELINE: timeline } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("cannot open session s-none-000000000000");
    const marks = readFileSync(timeline, "utf8");
    expect(marks).toContain(" daemon main\n");
    expect(marks).not.toContain(" daemon extensions spawned early\n");
  });

  it("[daemon.exit.last-ui-leaves] an owned daemon exits when its last UI leaves, unless that UI detached", async () => {
    const { env, home: root } = home();
    const d = await daemon(env, ["--exit-when-uis-leave"]);
    const ui = await TestClient.ui(d.socket);
    ui.send({ message: "ui_detach_request", payload: {} }); // handled before the end of input that follows it
    ui.close();
    // Once the UI's socket has closed, its end of input waits at the daemon ahead of anything a
    // later connection sends; so the answer to that connection comes after the daemon handled the
    // UI leaving, and a daemon that had stopped (it closes its socket first) would give none.
    await waitFor(() => streamsOf(ui).every((s) => s.closed), "the UI's socket to close");
    const client = await TestClient.client(d.socket);
    client.send({ message: "ui_detach_request", payload: {} });
    const answer = await client.next((m) => m.message === "error", 10_000, "an answer from the daemon after the detached UI left");
    expect(answer.payload).toEqual({ code: "unauthorized" });
    expect(isAlive(d.pid)).toBe(true);
    client.close();
    const again = await TestClient.ui(d.socket);
    again.close();
    await waitFor(() => !isAlive(d.pid), "the daemon to exit");
    expect(readdirSync(join(root, "runtime"))).toEqual([]);
  });

  it("[daemon.session-list.two-daemons] lists two running daemons with their sessions and project roots", async () => {
    const { env } = home();
    const d1 = await daemon(env, ["--project-root", "/srv/one"]);
    const d2 = await daemon(env, ["--project-root", "/srv/two", "--ephemeral"]);
    const r = await runTau(["session", "list", "--json"], { env });
    expect(r.code).toBe(0);
    const rows = (JSON.parse(r.stdout) as Array<{ session_id: string; project_root: string }>).sort((a, b) => a.project_root.localeCompare(b.project_root));
    expect(rows.map((x) => [x.session_id, x.project_root])).toEqual([
      [d1.session_id, "/srv/one"],
      [d2.session_id, "/srv/two"],
    ]);
  });

  it("refuses a UI that expects another session", async () => {
    const { env } = home();
    const d = await daemon(env);
    const c = await TestClient.connect(d.socket);
    c.send({ message: "hello", payload: { revision: { major: 1, minor: 0 }, role: "ui", session_id: "s-someone-else" } });
    expect((await c.next((m) => m.message === "error")).payload).toEqual({ code: "session_mismatch" });
    await waitFor(() => !c.conn.isOpen, "the connection to close");
  });
});

/** Stops (or restarts) reading the client's socket, so the daemon sees a subscriber that does not read. */
function streamsOf(c: TestClient): Array<{ pause(): void; resume(): void; readonly closed: boolean }> {
  const internals = c.conn as unknown as Record<string, unknown>;
  return Object.values(internals).filter(
    (v): v is { pause(): void; resume(): void; readonly closed: boolean } => !!v && typeof v === "object" && typeof (v as { pause?: unknown }).pause === "function",
  );
}
function pauseReading(c: TestClient): void {
  for (const s of streamsOf(c)) s.pause();
}
function resumeReading(c: TestClient): void {
  for (const s of streamsOf(c)) s.resume();
}
