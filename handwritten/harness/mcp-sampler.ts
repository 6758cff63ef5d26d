// An MCP server's sampling (SPEC-mcp, "Sampling"): the `mcp.sampling_request` of a `tau ext mcp`
// instance whose server's entry configures `sampling` becomes one tool-less round 0 to that model,
// and its answer a `mcp.sampling_result` directed back to the instance. The entry, not the request,
// is the authority: its model, its token bound and its timeout; an instance without it is refused.
import type { Committed } from "../bus/index.js";
import type { EventPayloads, McpSamplingConfig } from "../../generated/index.js";
import { fitText } from "../protocol/text.js";
import type { ProviderCall } from "../protocol/provider-request.js";
import type { Round, RoundOwner, RoundRouter } from "./round-router.js";
import type { ModelRegistry } from "./model-registry.js";
import { cancelOneOff, oneOffTimeout, sendOneOff, servingProvider, type OneOffPort } from "./one-off-round.js";

/** The entry's defaults (spec/config.tsp, McpSamplingConfig). */
export const SAMPLING_MAX_TOKENS = 1024;
export const SAMPLING_TIMEOUT_MS = 60_000;
/** Most characters of one request's texts together (system prompt included), checked before anything is built. */
export const SAMPLING_MAX_CHARS = 256 * 1024;

export interface SamplerPort extends OneOffPort {
  /** The `sampling` of the MCP server entry an extension instance runs, if it has one. */
  samplingOf?(instance: string): McpSamplingConfig | undefined;
}

/** A sampling under way: one tool-less round 0 whose prompt id is the sampling id. */
interface ActiveSampling extends Round {
  readonly round: 0;
  /** The instance that asked: the result is directed to it. */
  readonly requester: string;
  readonly timer: NodeJS.Timeout;
}

type Answer = Omit<EventPayloads["mcp.sampling_result"], "sampling_id">;

/** Why the request may not be answered under its instance's entry, or the bounds it gets. */
function admitted(d: EventPayloads["mcp.sampling_request"], entry: McpSamplingConfig | undefined): { maxTokens: number; timeoutMs: number } | string {
  if (entry === undefined) return "sampling is not configured for this server";
  if (d.model !== entry.model) return `only the configured model ${entry.model} samples for this server`;
  const chars = d.messages.reduce((n, m) => n + m.text.length, d.system?.length ?? 0);
  if (chars > SAMPLING_MAX_CHARS) return `the request's text is larger than ${SAMPLING_MAX_CHARS} characters`;
  return { maxTokens: Math.min(d.max_tokens, entry.max_tokens ?? SAMPLING_MAX_TOKENS), timeoutMs: Math.min(d.timeout_ms, entry.timeout_ms ?? SAMPLING_TIMEOUT_MS) };
}

export class McpSampler implements RoundOwner<ActiveSampling> {
  private readonly samplings = new Map<string, ActiveSampling>();

  constructor(
    private readonly port: SamplerPort,
    private readonly deps: { readonly router: RoundRouter; readonly models: Pick<ModelRegistry, "declares" | "route"> },
  ) {}

  /** `mcp.sampling_request`: checked against the instance's entry, then one round to the model's provider. */
  async onSamplingRequest(c: Committed<"mcp.sampling_request">): Promise<void> {
    const d = c.data;
    const requester = c.publisher.instance;
    if (requester === undefined || this.samplings.has(d.sampling_id)) return;
    const answer = (a: Answer): void => void this.port.directToInstance(requester, "mcp.sampling_result", { sampling_id: d.sampling_id, ...a });
    const bounds = admitted(d, this.port.samplingOf?.(requester));
    if (typeof bounds === "string") return answer({ outcome: "failed", reason: bounds });
    const target = servingProvider(d.model, this.deps.models, this.port);
    if (target === undefined) return answer({ outcome: "unavailable", reason: `no running provider serves ${d.model}` });
    const timer = oneOffTimeout(this.port, bounds.timeoutMs, () => this.samplings.get(d.sampling_id), (s) => this.end(s, { outcome: "failed", reason: `no answer within ${bounds.timeoutMs} ms` }));
    const s: ActiveSampling = { promptId: d.sampling_id, round: 0, instance: target.instance, generation: target.generation, requester, timer };
    if (!this.deps.router.start(s, this)) {
      clearTimeout(timer);
      return answer({ outcome: "failed", reason: "its id is taken by another request" });
    }
    this.samplings.set(s.promptId, s);
    const call: ProviderCall = {
      // The round is no agent's: it is named after the instance that asked.
      agent_id: requester,
      prompt_id: s.promptId,
      round: 0,
      model: target.model,
      system: d.system ?? "",
      messages: d.messages.map((m) => ({ role: m.role, text: m.text })),
      tools: [],
      max_output_tokens: bounds.maxTokens,
    };
    const stillOpen = () => this.samplings.get(s.promptId) === s;
    if (!(await sendOneOff(this.port, s, call, stillOpen)) && stillOpen()) this.end(s, { outcome: "failed", reason: "the request could not be sent to its provider" });
  }

  /** `mcp.sampling_cancel`: the server withdrew its request; only the instance that asked may withdraw it. */
  onSamplingCancel(c: Committed<"mcp.sampling_cancel">): void {
    const s = this.samplings.get(c.data.sampling_id);
    if (s === undefined || s.requester !== c.publisher.instance) return;
    cancelOneOff(this.port, s);
    this.end(s, { outcome: "failed", reason: "the server withdrew it" });
  }

  finished(s: ActiveSampling, c: Committed<"provider.response_finished_reported">): void {
    const d = c.data;
    this.end(s, { outcome: "ok", text: d.text, model: d.model, stop_reason: d.finish_reason, ...(d.usage !== undefined ? { usage: d.usage } : {}) });
  }

  failed(s: ActiveSampling, c: Committed<"provider.response_failed_reported">): void {
    this.end(s, { outcome: "failed", reason: `provider error (${c.data.error_class})` });
  }

  /** A connection ended: the samplings its provider was answering fail; those its instance asked are cancelled. */
  connectionGone(instance: string, generation: number): void {
    for (const s of [...this.samplings.values()]) {
      if (s.instance === instance && s.generation === generation) this.end(s, { outcome: "failed", reason: `the ${instance} provider exited` });
      else if (s.requester === instance) {
        cancelOneOff(this.port, s);
        this.end(s, { outcome: "failed", reason: "the instance that asked is gone" });
      }
    }
  }

  private end(s: ActiveSampling, a: Answer): void {
    if (this.samplings.get(s.promptId) !== s) return;
    this.samplings.delete(s.promptId);
    this.deps.router.close(s);
    clearTimeout(s.timer);
    this.port.directToInstance(s.requester, "mcp.sampling_result", { sampling_id: s.promptId, ...a, ...(a.reason !== undefined ? { reason: fitText(a.reason) } : {}) });
  }
}
