// An in-memory harness for unit tests of the agent loop and tool routing: a real Harness (real bus,
// real journals in a temp folder or memory) whose extension supervision is replaced by a table of
// live instances — the `ExtensionLiveness` port the daemon's supervisor fills — and whose peers
// record what the harness sends them.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect } from "vitest";
import { Harness, type HarnessOptions, type Peer } from "../../handwritten/harness/index.js";
import type { Delivery, PublishOutcome, PublisherEnvelope, Sink } from "../../handwritten/bus/index.js";
import type { ExtensionKind, WireMessage } from "../../generated/index.js";
import { waitFor } from "./wait.js";

export interface RecordingPeer extends Peer {
  readonly sent: WireMessage[];
  /** Directed events this peer received, by name. */
  directed(name: string): Array<Record<string, unknown>>;
  /** When set, what sends to this peer answer instead of queueing (a full queue, a closed or too-large frame). */
  refuse?: "full" | "closed" | "oversize";
}

export interface KitExtension extends RecordingPeer {
  readonly instance: string;
  readonly publisher: PublisherEnvelope;
  emit(name: string, data: Record<string, unknown>): Promise<PublishOutcome>;
}

interface LiveInstance {
  generation: number;
  callTools: readonly string[];
  prefix: string;
}

/** The shared wait (test/support/wait.ts) with this kit's shorter deadline: everything here is in memory. */
export function until(pred: () => boolean, what = "the condition", ms = 5_000): Promise<void> {
  return waitFor(pred, what, { timeoutMs: ms, pollMs: 2 });
}

function recorder(generation: number, publisher: PublisherEnvelope): RecordingPeer {
  const sent: WireMessage[] = [];
  const peer: RecordingPeer = {
    generation,
    publisher,
    sent,
    send: (m) => {
      if (peer.refuse !== undefined) return peer.refuse;
      sent.push(m);
      return "queued";
    },
    sendAsync: async (m) => peer.send(m),
    directed: (name) => sent.flatMap((m) => (m.message === "direct" && m.payload.event.name === name ? [m.payload.event.data as Record<string, unknown>] : [])),
  };
  return peer;
}

export interface KitMaker {
  (options?: Partial<HarnessOptions> & { durable?: boolean }): Promise<HarnessKit>;
  /** No longer closes `k` after the test (a test that shut it down and removed its folder itself). */
  forget(k: HarnessKit): void;
}

/** A maker of kits (see HarnessKit.open), each closed after the test that opened it. Call at the top level of a test file. */
export function useKits(): KitMaker {
  const kits: HarnessKit[] = [];
  afterEach(async () => {
    while (kits.length) await kits.pop()?.close();
  });
  const open = async (options: Partial<HarnessOptions> & { durable?: boolean } = {}): Promise<HarnessKit> => {
    const k = await HarnessKit.open(options);
    kits.push(k);
    return k;
  };
  return Object.assign(open, { forget: (k: HarnessKit) => void kits.splice(kits.indexOf(k), 1) });
}

export class HarnessKit {
  readonly live = new Map<string, LiveInstance>();
  /** Instances whose connection ended but which the supervisor would respawn. */
  readonly returning = new Set<string>();
  /** Everything committed from the kit's start, in order (live deliveries of every event). */
  readonly events: Delivery[] = [];
  private nextGeneration = 100;

  private constructor(
    readonly h: Harness,
    readonly ui: RecordingPeer,
    private readonly dir: string | undefined,
  ) {
    h.extensions = {
      isLive: (instance, generation) => this.live.get(instance)?.generation === generation,
      toolPrefix: (instance) => this.live.get(instance)?.prefix ?? "",
      generationOf: (instance) => this.live.get(instance)?.generation,
      mayCall: (instance, tool) => {
        const allowed = this.live.get(instance)?.callTools ?? [];
        return allowed.includes("*") || allowed.includes(tool);
      },
      mayReturn: (instance) => this.returning.has(instance) || this.live.has(instance),
      counters: () => [],
    };
    h.addPeer(ui);
    const sink: Sink = { offer: (d) => (this.events.push(d), "queued"), close: () => undefined };
    h.bus.subscribe({ historical: [], live: ["*"] }, sink);
  }

  /** A harness with a state folder of its own (or none: ephemeral) and one attached UI. */
  static async open(options: Partial<HarnessOptions> & { durable?: boolean } = {}): Promise<HarnessKit> {
    const durable = options.durable ?? true;
    const dir = durable ? mkdtempSync(join(tmpdir(), "tau-kit-")) : undefined;
    const h = await Harness.open({ projectRoot: "/work/project", ...(dir ? { stateDir: dir } : {}), ...options });
    return new HarnessKit(h, recorder(1, { class: "ui_attached", generation: 1 }), dir);
  }

  get stateDir(): string | undefined {
    return this.dir;
  }

  /** A live configured extension; `callTools` is its `call_tools` setting. */
  extension(instance: string, kind: ExtensionKind, options: { callTools?: string[]; prefix?: string } = {}): KitExtension {
    const generation = this.nextGeneration++;
    this.live.set(instance, { generation, callTools: options.callTools ?? [], prefix: options.prefix ?? "" });
    const publisher: PublisherEnvelope = Object.freeze({ class: "extension", kind, instance, generation });
    const peer = recorder(generation, publisher);
    this.h.addPeer(peer);
    return Object.assign(peer, { instance, publisher, emit: (name: string, data: Record<string, unknown>) => this.h.bus.publishFromPeer({ name, data }, publisher) });
  }

  /** A live provider extension `llm` that declared the model m1, once the harness has made it available. */
  async provider(): Promise<KitExtension> {
    const p = this.extension("llm", "provider");
    expect((await p.emit("provider.models_declared", { models: [{ id: "m1" }] })).status).toBe("committed");
    await until(() => this.committed("harness.models_available").length > 0, "the models");
    return p;
  }

  /** The instance's connection ended (the supervisor's `detach`). */
  gone(ext: KitExtension): void {
    if (this.live.get(ext.instance)?.generation === ext.generation) this.live.delete(ext.instance);
    this.h.extensionGone(ext.instance, ext.generation);
  }

  async createAgent(extra: Record<string, unknown> = {}): Promise<string> {
    const before = this.ui.directed("ui.create_agent_result").length;
    const out = await this.h.bus.publish({ name: "ui.create_agent", data: { request_id: `r-${before}`, ...extra } }, this.ui.publisher);
    expect(out.status).toBe("committed");
    await until(() => this.ui.directed("ui.create_agent_result").length > before, "the create-agent result");
    const result = this.ui.directed("ui.create_agent_result")[before] as { ok: boolean; agent_id?: string; error?: string };
    if (!result.ok) throw new Error(result.error);
    return result.agent_id as string;
  }

  /** Committed events so far, by name (live deliveries, so replay is never included). */
  committed(name: string, pred: (data: Record<string, unknown>) => boolean = () => true): Array<Record<string, unknown>> {
    return this.events.filter((d) => d.event.name === name && pred(d.event.data as Record<string, unknown>)).map((d) => d.event.data as Record<string, unknown>);
  }

  async settled(): Promise<void> {
    await this.h.bus.settled();
    await new Promise((r) => setTimeout(r, 0));
    await this.h.bus.settled();
  }

  async close(): Promise<void> {
    await this.h.shutdown("requested");
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}
