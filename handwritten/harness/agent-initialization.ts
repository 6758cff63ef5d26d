// Per-agent keyed context and readiness (SPEC-extension-declarations, "Per-agent keyed context and
// readiness"): an agent's initialization captures the live waiters as it begins, takes keyed
// context from live extensions while it is pending, and finishes when every captured waiter said
// ready for exactly this agent and initialization id, or disconnected. Every declaration has
// already committed when it reaches here; the exact live generation, the session, the agent and
// the pending initialization id are checked again before anything changes.
import type { Committed } from "../bus/index.js";
import type { AgentContextEntry, DiscoveryItem, EventName, EventPayloads } from "../../generated/index.js";
import { mergeSkills, type Source } from "./discovery-sources.js";
import type { AgentContext, ContextHolder } from "./agent-context.js";
import { randomHex } from "../startup/random.js";

/** Context keys one instance may declare for one agent, and their total text bytes. */
export const MAX_CONTEXT_KEYS_PER_INSTANCE = 16;
export const MAX_CONTEXT_BYTES_PER_INSTANCE = 32 * 1024;

export interface AgentInitializationPort {
  readonly sessionId: string;
  isLive(instance: string, generation: number): boolean;
  hasAgent(agentId: string): boolean;
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<unknown>;
  /** The finished initialization's context and discovery items (by instance), frozen into the agent. */
  freeze(agentId: string, context: readonly AgentContextEntry[], discovery: ReadonlyArray<readonly [string, Omit<Source, "generation">]>): void;
  /** A discovery snapshot's valid items, or undefined when it is refused whole (discovery-sources.ts). */
  validated(instance: string, items: readonly DiscoveryItem[]): Omit<Source, "generation"> | undefined;
  warn(message: string): void;
  /** Until the session is ready (session-initialization.ts), resolves when it is; then undefined. */
  sessionReady(): Promise<void> | undefined;
}

interface Pending {
  readonly id: string;
  /** Captured waiters still to say ready: instance → generation. */
  readonly waiting: Map<string, number>;
  /** instance → {generation, key → text}. */
  readonly context: Map<string, { generation: number; keys: Map<string, string> }>;
  /** instance → its discovery snapshot for this initialization. */
  readonly discovery: Map<string, Source>;
  /** No captured waiter is left: it finishes once the session is ready. */
  released: boolean;
  readonly done: Promise<void>;
  readonly resolve: () => void;
}

type Declared = Committed<"agent.context_declared" | "agent.readiness_declared" | "agent.discovery_snapshot_declared">;

export class AgentInitializations {
  /** Live waiters: instance → the generation that declared it waits. */
  private readonly waiters = new Map<string, number>();
  private readonly pending = new Map<string, Pending>();
  /** Agents whose initialization in this process finished. */
  private readonly finished = new Set<string>();
  /** Initializations begun in this process: part of each id, so none repeats. */
  private minted = 0;
  /** The session has begun in this process: only from then does an agent's initialization begin. */
  private sessionBegun = false;
  /** Agents that asked to begin before the session did, in that order. */
  private readonly deferred = new Map<string, { readonly done: Promise<void>; readonly resolve: () => void }>();

  constructor(private readonly port: AgentInitializationPort) {}

  onWaitDeclared(c: Committed<"agent.readiness_wait_declared">): void {
    const p = c.publisher;
    if (p.class !== "extension" || p.instance === undefined || p.generation === undefined || !this.port.isLive(p.instance, p.generation)) return;
    if (c.data.wait) this.waiters.set(p.instance, p.generation);
    else if (this.waiters.get(p.instance) === p.generation) this.waiters.delete(p.instance);
  }

  /**
   * Begins an agent's initialization in this process (once): mints its id, captures the live
   * waiters and says so. Resolves when the initialization finished.
   */
  begin(agentId: string): Promise<void> {
    const open = this.pending.get(agentId);
    if (open !== undefined) return open.done;
    if (this.finished.has(agentId)) return Promise.resolve();
    if (!this.sessionBegun) {
      let later = this.deferred.get(agentId);
      if (later === undefined) {
        let resolve!: () => void;
        const done = new Promise<void>((r) => (resolve = r));
        this.deferred.set(agentId, (later = { done, resolve }));
      }
      return later.done;
    }
    const waiting = new Map([...this.waiters].filter(([instance, generation]) => this.port.isLive(instance, generation)));
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    const pending: Pending = { id: `init-${Date.now().toString(36)}-${(++this.minted).toString(36)}-${randomHex(6)}`, waiting, context: new Map(), discovery: new Map(), released: false, done, resolve };
    this.pending.set(agentId, pending);
    void this.port.publish("agent.initialization_started", { agent_id: agentId, session_id: this.port.sessionId, initialization_id: pending.id, waiting_for: [...waiting.keys()].sort() });
    if (waiting.size === 0) this.release(agentId, pending);
    return done;
  }

  /**
   * The session begins in this process: agents created before it (a UI's first agent, a run's)
   * begin their initialization now, in the order they asked, so the waiters the first extensions
   * declared while starting hold them too.
   */
  sessionBegins(): void {
    if (this.sessionBegun) return;
    this.sessionBegun = true;
    const deferred = [...this.deferred];
    this.deferred.clear();
    for (const [agentId, later] of deferred) {
      if (this.port.hasAgent(agentId)) void this.begin(agentId).then(later.resolve);
      else later.resolve();
    }
  }

  /** The agent's initialization still pending, if any: its prompts wait for it. */
  initializing(agentId: string): Promise<void> | undefined {
    if (this.finished.has(agentId)) return undefined;
    return this.begin(agentId);
  }

  onContextDeclared(c: Committed<"agent.context_declared">): void {
    const at = this.revalidated(c);
    if (at === undefined) return;
    const { pending, instance, generation } = at;
    const { key, text } = c.data;
    let held = pending.context.get(instance);
    if (held === undefined || held.generation !== generation) pending.context.set(instance, (held = { generation, keys: new Map() }));
    if (text === null) return void held.keys.delete(key);
    const next = new Map(held.keys).set(key, text);
    const refuse = (why: string) => this.port.warn(`agent context ${key} from extension ${instance} for agent ${c.data.agent_id} refused: ${why}`);
    if (next.size > MAX_CONTEXT_KEYS_PER_INSTANCE) return refuse(`the instance already declared ${MAX_CONTEXT_KEYS_PER_INSTANCE} keys for this agent`);
    if ([...next.values()].reduce((n, t) => n + Buffer.byteLength(t), 0) > MAX_CONTEXT_BYTES_PER_INSTANCE) {
      return refuse(`the instance's context for this agent would exceed ${MAX_CONTEXT_BYTES_PER_INSTANCE} bytes`);
    }
    held.keys = next;
  }

  /** An instance's complete discovery snapshot for a pending initialization: it replaces its earlier one. */
  onDiscoveryDeclared(c: Committed<"agent.discovery_snapshot_declared">): void {
    const at = this.revalidated(c);
    if (at === undefined) return;
    const taken = this.port.validated(at.instance, c.data.items);
    if (taken !== undefined) at.pending.discovery.set(at.instance, { generation: at.generation, ...taken });
  }

  onReadinessDeclared(c: Committed<"agent.readiness_declared">): void {
    const at = this.revalidated(c);
    if (at === undefined) return;
    const { pending, instance, generation } = at;
    if (pending.waiting.get(instance) !== generation) return; // not a captured waiter of this initialization
    pending.waiting.delete(instance);
    if (pending.waiting.size === 0) this.release(c.data.agent_id, pending);
  }

  /** A connection ended: it holds nothing from now on, and its context of pending initializations goes. */
  onOwnerGone(instance: string, generation: number): void {
    if (this.waiters.get(instance) === generation) this.waiters.delete(instance);
    for (const [agentId, pending] of this.pending) {
      if (pending.context.get(instance)?.generation === generation) pending.context.delete(instance);
      if (pending.discovery.get(instance)?.generation === generation) pending.discovery.delete(instance);
      if (pending.waiting.get(instance) !== generation) continue;
      pending.waiting.delete(instance);
      if (pending.waiting.size === 0) this.release(agentId, pending);
    }
  }

  /** The pending initialization a declaration names, when its exact live source, session, agent and id still hold. */
  private revalidated(c: Declared): { pending: Pending; instance: string; generation: number } | undefined {
    const p = c.publisher;
    if (p.class !== "extension" || p.instance === undefined || p.generation === undefined || !this.port.isLive(p.instance, p.generation)) return undefined;
    if (c.data.session_id !== this.port.sessionId || !this.port.hasAgent(c.data.agent_id)) return undefined;
    const pending = this.pending.get(c.data.agent_id);
    if (pending === undefined || pending.id !== c.data.initialization_id) return undefined; // stale initialization id
    return { pending, instance: p.instance, generation: p.generation };
  }

  /**
   * Every captured waiter of the agent is done: it finishes now when the session is ready (so a new
   * agent's record is queued right behind its creation), else once the session is. Per-agent
   * readiness never releases the session, nor the session an agent's own waiters.
   */
  private release(agentId: string, pending: Pending): void {
    if (pending.released) return;
    pending.released = true;
    const session = this.port.sessionReady();
    if (session === undefined) void this.finish(agentId, pending);
    else void session.then(() => this.finish(agentId, pending));
  }

  private async finish(agentId: string, pending: Pending): Promise<void> {
    if (this.pending.get(agentId) !== pending) return;
    this.pending.delete(agentId);
    this.finished.add(agentId);
    const context: AgentContextEntry[] = [];
    for (const [instance, held] of [...pending.context].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (!this.port.isLive(instance, held.generation)) continue;
      for (const [key, text] of [...held.keys].sort(([a], [b]) => (a < b ? -1 : 1))) context.push({ instance, key, text });
    }
    const discovery = [...pending.discovery].filter(([instance, d]) => this.port.isLive(instance, d.generation)).sort(([a], [b]) => (a < b ? -1 : 1));
    try {
      this.port.freeze(agentId, context, discovery);
      // Every finalization is recorded, an empty one too: the bus keeps publication order, so both
      // are queued behind the agent's creation and ahead of any round the finished wait releases.
      await Promise.all([
        this.port.publish("agent.initialization_context_set", { agent_id: agentId, initialization_id: pending.id, context }),
        this.port.publish("harness.agent_context_initialized", {
          agent_id: agentId,
          initialization_id: pending.id,
          context: context.map(({ instance, key }) => ({ instance, key })),
        }),
      ]);
    } finally {
      pending.resolve(); // whatever happened, the agent's prompts never wait on a finished initialization
    }
  }
}

/**
 * Freezes a finished initialization into its agent: the keyed context, and the per-agent discovery
 * items added to what the agent took when it was created (AGENTS.md after the others; a skill name
 * already taken is diagnosed and left out).
 */
export function freezeInitialization(
  context: AgentContext,
  agent: ContextHolder,
  entries: readonly AgentContextEntry[],
  discovery: ReadonlyArray<readonly [string, Omit<Source, "generation">]>,
): void {
  context.retake(agent);
  agent.agentContext = entries;
  if (discovery.length === 0) return;
  agent.agentsMd = [...(agent.agentsMd ?? []), ...discovery.flatMap(([, d]) => d.agentsMd)];
  const merged = mergeSkills({ skills: agent.skills?.skills ?? [], problems: [] }, discovery.map(([instance, d]) => [instance, d.skills]));
  agent.skills = { skills: merged.skills, problems: [...(agent.skills?.problems ?? []), ...merged.problems] };
}
