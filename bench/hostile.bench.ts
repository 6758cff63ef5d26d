// A daemon under a hostile peer's worst legal frames, beside the same daemon idle, in one run:
//   - stall: the longest wait for a client RPC answer (session_current_request every 2 ms from a
//     second connection), which is how long the daemon's event loop was busy;
//   - memory: the daemon's peak RSS (sampled every 5 ms from /proc).
// Hostile frames: 16 MiB of empty maps (refused on its item count, before anything is built), and
// the largest frame that is accepted, decoded and committed: an extension.event from a UI whose
// payload is an array of 524,000 empty maps.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectUnix, type Connection } from "../handwritten/transport/index.js";
import { REVISION, encodeFrame } from "../handwritten/protocol/index.js";
import { fmt, report } from "./support.js";

const TAU = fileURLToPath(new URL("../bin/tau.cjs", import.meta.url));

function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN);
  return kb / 1024;
}

interface Sample {
  stallMs: number;
  peakMiB: number;
}

/** Probes the daemon for `ms` while `load` runs; the longest answer wait and the peak RSS. */
async function measure(pid: number, socket: string, ms: number, load: () => Promise<void>): Promise<Sample> {
  const probe = await connectUnix(socket);
  let stall = 0;
  let peak = rssMiB(pid);
  let sent = 0;
  let n = 0;
  probe.onMessage(() => {
    stall = Math.max(stall, performance.now() - sent);
    sent = 0;
  });
  const rss = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 5);
  const ask = setInterval(() => {
    if (sent !== 0) return stall = Math.max(stall, performance.now() - sent); // still waiting
    sent = performance.now();
    probe.send({ message: "session_current_request", payload: { request_id: `q${n++}` } });
  }, 2);
  const end = performance.now() + ms;
  await load();
  while (performance.now() < end) await new Promise((r) => setTimeout(r, 20));
  clearInterval(ask);
  clearInterval(rss);
  probe.close();
  return { stallMs: stall, peakMiB: peak };
}

function frameOf(body: Buffer): Buffer {
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

async function send(conn: Connection, frames: Buffer[]): Promise<void> {
  for (const f of frames) {
    while (conn.sendFrame(f) !== "queued") await new Promise((r) => setTimeout(r, 5));
  }
}

export async function run(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "tau-bench-hostile-"));
  const daemon = spawn(process.execPath, [TAU, "daemon", "--project-root", home], { env: { ...process.env, TAU_HOME: home }, stdio: ["ignore", "ignore", "pipe"] });
  try {
    const socket = await new Promise<string>((resolve, reject) => {
      let err = "";
      daemon.stderr!.setEncoding("utf8").on("data", (d: string) => {
        err += d;
        const m = / on (\S+\.sock)/.exec(err);
        if (m) resolve(m[1] as string);
      });
      daemon.once("exit", () => reject(new Error(`the daemon exited: ${err}`)));
    });
    const pid = daemon.pid as number;
    await new Promise((r) => setTimeout(r, 500));
    const idle = await measure(pid, socket, 1500, async () => undefined);

    // 16 MiB of empty maps, four times: refused from its bytes.
    const n = 16 * 1024 * 1024 - 5;
    const maps = frameOf(Buffer.concat([Buffer.from([0x9a, n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]), Buffer.alloc(n, 0xa0)]));
    const hostile = await connectUnix(socket, { connection: { maxQueueBytes: 256 * 1024 * 1024 } });
    const refused = await measure(pid, socket, 1500, () => send(hostile, [maps, maps, maps, maps]));

    // The largest accepted frame: decoded, validated, committed (a UI's custom event).
    const ui = await connectUnix(socket, { connection: { maxQueueBytes: 256 * 1024 * 1024 } });
    ui.send({ message: "hello", payload: { revision: { ...REVISION }, role: "ui" } });
    const big = encodeFrame({ message: "emit", payload: { event: { name: "extension.event", data: { category: "bench", name: "maps", payload: { maps: new Array(524_000).fill({}) } } } } });
    const accepted = await measure(pid, socket, 2500, () => send(ui, [big, big]));
    report("stall under 4 refused 16 MiB frames of empty maps", `${fmt(refused.stallMs)} ms`, "stall idle", `${fmt(idle.stallMs)} ms`, refused.stallMs / idle.stallMs);
    report("stall under 2 accepted frames of 524,000 maps", `${fmt(accepted.stallMs)} ms`, "stall idle", `${fmt(idle.stallMs)} ms`, accepted.stallMs / idle.stallMs);
    report("daemon peak RSS, refused frames", `${fmt(refused.peakMiB)} MiB`, "idle", `${fmt(idle.peakMiB)} MiB`, refused.peakMiB / idle.peakMiB);
    report("daemon peak RSS, accepted frames", `${fmt(accepted.peakMiB)} MiB`, "idle", `${fmt(idle.peakMiB)} MiB`, accepted.peakMiB / idle.peakMiB);
    hostile.close();
    ui.close();
  } finally {
    daemon.kill("SIGKILL");
    rmSync(home, { recursive: true, force: true });
  }
}
