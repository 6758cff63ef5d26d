// In-memory ports for the agent loop (PromptEngine) and the tool router: what the harness gives
// them (publication, directed sends, the live-connection table, journals) held in arrays, so their
// rules can be tested one commit at a time, beside the process-level tests. Every publication is
// checked against its generated schema, as the bus would, and committed events reach the engines
// through the same consumers the harness wires (see Harness's constructor).
import { PERSISTENCE, type EventName, type EventPayloads } from "../../generated/index.js";
import type { Committed, Event, PublisherEnvelope } from "../../handwritten/bus/index.js";
import { agentIdOf, checkedEvent } from "../../handwritten/protocol/index.js";
import { PromptEngine, type PromptPort } from "../../handwritten/harness/prompts.js";
import { ToolRouter, type ToolRouterPort } from "../../handwritten/harness/tools.js";
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
  readonly callAllowance = new Map<string, Set<string>>();
  readonly restarting = new Set<string>();
  /** Events whose publication fails (the commit refused, as an append failure would). */
  readonly failing = new Set<EventName>();
  /** Why a provider call cannot be sent, if it cannot. */
  sendProblem: string | undefined;
  /** Set to make reading a journal throw. */
  unreadableJournal: string | undefined;
  defaultModel: string | undefined;
  readonly prompts: PromptEngine;
  readonly tools: ToolRouter;
  private readonly background = new Set<Promise<unknown>>();
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
      systemPrompt: (agentId) => `system prompt of ${agentId}`,
      tools: () => [...this.tools.tools.values()].map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
      defaultModel: () => this.defaultModel,
      warn: (m) => this.warnings.push(m),
      agentRecords: (agentId, from, to) => {
        if (this.unreadableJournal !== undefined) throw new Error(this.unreadableJournal);
        return (this.journals.get(agentId) ?? []).slice(from, to);
      },
      agentRecordCount: (agentId) => this.journals.get(agentId)?.length ?? 0,
    };
    this.prompts = new PromptEngine(promptPort);
    const toolPort: ToolRouterPort = {
      publish: (name, data) => void this.publish(name, data),
      direct: (generation, name, data) => {
        this.directed.push({ to: generation, event: { name, data } as Event });
      },
      isLive: (instance, generation) => this.live.get(instance) === generation,
      toolPrefix: () => "",
      mayCall: (instance, tool) => this.callAllowance.get(instance)?.has(tool) === true,
      mayReturn: (instance) => this.restarting.has(instance),
      hasAgent: (agentId) => this.journals.has(agentId),
      warn: (m) => this.warnings.push(m),
    };
    this.tools = new ToolRouter(toolPort);
  }

  /** A loaded agent with an empty journal (a fresh one), or with these records (a resumed one). */
  addAgent(agentId: string, records: Event[] = [], model?: string): void {
    for (const r of records) commit(r.name, r.data, HARNESS_PUBLISHER); // each checked against its schema
    this.journals.set(agentId, records);
    if (records.length > 0) this.prompts.restore(agentId, model);
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
      this.prompts.fold(c);
    }
    this.published.push(c);
    for (const w of [...this.waiters]) {
      if (w.match(c)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(c);
      }
    }
    // Consumers run after the commit, as the bus runs them: never inside the publisher's call.
    queueMicrotask(() => this.track(this.consume(c)));
  }

  private consume(c: Committed): unknown {
    const p = this.prompts;
    const t = this.tools;
    switch (c.name) {
      case "ui.prompt_submit": return p.onUiPromptSubmit(c);
      case "agent.internal_prompt_request": return p.onInternalPromptRequest(c);
      case "agent.prompt_submitted": return p.onPromptSubmitted(c);
      case "ui.model_select": return p.onModelSelect(c);
      case "provider.models_declared": return p.onModelsDeclared(c);
      case "provider.response_delta_reported": return p.onDeltaReported(c);
      case "provider.response_finished_reported": return p.onFinishedReported(c);
      case "provider.response_failed_reported": return p.onFailedReported(c);
      case "provider.retry_reported": return p.onRetryReported(c);
      case "provider.tool_result":
      case "provider.tool_error": return p.onToolOutcome(c);
      case "agent.cancel_request":
        t.cancelAgent(c.data.agent_id);
        return p.onCancelRequest(c);
      case "tool.registration_declared": return t.onRegistrationDeclared(c);
      case "tool.unregistration_declared": return t.onUnregistrationDeclared(c);
      case "tool.request": return t.onRequest(c);
      case "tool.progress_reported": return t.onProgressReported(c);
      case "tool.result_reported":
      case "tool.error_reported":
      case "tool.cancelled_reported": return t.onTerminalReported(c);
      default: return undefined;
    }
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
