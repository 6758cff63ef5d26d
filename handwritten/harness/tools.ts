// Tool routing (SPEC-tool-routing): declarations become canonical registrations, requests are routed
// to exactly one owner, and only that owner's current generation can report progress or the end.
// Only the calls a model made (the agent loop's own requests) become transcript facts; a call an
// extension requests is routed under its configured allowance and its outcome is ownerless.
import type { Committed, PublisherEnvelope } from "../bus/index.js";
import type { EventName, EventPayloads, ToolDisplay, ToolOutcome, ToolStarted } from "../../generated/index.js";
import { AGENT_TOOL_NAMES } from "./agent-tools.js";

/** Bounds on a declaration, checked after commit (the schema bounds the description already). */
export const MAX_TOOL_PARAMETERS_BYTES = 64 * 1024;
export const MAX_TOOL_EXAMPLES_BYTES = 64 * 1024;
export const MAX_TOOLS_PER_INSTANCE = 256;
/** Calls whose terminal report already arrived; later reports for them are observations only. */
export const COMPLETED_CALL_TOMBSTONES = 4096;

/** Tool names the harness keeps for its own tools; no extension may claim them. */
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set(["compact", "agent_compact", ...AGENT_TOOL_NAMES]);

/** What an owner reports to end a call. */
export type TerminalReport = "tool.result_reported" | "tool.error_reported" | "tool.cancelled_reported";

export interface RegisteredTool {
  readonly name: string;
  readonly owner: string;
  readonly generation: number;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  /** What a role's policy matches besides the name and the owner (SPEC-tool-routing, "Tool policy by role"). */
  readonly group: string | undefined;
  readonly tags: readonly string[];
}

interface PendingCall {
  readonly callId: string;
  readonly agentId: string;
  /** Set only for a call a model made: its outcome becomes a `provider.tool_*` transcript fact. */
  readonly promptId?: string;
  readonly tool: string;
  readonly owner: string;
  readonly generation: number;
}

export interface ToolRouterPort {
  publish<N extends EventName>(name: N, data: EventPayloads[N]): void;
  /** Sends a directed event to the live connection of an extension generation; false when it could not be queued. */
  direct<N extends EventName>(generation: number, name: N, data: EventPayloads[N]): boolean;
  /** Whether this generation is the live connection of its instance. */
  isLive(instance: string, generation: number): boolean;
  toolPrefix(instance: string): string;
  /** Whether an extension's configuration lets it call `tool` (`call_tools`). */
  mayCall(instance: string, tool: string): boolean;
  /** Whether an instance may still come back (its process is respawning): its names wait for it. */
  mayReturn(instance: string): boolean;
  hasAgent(agentId: string): boolean;
  /**
   * Why a model's call of `tool` in prompt `promptId` may not run, from that prompt's snapshot
   * (prompt-snapshot.ts), or undefined when it may: checked again where the call is routed.
   */
  callRefusal(agentId: string, promptId: string, tool: string): string | undefined;
  warn(message: string): void;
}

export class ToolRouter {
  readonly tools = new Map<string, RegisteredTool>();
  /** Names whose owner's connection ended: held for that instance while it may come back. */
  private readonly held = new Map<string, string>();
  private readonly pending = new Map<string, PendingCall>();
  private readonly completed = new Set<string>();

  constructor(private readonly port: ToolRouterPort) {}

  /** A committed declaration from a configured tool/core extension. */
  onRegistrationDeclared(c: Committed<"tool.registration_declared">): void {
    const p = c.publisher;
    if (p.class !== "extension" || p.instance === undefined || p.generation === undefined) return;
    if (!this.port.isLive(p.instance, p.generation)) return; // stale generation: observation only
    const name = `${this.port.toolPrefix(p.instance)}${c.data.name}`;
    const refuse = (why: string) => this.port.warn(`tool ${name} from ${p.instance} refused: ${why}`);
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(name)) return refuse("the prefixed name is not a valid tool name");
    if (RESERVED_TOOL_NAMES.has(name)) return refuse("the name is reserved by the harness");
    if (byteLength(c.data.parameters) > MAX_TOOL_PARAMETERS_BYTES) return refuse(`the argument schema exceeds ${MAX_TOOL_PARAMETERS_BYTES} bytes`);
    if (c.data.examples !== undefined && byteLength(c.data.examples) > MAX_TOOL_EXAMPLES_BYTES) return refuse(`the examples exceed ${MAX_TOOL_EXAMPLES_BYTES} bytes`);
    const incumbent = this.tools.get(name);
    if (incumbent && incumbent.owner !== p.instance && this.port.isLive(incumbent.owner, incumbent.generation)) {
      return refuse(`already registered by ${incumbent.owner}`);
    }
    const holder = this.held.get(name);
    if (holder !== undefined && holder !== p.instance && this.port.mayReturn(holder)) return refuse(`it belongs to ${holder}, which is restarting`);
    this.held.delete(name);
    const owned = [...this.tools.values()].filter((t) => t.owner === p.instance && t.name !== name).length;
    if (owned >= MAX_TOOLS_PER_INSTANCE) return refuse(`the instance already has ${MAX_TOOLS_PER_INSTANCE} tools`);
    const tool: RegisteredTool = {
      name,
      owner: p.instance,
      generation: p.generation,
      description: c.data.description,
      parameters: c.data.parameters,
      group: c.data.group,
      tags: [...new Set(c.data.tags ?? [])],
    };
    this.tools.set(name, tool);
    const labels = { ...(tool.group !== undefined ? { group: tool.group } : {}), ...(tool.tags.length > 0 ? { tags: [...tool.tags] } : {}) };
    this.port.publish("tool.register", { name, owner: tool.owner, description: tool.description, parameters: tool.parameters, ...labels });
  }

  onUnregistrationDeclared(c: Committed<"tool.unregistration_declared">): void {
    const p = c.publisher;
    if (p.instance === undefined || p.generation === undefined || !this.port.isLive(p.instance, p.generation)) return;
    const name = `${this.port.toolPrefix(p.instance)}${c.data.name}`;
    const tool = this.tools.get(name);
    if (!tool || tool.owner !== p.instance) return;
    this.tools.delete(name);
    this.port.publish("tool.unregister", { name, owner: tool.owner });
  }

  /**
   * A committed tool request: route it to its owner, or end it with one error. The agent loop's own
   * requests (publisher `harness`) are a model's calls; an extension's request must come from its
   * live generation, name a loaded agent and a tool its configuration lets it call, and its outcome
   * never reaches a transcript (no prompt correlation is kept for it).
   */
  onRequest(c: Committed<"tool.request">): void {
    const p = c.publisher;
    const { call_id: callId, agent_id: agentId, tool: name } = c.data;
    let promptId: string | undefined;
    // A model's call of an agent tool is the harness's own (AgentTeam answers it, SPEC-agent-team).
    if (p.class === "harness" && AGENT_TOOL_NAMES.has(name)) return;
    if (p.class === "harness") {
      promptId = c.data.prompt_id;
    } else if (p.class !== "extension" || p.instance === undefined || p.generation === undefined || !this.port.isLive(p.instance, p.generation)) {
      return this.port.warn(`tool request ${callId} from a stale or unknown publisher ignored`); // observation only
    }
    const call: PendingCall = { callId, agentId, ...(promptId !== undefined ? { promptId } : {}), tool: name, owner: "", generation: -1 };
    // A reused id would let one owner's report close two calls: the newcomer fails, the other is untouched.
    if (this.pending.has(callId) || this.completed.has(callId)) return this.refuse(call, `tool call id ${callId} was already used in this session; the call was not run`);
    if (p.class === "harness") {
      // A model's call runs only as its prompt's snapshot allows, with the owner it was offered from.
      const refusal = promptId === undefined ? `tool call ${callId} names no prompt; the call was not run` : this.port.callRefusal(agentId, promptId, name);
      if (refusal !== undefined) return this.complete(call, "error", refusal);
    } else {
      if (!this.port.hasAgent(agentId)) return this.refuse(call, `unknown agent ${agentId}`);
      if (!this.port.mayCall(p.instance as string, name)) return this.refuse(call, `extension ${p.instance} may not call tool ${name} (its call_tools setting does not list it)`);
    }
    const tool = this.tools.get(name);
    if (!tool || !this.port.isLive(tool.owner, tool.generation)) return this.complete(call, "error", `unknown tool ${name}`);
    const routed: PendingCall = { ...call, owner: tool.owner, generation: tool.generation };
    this.pending.set(callId, routed);
    const started: ToolStarted = { agent_id: agentId, call_id: callId, tool: name, owner: tool.owner, arguments_json: c.data.arguments_json };
    if (promptId) started.prompt_id = promptId;
    this.port.publish("tool.started", started);
    // The call itself goes to its owner alone, directed, so any cancel of it follows it on the same connection.
    const directed = { agent_id: agentId, call_id: callId, tool: name, arguments_json: c.data.arguments_json, ...(promptId ? { prompt_id: promptId } : {}) };
    if (!this.port.direct(tool.generation, "tool.call", directed)) this.complete(routed, "error", `the call could not be sent to the ${tool.owner} extension (it is not reading)`);
  }

  /** Ends a request that was never routed, leaving any call of the same id as it was. */
  private refuse(call: PendingCall, error: string): void {
    this.outcome(call, "error", error);
  }

  /** The agent of a call still open, if it is one. */
  agentOfCall(callId: string): string | undefined {
    return this.pending.get(callId)?.agentId;
  }

  private ownedBy(c: Committed<"tool.progress_reported" | TerminalReport>): PendingCall | undefined {
    const call = this.pending.get(c.data.call_id);
    const p: PublisherEnvelope = c.publisher;
    if (!call || p.instance !== call.owner || p.generation !== call.generation) return undefined;
    return call;
  }

  onProgressReported(c: Committed<"tool.progress_reported">): void {
    const call = this.ownedBy(c);
    if (!call) return;
    this.port.publish("tool.progress", { agent_id: call.agentId, call_id: call.callId, text: c.data.text });
  }

  /** Terminal reports from the exact routed owner of the current generation end the call once. */
  onTerminalReported(c: Committed<TerminalReport>): void {
    const call = this.ownedBy(c);
    if (!call) return;
    if (c.name === "tool.result_reported") {
      // A tool that ran but failed (a command's non-zero exit) ends as `error`: one decision every
      // UI, `tau run` and the stats read; the model reads the same output either way.
      this.complete(call, c.data.failed === true ? "error" : "ok", c.data.output, c.data.display);
    } else if (c.name === "tool.error_reported") {
      this.complete(call, "error", c.data.error);
    } else {
      this.complete(call, "cancelled", c.data.output ?? "the tool call was cancelled");
    }
  }

  /** An owner's connection ended: each of its open calls ends with exactly one error. */
  onOwnerGone(instance: string, generation: number): void {
    for (const call of [...this.pending.values()]) {
      if (call.owner === instance && call.generation === generation) this.complete(call, "error", `the ${instance} extension exited during the call`);
    }
    for (const tool of [...this.tools.values()]) {
      if (tool.owner === instance && tool.generation === generation) {
        this.tools.delete(tool.name);
        this.held.set(tool.name, instance); // an incumbent keeps its names across its own respawns
        this.port.publish("tool.unregister", { name: tool.name, owner: tool.owner });
      }
    }
  }

  /**
   * A call the daemon's end cut, found open at a resume: it ends with one error, as a call whose
   * owner exited does, and is never run again (nothing is sent to any extension).
   */
  endCut(call: { callId: string; agentId: string; promptId?: string; tool: string }, error: string): void {
    this.complete({ ...call, owner: "", generation: -1 }, "error", error);
  }

  /** Cancellation reaches the owner as a directed tool.cancel_request, after the call it cancels. */
  cancelAgent(agentId: string): void {
    for (const call of this.pending.values()) {
      if (call.agentId === agentId) this.port.direct(call.generation, "tool.cancel_request", { agent_id: agentId, call_id: call.callId });
    }
  }

  private complete(call: PendingCall, outcome: ToolOutcome, text: string, display?: ToolDisplay): void {
    this.pending.delete(call.callId);
    this.completed.add(call.callId);
    if (this.completed.size > COMPLETED_CALL_TOMBSTONES) this.completed.delete(this.completed.values().next().value as string);
    this.outcome(call, outcome, text, display);
  }

  /** The facts that end a call: a transcript fact for a model's call, then the ownerless results. */
  private outcome(call: PendingCall, outcome: ToolOutcome, text: string, display?: ToolDisplay): void {
    if (call.promptId !== undefined) {
      if (outcome === "ok") {
        this.port.publish("provider.tool_result", { agent_id: call.agentId, prompt_id: call.promptId, call_id: call.callId, tool: call.tool, output: text });
      } else {
        this.port.publish("provider.tool_error", { agent_id: call.agentId, prompt_id: call.promptId, call_id: call.callId, tool: call.tool, error: text });
      }
    }
    this.port.publish("tool.result", { agent_id: call.agentId, call_id: call.callId, tool: call.tool, outcome, output: text });
    // The display is kept in the agent's journal (what an attaching UI shows): an agent that is not
    // loaded has none, and the refusal's tool.result is the whole answer.
    if (!this.port.hasAgent(call.agentId)) return;
    this.port.publish("tool.result_display", {
      agent_id: call.agentId,
      call_id: call.callId,
      tool: call.tool,
      outcome,
      display: display ?? { summary: outcome === "ok" ? "done" : outcome },
    });
  }
}

function byteLength(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value ?? null));
}
