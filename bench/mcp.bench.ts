// The latency an MCP tool call adds (SPEC-mcp): tool.request commit → tool.result commit through one
// daemon, for the built-in `read` (a small file), and for `echo` of the SDK-built fixture MCP server
// through `tau ext mcp` — inside the sandbox (the default) and with `sandbox: false` — beside `echo`
// of a tau extension (test-dummy: no work, one process hop less). Baseline: the
// built-in tool, same daemon, same run; calls interleaved so load hits each kind alike.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TestClient, startDaemon, waitFor } from "../test/support/daemon.js";
import { fmt, median, percentile } from "./support.js";

const FIXTURE = join(import.meta.dirname, "../test/fixtures/mcp/server.mjs");
const ROUNDS = Number(process.env.TAU_MCP_BENCH_ROUNDS ?? 200);
/** Calls of each kind left out at the start (first calls warm caches up). */
const WARM_UP = 10;

export async function run(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "tau-bench-mcp-"));
  const project = join(home, "project");
  mkdirSync(join(home, "config"), { recursive: true });
  mkdirSync(project);
  writeFileSync(join(project, "small.txt"), "a small file\n");
  // ask: never — an unsandboxed server's calls are otherwise asked about (SPEC-mcp, "Asking before a call").
  const fixture = (sandbox: boolean) => ({ command: process.execPath, args: [FIXTURE, "tools"], wait_at_start: true, sandbox, ask: "never" });
  writeFileSync(
    join(home, "config", "harness.yaml"),
    JSON.stringify({
      extensions: [
        { name: "shell", kind: "tool", require: true, command: ["tau", "ext", "shell"], startup_timeout_seconds: 30 },
        { name: "dummy", command: ["tau", "ext", "test-dummy"], config: { tools: ["echo"], driver: true }, call_tools: ["read", "echo", "mcp__boxed__echo", "mcp__free__echo"], startup_timeout_seconds: 30 },
      ],
      mcp_servers: { boxed: fixture(true), free: fixture(false) },
    }),
  );
  const d = await startDaemon({ TAU_HOME: home }, ["--ephemeral", "--project-root", project]);
  try {
    const ui = await TestClient.ui(d.socket);
    ui.send({ message: "subscribe", payload: { historical: ["tool.register"], live: ["tool.request", "tool.result", "tool.register"] } });
    const registered = (name: string) => ui.deliveries().some((x) => x.name === "tool.register" && x.data.name === name);
    await waitFor(() => ["read", "mcp__boxed__echo", "mcp__free__echo"].every(registered), "the tools", 60_000);
    ui.emit("ui.create_agent", { request_id: "r" });
    const m = await ui.next((x) => x.message === "direct");
    const agent = m.message === "direct" ? String(m.payload.event.data.agent_id) : "";
    const stamps = new Map<string, { req?: number; res?: number; outcome?: string; output?: string }>();
    ui.conn.onMessage((msg) => {
      if (msg.message !== "deliver") return;
      const id = String(msg.payload.event.data.call_id ?? "");
      const s = stamps.get(id) ?? {};
      if (msg.payload.event.name === "tool.request") s.req = msg.payload.recorded_at;
      if (msg.payload.event.name === "tool.result") {
        s.res = msg.payload.recorded_at;
        s.outcome = String(msg.payload.event.data.outcome);
        s.output = String(msg.payload.event.data.output);
      }
      stamps.set(id, s);
    });
    const kinds = [
      { label: "built-in read", tool: "read", args: { path: join(project, "small.txt") } },
      { label: "tau extension echo", tool: "echo", args: { text: "x" } },
      { label: "MCP echo, sandboxed", tool: "mcp__boxed__echo", args: { text: "x" } },
      { label: "MCP echo, sandbox: false", tool: "mcp__free__echo", args: { text: "x" } },
    ];
    const trips = new Map<string, number[]>(kinds.map((k) => [k.label, []]));
    for (let i = 0; i < ROUNDS; i++) {
      for (const k of kinds) {
        const id = `${k.tool}-${i}`;
        ui.emit("extension.event", { category: "test", name: "call", payload: { agent_id: agent, call_id: id, tool: k.tool, arguments: k.args } });
        await waitFor(() => stamps.get(id)?.res !== undefined, `a result of ${k.tool}`, 30_000);
        const s = stamps.get(id) ?? {};
        if (s.outcome !== "ok") throw new Error(`${k.tool} failed in the bench (${s.outcome}): ${s.output?.slice(0, 300)}`);
        if (i >= WARM_UP) trips.get(k.label)?.push(((s.res as number) - (s.req as number)) / 1000);
      }
    }
    const base = median(trips.get("built-in read") ?? []);
    for (const k of kinds) {
      const t = trips.get(k.label) ?? [];
      const p50 = median(t);
      const extra = k.tool === "read" ? "baseline" : `+${fmt(p50 - base, 2)} ms, ratio ${fmt(p50 / base, 2)}x`;
      console.log(`${k.label} (${t.length} calls): p50 ${fmt(p50, 3)} ms, p99 ${fmt(percentile(t, 99), 3)} ms | ${extra}`);
    }
    ui.close();
  } finally {
    process.kill(d.pid, "SIGTERM");
  }
  rmSync(home, { recursive: true, force: true });
}
