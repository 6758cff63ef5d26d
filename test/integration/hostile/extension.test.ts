// A hostile configured extension (test/fixtures/hostile/hostile_extension.py: another language,
// its own CBOR encoder) against a real daemon: typed answers to bad frames, staged pre-ready
// notices, real counters, and a connection that ends being treated as an exit at once.
import { afterEach, describe, expect, it } from "vitest";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { TestClient, isAlive, startDaemonWithExtensions, waitFor, watchSession, type StartedDaemon } from "../../support/daemon.js";
import { REPO_ROOT } from "../../support/paths.js";

const HOSTILE = join(REPO_ROOT, "test/fixtures/hostile/hostile_extension.py");
const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()?.();
});

const daemonWith = (extensions: unknown[]): Promise<StartedDaemon> => startDaemonWithExtensions(extensions, cleanups);

const hostile = (name: string, config: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name,
  command: ["python3", HOSTILE, ...(extra.minor !== undefined ? ["--minor", String(extra.minor)] : [])],
  config,
  startup_timeout_seconds: 20,
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== "minor")),
});
const driver = { name: "driver", command: ["tau", "ext", "test-dummy"], config: { tools: ["echo"], driver: true }, call_tools: ["*"], startup_timeout_seconds: 20 };

async function createAgent(ui: TestClient): Promise<string> {
  ui.emit("ui.create_agent", { request_id: "r-agent" });
  const m = await ui.next((x) => x.message === "direct" && x.payload.event.name === "ui.create_agent_result");
  if (m.message !== "direct") throw new Error("unreachable");
  return String(m.payload.event.data.agent_id);
}

function act(ui: TestClient, action: string, payload: Record<string, unknown> = {}): void {
  ui.emit("extension.event", { category: "hostile", name: action, payload });
}

/** The pid of the daemon's child whose command line contains `marker`. */
function childPid(daemonPid: number, marker: string): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === daemonPid && readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)) return Number(entry);
    } catch {
      // gone
    }
  }
  return undefined;
}

function gone(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, "utf8").slice(readFileSync(`/proc/${pid}/stat`, "utf8").lastIndexOf(")") + 2)[0];
    return state === "Z" || state === "X";
  } catch {
    return true;
  }
}

describe("a hostile extension", () => {
  it("[host.hostile.typed-errors] gets a typed answer for every bad frame and never takes the daemon down", async () => {
    const d = await daemonWith([hostile("py", { tools: ["pyecho"], pre_ready_notices: 3, pre_ready_ints: true }, { minor: 7 }), driver]);
    const ui = await watchSession(d);
    await waitFor(() => ui.deliveriesOf("tool.register", (x) => x.name === "pyecho").length === 1, "pyecho to register", 30_000);
    // Another minor revision: accepted, with one warning a late UI still sees.
    expect(ui.deliveriesOf("harness.notice", (x) => String(x.text).includes("speaks protocol 1.7"))).toHaveLength(1);
    // Integers a Python encoder sends with 8-byte arguments arrive as numbers; one past 2^53 is refused.
    act(ui, "big-ints");
    await waitFor(() => ui.deliveriesOf("extension.event", (x) => x.category === "ints").length === 1, "the integers");
    expect(ui.deliveriesOf("extension.event", (x) => x.category === "ints")[0]?.data.payload).toEqual({ n32: 2 ** 32, max: Number.MAX_SAFE_INTEGER, neg: -(2 ** 40) });
    act(ui, "dup-keys");
    act(ui, "bad-utf8");
    act(ui, "unknown-message");
    act(ui, "report", { after: 5 }); // once the five answers (one to a frame sent before ready) are in
    await waitFor(() => ui.deliveriesOf("extension.event", (x) => x.category === "hostile-report").length === 1, "the report");
    const report = ui.deliveriesOf("extension.event", (x) => x.category === "hostile-report")[0]!.data.payload as { codes: string[] };
    expect(report.codes).toEqual(["invalid", "invalid", "bad_cbor", "bad_cbor", "unknown_message"]);
    expect(ui.deliveriesOf("extension.event", (x) => x.category === "dup" || x.category === "utf")).toEqual([]);
    // Still serving: a call to its tool is answered.
    const agent = await createAgent(ui);
    ui.emit("extension.event", { category: "test", name: "call", payload: { agent_id: agent, call_id: "c-py", tool: "pyecho", arguments: { x: 1 } } });
    await waitFor(() => ui.deliveriesOf("tool.result", (x) => x.call_id === "c-py").length === 1, "the call");
    expect(ui.deliveriesOf("tool.result", (x) => x.call_id === "c-py")[0]?.data).toMatchObject({ outcome: "ok", output: 'py:{"x":1}' });
    // Its counters, on request: the three pre-ready notices were staged with its declaration.
    ui.send({ message: "ui_debug_event_stats_request", payload: { request_id: "stats-1" } });
    const stats = await ui.next((m) => m.message === "notice" && m.payload.request_id === "stats-1");
    if (stats.message !== "notice") throw new Error("unreachable");
    const line = stats.payload.text.split("\n").find((l) => l.startsWith("py "));
    expect(line).toMatch(/^py \(tool, active, generation \d+, 0 restarts\): \d+ messages, \d+ published, 0 refused, 5 staged, 3 notices, 5 unreadable$/);
    expect(stats.payload.text.split("\n").some((l) => l.startsWith("driver (tool, active"))).toBe(true);
    expect(isAlive(d.pid)).toBe(true);
    ui.close();
  });

  it("[host.connection-closed.is-exit] an extension whose connection ends is stopped at once: calls end, tools and models go, a notice says why", async () => {
    const d = await daemonWith([
      hostile("pytool", { tools: ["pyhang"], ignore_term: true }),
      hostile("pyllm", { models: ["py-model"] }, { kind: "provider" }),
      driver,
    ]);
    const ui = await watchSession(d);
    await waitFor(() => ui.deliveriesOf("tool.register", (x) => x.name === "pyhang").length === 1, "pyhang to register", 30_000);
    ui.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: [] } });
    await waitFor(() => ui.deliveriesOf("harness.models_available", (x) => JSON.stringify(x.models).includes("py-model")).length > 0, "py-model");
    const agent = await createAgent(ui);
    ui.emit("extension.event", { category: "test", name: "call", payload: { agent_id: agent, call_id: "c-hang", tool: "pyhang" } });
    await waitFor(() => ui.deliveriesOf("tool.started", (x) => x.call_id === "c-hang").length === 1, "the call to start");
    const toolPid = childPid(d.pid, "hostile_extension.py") as number;
    expect(toolPid).toBeGreaterThan(0);

    // A frame over 16 MiB: the connection cannot go on, and neither can the extension's generation.
    act(ui, "oversize");
    await waitFor(() => ui.deliveriesOf("tool.result", (x) => x.call_id === "c-hang").length === 1, "the open call to end");
    expect(ui.deliveriesOf("tool.result", (x) => x.call_id === "c-hang")[0]?.data).toMatchObject({ outcome: "error" });
    // The call's end, the tool's withdrawal and the notice are separate commits: each is waited for.
    await waitFor(() => ui.deliveriesOf("tool.unregister", (x) => x.name === "pyhang").length >= 1, "pyhang to be withdrawn");
    await waitFor(() => ui.deliveriesOf("harness.notice", (x) => String(x.text).includes('"pytool" sent a frame over the 16 MiB limit; stopping it')).length >= 1, "the notice");
    expect(ui.deliveriesOf("harness.notice", (x) => String(x.text).includes('"pytool" sent a frame over the 16 MiB limit; stopping it'))).toHaveLength(1);
    // pyllm saw the same custom event: its "oversize" is the same case for a provider.
    await waitFor(() => ui.deliveriesOf("harness.models_available").some((x) => !x.replay && !JSON.stringify(x.data.models).includes("py-model")), "py-model to leave");
    // The process is stopped even though it ignores SIGTERM (SIGKILL follows), then respawned.
    await waitFor(() => gone(toolPid), "the old process to be stopped", 10_000);
    await waitFor(() => ui.deliveriesOf("tool.register", (x) => x.name === "pyhang").length === 2, "the respawned process to register again", 30_000);
    expect(isAlive(d.pid)).toBe(true);
    ui.close();
  });

  it("[host.daemon-killed.extension-ends] an extension that ignores SIGTERM and lingers after its input ends still ends with a SIGKILLed daemon", async () => {
    const d = await daemonWith([hostile("pylinger", { tools: ["pylingertool"], ignore_term: true })]);
    const ui = await watchSession(d);
    await waitFor(() => ui.deliveriesOf("tool.register", (x) => x.name === "pylingertool").length === 1, "the tool", 30_000);
    const pid = childPid(d.pid, "hostile_extension.py") as number;
    expect(pid).toBeGreaterThan(0);
    ui.close();
    process.kill(d.pid, "SIGKILL");
    // Its input ends and it stays (hostile_extension.py's linger): only the parent-death signal ends it.
    await waitFor(() => gone(pid), "the extension to end with its daemon", 5_000);
  });

  it("[host.connection-closed.eof] an extension that closes its output is treated as exited though its process lingers", async () => {
    const d = await daemonWith([hostile("pyeof", { tools: ["pyeofhang"] }), driver]);
    const ui = await watchSession(d);
    await waitFor(() => ui.deliveriesOf("tool.register", (x) => x.name === "pyeofhang").length === 1, "the tool", 30_000);
    const pid = childPid(d.pid, "hostile_extension.py") as number;
    act(ui, "eof");
    await waitFor(() => ui.deliveriesOf("harness.notice", (x) => String(x.text).includes('"pyeof" closed its end of the connection; stopping it')).length === 1, "the notice");
    await waitFor(() => ui.deliveriesOf("tool.unregister", (x) => x.name === "pyeofhang").length === 1, "its tool to go");
    await waitFor(() => gone(pid), "the lingering process to be stopped", 10_000);
    ui.close();
  });

  it("[host.tool-names.held-while-restarting] a first-party tool name stays its owner's while it restarts; a squatter is refused", async () => {
    const d = await daemonWith([
      { name: "shell", command: ["tau", "ext", "shell"], startup_timeout_seconds: 30 },
      hostile("squatter", { squat: ["shell", "read"] }),
    ]);
    const ui = await watchSession(d);
    await waitFor(() => ui.deliveriesOf("tool.register", (x) => x.name === "shell").length === 1, "shell to register", 30_000);
    const shellPid = childPid(d.pid, "ext\0shell") as number;
    expect(shellPid).toBeGreaterThan(0);
    process.kill(shellPid, "SIGKILL");
    await waitFor(() => ui.deliveriesOf("tool.unregister", (x) => x.name === "shell").length === 1, "shell to go");
    await waitFor(() => ui.deliveriesOf("tool.register", (x) => x.name === "shell").length === 2, "shell to come back", 30_000);
    await waitFor(() => ui.deliveriesOf("tool.register", (x) => x.name === "read").length === 2, "read to come back", 30_000);
    // The squatter declared both names the moment they went; neither ever became its own.
    expect(ui.deliveriesOf("tool.registration_declared", (x) => x.name === "shell" && x.description === "mine now")).toHaveLength(1);
    expect(ui.deliveriesOf("tool.register").filter((x) => x.data.name === "shell" || x.data.name === "read").map((x) => x.data.owner)).toEqual(["shell", "shell", "shell", "shell"]);
    ui.close();
  });
});
