// `tau swarm serve`'s coordinator (SPEC-swarm, "Coordinator"): admits the pinned workers (their
// endpoint id, then their credential), dispatches prompts and answers, reports every update as an
// output line and acknowledges it, and fences the commands of a replaced worker process.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { builtin } from "../startup/builtin.js";
import { randomHex } from "../startup/random.js";
import type { SwarmServeLine, SwarmUpdate } from "../../generated/index.js";
import { FrameReader, SWARM_VERSION, writeFrame } from "./frames.js";
import { endpointIdHex, type IrohConnection, type IrohEndpoint, type IrohSendStream } from "./iroh.js";

export interface AdmittedWorker {
  readonly name: string;
  readonly endpointId: string;
  readonly credential: string;
}

/** How long an admitted endpoint has to open its stream and say hello. */
const HELLO_TIMEOUT_MS = 10_000;
/** How long a refused connection is kept open for its refusal to arrive. */
const REFUSAL_LINGER_MS = 2_000;
/** Commands remembered per worker for status; the oldest finished ones go first. */
const MAX_REMEMBERED_COMMANDS = 1024;

/**
 * Closes a connection whose last frame was a refusal once the peer closed it (having read the
 * refusal) or after REFUSAL_LINGER_MS: closing at once could drop the refusal unsent.
 */
async function lingerThenClose(conn: IrohConnection, code: bigint, reason: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([conn.closed().catch(() => ""), new Promise((resolve) => (timer = setTimeout(resolve, REFUSAL_LINGER_MS)))]);
  clearTimeout(timer);
  conn.close(code, Array.from(Buffer.from(reason)));
}

type CommandStatus = "dispatched" | "accepted" | "rejected" | "result" | "failed" | "fenced";

interface WorkerState {
  readonly spec: AdmittedWorker;
  incarnation?: string;
  conn?: IrohConnection;
  send?: IrohSendStream;
  writes: Promise<void>;
  /** The highest update seq seen of the current incarnation: a resent update is acknowledged, not reported again. */
  lastSeq: number;
  readonly commands: Map<string, { incarnation: string; status: CommandStatus }>;
  readonly openBlockers: Set<string>;
}

type Crypto = typeof import("node:crypto");
/** An error's first line: the binding's messages can carry a native backtrace. */
export function firstLine(err: unknown): string {
  return String(err instanceof Error ? err.message : err).split("\n")[0]!.slice(0, 512);
}

const digest = (s: string): Buffer => builtin<Crypto>("crypto").createHash("sha256").update(s, "utf8").digest();

export class SwarmCoordinator {
  private readonly byId = new Map<string, WorkerState>();
  private readonly byName = new Map<string, WorkerState>();
  private dispatched = 0;

  constructor(
    private readonly endpoint: IrohEndpoint,
    workers: readonly AdmittedWorker[],
    private readonly out: (line: SwarmServeLine) => void,
    private readonly statusFile?: string,
  ) {
    for (const spec of workers) {
      const state: WorkerState = { spec, writes: Promise.resolve(), lastSeq: 0, commands: new Map(), openBlockers: new Set() };
      this.byId.set(spec.endpointId, state);
      this.byName.set(spec.name, state);
    }
  }

  /** Accepts connections until the endpoint closes. */
  async serve(): Promise<void> {
    this.writeStatus();
    for (;;) {
      const incoming = await this.endpoint.acceptNext();
      if (incoming === null) return;
      void this.admit(incoming).catch((err: unknown) => this.out({ kind: "error", message: `a connection failed: ${firstLine(err)}` }));
    }
  }

  /** Sends a prompt (or, with `blockerId`, an answer) to a connected worker; its command id, or an error line. */
  async dispatch(worker: string, text: string, blockerId?: string): Promise<string | undefined> {
    const w = this.byName.get(worker);
    if (w === undefined) return this.fail(`no worker ${worker} is admitted (--worker ${worker}=ENDPOINT_ID)`);
    if (w.send === undefined || w.incarnation === undefined) return this.fail(`worker ${worker} is not connected`);
    const commandId = `c${++this.dispatched}-${randomHex(4)}`;
    const incarnation = w.incarnation;
    const frame = blockerId === undefined ? { type: "prompt" as const, command_id: commandId, incarnation, text } : { type: "answer" as const, command_id: commandId, incarnation, blocker_id: blockerId, text };
    this.remember(w, commandId, { incarnation, status: "dispatched" });
    if (blockerId !== undefined) w.openBlockers.delete(blockerId);
    this.write(w, w.send, frame);
    this.out({ kind: "dispatched", worker, command_id: commandId });
    this.writeStatus();
    return commandId;
  }

  private fail(message: string): undefined {
    this.out({ kind: "error", message });
    return undefined;
  }

  private async admit(incoming: Awaited<ReturnType<IrohEndpoint["acceptNext"]>> & object): Promise<void> {
    const conn = await (await incoming.accept()).connect();
    const peer = endpointIdHex(conn.remoteId());
    const w = this.byId.get(peer);
    if (w === undefined) {
      // Not a pinned worker: nothing is read from it.
      this.out({ kind: "refused_peer", endpoint_id: peer, reason: "not an admitted worker's endpoint id" });
      conn.close(1n, Array.from(Buffer.from("not admitted")));
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("no hello in time")), HELLO_TIMEOUT_MS)));
    try {
      const bi = await Promise.race([conn.acceptBi(), timeout]);
      const reader = new FrameReader(bi.recv);
      const hello = await Promise.race([reader.next(), timeout]);
      clearTimeout(timer);
      if (hello?.type !== "hello" || hello.version !== SWARM_VERSION) return await this.turnAway(conn, bi.send, peer, "version");
      if (hello.worker !== w.spec.name) return await this.turnAway(conn, bi.send, peer, "unknown_worker");
      const a = digest(hello.credential);
      // Awaited here, or the finally below would close the connection before the refusal is read.
      if (!builtin<Crypto>("crypto").timingSafeEqual(a, digest(w.spec.credential))) return await this.turnAway(conn, bi.send, peer, "credential");
      this.takeOver(w, hello.incarnation, conn, bi.send);
      this.write(w, bi.send, { type: "welcome" });
      this.out({ kind: "admitted", worker: w.spec.name, endpoint_id: peer, incarnation: hello.incarnation });
      this.writeStatus();
      await this.follow(w, conn, reader);
    } finally {
      clearTimeout(timer);
      if (w.conn === conn) {
        w.conn = undefined;
        w.send = undefined;
        this.out({ kind: "disconnected", worker: w.spec.name });
        this.writeStatus();
      }
      conn.close(0n, []);
    }
  }

  /** A new connection of the worker: another incarnation fences the old one's open commands; an older connection is superseded. */
  private takeOver(w: WorkerState, incarnation: string, conn: IrohConnection, send: IrohSendStream): void {
    if (w.incarnation !== undefined && w.incarnation !== incarnation) {
      for (const [id, c] of w.commands) {
        if (c.incarnation !== w.incarnation || (c.status !== "dispatched" && c.status !== "accepted")) continue;
        c.status = "fenced";
        this.out({ kind: "fenced", worker: w.spec.name, command_id: id, incarnation: c.incarnation });
      }
      w.openBlockers.clear();
      w.lastSeq = 0;
    }
    const old = w.conn;
    if (old !== undefined && w.send !== undefined) {
      const oldSend = w.send;
      // The refusal is written in turn with the worker's other frames; the old connection then
      // lingers (off that queue) until the old process has read it, as a turned-away one does.
      const refused = w.writes.then(async () => {
        await writeFrame(oldSend, { type: "refused", reason: "superseded" });
        await oldSend.finish();
      });
      w.writes = refused.catch(() => undefined);
      void refused.catch(() => undefined).then(() => lingerThenClose(old, 0n, "superseded"));
    }
    w.incarnation = incarnation;
    w.conn = conn;
    w.send = send;
  }

  private async follow(w: WorkerState, conn: IrohConnection, reader: FrameReader): Promise<void> {
    for (;;) {
      const frame = await reader.next();
      if (frame === undefined || w.conn !== conn) return;
      if (frame.type !== "update") throw new Error(`worker ${w.spec.name} sent a ${frame.type} frame after hello`);
      if (frame.seq > w.lastSeq) {
        w.lastSeq = frame.seq;
        this.apply(w, frame);
        this.out({ kind: "update", worker: w.spec.name, update: frame });
        this.writeStatus();
      }
      if (w.send !== undefined) this.write(w, w.send, { type: "ack", seq: frame.seq });
    }
  }

  private apply(w: WorkerState, u: SwarmUpdate): void {
    if (u.kind === "blocker" && u.blocker_id !== undefined) w.openBlockers.add(u.blocker_id);
    const c = u.command_id === undefined ? undefined : w.commands.get(u.command_id);
    if (c === undefined || c.status === "fenced") return;
    if (u.kind === "accepted" || u.kind === "rejected" || u.kind === "result" || u.kind === "failed") c.status = u.kind;
  }

  private async turnAway(conn: IrohConnection, send: IrohSendStream, peer: string, reason: "credential" | "unknown_worker" | "version"): Promise<void> {
    this.out({ kind: "refused_peer", endpoint_id: peer, reason });
    try {
      await writeFrame(send, { type: "refused", reason });
      await send.finish();
    } catch {
      // the worker is gone already
    }
    await lingerThenClose(conn, 2n, reason);
  }

  private remember(w: WorkerState, id: string, c: { incarnation: string; status: CommandStatus }): void {
    w.commands.set(id, c);
    if (w.commands.size <= MAX_REMEMBERED_COMMANDS) return;
    for (const [old, o] of w.commands) {
      if (o.status !== "dispatched" && o.status !== "accepted") {
        w.commands.delete(old);
        return;
      }
    }
  }

  private write(w: WorkerState, send: IrohSendStream, frame: Parameters<typeof writeFrame>[1]): void {
    w.writes = w.writes.then(() => writeFrame(send, frame)).catch(() => undefined);
  }

  /** The status file `tau swarm status` reads, replaced whole. */
  private writeStatus(): void {
    if (this.statusFile === undefined) return;
    const workers = [...this.byName.values()].map((w) => {
      const counts: Record<string, number> = {};
      for (const c of w.commands.values()) counts[c.status] = (counts[c.status] ?? 0) + 1;
      return { name: w.spec.name, endpoint_id: w.spec.endpointId, connected: w.conn !== undefined, ...(w.incarnation !== undefined ? { incarnation: w.incarnation } : {}), commands: counts, open_blockers: [...w.openBlockers] };
    });
    const body = JSON.stringify({ pid: process.pid, endpoint_id: this.endpoint.id().toString(), addresses: this.endpoint.boundSockets(), updated_at: new Date().toISOString(), workers }, null, 2);
    mkdirSync(dirname(this.statusFile), { recursive: true, mode: 0o700 });
    const tmp = `${this.statusFile}.${process.pid}.tmp`;
    writeFileSync(tmp, `${body}\n`, { mode: 0o600 });
    renameSync(tmp, this.statusFile);
  }
}
