// Session readiness (SPEC-extension-declarations, "Session readiness"): when the session begins in
// this process, its initialization captures the live session waiters and finishes when every
// captured waiter said ready for exactly this session and initialization id, or disconnected.
// Until then no agent of the session finishes initializing. Every declaration has already
// committed when it reaches here; the exact live generation, the session and the id are checked
// again before anything changes. Per-agent readiness is another family (agent-initialization.ts):
// neither releases the other.
import type { Committed } from "../bus/index.js";
import type { EventName, EventPayloads } from "../../generated/index.js";
import { randomHex } from "../startup/random.js";

export interface SessionInitializationPort {
  readonly sessionId: string;
  isLive(instance: string, generation: number): boolean;
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<unknown>;
}

interface Pending {
  readonly id: string;
  /** Captured waiters still to say ready: instance → generation. */
  readonly waiting: Map<string, number>;
}

export class SessionInitialization {
  /** Live session waiters: instance → the generation that declared it waits. */
  private readonly waiters = new Map<string, number>();
  private pending: Pending | undefined;
  private begun = false;
  private finished = false;
  private resolve!: () => void;
  private readonly done = new Promise<void>((r) => (this.resolve = r));

  constructor(private readonly port: SessionInitializationPort) {}

  /** Undefined once the session is ready; until then, resolves when it is. */
  get ready(): Promise<void> | undefined {
    return this.finished ? undefined : this.done;
  }

  onWaitDeclared(c: Committed<"session.readiness_wait_declared">): void {
    const p = c.publisher;
    if (p.class !== "extension" || p.instance === undefined || p.generation === undefined || !this.port.isLive(p.instance, p.generation)) return;
    if (c.data.wait) this.waiters.set(p.instance, p.generation);
    else if (this.waiters.get(p.instance) === p.generation) this.waiters.delete(p.instance);
  }

  /** The session begins in this process (once): mints its id, captures the live waiters and says so. */
  begin(): Promise<void> {
    if (this.begun) return this.done;
    this.begun = true;
    // A copy: a waiter declared from now on holds nothing. Only live connections are in `waiters`
    // (checked as each declaration commits, removed as each connection ends).
    const waiting = new Map(this.waiters);
    const pending: Pending = { id: `init-s${Date.now().toString(36)}-${randomHex(6)}`, waiting };
    this.pending = pending;
    void this.port.publish("session.initialization_started", { session_id: this.port.sessionId, initialization_id: pending.id, waiting_for: [...waiting.keys()].sort() });
    if (waiting.size === 0) void this.finish(pending);
    return this.done;
  }

  onReadinessDeclared(c: Committed<"session.readiness_declared">): void {
    const p = c.publisher;
    if (p.class !== "extension" || p.instance === undefined || p.generation === undefined || !this.port.isLive(p.instance, p.generation)) return;
    const pending = this.pending;
    if (pending === undefined || c.data.session_id !== this.port.sessionId || c.data.initialization_id !== pending.id) return; // stale: observation only
    if (pending.waiting.get(p.instance) !== p.generation) return; // not a captured waiter of this initialization
    pending.waiting.delete(p.instance);
    if (pending.waiting.size === 0) void this.finish(pending);
  }

  /** A connection ended: it holds nothing from now on, and releases the pending initialization. */
  onOwnerGone(instance: string, generation: number): void {
    if (this.waiters.get(instance) === generation) this.waiters.delete(instance);
    const pending = this.pending;
    if (pending === undefined || pending.waiting.get(instance) !== generation) return;
    pending.waiting.delete(instance);
    if (pending.waiting.size === 0) void this.finish(pending);
  }

  private async finish(pending: Pending): Promise<void> {
    if (this.pending !== pending) return;
    this.pending = undefined;
    try {
      await this.port.publish("session.initialized", { session_id: this.port.sessionId, initialization_id: pending.id });
    } finally {
      this.finished = true;
      this.resolve(); // whatever happened, agents never wait on a finished session initialization
    }
  }
}
