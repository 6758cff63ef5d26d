// The sandbox's cost on a `shell` tool call (SPEC-sandbox, "Figures"): `echo hi` through the daemon,
// from the tool.request commit to the tool.result commit, sandboxed (bubblewrap in the session's
// network namespace, the reused wrap, the seccomp helper) against unsandboxed, in the same daemon and
// the same run: `:sandbox off` / `:sandbox on` switch between them, in interleaved rounds, so machine
// load falls on both alike. TAU_BENCH_BUSY_CORES=N runs N busy loops beside it (a loaded machine).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TestClient, startDaemon, waitFor } from "../test/support/daemon.js";
import { fmt, median, percentile } from "./support.js";

function loadAverage(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  } catch {
    return "unknown";
  }
}

export async function run(): Promise<void> {
  const busy = Array.from({ length: Number(process.env.TAU_BENCH_BUSY_CORES ?? 0) }, () => spawn("sh", ["-c", "while :; do :; done"], { stdio: "ignore" }));
  try {
    await measure(busy.length);
  } finally {
    for (const b of busy) b.kill("SIGKILL");
  }
}

async function measure(busyCores: number): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "tau-bench-sbx-"));
  const project = join(home, "project");
  mkdirSync(join(home, "config"), { recursive: true });
  mkdirSync(project);
  writeFileSync(
    join(home, "config", "harness.yaml"),
    JSON.stringify({
      extensions: [
        { name: "shell", kind: "tool", command: ["tau", "ext", "shell"], startup_timeout_seconds: 30 },
        { name: "dummy", command: ["tau", "ext", "test-dummy"], config: { tools: ["echo"], driver: true }, call_tools: ["shell"], startup_timeout_seconds: 30 },
      ],
    }),
  );
  const d = await startDaemon({ TAU_HOME: home }, ["--ephemeral", "--project-root", project]);
  try {
    const ui = await TestClient.ui(d.socket);
    ui.send({ message: "subscribe", payload: { historical: ["tool.register", "sandbox.state_reported"], live: ["tool.request", "tool.result", "sandbox.state_reported", "sandbox.command_result"] } });
    await waitFor(() => ui.deliveries().some((x) => x.name === "sandbox.state_reported" && x.data.state === "active"), "the sandbox", 60_000);
    ui.emit("ui.create_agent", { request_id: "r" });
    const m = await ui.next((x) => x.message === "direct");
    const agent = m.message === "direct" ? String(m.payload.event.data.agent_id) : "";
    const stamps = new Map<string, { req?: number; res?: number; output?: string }>();
    ui.conn.onMessage((msg) => {
      if (msg.message !== "deliver") return;
      const id = String(msg.payload.event.data.call_id ?? "");
      const s = stamps.get(id) ?? {};
      if (msg.payload.event.name === "tool.request") s.req = msg.payload.recorded_at;
      if (msg.payload.event.name === "tool.result") {
        s.res = msg.payload.recorded_at;
        s.output = String(msg.payload.event.data.output);
      }
      stamps.set(id, s);
    });
    let commands = 0;
    const sandbox = async (verb: "on" | "off"): Promise<void> => {
      const request_id = `cmd-${++commands}`;
      ui.emit("sandbox.command_request", { request_id, args: [verb] });
      await ui.next((x) => x.message === "deliver" && x.payload.event.name === "sandbox.command_result" && x.payload.event.data.request_id === request_id, 10_000);
    };
    let calls = 0;
    const call = async (): Promise<number> => {
      const id = `c-${++calls}`;
      ui.emit("extension.event", { category: "test", name: "call", payload: { agent_id: agent, call_id: id, tool: "shell", arguments: { command: "echo hi" } } });
      await waitFor(() => stamps.get(id)?.res !== undefined, "a result", 20_000);
      const s = stamps.get(id) as { req: number; res: number; output: string };
      if (!s.output.endsWith("hi\n[exit code 0]")) throw new Error(`unexpected output: ${s.output}`);
      return (s.res - s.req) / 1000;
    };
    const sandboxed: number[] = [];
    const plain: number[] = [];
    const before = loadAverage();
    for (let round = 0; round < 8; round++) {
      await sandbox("on");
      for (let i = 0; i < 6; i++) (round === 0 && i < 2 ? [] : sandboxed).push(await call());
      await sandbox("off");
      for (let i = 0; i < 6; i++) (round === 0 && i < 2 ? [] : plain).push(await call());
    }
    const added = median(sandboxed) - median(plain);
    console.log(
      `shell \`echo hi\` sandboxed (${sandboxed.length} calls): p50 ${fmt(median(sandboxed))} ms, p90 ${fmt(percentile(sandboxed, 90))} ms | ` +
        `unsandboxed: p50 ${fmt(median(plain))} ms, p90 ${fmt(percentile(plain, 90))} ms | added ${fmt(added)} ms (goal <= 20 ms idle) | ratio ${fmt(median(sandboxed) / median(plain), 2)}x | ` +
        `busy cores ${busyCores} | load average ${before} -> ${loadAverage()}`,
    );
    ui.close();
  } finally {
    process.kill(d.pid, "SIGTERM");
  }
  rmSync(home, { recursive: true, force: true });
}
