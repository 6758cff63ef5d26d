// In-memory ports for the agent loop (PromptEngine) and the tool router: what the harness gives
// them (publication, directed sends, the live-connection table, journals) held in arrays, so their
// rules can be tested one commit at a time, beside the process-level tests. Every publication is
// checked against its generated schema, as the bus would, and committed events reach the engines
// through the consumers declared in consumers.ts, registered as the harness registers them.
import { PERSISTENCE, type EventName, type EventPayloads, type McpSamplingConfig, type ModelMetadata } from "../../generated/index.js";
import type { Committed, Event, PublisherEnvelope } from "../../handwritten/bus/index.js";
import { agentIdOf, checkedEvent } from "../../handwritten/protocol/index.js";
import { emptyAgentFold, foldAgentRecord } from "../../handwritten/harness/agent-fold.js";
import { PromptEngine, type PromptPort } from "../../handwritten/harness/prompts.js";
import { DEFAULT_COMPACTION } from "../../handwritten/harness/compactor.js";
import { ToolRouter, type ToolRouterPort } from "../../handwritten/harness/tools.js";
import { ConsumerRegistry } from "../../handwritten/harness/consumers.js";
import { PromptSnapshot } from "../../handwritten/harness/prompt-snapshot.js";
import type { ProviderCall } from "../../handwritten/protocol/provider-request.js";

export const HARNESS_PUBLISHER: PublisherEnvelope = Object.freeze({ class: "harness" });

/** The envelope of a configured extension's connection. */
export function extensionPublisher(instance: string, generation: number, kind: "provider" | "tool" | "core" = "tool"): PublisherEnvelope {
  return { class: "extension", kind, instance, generation };
}

let seq = 0;

/** A commit of `name` as the bus hands it to consumers (the data checked against its schema). */
export function commit<N extends EventName>(name: N, data: EventPayloads[N], publisher: PublisherEnvelope): Committed<N> {
  const checked = checkedEvent(name, data);
  if ("code" in checked) throw new Error(`${name} does not match its schema: ${checked.message}`);
  return { name, data, seq: ++seq, recordedAt: Date.now(), publisher, persistence: PERSISTENCE[name] } as Committed<N>;
}

export interface Directed {
  readonly to: string | number;
  readonly event: Event;
}

/**
 * The harness side of both engines in memory: agents, live extension generations, journals, and
 * what was published, directed and sent to providers, in order.
 */
export class InMemoryHarness {
  readonly published: Committed[] = [];
  readonly directed: Directed[] = [];
  readonly providerCalls: Array<{ instance: string; generation: number; call: ProviderCall }> = [];
  readonly warnings: string[] = [];
  /** Agent journals: the durable (`agent` persistence) records of each agent. */
  readonly journals = new Map<string, Event[]>();
  /** instance → live generation. */
  readonly live = new Map<string, number>();
  /** A child agent's parent (`null`: started by an agent whose parent is not in the session). */
  readonly parents = new Map<string, string | null>();
  /** An MCP instance's `sampling` entry (SPEC-mcp, "Sampling"). */
  readonly samplings = new Map<string, McpSamplingConfig>();
  readonly callAllowance = new Map<string, Set<string>>();
  readonly restarting = new Set<string>();
  /** Events whose publication fails (the commit refused, as an append failure would). */
  readonly failing = new Set<EventName>();
  /** Why a provider call cannot be sent, if it cannot. */
  sendProblem: string | undefined;
  /** Set to make reading a journal throw. */
  unreadableJournal: string | undefined;
  defaultModel: string | undefined;
  /** The provider instance whose first declared model is the default (without `defaultModel`). */
  defaultProvider: string | undefined;
  /** The configuration's `model_info`. */
  modelInfo: Record<string, ModelMetadata> | undefined;
  readonly prompts: PromptEngine;
  readonly tools: ToolRouter;
  private readonly background = new Set<Promise<unknown>>();
  private readonly handlers = new Map<EventName, Array<(c: Committed) => unknown>>();
  private readonly waiters: Array<{ match: (c: Committed) => boolean; resolve: (c: Committed) => void }> = [];

  constructor() {
    const promptPort: PromptPort = {
      publish: async (name, data) => this.publish(name, data),
      directToInstance: (instance, name, data) => {
        if (!this.live.has(instance)) return false;
        this.directed.push({ to: instance, event: { name, data } as Event });
        return true;
      },
      sendProviderCall: async (instance, generation, call) => {
        if (this.sendProblem !== undefined) return this.sendProblem;
        this.providerCalls.push({ instance, generation, call });
        return undefined;
      },
      generationOf: (instance) => this.live.get(instance),
      hasAgent: (agentId) => this.journals.has(agentId),
      // The extensions' tools only: the harness's own need the rooms this harness leaves out.
      snapshot: (agentId, onlyTools) =>
        new PromptSnapshot({ role: undefined, policy: undefined, harnessTools: [], registry: this.tools.tools, onlyTools, system: () => `system prompt of ${agentId}` }),
      isLiveUi: (generation) => generation !== undefined,
      isLiveExtension: (instance, generation) => this.live.get(instance) === generation,
      compaction: DEFAULT_COMPACTION,
      defaultModel: () => this.defaultModel,
      defaultProvider: () => this.defaultProvider,
      modelInfo: () => this.modelInfo,
      warn: (m) => this.warnings.push(m),
      agentRecords: (agentId, from, to) => {
        if (this.unreadableJournal !== undefined) throw new Error(this.unreadableJournal);
        return (this.journals.get(agentId) ?? []).slice(from, to);
      },
      agentRecordCount: (agentId) => this.journals.get(agentId)?.length ?? 0,
      parentOf: (agentId) => this.parents.get(agentId),
      samplingOf: (instance) => this.samplings.get(instance),
    };
    this.prompts = new PromptEngine(promptPort);
    const toolPort: ToolRouterPort = {
      publish: (name, data) => void this.publish(name, data),
      direct: (generation, name, data) => {
        this.directed.push({ to: generation, event: { name, data } as Event });
        return true;
      },
      isLive: (instance, generation) => this.live.get(instance) === generation,
      toolPrefix: () => "",
      mayCall: (instance, tool) => this.callAllowance.get(instance)?.has(tool) === true,
      mayReturn: (instance) => this.restarting.has(instance),
      hasAgent: (agentId) => this.journals.has(agentId),
      callRefusal: (agentId, promptId, tool) => this.prompts.callRefusal(agentId, promptId, tool),
      warn: (m) => this.warnings.push(m),
    };
    this.tools = new ToolRouter(toolPort);
    this.register();
  }

  /** A loaded agent with an empty journal (a fresh one), or with these records (a resumed one). */
  addAgent(agentId: string, records: Event[] = [], model?: string): void {
    for (const r of records) commit(r.name, r.data, HARNESS_PUBLISHER); // each checked against its schema
    this.journals.set(agentId, records);
    if (records.length === 0) return;
    // What a resume reads of the journal: the fold (the model a caller names stands for it).
    const fold = emptyAgentFold();
    for (const r of records) foldAgentRecord(fold, r, 0);
    this.prompts.restore(agentId, { ...fold, ...(model !== undefined ? { model } : {}) });
  }

  /** Publishes as the harness: checked, appended to its agent's journal when durable, then consumed. */
  publish<N extends EventName>(name: N, data: EventPayloads[N]): boolean {
    if (this.failing.has(name)) return false;
    this.deliver(commit(name, data, HARNESS_PUBLISHER) as Committed);
    return true;
  }

  /** A peer's event committed: it reaches the consumers the harness wires for it. */
  fromPeer<N extends EventName>(name: N, data: EventPayloads[N], publisher: PublisherEnvelope): Committed<N> {
    const c = commit(name, data, publisher);
    this.deliver(c as Committed);
    return c;
  }

  private deliver(c: Committed): void {
    const agentId = agentIdOf(c);
    if (c.persistence === "agent" && agentId !== undefined) {
      const journal = this.journals.get(agentId);
      if (!journal) throw new Error(`no loaded agent ${agentId} for ${c.name}`);
      journal.push({ name: c.name, data: c.data } as Event);
      this.prompts.fold(c, journal.length - 1);
    }
    this.published.push(c);
    for (const w of [...this.waiters]) {
      if (w.match(c)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(c);
      }
    }
    // Consumers run after the commit, as the bus runs them: never inside the publisher's call.
    queueMicrotask(() => this.consume(c));
  }

  private consume(c: Committed): void {
    for (const handler of this.handlers.get(c.name) ?? []) this.track(handler(c));
  }

  /**
   * The agent loop's and the tool router's consumers, registered by their declarations in
   * consumers.ts as the harness registers them (and in its order), so this wiring cannot drift from
   * the table: an undeclared event does not compile, a declared one left out fails here.
   */
  private register(): void {
    const registry = new ConsumerRegistry({
      onCommitted: (name, consumer) => {
        const list = this.handlers.get(name) ?? [];
        list.push(consumer as (c: Committed) => unknown);
        this.handlers.set(name, list);
      },
    });
    const p = this.prompts;
    const t = this.tools;
    registry.consume("tools", "tool.registration_declared", (c) => t.onRegistrationDeclared(c));
    registry.consume("tools", "tool.unregistration_declared", (c) => t.onUnregistrationDeclared(c));
    registry.consume("tools", "tool.request", (c) => t.onRequest(c));
    registry.consume("tools", "tool.progress_reported", (c) => t.onProgressReported(c));
    for (const name of ["tool.result_reported", "tool.error_reported", "tool.cancelled_reported"] as const) {
      registry.consume("tools", name, (c) => t.onTerminalReported(c));
    }
    registry.consume("prompts", "ui.prompt_submit", (c) => p.onUiPromptSubmit(c));
    registry.consume("prompts", "agent.internal_prompt_request", (c) => p.onInternalPromptRequest(c));
    registry.consume("prompts", "agent.external_message_reported", (c) => p.onExternalMessageReported(c));
    registry.consume("prompts", "agent.prompt_submitted", (c) => p.onPromptSubmitted(c));
    registry.consume("prompts", "ui.model_select", (c) => p.onModelSelect(c));
    registry.consume("prompts", "ui.compact_request", (c) => p.onCompactRequest(c));
    registry.consume("prompts", "provider.models_declared", (c) => p.onModelsDeclared(c));
    registry.consume("prompts", "provider.response_delta_reported", (c) => p.onDeltaReported(c));
    registry.consume("prompts", "provider.response_finished_reported", (c) => p.onFinishedReported(c));
    registry.consume("prompts", "provider.response_failed_reported", (c) => p.onFailedReported(c));
    registry.consume("prompts", "provider.retry_reported", (c) => p.onRetryReported(c));
    registry.consume("prompts", "sandbox.state_reported", (c) => p.onSandboxState(c));
    registry.consume("prompts", "handoff.state_reported", (c) => p.onHandoffState(c));
    registry.consume("prompts", "sandbox.review_request", (c) => p.onReviewRequest(c));
    registry.consume("prompts", "mcp.sampling_request", (c) => p.onSamplingRequest(c));
    registry.consume("prompts", "mcp.sampling_cancel", (c) => p.onSamplingCancel(c));
    registry.consume("prompts", "provider.tool_result", (c) => p.onToolOutcome(c));
    registry.consume("prompts", "provider.tool_error", (c) => p.onToolOutcome(c));
    registry.consume("tools", "agent.cancel_request", (c) => t.cancelAgent(c.data.agent_id));
    registry.consume("prompts", "agent.cancel_request", (c) => p.onCancelRequest(c));
    const missing = registry.missing().filter((m) => m.startsWith("tools ") || m.startsWith("prompts "));
    if (missing.length > 0) throw new Error(`the in-memory harness does not register: ${missing.join(", ")}`);
  }

  private track(work: unknown): void {
    if (!(work instanceof Promise)) return;
    this.background.add(work);
    void work.finally(() => this.background.delete(work));
  }

  /** Resolves with the first commit (from now on) that matches; fails naming what never came. */
  next<N extends EventName>(name: N, match: (c: Committed<N>) => boolean = () => true, timeoutMs = 2000): Promise<Committed<N>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${name} was published within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({
        match: (c) => c.name === name && match(c as Committed<N>),
        resolve: (c) => {
          clearTimeout(timer);
          resolve(c as Committed<N>);
        },
      });
    });
  }

  /** Lets every consumer run to completion, including the work they start. */
  async settle(): Promise<void> {
    for (let idle = 0; idle < 3; ) {
      await new Promise((r) => setImmediate(r));
      if (this.background.size > 0) {
        idle = 0;
        await Promise.allSettled([...this.background]);
      } else idle++;
    }
  }

  /** The data of every publication of `name`, in order. */
  all<N extends EventName>(name: N): Array<Readonly<EventPayloads[N]>> {
    return this.published.filter((c) => c.name === name).map((c) => c.data as Readonly<EventPayloads[N]>);
  }

  /** The names of the harness's own publications, in order (optionally only those of some families). */
  names(...prefixes: string[]): string[] {
    return this.published
      .filter((c) => c.publisher.class === "harness")
      .map((c) => c.name)
      .filter((n) => prefixes.length === 0 || prefixes.some((p) => n.startsWith(p)));
  }
}
