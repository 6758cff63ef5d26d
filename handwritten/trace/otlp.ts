// The OTLP projection of an agent journal (SPEC-trace-export, "otlp"): one trace per prompt, with a
// root `invoke_agent` span, a `chat` span per provider round and an `execute_tool` span per tool
// call, carrying the GenAI semantic-convention attributes for model, tokens and cost. No bodies.
//
// Spans are handed to the official OpenTelemetry serializers (@opentelemetry/otlp-transformer), which
// write the OTLP JSON and protobuf encodings. That package is loaded only when this format runs
// (`loadOtlp`), so no other command pays for it. Ids are derived from the agent and prompt ids, so
// exporting the same journal twice names the same traces and spans (a collector deduplicates them).
import { createHash } from "node:crypto";
import type { ProviderEndpoint } from "../../generated/index.js";
import type { Event } from "../protocol/index.js";
import { PriceTable, roundCost, type PriceOf } from "./cost.js";

/** What this projection needs of @opentelemetry/otlp-transformer. */
export interface OtlpSerializers {
  json: { serializeRequest(spans: unknown[]): Uint8Array | undefined };
  protobuf: { serializeRequest(spans: unknown[]): Uint8Array | undefined; deserializeResponse(data: Uint8Array): { partialSuccess?: { rejectedSpans?: number; errorMessage?: string } } };
}

/** Loads the official serializers (about 100 ms; only `--format otlp` pays it). */
export async function loadOtlp(): Promise<OtlpSerializers> {
  const m = await import("@opentelemetry/otlp-transformer");
  // The serializers take SDK ReadableSpans; this projection hands them objects of that shape (SpanRecord).
  return { json: m.JsonTraceSerializer as OtlpSerializers["json"], protobuf: m.ProtobufTraceSerializer as OtlpSerializers["protobuf"] };
}

// GenAI semantic conventions (checked against @opentelemetry/semantic-conventions in the tests).
export const GEN_AI = {
  operation: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  agentId: "gen_ai.agent.id",
  agentName: "gen_ai.agent.name",
  conversationId: "gen_ai.conversation.id",
  requestModel: "gen_ai.request.model",
  requestStream: "gen_ai.request.stream",
  responseModel: "gen_ai.response.model",
  finishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  cacheCreationTokens: "gen_ai.usage.cache_creation.input_tokens",
  reasoningTokens: "gen_ai.usage.reasoning.output_tokens",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  errorType: "error.type",
  serverAddress: "server.address",
  serverPort: "server.port",
  serviceName: "service.name",
} as const;

/** tau's provider profiles that speak the OpenAI API family, every one streamed. */
const OPENAI_APIS: ReadonlySet<string> = new Set(["chat_completions", "responses", "chatgpt_ws"]);

/** Endpoints whose provider has a well-known `gen_ai.provider.name` value, by host. */
const KNOWN_PROVIDER_HOSTS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^api\.openai\.com$|^chatgpt\.com$/, "openai"],
  [/\.openai\.azure\.com$/, "azure.ai.openai"],
  [/\.services\.ai\.azure\.com$|^models\.inference\.ai\.azure\.com$/, "azure.ai.inference"],
  [/^api\.anthropic\.com$/, "anthropic"],
  [/^bedrock-runtime\.[a-z0-9-]+\.amazonaws\.com$/, "aws.bedrock"],
  [/^api\.cohere\.(ai|com)$/, "cohere"],
  [/^api\.deepseek\.com$/, "deepseek"],
  [/^generativelanguage\.googleapis\.com$/, "gcp.gemini"],
  [/(^|\.)aiplatform\.googleapis\.com$/, "gcp.vertex_ai"],
  [/^api\.groq\.com$/, "groq"],
  [/^api\.mistral\.ai$/, "mistral_ai"],
  [/^api\.moonshot\.(ai|cn)$/, "moonshot_ai"],
  [/^api\.perplexity\.ai$/, "perplexity"],
  [/^api\.x\.ai$/, "x_ai"],
];

/**
 * `gen_ai.provider.name` of a round's endpoint (SPEC-trace-export, "otlp"): a well-known value for a
 * well-known host; `openai` for any other endpoint of tau's OpenAI-API profiles (the API flavour,
 * as the conventions allow; `server.address` names the actual system); `tau.scripted` for the
 * offline demo; a provider extension of tau's that is not its own provider, by its instance name.
 */
export function providerName(p: ProviderEndpoint): string {
  if (p.api === "scripted") return "tau.scripted";
  if (p.api === undefined || !OPENAI_APIS.has(p.api)) return p.instance;
  const host = (p.server_address ?? "").toLowerCase();
  return KNOWN_PROVIDER_HOSTS.find(([re]) => re.test(host))?.[1] ?? "openai";
}

/** The conventions' provider and server attributes of a round sent to `p`. */
function endpointAttributes(p: ProviderEndpoint): Attributes {
  const a: Attributes = { [GEN_AI.providerName]: providerName(p) };
  if (p.server_address !== undefined) {
    a[GEN_AI.serverAddress] = p.server_address;
    if (p.server_port !== undefined) a[GEN_AI.serverPort] = p.server_port;
  }
  // Set only for a streamed request: unset, the conventions read a request as not streamed.
  if (p.api !== undefined && OPENAI_APIS.has(p.api)) a[GEN_AI.requestStream] = true;
  return a;
}

/** The conventions name no cost attribute; tau's own namespace carries it. */
export const TAU_COST_USD = "tau.usage.cost_usd";

type Attributes = Record<string, string | number | boolean | string[]>;
type HrTime = [number, number];

// OpenTelemetry's SpanKind (the serializer adds one for OTLP's enum) and status codes.
const KIND_INTERNAL = 0;
const KIND_CLIENT = 2;
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;
const SAMPLED = 1;

/** The shape of an SDK ReadableSpan that the serializers read; nothing else of the SDK is used. */
interface SpanRecord {
  name: string;
  kind: number;
  spanContext(): { traceId: string; spanId: string; traceFlags: number };
  parentSpanContext?: { traceId: string; spanId: string; traceFlags: number; isRemote?: boolean };
  startTime: HrTime;
  endTime: HrTime;
  duration: HrTime;
  ended: boolean;
  attributes: Attributes;
  links: Array<{ context: { traceId: string; spanId: string; traceFlags: number }; attributes: Attributes; droppedAttributesCount: number }>;
  events: Array<{ name: string; time: HrTime; attributes: Attributes; droppedAttributesCount: number }>;
  status: { code: number; message?: string };
  resource: { attributes: Attributes };
  instrumentationScope: { name: string; version?: string };
  droppedAttributesCount: number;
  droppedEventsCount: number;
  droppedLinksCount: number;
}

const hrTime = (us: number): HrTime => [Math.floor(us / 1e6), (us % 1e6) * 1000];

/** Hex id of `bytes` bytes from a hash of the parts (never all zeros, which OTLP reads as "no id"). */
function id(bytes: number, ...parts: Array<string | number>): string {
  const hex = createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, bytes * 2);
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}

interface RoundState {
  round: number;
  model: string | undefined;
  provider: ProviderEndpoint | undefined;
  finishReason: string | null;
  spanId: string;
  start: number;
  end: number | null;
  attributes: Attributes;
  events: SpanRecord["events"];
  error: string | null;
}

interface ToolState {
  spanId: string;
  start: number;
  end: number | null;
  attributes: Attributes;
  error: boolean;
}

interface PromptState {
  id: string;
  traceId: string;
  rootId: string;
  submitted: number | null;
  started: number | null;
  finished: number | null;
  last: number;
  outcome: string | null;
  source: string | null;
  rounds: RoundState[];
  tools: Map<string, ToolState>;
  /** Sums over the rounds that reported usage; null while none has (never a made-up zero). */
  usage: UsageSums | null;
  cost: number | null;
}

interface UsageSums {
  input: number;
  output: number;
  cacheRead?: number;
  cacheCreation?: number;
  reasoning?: number;
}

/** Where a workflow member came from: its creator's `execute_tool` span for the creating call. */
export interface OtlpOrigin {
  agentId: string;
  callId: string;
  /** The creating call's span, when the creator's trace held it. */
  span: { traceId: string; spanId: string } | null;
}

/**
 * Folds validated events into prompts and hands each finished prompt's spans to `emit` (prompts
 * still open at the end of the prefix follow, in order of first appearance, marked incomplete).
 * In a workflow export a child's root spans link to the call that created it (`origin`), and a
 * parent remembers the spans of the calls that created its children (`callSpans`).
 */
export class OtlpProjection {
  private readonly open = new Map<string, PromptState>();
  /** Prompts whose trace was emitted: a later record about one adds nothing (ids only, like perf). */
  private readonly done = new Set<string>();
  private agentId = "";
  private sessionId: string | null = null;
  private resource: SpanRecord["resource"] = { attributes: {} };
  private readonly prices: PriceTable;

  /** Spans of the watched calls (creation calls of a workflow's children), by call id. */
  readonly callSpans = new Map<string, { traceId: string; spanId: string }>();

  constructor(
    private readonly emit: (spans: SpanRecord[]) => void,
    priceOf?: PriceOf,
    private readonly workflow: { origin?: OtlpOrigin; watchCalls?: ReadonlySet<string> } = {},
  ) {
    this.prices = new PriceTable(priceOf);
  }

  private prompt(id: string, at: number): PromptState {
    let p = this.open.get(id);
    if (!p) {
      p = { id, traceId: id ? this.traceIdOf(id) : "", rootId: id ? this.rootIdOf(id) : "", submitted: null, started: null, finished: null, last: at, outcome: null, source: null, rounds: [], tools: new Map(), usage: null, cost: null };
      this.open.set(id, p);
    }
    p.last = Math.max(p.last, at);
    return p;
  }

  private traceIdOf(promptId: string): string {
    return id(16, "tau.trace", this.agentId, promptId);
  }

  private rootIdOf(promptId: string): string {
    return id(8, "tau.span", this.agentId, promptId);
  }

  add(e: Event, at: number): void {
    const promptId = (e.data as { prompt_id?: unknown }).prompt_id;
    if (typeof promptId === "string" && this.done.has(promptId)) return;
    switch (e.name) {
      case "agent.started":
        this.agentId = e.data.agent_id;
        this.sessionId = e.data.session_id ?? null;
        this.resource = { attributes: { [GEN_AI.serviceName]: "tau", "tau.agent.id": this.agentId, ...(this.sessionId ? { "tau.session.id": this.sessionId } : {}) } };
        if (this.workflow.origin) Object.assign(this.resource.attributes, { "tau.agent.parent_id": this.workflow.origin.agentId, "tau.agent.created_by_call_id": this.workflow.origin.callId });
        return;
      case "agent.prompt_submitted": {
        const p = this.prompt(e.data.prompt_id, at);
        p.submitted ??= at;
        p.source = e.data.source;
        return;
      }
      case "agent.prompt_started":
        return this.roundStarted(e.data, at);
      case "provider.retry_scheduled": {
        const r = this.prompt(e.data.prompt_id, at).rounds.findLast((x) => x.round === e.data.round && x.end === null);
        r?.events.push({ name: "tau.retry_scheduled", time: hrTime(at), attributes: { "tau.retry.attempt": e.data.attempt, "tau.retry.delay_ms": e.data.delay_ms, [GEN_AI.errorType]: e.data.error_class }, droppedAttributesCount: 0 });
        return;
      }
      case "provider.response_finished":
        return this.responseFinished(e.data, at);
      case "provider.response_failed": {
        const r = this.prompt(e.data.prompt_id, at).rounds.findLast((x) => x.round === e.data.round && x.end === null);
        if (!r) return;
        r.end = at;
        r.error = e.data.error_class;
        r.attributes[GEN_AI.errorType] = e.data.error_class;
        return;
      }
      case "provider.tool_result":
      case "provider.tool_error": {
        const t = this.prompt(e.data.prompt_id, at).tools.get(e.data.call_id);
        if (!t || t.end !== null) return;
        t.end = at;
        if (e.name === "provider.tool_error") {
          t.error = true;
          t.attributes[GEN_AI.errorType] = "tool_error";
        }
        return;
      }
      case "agent.prompt_cancelled":
        this.prompt(e.data.prompt_id, at).outcome ??= "cancelled";
        return;
      case "agent.outer_turn_finished": {
        const p = this.prompt(e.data.prompt_id, at);
        p.finished = at;
        p.outcome = e.data.outcome;
        this.open.delete(p.id);
        this.done.add(p.id);
        this.emit(this.spans(p, false));
        return;
      }
    }
  }

  /** A round's `chat` span opened. */
  private roundStarted(data: Event<"agent.prompt_started">["data"], at: number): void {
    const p = this.prompt(data.prompt_id, at);
    p.started ??= at;
    const provider = data.provider;
    const attributes: Attributes = { [GEN_AI.operation]: "chat", ...(provider ? endpointAttributes(provider) : {}), "tau.round": data.round };
    if (data.model !== undefined) attributes[GEN_AI.requestModel] = data.model;
    if (this.sessionId) attributes[GEN_AI.conversationId] = this.sessionId;
    const spanId = id(8, "tau.span", this.agentId, p.id, "round", data.round, p.rounds.length);
    p.rounds.push({ round: data.round, model: data.model, provider, finishReason: null, spanId, start: at, end: null, attributes, events: [], error: null });
  }

  /** A round's span closed with its model, usage and cost; its tool calls' spans opened. */
  private responseFinished(data: Event<"provider.response_finished">["data"], at: number): void {
    const p = this.prompt(data.prompt_id, at);
    const r = p.rounds.findLast((x) => x.round === data.round && x.end === null);
    if (!r) return;
    r.end = at;
    r.finishReason = data.finish_reason;
    const a = r.attributes;
    a[GEN_AI.responseModel] = data.model;
    a[GEN_AI.finishReasons] = [data.finish_reason];
    const u = data.usage;
    if (u) {
      const sums: UsageSums = { input: u.input_tokens, output: u.output_tokens, cacheRead: u.cache_read_tokens, cacheCreation: u.cache_write_tokens, reasoning: u.reasoning_tokens };
      Object.assign(a, usageAttributes(sums));
      p.usage = addUsage(p.usage, sums);
    }
    const cost = roundCost(this.prices, data.model, u, data.cost);
    if (cost) {
      a[TAU_COST_USD] = cost.usd;
      a["tau.usage.cost_source"] = cost.source;
      p.cost = (p.cost ?? 0) + cost.usd;
    }
    for (const c of data.tool_calls) {
      const spanId = id(8, "tau.span", this.agentId, p.id, "call", c.call_id);
      p.tools.set(c.call_id, { spanId, start: at, end: null, attributes: { [GEN_AI.operation]: "execute_tool", [GEN_AI.toolName]: c.tool, [GEN_AI.toolCallId]: c.call_id, [GEN_AI.toolType]: "function" }, error: false });
      if (this.workflow.watchCalls?.has(c.call_id) && !this.callSpans.has(c.call_id)) this.callSpans.set(c.call_id, { traceId: p.traceId, spanId });
    }
  }

  /** Prompts the prefix ends inside: their spans end at the last record seen, marked incomplete. */
  end(): void {
    for (const p of this.open.values()) this.emit(this.spans(p, true));
    this.open.clear();
  }

  private span(p: PromptState, spanId: string, parent: string | null, name: string, kind: number, start: number, end: number, attributes: Attributes, error: string | null, events: SpanRecord["events"] = [], links: SpanRecord["links"] = []): SpanRecord {
    const ctx = { traceId: p.traceId, spanId, traceFlags: SAMPLED };
    const endAt = Math.max(start, end); // a wall clock that went back never gives a negative span
    return {
      name,
      kind,
      spanContext: () => ctx,
      ...(parent ? { parentSpanContext: { traceId: p.traceId, spanId: parent, traceFlags: SAMPLED, isRemote: false } } : {}),
      startTime: hrTime(start),
      endTime: hrTime(endAt),
      duration: hrTime(endAt - start),
      ended: true,
      attributes,
      links,
      events,
      status: error ? { code: STATUS_ERROR, message: error } : { code: STATUS_UNSET },
      resource: this.resource,
      instrumentationScope: { name: "tau.trace", version: "1" },
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  }

  private spans(p: PromptState, incomplete: boolean): SpanRecord[] {
    const start = p.submitted ?? p.started ?? p.last;
    const end = p.finished ?? p.last;
    const failed = p.outcome === "failed" || p.outcome === "dispatch_uncertain" ? p.outcome : null;
    const out = [this.span(p, p.rootId, null, "invoke_agent tau", KIND_INTERNAL, start, end, this.rootAttributes(p, incomplete, failed), failed, [], this.originLinks())];
    for (const r of p.rounds) {
      if (r.end === null) r.attributes["tau.incomplete"] = true;
      const model = (r.attributes[GEN_AI.responseModel] ?? r.attributes[GEN_AI.requestModel]) as string | undefined;
      out.push(this.span(p, r.spanId, p.rootId, model ? `chat ${model}` : "chat", KIND_CLIENT, r.start, r.end ?? end, r.attributes, r.error, r.events));
    }
    for (const t of p.tools.values()) {
      if (t.end === null) t.attributes["tau.incomplete"] = true;
      out.push(this.span(p, t.spanId, p.rootId, `execute_tool ${t.attributes[GEN_AI.toolName] as string}`, KIND_INTERNAL, t.start, t.end ?? end, t.attributes, t.error ? "tool_error" : null));
    }
    return out;
  }

  /**
   * The `invoke_agent` span's attributes: the provider and model of its first round, the finish
   * reason of its last finished round, usage summed over the rounds that reported it (absent when
   * none did: a prompt that failed before any answer reports no tokens, not zero).
   */
  private rootAttributes(p: PromptState, incomplete: boolean, failed: string | null): Attributes {
    const first = p.rounds[0];
    const root: Attributes = { [GEN_AI.operation]: "invoke_agent" };
    if (first?.provider) root[GEN_AI.providerName] = providerName(first.provider);
    Object.assign(root, { [GEN_AI.agentId]: this.agentId, [GEN_AI.agentName]: "tau", "tau.prompt.id": p.id });
    if (this.sessionId) root[GEN_AI.conversationId] = this.sessionId;
    if (first?.model !== undefined) root[GEN_AI.requestModel] = first.model;
    const lastReason = p.rounds.findLast((r) => r.finishReason !== null)?.finishReason;
    if (lastReason) root[GEN_AI.finishReasons] = [lastReason];
    if (failed) root[GEN_AI.errorType] = p.rounds.findLast((r) => r.error !== null)?.error ?? failed;
    if (p.source) root["tau.prompt.source"] = p.source;
    root["tau.prompt.outcome"] = p.outcome ?? "unfinished";
    root["tau.prompt.rounds"] = p.rounds.length;
    if (p.submitted !== null && p.started !== null && p.started >= p.submitted) root["tau.prompt.queued_us"] = p.started - p.submitted;
    if (p.usage) Object.assign(root, usageAttributes(p.usage));
    if (p.cost !== null) root[TAU_COST_USD] = p.cost;
    if (incomplete) root["tau.incomplete"] = true;
    return root;
  }

  /** A workflow child's link to the call that created it. */
  private originLinks(): SpanRecord["links"] {
    const from = this.workflow.origin?.span;
    return from ? [{ context: { traceId: from.traceId, spanId: from.spanId, traceFlags: SAMPLED }, attributes: { "tau.link": "created_by" }, droppedAttributesCount: 0 }] : [];
  }
}

function addUsage(sum: UsageSums | null, u: UsageSums): UsageSums {
  const add = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : a + b);
  if (sum === null) return { ...u };
  return { input: sum.input + u.input, output: sum.output + u.output, cacheRead: add(sum.cacheRead, u.cacheRead), cacheCreation: add(sum.cacheCreation, u.cacheCreation), reasoning: add(sum.reasoning, u.reasoning) };
}

/** The conventions' usage attributes: each count only when it was reported. */
function usageAttributes(u: UsageSums): Attributes {
  const a: Attributes = { [GEN_AI.inputTokens]: u.input, [GEN_AI.outputTokens]: u.output };
  if (u.cacheRead !== undefined) a[GEN_AI.cacheReadTokens] = u.cacheRead;
  if (u.cacheCreation !== undefined) a[GEN_AI.cacheCreationTokens] = u.cacheCreation;
  if (u.reasoning !== undefined) a[GEN_AI.reasoningTokens] = u.reasoning;
  return a;
}
