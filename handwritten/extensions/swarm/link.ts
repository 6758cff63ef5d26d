// The worker's one link to its coordinator (SPEC-swarm, "Connecting"): dial the pinned endpoint id
// (addresses and relay only say where to look), check the connected peer's id is that id, and only
// then send `hello` with the credential. A connection that ends is dialled again after
// `reconnect_ms`; the worker's incarnation and memory stay as they are.
import type { SwarmFrame, SwarmUpdate } from "../../../generated/index.js";
import { FrameReader, firstLine, SWARM_ALPN, SWARM_MAX_FRAME_BYTES, SWARM_VERSION, SwarmInvalidFrame, endpointIdHex, hexBytes, loadIroh, writeFrame, type IrohConnection, type IrohEndpoint, type IrohSendStream } from "../../swarm/index.js";
import type { SwarmWorker } from "./worker.js";

export interface LinkOptions {
  readonly worker: string;
  readonly coordinator: string;
  readonly addresses: readonly string[];
  readonly relayUrl?: string;
  readonly reconnectMs: number;
  readonly connectTimeoutMs: number;
  /** The credential: it goes into `hello` only, on a connection whose peer id was checked. */
  readonly credential: string;
}

export interface LinkEvents {
  diagnostic(text: string): void;
  /** The coordinator turned the worker away for good (wrong credential, unknown worker, version, or superseded by another process of it). */
  refused(reason: string): void;
}

class Timeout extends Error {}

function within<T>(p: Promise<T>, ms: number, what: string, abandon: (value: T) => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let late = false;
  // A connection that completes after we gave up on it is closed, never used.
  void p.then((v) => late && abandon(v), () => {});
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => ((late = true), reject(new Timeout(`${what} took longer than ${ms} ms`))), ms)))]).finally(() => clearTimeout(timer));
}

export class SwarmLink {
  private stopped = false;
  private send: IrohSendStream | undefined;
  /** Sends on the open stream, one after another. */
  private writes: Promise<void> = Promise.resolve();
  private conn: IrohConnection | undefined;
  private wake: (() => void) | undefined;
  /** Connections the coordinator admitted, for diagnostics. */
  admissions = 0;

  constructor(
    private readonly endpoint: IrohEndpoint,
    private readonly state: SwarmWorker,
    private readonly o: LinkOptions,
    private readonly events: LinkEvents,
  ) {}

  async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const again = await this.session();
        if (!again) return;
      } catch (err) {
        if (this.stopped) return;
        this.events.diagnostic(`the link to coordinator ${this.o.coordinator.slice(0, 10)}… ended: ${firstLine(err)}`);
      } finally {
        this.send = undefined;
        this.conn?.close(0n, []);
        this.conn = undefined;
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.o.reconnectMs);
        this.wake = () => (clearTimeout(t), resolve());
      });
    }
  }

  stop(): void {
    this.stopped = true;
    this.conn?.close(0n, []);
    this.wake?.();
  }

  /** Sends an update when connected; when not, it waits among the unacknowledged for the next welcome. */
  deliver(update: SwarmUpdate): void {
    if (this.send !== undefined) this.write(this.send, update);
  }

  /** One connection: dial, verify, hello, then serve its frames. False when the coordinator refused us. */
  private async session(): Promise<boolean> {
    const iroh = await loadIroh();
    const pinned = iroh.EndpointId.fromBytes(hexBytes(this.o.coordinator));
    const addr = new iroh.EndpointAddr(pinned, this.o.relayUrl ?? null, [...this.o.addresses]);
    const conn = await within(this.endpoint.connect(addr, SWARM_ALPN), this.o.connectTimeoutMs, "connecting", (c) => c.close(0n, []));
    this.conn = conn;
    // Iroh's handshake already proves the peer holds the pinned key; checked again here, before the credential.
    const peer = endpointIdHex(conn.remoteId());
    if (peer !== this.o.coordinator) throw new Error(`the peer is ${peer.slice(0, 10)}…, not the pinned coordinator; nothing was sent`);
    const bi = await within(conn.openBi(), this.o.connectTimeoutMs, "opening a stream", () => {});
    const reader = new FrameReader(bi.recv);
    await writeFrame(bi.send, { type: "hello", version: SWARM_VERSION, worker: this.o.worker, incarnation: this.state.incarnation, credential: this.o.credential });
    const first = await within(reader.next(), this.o.connectTimeoutMs, "the coordinator's welcome", () => {});
    if (first?.type === "refused") {
      this.events.refused(first.reason);
      return false;
    }
    if (first?.type !== "welcome") throw new Error(`the coordinator answered hello with ${first === undefined ? "nothing" : first.type}`);
    this.admissions++;
    this.events.diagnostic(`admitted by coordinator ${this.o.coordinator.slice(0, 10)}… as ${this.o.worker} (incarnation ${this.state.incarnation})`);
    this.send = bi.send;
    for (const update of this.state.pending()) this.write(bi.send, update);
    await this.serve(reader);
    return true;
  }

  private async serve(reader: FrameReader): Promise<void> {
    for (;;) {
      let frame: SwarmFrame | undefined;
      try {
        frame = await reader.next();
      } catch (err) {
        if (!(err instanceof SwarmInvalidFrame)) throw err;
        this.state.invalid(err.value, JSON.stringify(err.value).length > SWARM_MAX_FRAME_BYTES / 2 || /maxLength|must NOT have more than/.test(err.message));
        continue;
      }
      if (frame === undefined) throw new Error("the coordinator closed the stream");
      if (frame.type === "prompt" || frame.type === "answer") this.state.take(frame);
      else if (frame.type === "ack") this.state.ack(frame.seq);
      else if (frame.type === "refused") {
        // Superseded: another process of this worker holds the link now; dialling again would fence it in turn.
        this.events.refused(frame.reason);
        this.stopped = true;
        return;
      }
    }
  }

  private write(send: IrohSendStream, frame: SwarmFrame): void {
    // A failed write ends nothing here: the read side sees the connection go and reconnects.
    this.writes = this.writes.then(() => (this.send === send ? writeFrame(send, frame) : undefined)).catch(() => undefined);
  }
}
