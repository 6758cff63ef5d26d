// Tool round-trip overhead through the daemon (tool.request commit → canonical tool.result commit,
// an echo tool doing no work), p50 and p99; and extension spawn → ready, from the daemon's own
// commit timestamps (respawns). Baseline: a loopback Unix-socket ping-pong of the same count, same run.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TestClient, startDaemon, waitFor } from "../test/support/daemon.js";
import { fmt, median, percentile } from "./support.js";

async function socketPingPongMs(rounds: number, dir: string): Promise<number[]> {
  const path = join(dir, "pp.sock");
  const server = createServer((s) => s.on("data", (d) => s.write(d)));
  await new Promise<void>((r) => server.listen(path, r));
  const sock = connect(path);
  await new Promise<void>((r) => sock.once("connect", r));
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    await new Promise<void>((r) => {
      sock.once("data", () => r());
      sock.write("x");
    });
    times.push(performance.now() - t);
  }
  sock.destroy();
  server.close();
  return times;
}

/**
 * Spawn → ready: crash the extension and time each respawn from its extension.starting commit to
 * its tool registration commit (hello, configure, declarations, ready, activation).
 */
async function respawnSamples(ui: TestClient, agent: string): Promise<number[]> {
  const spawnToReady: number[] = [];
  for (let k = 0; k < 4; k++) {
    const registrations = () => ui.inbox.filter((x) => x.message === "deliver" && x.payload.event.name === "tool.register");
    const before = registrations().length;
    ui.emit("extension.event", { category: "test", name: "call", payload: { agent_id: agent, call_id: `crash-${k}`, tool: "crash", arguments: {} } });
    await waitFor(() => registrations().length > before, "the respawned extension", 30_000);
    const starting = ui.inbox.filter((x) => x.message === "deliver" && x.payload.event.name === "extension.starting").at(-1);
    const reg = registrations().at(-1);
    if (starting?.message === "deliver" && reg?.message === "deliver") spawnToReady.push((reg.payload.recorded_at - starting.payload.recorded_at) / 1000);
  }
  return spawnToReady;
}

export async function run(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "tau-bench-ext-"));
  mkdirSync(join(home, "config"));
  writeFileSync(
    join(home, "config", "harness.yaml"),
    JSON.stringify({ extensions: [{ name: "dummy", command: ["tau", "ext", "test-dummy"], config: { tools: ["echo", "crash"], driver: true }, startup_timeout_seconds: 30 }] }),
  );
  const d = await startDaemon({ TAU_HOME: home }, ["--ephemeral"]);
  try {
    const ui = await TestClient.ui(d.socket);
    ui.send({ message: "subscribe", payload: { historical: ["tool.register"], live: ["tool.request", "tool.result", "tool.register", "extension.starting"] } });
    await waitFor(() => ui.deliveries().some((x) => x.name === "tool.register"), "registration", 30_000);
    ui.emit("ui.create_agent", { request_id: "r" });
    const m = await ui.next((x) => x.message === "direct");
    const agent = m.message === "direct" ? String(m.payload.event.data.agent_id) : "";
    const stamps = new Map<string, { req?: number; res?: number }>();
    ui.conn.onMessage((msg) => {
      if (msg.message !== "deliver") return;
      const id = String(msg.payload.event.data.call_id ?? "");
      const s = stamps.get(id) ?? {};
      if (msg.payload.event.name === "tool.request") s.req = msg.payload.recorded_at;
      if (msg.payload.event.name === "tool.result") s.res = msg.payload.recorded_at;
      stamps.set(id, s);
    });
    const n = 300;
    for (let i = 0; i < n; i++) {
      const id = `c-${i}`;
      ui.emit("extension.event", { category: "test", name: "call", payload: { agent_id: agent, call_id: id, tool: "echo", arguments: { text: "x" } } });
      await waitFor(() => stamps.get(id)?.res !== undefined, "a result", 10_000);
    }
    const trips = [...stamps.values()].slice(20).map((s) => ((s.res as number) - (s.req as number)) / 1000);
    const pp = (await socketPingPongMs(n, home)).slice(20);
    console.log(
      `tool round trip through the daemon (${trips.length} calls): p50 ${fmt(median(trips), 3)} ms, p99 ${fmt(percentile(trips, 99), 3)} ms | unix socket ping-pong: p50 ${fmt(median(pp), 3)} ms | ratio ${fmt(median(trips) / median(pp), 2)}x`,
    );
    const spawnToReady = await respawnSamples(ui, agent);
    // The respawn budget allows a few per daemon: two more daemons give more samples.
    for (let extra = 0; extra < 2; extra++) {
      const d2 = await startDaemon({ TAU_HOME: home }, ["--ephemeral"]);
      try {
        const ui2 = await TestClient.ui(d2.socket);
        ui2.send({ message: "subscribe", payload: { historical: ["tool.register"], live: ["tool.register", "extension.starting"] } });
        await waitFor(() => ui2.deliveries().some((x) => x.name === "tool.register"), "registration", 30_000);
        ui2.emit("ui.create_agent", { request_id: "r" });
        const m2 = await ui2.next((x) => x.message === "direct");
        spawnToReady.push(...(await respawnSamples(ui2, m2.message === "direct" ? String(m2.payload.event.data.agent_id) : "")));
        ui2.close();
      } finally {
        process.kill(d2.pid, "SIGTERM");
      }
    }
    const sorted = [...spawnToReady].sort((a, b) => a - b);
    console.log(
      `extension spawn → ready (respawns, 3 daemons): median ${fmt(median(spawnToReady))} ms over ${spawnToReady.length} (${fmt(sorted[0] ?? 0)}–${fmt(sorted.at(-1) ?? 0)})`,
    );
    ui.close();
  } finally {
    process.kill(d.pid, "SIGTERM");
  }
  rmSync(home, { recursive: true, force: true });
}
