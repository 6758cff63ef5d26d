// A swarm on loopback (SPEC-swarm): the real `tau swarm serve` coordinator and real worker daemons
// with `tau ext swarm`, real Iroh endpoints with relays disabled, and the loopback model.
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tauHome, type StartedDaemon, type TestClient } from "../../support/daemon.js";
import { agentHarnessYaml, attachUi, daemonIn, workspaceIn, type Cleanups, type Workspace } from "../../support/e2e.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { TAU_BIN } from "../../support/paths.js";
import { runTau } from "../../support/run-tau.js";
import { waitFor } from "../../support/wait.js";

export type ServeLine = { kind: string; worker?: string; endpoint_id?: string; addresses?: string[]; incarnation?: string; command_id?: string; reason?: string; message?: string; update?: { seq: number; kind: string; command_id?: string; reason?: string; blocker_id?: string; text?: string } };

export async function tau(env: NodeJS.ProcessEnv, ...args: string[]): Promise<string> {
  const r = await runTau(args, { env });
  if (r.code !== 0) throw new Error(`tau ${args.join(" ")} failed: ${r.stderr}`);
  return r.stdout.trim();
}

export interface Coordinator {
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly endpointId: string;
  readonly port: number;
  readonly lines: ServeLine[];
  readonly child: ChildProcess;
  stderr(): string;
  stdout(): string;
  send(line: string): void;
  line(pred: (l: ServeLine) => boolean, what: string, ms?: number): Promise<ServeLine>;
}

/** A coordinator home with its key and a credential for each worker name. */
export async function coordinatorHome(cleanups: Cleanups, workers: string[]): Promise<{ home: string; env: NodeJS.ProcessEnv; endpointId: string }> {
  const h = tauHome();
  cleanups.push(h.dispose);
  const endpointId = await tau(h.env, "swarm", "key", "swarm-coordinator");
  for (const w of workers) await tau(h.env, "swarm", "credential", w);
  return { home: h.home, env: h.env, endpointId };
}

/** `tau swarm serve` on 127.0.0.1, admitting `workers` (name → endpoint id); killed by `cleanups`. */
export async function serve(cleanups: Cleanups, c: { home: string; env: NodeJS.ProcessEnv; endpointId: string }, workers: Record<string, string>, bindPort = 0): Promise<Coordinator> {
  const args = ["swarm", "serve", "--bind", `127.0.0.1:${bindPort}`, ...Object.entries(workers).flatMap(([n, id]) => ["--worker", `${n}=${id}`])];
  const child = spawn(process.execPath, [TAU_BIN, ...args], { env: { ...process.env, ...c.env }, stdio: ["pipe", "pipe", "pipe"] });
  cleanups.push(() => child.kill("SIGKILL"));
  let out = "";
  let err = "";
  const lines: ServeLine[] = [];
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    out += d;
    const parts = out.split("\n");
    const done = parts.slice(0, -1).join("\n");
    if (done !== "") for (const l of done.split("\n").slice(lines.length)) lines.push(JSON.parse(l) as ServeLine);
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  const line = async (pred: (l: ServeLine) => boolean, what: string, ms = 30_000): Promise<ServeLine> => {
    await waitFor(() => lines.some(pred), `the coordinator's ${what} (stderr: ${err.slice(-400)})`, ms);
    return lines.find(pred) as ServeLine;
  };
  const ready = await line((l) => l.kind === "ready", "ready line");
  const port = Number(/^127\.0\.0\.1:(\d+)$/.exec((ready.addresses ?? []).find((a) => a.startsWith("127.0.0.1:")) ?? "")?.[1]);
  return { ...c, port, lines, child, stderr: () => err, stdout: () => out, send: (l) => child.stdin.write(`${l}\n`), line };
}

export interface Worker {
  readonly w: Workspace;
  readonly name: string;
  readonly endpointId: string;
  readonly credential: string;
  /** Writes its harness.yaml: the provider and the swarm extension linking to the coordinator at 127.0.0.1:`port`. */
  configure(port: number, o?: { pin?: string; config?: Record<string, unknown> }): void;
}

/** A worker home: its key, and the coordinator's credential for it copied into its secrets. */
export async function workerHome(cleanups: Cleanups, fake: FakeOpenAI, coordinator: { home: string; endpointId: string }, name: string): Promise<Worker> {
  const w = workspaceIn(cleanups);
  const endpointId = await tau(w.env, "swarm", "key", "swarm-key");
  mkdirSync(join(w.home, "config", "secrets"), { recursive: true, mode: 0o700 });
  const from = join(coordinator.home, "config", "secrets", `swarm-worker-${name}`);
  copyFileSync(from, join(w.home, "config", "secrets", "swarm-credential"));
  const configure = (port: number, o: { pin?: string; config?: Record<string, unknown> } = {}): void => {
    const swarm = {
      name: "swarm",
      kind: "tool",
      require: true,
      command: ["tau", "ext", "swarm"],
      secrets: ["swarm-credential", "swarm-key"],
      startup_timeout_seconds: 30,
      config: { worker: name, coordinator: o.pin ?? coordinator.endpointId, addresses: [`127.0.0.1:${port}`], credential_secret: "swarm-credential", key_secret: "swarm-key", reconnect_ms: 100, connect_timeout_ms: 2000, ...o.config },
    };
    writeFileSync(join(w.home, "config", "harness.yaml"), agentHarnessYaml(fake, { shell: false, extensions: [swarm] }));
  };
  return { w, name, endpointId, credential: readFileSync(from, "utf8").trim(), configure };
}

/** The worker's daemon, a UI on it and the session's agent (the one remote prompts go to). */
export async function startWorker(cleanups: Cleanups, worker: Worker): Promise<{ d: StartedDaemon; c: TestClient; agentId: string }> {
  const d = await daemonIn(cleanups, worker.w.env, ["--project-root", worker.w.project]);
  const c = await attachUi(cleanups, d, { tools: ["swarm_ask"] });
  return { d, c, agentId: await c.createAgent() };
}

/** Every file under `dir` except the secrets folders, with its text. */
export function filesUnder(dir: string): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p, { throwIfNoEntry: false });
    if (st === undefined || name === "secrets") continue;
    if (st.isDirectory()) out.push(...filesUnder(p));
    else if (st.isFile()) out.push({ path: p, text: readFileSync(p).toString("latin1") });
  }
  return out;
}
