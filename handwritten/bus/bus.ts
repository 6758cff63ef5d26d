// The publication pipeline (SPEC-event-publication): admission → interception → commit →
// broadcast → post-commit consumers. One publication at a time passes interception and commit, so
// sequence order is submission order; the check and the mutation of a commit share one synchronous
// step.
import { mark, timelineOn } from "../startup/timeline.js";
import { encodeFrame, eventProblem, type Event } from "../protocol/index.js";
import { AUTHORITY, PERSISTENCE, type EventName, type EventPayloads, type Persistence, type Publisher } from "../../generated/index.js";
import { judge, type PublisherIdentity, type UnjudgedEvent } from "./admission.js";
import { bestMatch, selectorMatches, type SelectorKind } from "./selectors.js";
import { INTERCEPT_DEADLINE_MS, PIPELINE_QUEUE_ITEMS, SUBSCRIBER_HIGH_WATER_ITEMS, SUBSCRIBER_QUEUE_BYTES, SUBSCRIBER_QUEUE_ITEMS } from "./limits.js";

/** The immutable publisher envelope the harness stamps on every publication. */
export interface PublisherEnvelope extends PublisherIdentity {
  readonly instance?: string;
  readonly generation?: number;
}

/** A publication from tau's own code: its data is its name's generated type (see `Bus.publish`). */
export interface EventInput<N extends EventName = EventName> {
  readonly name: N;
  readonly data: EventPayloads[N];
}

export type { Event };

/** A publication as it arrives from a peer: a name and data, neither admitted nor validated yet. */
export type PeerEventInput = UnjudgedEvent;

interface CommittedEvent<K extends EventName> {
  readonly name: K;
  /** Frozen at commit (deeply): shared by every reader. */
  readonly data: Readonly<EventPayloads[K]>;
  readonly seq: number;
  readonly recordedAt: number;
  readonly publisher: PublisherEnvelope;
  readonly persistence: Persistence;
  /** It concerns ephemeral state (see `BusOptions.ephemeral`): it never reaches the debug log. */
  readonly ephemeral?: true;
}

/** A committed event; narrowing on `name` narrows `data` to that event's generated type. */
export type Committed<N extends EventName = EventName> = { [K in N]: CommittedEvent<K> }[N];

/** A commit as the bus assembles it, before its data is known to be its name's type. */
type Assembled = Omit<CommittedEvent<EventName>, "data"> & { readonly data: Readonly<Record<string, unknown>> };

/**
 * The one place a payload becomes its event's type: every publication's data was validated against
 * its name's schema on admission (and every replacement and restored record likewise), so it is one.
 */
function committed(c: Assembled): Committed {
  return c as Committed;
}

/** The same for an event about to enter the pipeline: its data passed its name's schema. */
function admitted(name: EventName, data: Readonly<Record<string, unknown>>): Event {
  return { name, data } as Event;
}

/** A `deliver` frame's payload. */
export interface Delivery {
  readonly event: { readonly name: string; readonly data: Readonly<Record<string, unknown>> };
  readonly seq: number;
  readonly recorded_at: number;
  readonly publisher: Publisher;
  readonly replay?: true;
}

/** Where a subscriber's deliveries go; a full sink is cut off so it cannot stall the others. */
export interface Sink {
  offer(delivery: Delivery, frame: Buffer): "queued" | "full";
  /**
   * Takes several deliveries as one queued item (their frames written back to back) once there is
   * room, waiting for the subscriber to read: replay offers history batch by batch this way, so its
   * length is never bounded by the queue and a slow reader only slows its own replay. "closed":
   * the subscriber went away.
   */
  offerBatchAsync?(deliveries: readonly Delivery[], frames: readonly Buffer[]): Promise<"queued" | "closed">;
  /** Deliveries queued and not yet taken by the subscriber (see SUBSCRIBER_HIGH_WATER_ITEMS). */
  backlog?(): number;
  close(reason: string): void;
}

/** Replay is offered in batches of about this many bytes of frames. */
const REPLAY_BATCH_BYTES = 256 * 1024;

/** One durable record as history replays it; `seq` is its position in its own journal. */
export interface HistoricalRecord {
  readonly name: EventName;
  readonly data: Record<string, unknown>;
  readonly recordedAt: number;
  readonly publisher: PublisherEnvelope;
  readonly seq: number;
}

/** Durable history as of the moment it was opened, oldest first. */
export interface HistoryReader {
  /** The next records in replay order, at least one while any is left; [] at the end. */
  next(): HistoricalRecord[];
  /** Records the window left out (older than it). */
  readonly omitted: number;
  close(): void;
}

/** Where replayed history comes from: the journals (the harness), or the bus's own memory. */
export interface HistorySource {
  /**
   * Captures, synchronously, where history ends: what commits after this call is live, never
   * history. `recent` keeps only that many of the most recent records of each journal.
   */
  open(recent: number | undefined): HistoryReader;
}

export type InterceptAction =
  | { readonly action: "pass" }
  | { readonly action: "drop" }
  | { readonly action: "replace"; readonly replacement: PeerEventInput };

export interface InterceptorSpec {
  readonly selectors: readonly string[];
  /** Lower runs first; ties keep registration order. */
  readonly priority: number;
  /**
   * Asked for a verdict; `id` correlates the reply (see `Bus.reply`). Returning false (the question
   * could not be sent: the peer is not reading) or throwing counts as a pass at once.
   */
  readonly intercept: (id: number, event: { name: EventName; data: Record<string, unknown> }, publisher: PublisherEnvelope) => unknown;
}

export type PublishOutcome =
  | { readonly status: "committed"; readonly seq: number }
  | { readonly status: "dropped" }
  | { readonly status: "refused"; readonly reason: "unknown_event" | "unauthorized" | "invalid" | "overloaded"; readonly detail?: string }
  | { readonly status: "failed"; readonly error: Error };

/** A post-commit consumer; a throw or a rejected promise is contained (logged once, never re-thrown). */
export type Consumer<N extends EventName = EventName> = (event: Committed<N>) => unknown;

/** Appends a durable event; throws to abort the commit. Chosen by the harness per event. */
export type DurableAppend = (event: Committed) => void;

export interface BusOptions {
  /** Durable appends by persistence class; a missing writer means the class is not stored here. */
  readonly append?: DurableAppend;
  readonly clock?: () => number;
  /** Diagnostics: interception anomalies (protected drop attempts, bad replacements). */
  readonly warn?: (message: string) => void;
  /** Key for current-state (`snapshot`) events; undefined removes nothing and keeps the latest. */
  readonly snapshotKey?: (event: Event & { readonly publisher?: PublisherEnvelope }) => string | null;
  /** How long an interceptor may take to answer before its question counts as a pass. */
  readonly interceptDeadlineMs?: number;
  /**
   * Durable history for replay. Absent: the bus keeps what it commits (and `restore`s) in memory
   * and replays that (tests, previews); the harness reads its journals instead.
   */
  readonly history?: HistorySource;
  /**
   * Whether a publication concerns ephemeral state (an ephemeral agent, a `!!` command). Asked of
   * the event as published, before interception, and again as committed: either makes it so.
   */
  readonly ephemeral?: (event: Event) => boolean;
}

interface Interceptor extends InterceptorSpec {
  readonly owner: number;
  readonly order: number;
  /**
   * The question this interceptor let pass its deadline: until its (stale) reply arrives, or its
   * owner goes away, it is asked nothing more, so a late answer can never bind to later work.
   */
  overdue: number | undefined;
}

interface Subscription {
  readonly id: number;
  readonly live: readonly string[];
  readonly sink: Sink;
  /** Live deliveries committed while its history replays; undefined once it is live. */
  pending: Array<{ delivery: Delivery; frame: Buffer }> | undefined;
  pendingBytes: number;
}

interface Pending {
  readonly owner: number;
  readonly resolve: (a: InterceptAction) => void;
  readonly timer: NodeJS.Timeout;
}

interface Job {
  readonly name: EventName;
  readonly data: Record<string, unknown>;
  readonly publisher: PublisherEnvelope;
  /** Classified from the data as published, so no interceptor's replacement can undo it. */
  readonly ephemeral: boolean;
  readonly resolve: (o: PublishOutcome) => void;
}

const DURABLE: ReadonlySet<Persistence> = new Set(["agent", "session", "restore"]);
const KIND_RANK: Record<SelectorKind, number> = { exact: 0, prefix: 1, all: 2 };

export function nowMicros(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

export class Bus {
  private seq = 0;
  /** Durable history kept in memory, only when no history source is given. */
  private readonly log: Committed[] = [];
  private readonly historySource: HistorySource;
  private readonly snapshots = new Map<string, Committed>();
  private readonly queue: Job[] = [];
  private running = false;
  private interceptors: Interceptor[] = [];
  private interceptorOrder = 0;
  private readonly pending = new Map<number, Pending>();
  private nextInterceptId = 1;
  private readonly subscriptions = new Map<number, Subscription>();
  private nextSubscription = 1;
  private readonly consumers = new Map<string, Consumer[]>();
  private readonly clock: () => number;

  constructor(private readonly options: BusOptions = {}) {
    this.clock = options.clock ?? nowMicros;
    this.historySource = options.history ?? memoryHistory(this.log);
  }

  /** The next commit sequence number. */
  get nextSeq(): number {
    return this.seq;
  }

  /** Seeds the in-memory history (a bus without a history source): sequenced in order, never appended again. */
  restore(events: ReadonlyArray<{ name: EventName; data: Record<string, unknown>; recordedAt: number; publisher: PublisherEnvelope }>): void {
    for (const e of events) {
      this.log.push(committed(freeze({ ...e, seq: this.seq++, persistence: PERSISTENCE[e.name] })));
    }
  }

  /** Admission, then the pipeline. Resolves once the event is committed, dropped or refused. */
  publish<N extends EventName>(input: EventInput<N>, publisher: PublisherEnvelope): Promise<PublishOutcome> {
    return this.publishFromPeer(input, publisher);
  }

  /**
   * A publication whose name and data came over the wire: admission checks the name and the
   * publisher's authority first, the event's schema the data after (`judge`; as for tau's own
   * publications, which the compiler already holds to it).
   */
  publishFromPeer(input: PeerEventInput, publisher: PublisherEnvelope): Promise<PublishOutcome> {
    const verdict = judge(input, publisher);
    if (!verdict.ok) return Promise.resolve({ status: "refused", reason: verdict.reason, ...(verdict.detail !== undefined ? { detail: verdict.detail } : {}) });
    if (this.queue.length >= PIPELINE_QUEUE_ITEMS) return Promise.resolve({ status: "refused", reason: "overloaded" });
    const env = freeze({ ...publisher });
    return new Promise((resolve) => {
      // The bus takes ownership of `data`: it is frozen at commit and shared with every reader.
      const data = input.data;
      const ephemeral = this.options.ephemeral?.(verdict.event) === true;
      this.queue.push({ name: verdict.event.name, data, publisher: env, ephemeral, resolve });
      if (!this.running) void this.run();
    });
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const job = this.queue.shift() as Job;
        let outcome: PublishOutcome;
        try {
          outcome = await this.process(job);
        } catch (err) {
          outcome = { status: "failed", error: err instanceof Error ? err : new Error(String(err)) };
        }
        job.resolve(outcome);
        // A subscriber falling behind gets its connection written before the next commit.
        if (this.queue.length > 0 && this.backlogged()) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      this.running = false;
    }
  }

  private backlogged(): boolean {
    for (const sub of this.subscriptions.values()) if ((sub.sink.backlog?.() ?? 0) > SUBSCRIBER_HIGH_WATER_ITEMS) return true;
    return false;
  }

  private async process(job: Job): Promise<PublishOutcome> {
    let data = job.data;
    const row = AUTHORITY[job.name];
    for (const interceptor of this.interceptorsFor(job.name)) {
      const verdict = await this.ask(interceptor, job.name, data, job.publisher);
      if (verdict.action === "pass") continue;
      if (row.protected) {
        this.options.warn?.(`interceptor tried to ${verdict.action} protected ${job.name}; passed unchanged`);
        continue;
      }
      if (verdict.action === "drop") return { status: "dropped" };
      const r = verdict.replacement;
      const problem = r.name !== job.name ? "changes the event name" : eventProblem(r)?.message;
      if (problem) {
        this.options.warn?.(`interceptor replacement for ${job.name} ${problem}; passed unchanged`);
        continue;
      }
      data = r.data;
    }
    return this.commit(job.name, data, job.publisher, job.ephemeral);
  }

  /** Sequence, timestamp, durable append, broadcast and consumers, in one synchronous step. */
  private commit(name: EventName, data: Record<string, unknown>, publisher: PublisherEnvelope, ephemeral: boolean): PublishOutcome {
    const persistence = PERSISTENCE[name];
    if (persistence === "directed") return { status: "refused", reason: "invalid", detail: "directed events are sent, not published" };
    const quiet = ephemeral || this.options.ephemeral?.(admitted(name, data)) === true;
    const event = committed(
      freeze({
        name,
        data: deepFreeze(data),
        seq: this.seq,
        recordedAt: this.clock(),
        publisher,
        persistence,
        ...(quiet ? { ephemeral: true as const } : {}),
      }),
    );
    if (DURABLE.has(persistence)) {
      this.options.append?.(event); // throws: the commit is aborted and seq not consumed
      if (this.options.history === undefined) this.log.push(event);
    } else if (persistence === "snapshot") {
      this.updateSnapshot(event);
    }
    this.seq++;
    if (timelineOn) mark(`commit ${name}`);
    this.broadcast(event);
    for (const c of [...(this.consumers.get(name) ?? []), ...(this.consumers.get("*") ?? [])]) this.runConsumer(c, event);
    return { status: "committed", seq: event.seq };
  }

  /** One consumer's failure is its own: the commit stands and the other consumers still run. */
  private runConsumer(consumer: Consumer, committed: Committed): void {
    const failed = (err: unknown) =>
      this.options.warn?.(`a consumer of ${committed.name} seq ${committed.seq} failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 1024));
    try {
      const result = consumer(committed);
      if (result instanceof Promise) result.catch(failed);
    } catch (err) {
      failed(err);
    }
  }

  private updateSnapshot(c: Committed): void {
    const key = this.options.snapshotKey ? this.options.snapshotKey(c) : c.name;
    if (key === null) return;
    this.snapshots.set(key, c);
  }

  /** Removes a current-state entry (for example a tool that was unregistered). */
  forgetSnapshot(key: string): void {
    this.snapshots.delete(key);
  }

  private broadcast(c: Committed): void {
    let frame: Buffer | undefined;
    const delivery = toDelivery(c, false);
    for (const sub of this.subscriptions.values()) {
      if (!sub.live.some((s) => selectorMatches(s, c.name))) continue;
      if (frame === undefined) {
        try {
          frame = encodeFrame({ message: "deliver", payload: delivery });
        } catch {
          // Committed (and stored) but larger than one wire frame: it cannot be delivered live.
          this.options.warn?.(`${c.name} seq ${c.seq} exceeds the wire frame cap; not delivered live`);
          return;
        }
      }
      if (sub.pending !== undefined) {
        // Its history is still replaying: the live delivery waits, within the subscriber's bounds.
        sub.pending.push({ delivery, frame });
        sub.pendingBytes += frame.length;
        if (sub.pending.length > SUBSCRIBER_QUEUE_ITEMS || sub.pendingBytes > SUBSCRIBER_QUEUE_BYTES) this.cutOff(sub, "subscriber queue full during replay");
        continue;
      }
      if (sub.sink.offer(delivery, frame) === "full") this.cutOff(sub, "subscriber queue full");
    }
  }

  private cutOff(sub: Subscription, reason: string): void {
    this.subscriptions.delete(sub.id);
    sub.sink.close(reason);
  }

  /**
   * Subscribes a sink: its `historical` selectors first replay matching durable history (from the
   * history source, as of this call) and current state, each `replay: true`, then one
   * `session.replay_complete` boundary, then it goes live. Replay runs asynchronously, batch by
   * batch, as fast as the subscriber reads; what commits meanwhile waits for the boundary, so
   * nothing is missed or delivered twice. `recent` bounds the history replayed per journal.
   * Returns the subscription id.
   */
  subscribe(selectors: { historical: readonly string[]; live: readonly string[] }, sink: Sink, recent?: number): number {
    const id = this.nextSubscription++;
    const historical = selectors.historical.length > 0;
    const sub: Subscription = { id, live: [...selectors.live], sink, pending: historical ? [] : undefined, pendingBytes: 0 };
    this.subscriptions.set(id, sub);
    if (historical) {
      // History ends and current state are taken now, in the same step as the subscription.
      const reader = this.historySource.open(recent);
      const state = [...this.snapshots.values()].filter((c) => selectors.historical.some((s) => selectorMatches(s, c.name))).sort((a, b) => a.seq - b.seq);
      void this.replay(sub, selectors.historical, reader, state);
    }
    return id;
  }

  private async replay(sub: Subscription, selectors: readonly string[], reader: HistoryReader, state: readonly Committed[]): Promise<void> {
    let replayed = 0;
    try {
      let batch: Delivery[] = [];
      let frames: Buffer[] = [];
      let bytes = 0;
      const flush = async (): Promise<boolean> => {
        if (frames.length === 0) return true;
        const ok = await this.deliverBatch(sub, batch, frames);
        replayed += batch.length;
        batch = [];
        frames = [];
        bytes = 0;
        return ok;
      };
      const add = async (d: Delivery): Promise<boolean> => {
        let frame: Buffer;
        try {
          frame = encodeFrame({ message: "deliver", payload: d });
        } catch {
          this.options.warn?.(`${d.event.name} seq ${d.seq} exceeds the wire frame cap; not replayed`);
          return true;
        }
        batch.push(d);
        frames.push(frame);
        bytes += frame.length;
        return bytes < REPLAY_BATCH_BYTES || (await flush());
      };
      for (let records = reader.next(); records.length > 0; records = reader.next()) {
        if (!this.subscriptions.has(sub.id)) return;
        for (const r of records) {
          if (!selectors.some((s) => selectorMatches(s, r.name))) continue;
          if (!(await add(historicalDelivery(r)))) return;
        }
      }
      for (const c of state) if (!(await add(toDelivery(c, true)))) return;
      if (!(await flush())) return;
      const boundary: Delivery = {
        event: { name: "session.replay_complete", data: { replayed, omitted: reader.omitted } },
        seq: this.seq,
        recorded_at: this.clock(),
        publisher: { class: "harness" },
        replay: true,
      };
      if (!(await this.deliverBatch(sub, [boundary], [encodeFrame({ message: "deliver", payload: boundary })]))) return;
      // What committed during the replay, in order; then live (set in the same step as the last check).
      while (sub.pending !== undefined && sub.pending.length > 0) {
        const waiting = sub.pending.splice(0);
        sub.pendingBytes = 0;
        if (!(await this.deliverBatch(sub, waiting.map((w) => w.delivery), waiting.map((w) => w.frame)))) return;
      }
      sub.pending = undefined;
    } catch (err) {
      this.cutOff(sub, `replay failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 200));
    } finally {
      reader.close();
    }
  }

  /** Offers a batch to a subscription still subscribed, waiting for room where its sink can. */
  private async deliverBatch(sub: Subscription, deliveries: Delivery[], frames: Buffer[]): Promise<boolean> {
    if (!this.subscriptions.has(sub.id)) return false;
    if (sub.sink.offerBatchAsync) {
      if ((await sub.sink.offerBatchAsync(deliveries, frames)) === "queued") return this.subscriptions.has(sub.id);
      this.subscriptions.delete(sub.id);
      return false;
    }
    for (let i = 0; i < deliveries.length; i++) {
      if (sub.sink.offer(deliveries[i] as Delivery, frames[i] as Buffer) === "full") {
        this.cutOff(sub, "subscriber queue full during replay");
        return false;
      }
    }
    return true;
  }

  unsubscribe(id: number): void {
    this.subscriptions.delete(id);
  }

  get subscriberCount(): number {
    return this.subscriptions.size;
  }

  /** Registers an interceptor for `owner` (a connection); returns nothing, removed with the owner. */
  addInterceptor(owner: number, spec: InterceptorSpec): void {
    this.interceptors.push({ ...spec, selectors: [...spec.selectors], owner, order: this.interceptorOrder++, overdue: undefined });
  }

  /** Removes an owner's interceptors; their outstanding questions resolve as pass and late replies are ignored. */
  removeOwner(owner: number): void {
    this.interceptors = this.interceptors.filter((i) => i.owner !== owner);
    for (const [id, p] of this.pending) {
      if (p.owner === owner) {
        this.pending.delete(id);
        clearTimeout(p.timer);
        p.resolve({ action: "pass" });
      }
    }
  }

  /**
   * Delivers an interceptor's reply. Only the owner asked, for an id still outstanding, can bind. The
   * reply to a question that passed its deadline binds nothing: it is consumed, and its interceptor
   * is asked again from the next publication on.
   */
  reply(owner: number, id: number, action: InterceptAction): boolean {
    const p = this.pending.get(id);
    if (!p || p.owner !== owner) {
      const late = this.interceptors.find((i) => i.owner === owner && i.overdue === id);
      if (late) late.overdue = undefined;
      return false;
    }
    this.pending.delete(id);
    clearTimeout(p.timer);
    p.resolve(action);
    return true;
  }

  /** Runs `consumer` after each commit of `name` ("*": of every event), in registration order. */
  onCommitted<N extends EventName>(name: N, consumer: Consumer<N>): void;
  onCommitted(name: "*", consumer: Consumer): void;
  onCommitted(name: EventName | "*", consumer: Consumer<never>): void {
    const list = this.consumers.get(name) ?? [];
    list.push(consumer as Consumer);
    this.consumers.set(name, list);
  }

  /** Resolves once the pipeline is empty (every publication queued so far, and what they caused). */
  async settled(): Promise<void> {
    while (this.running || this.queue.length > 0) await new Promise((r) => setImmediate(r));
  }

  /** Durable history kept in memory (a bus without a history source): restored plus appended. */
  history(): readonly Committed[] {
    return this.log;
  }

  private interceptorsFor(name: EventName): Interceptor[] {
    const matched: Array<{ i: Interceptor; rank: number }> = [];
    for (const i of this.interceptors) {
      if (i.overdue !== undefined) continue; // suspended until its stale reply is consumed
      const kind = bestMatch(i.selectors, name);
      if (kind !== undefined) matched.push({ i, rank: KIND_RANK[kind] });
    }
    matched.sort((a, b) => a.rank - b.rank || a.i.priority - b.i.priority || a.i.order - b.i.order);
    return matched.map((m) => m.i);
  }

  /**
   * One question to one interceptor. It resolves with the reply, or as a pass when the question
   * cannot be sent or its deadline passes; in the last case the interceptor is suspended (see
   * `Interceptor.overdue`) and the pipeline moves on.
   */
  private ask(i: Interceptor, name: EventName, data: Record<string, unknown>, publisher: PublisherEnvelope): Promise<InterceptAction> {
    const id = this.nextInterceptId++;
    const deadline = this.options.interceptDeadlineMs ?? INTERCEPT_DEADLINE_MS;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        i.overdue = id;
        this.options.warn?.(`an interceptor (connection ${i.owner}) did not answer about ${name} within ${deadline} ms; passed unchanged, and it is asked nothing more until it answers`);
        resolve({ action: "pass" });
      }, deadline);
      this.pending.set(id, { owner: i.owner, resolve, timer });
      let sent: unknown;
      try {
        sent = i.intercept(id, { name, data: deepFreeze(data) }, publisher);
      } catch {
        sent = false;
      }
      if (sent === false && this.pending.delete(id)) {
        clearTimeout(timer);
        resolve({ action: "pass" });
      }
    });
  }
}

function historicalDelivery(r: HistoricalRecord): Delivery {
  return toDelivery({ name: r.name, data: r.data, seq: r.seq, recordedAt: r.recordedAt, publisher: r.publisher, persistence: PERSISTENCE[r.name] }, true);
}

/** History from the bus's own memory: what it committed durably (and restored), as of `open`. */
function memoryHistory(log: readonly Committed[]): HistorySource {
  return {
    open(recent) {
      const end = log.length;
      const start = recent === undefined ? 0 : Math.max(0, end - recent);
      let at = start;
      return {
        omitted: start,
        next: () => {
          const out = log.slice(at, Math.min(end, at + 256)).map((c) => ({ name: c.name, data: c.data, recordedAt: c.recordedAt, publisher: c.publisher, seq: c.seq }));
          at += out.length;
          return out;
        },
        close: () => undefined,
      };
    },
  };
}

function toDelivery(c: Committed | Assembled, replay: boolean): Delivery {
  const publisher: Publisher = { class: c.publisher.class };
  if (c.publisher.instance !== undefined) publisher.instance = c.publisher.instance;
  if (c.publisher.kind !== undefined) publisher.kind = c.publisher.kind;
  if (c.publisher.generation !== undefined) publisher.generation = c.publisher.generation;
  const d: Delivery = { event: { name: c.name, data: c.data }, seq: c.seq, recorded_at: c.recordedAt, publisher };
  return replay ? { ...d, replay: true } : d;
}

function freeze<T extends object>(o: T): T {
  return Object.freeze(o);
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object" && !Object.isFrozen(o) && !ArrayBuffer.isView(o)) {
    Object.freeze(o);
    for (const v of Object.values(o as Record<string, unknown>)) deepFreeze(v);
  }
  return o;
}
