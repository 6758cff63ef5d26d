import { afterEach, describe, expect, it } from "vitest";
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { EXTENSIONS_LOG_MAX_BYTES } from "../../../handwritten/host/index.js";
import { join } from "node:path";
import { TestClient, isAlive, startDaemon, tauHome, waitFor, watchSession, type StartedDaemon } from "../../support/daemon.js";
import { runTau } from "../../support/run-tau.js";
import { REPO_ROOT } from "../../support/paths.js";

const ROGUE = ["node", "--import", "tsx", join(REPO_ROOT, "test/fixtures/host/rogue-extension.ts")];
const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()?.();
});

function setup(extensions: unknown[], env: Record<string, string> = {}) {
  const h = tauHome();
  cleanups.push(h.dispose);
  mkdirSync(join(h.home, "config"), { recursive: true });
  writeFileSync(join(h.home, "config", "harness.yaml"), JSON.stringify({ extensions }, null, 2));
  return { ...h, env: { ...h.env, ...env } };
}

async function daemon(env: NodeJS.ProcessEnv): Promise<StartedDaemon> {
  const d = await startDaemon(env);
  cleanups.push(() => {
    if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
  });
  return d;
}

/** A test-dummy instance; a driver (which turns the test's custom events into tool calls) may call any tool. */
const dummy = (name: string, config: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name,
  command: ["tau", "ext", "test-dummy"],
  config,
  startup_timeout_seconds: 20,
  ...(config.driver === true ? { call_tools: ["*"] } : {}),
  ...extra,
});

async function registered(ui: TestClient, tool: string, count = 1): Promise<void> {
  await waitFor(() => ui.deliveriesOf("tool.register", (d) => d.name === tool).length >= count, `tool ${tool} to register`, 30_000);
}

async function createAgent(ui: TestClient): Promise<string> {
  ui.emit("ui.create_agent", { request_id: "r-agent" });
  const m = await ui.next((x) => x.message === "direct");
  if (m.message !== "direct") throw new Error("unreachable");
  return String(m.payload.event.data.agent_id);
}

function call(ui: TestClient, agent_id: string, call_id: string, tool: string, args: unknown = {}) {
  ui.emit("extension.event", { category: "test", name: "call", payload: { agent_id, call_id, tool, arguments: args } });
}

async function resultOf(ui: TestClient, callId: string) {
  await waitFor(() => ui.deliveriesOf("tool.result", (d) => d.call_id === callId).length > 0, `the result of ${callId}`, 30_000);
  return ui.deliveriesOf("tool.result", (d) => d.call_id === callId)[0]!.data;
}

describe("extensions under supervision", () => {
  it("[host.tool.round-trip] routes a call to its owner and publishes progress and the canonical result", async () => {
    const { env } = setup([dummy("dummy", { tools: ["echo", "progress"], driver: true })]);
    const d = await daemon(env);
    const ui = await watchSession(d);
    await registered(ui, "echo");
    const agent = await createAgent(ui);
    call(ui, agent, "c-1", "echo", { text: "hello" });
    expect(await resultOf(ui, "c-1")).toMatchObject({ outcome: "ok", output: "hello", tool: "echo" });
    expect(ui.deliveriesOf("tool.started", (x) => x.call_id === "c-1")[0]?.data.owner).toBe("dummy");
    call(ui, agent, "c-2", "progress");
    expect(await resultOf(ui, "c-2")).toMatchObject({ outcome: "ok", output: "done" });
    expect(ui.deliveriesOf("tool.progress", (x) => x.call_id === "c-2").map((x) => x.data.text)).toEqual(["step 1", "step 2", "step 3"]);
    // The display is committed right after the result: it may arrive in a later read.
    await waitFor(() => ui.deliveriesOf("tool.result_display", (x) => x.call_id === "c-2").length > 0, "the result display");
    expect(ui.deliveriesOf("tool.result_display", (x) => x.call_id === "c-2")[0]?.data.display).toEqual({ summary: "three steps" });
    call(ui, agent, "c-3", "nonexistent");
    expect(await resultOf(ui, "c-3")).toMatchObject({ outcome: "error", output: "unknown tool nonexistent" });
    ui.close();
  });

  it("[host.rogue.refused] refuses protected facts, canonical results, other kinds' events and non-owner reports", async () => {
    const { env } = setup([
      dummy("dummy", { tools: ["sleep"], driver: true }),
      { name: "rogue", command: ROGUE, startup_timeout_seconds: 30 },
    ]);
    const d = await daemon(env);
    const ui = await watchSession(d);
    await registered(ui, "sleep");
    // Initial extensions activate together: once "sleep" is registered, the rogue is live as well.
    const agent = await createAgent(ui);
    call(ui, agent, "c-long", "sleep", { ms: 60_000 });
    await waitFor(() => ui.deliveriesOf("tool.started", (x) => x.call_id === "c-long").length === 1, "the call to start");
    ui.emit("extension.event", { category: "test", name: "rogue", payload: { call_id: "c-long", agent_id: agent } });
    await waitFor(() => ui.deliveriesOf("extension.event", (x) => x.category === "rogue").length === 1, "the rogue's report", 20_000);
    const report = ui.deliveriesOf("extension.event", (x) => x.category === "rogue")[0]!.data.payload as { codes: string[] };
    expect(report.codes).toEqual(Array(6).fill("unauthorized"));
    const names = ui.deliveries().map((x) => x.name);
    for (const forged of ["session.started", "provider.tool_result", "provider.response_finished_reported", "ui.create_agent"]) {
      expect(names.filter((n) => n === forged)).toEqual(forged === "ui.create_agent" ? ["ui.create_agent"] : []);
    }
    expect(ui.deliveriesOf("harness.notice", (x) => x.text === "forged")).toEqual([]);
    // The non-owner's report committed as an observation, but the call is still open.
    expect(ui.deliveriesOf("tool.result_reported", (x) => x.call_id === "c-long")).toHaveLength(1);
    expect(ui.deliveriesOf("tool.result", (x) => x.call_id === "c-long")).toEqual([]);
    // Cancellation reaches the exact owner, which ends the call once.
    ui.emit("agent.cancel_request", { agent_id: agent });
    expect(await resultOf(ui, "c-long")).toMatchObject({ outcome: "cancelled" });
    // A later call through the same owner: its result commits after anything the owner reported for c-long.
    call(ui, agent, "c-after", "sleep", { ms: 0 });
    expect(await resultOf(ui, "c-after")).toMatchObject({ outcome: "ok", output: "slept" });
    expect(ui.deliveriesOf("tool.result", (x) => x.call_id === "c-long")).toHaveLength(1);
    ui.close();
  });

  it("[host.crash.one-error-and-respawn] ends a crashed extension's call with exactly one error and respawns it", async () => {
    const { env } = setup([dummy("dummy", { tools: ["crash", "echo"], driver: true })]);
    const d = await daemon(env);
    const ui = await watchSession(d);
    await registered(ui, "crash");
    const agent = await createAgent(ui);
    call(ui, agent, "c-crash", "crash");
    expect(await resultOf(ui, "c-crash")).toMatchObject({ outcome: "error", output: "the dummy extension exited during the call" });
    await waitFor(() => ui.deliveriesOf("extension.restarting").length === 1, "a restart");
    await registered(ui, "echo", 2);
    expect(ui.deliveriesOf("extension.exited")[0]?.data).toMatchObject({ instance: "dummy", code: 3 });
    expect(ui.deliveriesOf("extension.starting").map((x) => x.data.attempt)).toContain(2);
    call(ui, agent, "c-after", "echo", { text: "back" });
    expect(await resultOf(ui, "c-after")).toMatchObject({ outcome: "ok", output: "back" });
    expect(ui.deliveriesOf("tool.result", (x) => x.call_id === "c-crash")).toHaveLength(1);
    ui.close();
  });

  it("[host.preflight.collisions] required vs required fails startup, naming both", async () => {
    const { env } = setup([
      dummy("alpha", { tools: ["echo"] }, { require: true }),
      dummy("beta", { tools: ["echo"] }, { require: true }),
    ]);
    const r = await runTau(["daemon"], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('required extensions "alpha" and "beta" both declare tool echo');
  });

  it("[host.preflight.collisions] required vs optional disables the optional one; optional vs optional disables all claimants", async () => {
    const { env } = setup([
      dummy("alpha", { tools: ["echo"] }, { require: true }),
      dummy("beta", { tools: ["echo", "sleep"] }),
      dummy("gamma", { tools: ["progress"] }),
      dummy("delta", { tools: ["progress"] }),
    ]);
    const d = await daemon(env);
    const ui = await watchSession(d);
    await registered(ui, "echo");
    await waitFor(() => ui.deliveriesOf("harness.notice", (x) => String(x.text).includes("disabled")).length === 3, "three disabled notices", 30_000);
    const notices = ui.deliveriesOf("harness.notice", (x) => String(x.text).includes("disabled")).map((x) => x.data.instance).sort();
    expect(notices).toEqual(["beta", "delta", "gamma"]);
    expect(ui.deliveriesOf("tool.register").map((x) => [x.data.name, x.data.owner])).toEqual([["echo", "alpha"]]);
    ui.close();
  });

  it("[host.secrets.never-leak] hands secrets over only in configure: never in a child's environment, a diagnostic or a log", async () => {
    const secret = "sk-top-secret-4242";
    const { env, home } = setup(
      [
        dummy("dummy", { tools: ["env"], driver: true }, { secrets: ["api-key"] }),
        { name: "missing", command: ["/nonexistent/tau-ext", `--token=${secret}`], cwd: "/tmp" },
      ],
      { TAU_SECRET_API_KEY: secret, TAU_SECRET_OTHER: secret },
    );
    const d = await daemon(env);
    const ui = await watchSession(d);
    await registered(ui, "env");
    const agent = await createAgent(ui);
    call(ui, agent, "c-env", "env");
    expect(await resultOf(ui, "c-env")).toMatchObject({ outcome: "ok", output: "[]" });
    await waitFor(() => ui.deliveriesOf("harness.notice", (x) => x.instance === "missing").length === 1, "the spawn diagnostic");
    const diag = String(ui.deliveriesOf("harness.notice", (x) => x.instance === "missing")[0]!.data.text);
    expect(diag).toBe('extension "missing" could not start "/nonexistent/tau-ext" in "/tmp": ENOENT');
    ui.close();
    process.kill(d.pid, "SIGTERM");
    await waitFor(() => !isAlive(d.pid), "the daemon to stop");
    const files = walk(home);
    const log = readFileSync(files.find((f) => f.endsWith("extensions.log"))!, "utf8");
    expect(log).toContain('configured with secrets ["api-key"]');
    // Everything tau wrote (logs, journals, the debug mirror, runtime files); the user's own config names it.
    const written = files.filter((f) => !f.startsWith(join(home, "config")));
    expect(written.some((f) => f.endsWith("events.jsonl"))).toBe(true);
    for (const f of written) expect(readFileSync(f).includes(secret), f).toBe(false);
  });

  it("[host.extensions-log.bounded] a hostile extension's stderr never grows extensions.log past its bound; rotation keeps the newest lines", async () => {
    // 2.5 bounds of numbered 128-byte lines on stderr, then "done"; it never says hello.
    const lines = Math.ceil((2.5 * EXTENSIONS_LOG_MAX_BYTES) / 128);
    const script = `for (let i = 0; i < ${lines}; i++) process.stderr.write(String(i).padStart(8, "0") + " " + "x".repeat(118) + "\\n"); process.stderr.write("done\\n"); process.stdin.resume().once("end", () => process.exit());`;
    const { env, home } = setup([{ name: "hostile", command: [process.execPath, "-e", script], startup_timeout_seconds: 120 }]);
    const d = await daemon(env);
    const log = join(home, "state", "sessions", d.session_id, "extensions.log");
    await waitFor(() => endsWith(log, "[hostile] done\n"), "the last line in extensions.log", 60_000);
    expect(statSync(log).size).toBeLessThanOrEqual(EXTENSIONS_LOG_MAX_BYTES);
    const current = readFileSync(log, "utf8");
    const rotated = readFileSync(`${log}.1`, "utf8");
    expect(statSync(`${log}.1`).size).toBeLessThanOrEqual(EXTENSIONS_LOG_MAX_BYTES);
    expect(statSync(`${log}.1`).size).toBeGreaterThan(EXTENSIONS_LOG_MAX_BYTES - 200);
    // Every log line is whole and prefixed. A pipe read may end inside a written line, which the log
    // then shows as two; without prefixes and line ends, .1 and the current file together are one
    // unbroken stretch of what the extension wrote, ending with its newest line.
    const logged = (rotated + current).split("\n").slice(0, -1);
    expect(logged.filter((l) => !l.startsWith("[hostile] "))).toEqual([]);
    const stream = logged.map((l) => l.slice("[hostile] ".length)).join("");
    const first = Number(/\d{8}(?= x{118})/.exec(stream)?.[0]);
    expect(first).toBeGreaterThan(0);
    let expected = "";
    for (let i = first; i < lines; i++) expected += String(i).padStart(8, "0") + " " + "x".repeat(118);
    expect(stream.endsWith(expected + "done")).toBe(true);
    expect(stream.length - expected.length - 4).toBeLessThan(128); // only the cut line before the first whole one
    expect(readdirSync(join(home, "state", "sessions", d.session_id)).filter((f) => f.startsWith("extensions.log")).sort()).toEqual(["extensions.log", "extensions.log.1"]);
  });

  it("[host.config-error.mandatory-notice] turns config_error into a mandatory notice that late subscribers replay", async () => {
    const { env } = setup([dummy("dummy", { config_error: "missing setting foo" })]);
    const d = await daemon(env);
    const first = await watchSession(d);
    await waitFor(() => first.deliveriesOf("harness.notice", (x) => x.instance === "dummy").length > 0, "the notice", 30_000);
    first.close();
    const late = await watchSession(d);
    await late.next((m) => m.message === "deliver" && m.payload.event.name === "session.replay_complete");
    const n = late.deliveriesOf("harness.notice", (x) => x.instance === "dummy");
    expect(n).toHaveLength(1);
    expect(n[0]?.data).toMatchObject({ level: "error", mandatory: true, text: 'extension "dummy": configuration error: missing setting foo' });
    expect(n[0]?.replay).toBe(true);
    late.close();
  });

  it("[extensions.settings.declared] a first-party extension checks its settings against their schema in spec/: a bad one is a config error naming the setting", async () => {
    const provider = (name: string, config: Record<string, unknown>) => ({ name, kind: "provider", command: ["tau", "ext", "provider"], config, startup_timeout_seconds: 20 });
    const { env } = setup([
      dummy("tools", { tools: ["echo", "juggle"] }),
      dummy("stray", { tool: ["echo"] }),
      provider("replay", { profile: "chat_completions", base_url: "http://127.0.0.1:9", models: [{ id: "m" }], reasoning_replay: "sometimes" }),
      dummy("fine", { tools: ["echo"] }),
    ]);
    const d = await daemon(env);
    const ui = await watchSession(d);
    const text = (instance: string) => ui.deliveriesOf("harness.notice", (x) => x.instance === instance)[0]?.data.text;
    await waitFor(() => ["tools", "stray", "replay"].every((i) => text(i) !== undefined), "the three configuration errors", 30_000);
    expect(text("tools")).toBe('extension "tools": configuration error: setting tools.1: must be equal to one of the allowed values (echo, sleep, progress, crash, env, fail, report, notice)');
    expect(text("stray")).toBe('extension "stray": configuration error: setting tool: is not a setting of this extension');
    expect(text("replay")).toBe('extension "replay": configuration error: setting reasoning_replay: must be equal to one of the allowed values (auto, reasoning_content, reasoning, none)');
    // Settings that hold start the extension as before.
    await registered(ui, "echo");
    ui.close();
  });
});

/** Whether the file at `path` exists and ends with `text` (reading only its end). */
function endsWith(path: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return false;
  }
  try {
    const tail = Buffer.alloc(Buffer.byteLength(text));
    const at = fstatSync(fd).size - tail.length;
    return at >= 0 && readSync(fd, tail, 0, tail.length, at) === tail.length && tail.toString() === text;
  } finally {
    closeSync(fd);
  }
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    const st = statSync(p);
    return st.isDirectory() ? walk(p) : st.isFile() ? [p] : [];
  });
}
