// The OpenAI Responses API wire family (`POST {base}/responses`, streamed; SPEC-provider-responses):
// the request body built from tau's transcript, stateless (`store: false`) with encrypted reasoning
// items asked for and sent back whole, and the stream of typed events read into one finished report.
import type { FinishReason, ProviderMessage, ProviderResponseFinishedReported, ReasoningItem, ToolCall, Usage } from "../../../generated/index.js";
import type { ProviderCall } from "../../protocol/provider-request.js";
import { ProviderFailure } from "./errors.js";
import {
  CallbackError,
  ID_PATTERN,
  MAX_RESPONSE_CHARS,
  MAX_TOOL_CALLS,
  MAX_TOOL_NAME_CHARS,
  argumentsComplete,
  count,
  endpointUrl,
  streamError,
  streamRound,
  type ProviderProfile,
  type RoundResult,
  type RoundStream,
  type StreamRoundOptions,
  type WireFamily,
} from "./round.js";
import type { SseEvent } from "./sse.js";

/** Most reasoning items kept from one response (the report's schema bound). */
export const MAX_REASONING_ITEMS = 64;

// ---------------------------------------------------------------------------------------------
// Request body

export type ResponsesInputItem =
  | { role: "system" | "user" | "assistant"; content: string }
  | { type: "reasoning"; id: string; summary: Array<{ type: "summary_text"; text: string }>; encrypted_content: string }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string };

export interface ResponsesBody {
  model: string;
  instructions?: string;
  input: ResponsesInputItem[];
  tools?: Array<{ type: "function"; name: string; description: string; parameters: Record<string, unknown>; strict: false }>;
  stream: true;
  /** Stateless: nothing is kept on the server, so every request carries the whole transcript. */
  store: false;
  /** The reasoning of reasoning models comes back encrypted, to be sent back in the next request. */
  include: ["reasoning.encrypted_content"];
  /** The harness's bound on the answer (an MCP server's sampling); absent for a turn. */
  max_output_tokens?: number;
}

function inputItems(m: ProviderMessage, index: number): ResponsesInputItem[] {
  switch (m.role) {
    case "system":
    case "user":
      return [{ role: m.role, content: m.text ?? "" }];
    case "assistant": {
      // In the order the server produced them: reasoning, then the message, then its calls.
      const out: ResponsesInputItem[] = (m.reasoning_items ?? []).map((r) => ({
        type: "reasoning",
        id: r.id,
        summary: r.summary !== undefined && r.summary !== "" ? [{ type: "summary_text", text: r.summary }] : [],
        encrypted_content: r.encrypted_content,
      }));
      if (m.text !== undefined && m.text !== "") out.push({ role: "assistant", content: m.text });
      // arguments_json is sent exactly as the model produced it: never parsed or re-serialised.
      for (const c of m.tool_calls ?? []) out.push({ type: "function_call", call_id: c.call_id, name: c.tool, arguments: c.arguments_json });
      return out;
    }
    case "tool":
      if (m.call_id === undefined) throw new ProviderFailure("invalid_request", `message ${index}: tool result without call_id`, false);
      return [{ type: "function_call_output", call_id: m.call_id, output: m.text ?? "" }];
    default:
      throw new ProviderFailure("invalid_request", `message ${index}: unknown role`, false);
  }
}

/** Builds the `/responses` request body for one provider round. */
export function buildResponsesBody(request: ProviderCall): ResponsesBody {
  const body: ResponsesBody = {
    model: request.model,
    input: request.messages.flatMap((m, i) => inputItems(m, i)),
    stream: true,
    store: false,
    include: ["reasoning.encrypted_content"],
  };
  if (request.system !== "") body.instructions = request.system;
  if (request.max_output_tokens !== undefined) body.max_output_tokens = request.max_output_tokens;
  if (request.tools.length > 0) body.tools = request.tools.map((t) => ({ type: "function", name: t.name, description: t.description, parameters: t.parameters, strict: false }));
  return body;
}

export function responsesUrl(baseUrl: string): URL {
  return endpointUrl(baseUrl, "/responses");
}

// ---------------------------------------------------------------------------------------------
// Stream

/** Maps a Responses `usage` object to tau's Usage; undefined when the token counts are unusable. */
export function mapResponsesUsage(raw: unknown): Usage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const u = raw as Record<string, unknown>;
  const input = count(u.input_tokens);
  const output = count(u.output_tokens);
  if (input === undefined || output === undefined) return undefined;
  const usage: Usage = { input_tokens: input, output_tokens: output };
  const cached = count((u.input_tokens_details as Record<string, unknown> | undefined)?.cached_tokens);
  if (cached !== undefined) usage.cache_read_tokens = cached;
  const reasoning = count((u.output_tokens_details as Record<string, unknown> | undefined)?.reasoning_tokens);
  if (reasoning !== undefined) usage.reasoning_tokens = reasoning;
  return usage;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** One output item as the stream builds it: deltas first, the item's `done` form replacing them. */
interface OutputItem {
  type: string;
  id: string;
  text: string;
  reasoning: string;
  call?: { call_id: string; name: string; args: string };
  encrypted?: string;
  done: boolean;
}

class ResponsesState implements RoundStream {
  private readonly items: OutputItem[] = [];
  private size = 0;
  private usage: Usage | undefined;
  private status: "completed" | "incomplete" | undefined;
  private incompleteReason = "";
  done = false;

  constructor(
    private readonly shared: { emitted: boolean },
    private readonly onDelta: StreamRoundOptions["onDelta"],
  ) {}

  get complete(): boolean {
    return this.status !== undefined;
  }

  #grow(n: number): void {
    this.size += n;
    if (this.size > MAX_RESPONSE_CHARS) throw new ProviderFailure("protocol", `response larger than ${MAX_RESPONSE_CHARS} characters`);
  }

  #emit(text: string | undefined, reasoning: string | undefined): void {
    if ((text ?? "") === "" && (reasoning ?? "") === "") return;
    this.shared.emitted = true;
    try {
      this.onDelta?.(text, reasoning);
    } catch (err) {
      throw new CallbackError(err);
    }
  }

  /** The item at `output_index`, created on first mention (a server may skip `output_item.added`). */
  #item(index: unknown, type = "", id = ""): OutputItem {
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0) throw new ProviderFailure("protocol", "an output_index is not a non-negative integer");
    if (index >= MAX_TOOL_CALLS + MAX_REASONING_ITEMS + 16) throw new ProviderFailure("protocol", "too many output items");
    let item = this.items[index];
    if (!item) {
      item = { type, id, text: "", reasoning: "", done: false };
      this.items[index] = item;
    }
    if (item.type === "" && type !== "") item.type = type;
    if (item.id === "" && id !== "") item.id = id;
    return item;
  }

  event(ev: SseEvent): void {
    if (this.done) return;
    let data: unknown;
    try {
      data = JSON.parse(ev.data);
    } catch {
      if (ev.data === "[DONE]") return void (this.done = true);
      throw new ProviderFailure("protocol", "stream event data is not valid JSON");
    }
    if (!isObject(data)) throw new ProviderFailure("protocol", "stream event data is not a JSON object");
    const type = typeof data.type === "string" ? data.type : ev.event;
    switch (type) {
      case "error":
        throw streamError(isObject(data.error) ? data : { error: data });
      case "response.failed":
        throw streamError({ error: isObject(data.response) && isObject(data.response.error) ? data.response.error : { message: "the response failed" } });
      case "response.output_item.added":
      case "response.output_item.done": {
        if (!isObject(data.item)) throw new ProviderFailure("protocol", `${type} without an item`);
        const it = data.item;
        const item = this.#item(data.output_index, str(it.type), str(it.id));
        if (type === "response.output_item.done") this.#itemDone(item, it);
        return;
      }
      case "response.output_text.delta":
      case "response.refusal.delta": {
        const d = str(data.delta);
        this.#grow(d.length);
        this.#item(data.output_index, "message").text += d;
        this.#emit(d, undefined);
        return;
      }
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta": {
        const d = str(data.delta);
        this.#grow(d.length);
        this.#item(data.output_index, "reasoning").reasoning += d;
        this.#emit(undefined, d);
        return;
      }
      case "response.function_call_arguments.delta": {
        const d = str(data.delta);
        this.#grow(d.length);
        const item = this.#item(data.output_index, "function_call");
        item.call ??= { call_id: "", name: "", args: "" };
        item.call.args += d;
        return;
      }
      case "response.completed":
      case "response.incomplete": {
        const r = isObject(data.response) ? data.response : {};
        this.usage = mapResponsesUsage(r.usage) ?? this.usage;
        this.status = type === "response.completed" ? "completed" : "incomplete";
        if (type === "response.incomplete") this.incompleteReason = str(isObject(r.incomplete_details) ? r.incomplete_details.reason : "");
        // The final output, when the server sends it, is the authority for items it names.
        if (Array.isArray(r.output)) r.output.forEach((it, i) => isObject(it) && this.#itemDone(this.#item(i, str(it.type), str(it.id)), it));
        this.done = true;
        return;
      }
      default:
        return; // created, in_progress, content_part.*, *.done duplicates of what the deltas built
    }
  }

  /** An item's finished form: whole text, whole arguments, the encrypted reasoning. */
  #itemDone(item: OutputItem, it: Record<string, unknown>): void {
    if (item.done) return;
    item.done = true;
    switch (str(it.type)) {
      case "message": {
        const parts = Array.isArray(it.content) ? it.content : [];
        const text = parts.map((p) => (isObject(p) ? (p.type === "refusal" ? str(p.refusal) : str(p.text)) : "")).join("");
        // The finished item is the authority; a server that sent no deltas has its text shown now.
        if (text !== "" && text !== item.text) {
          this.#grow(Math.max(0, text.length - item.text.length));
          if (item.text === "") this.#emit(text, undefined);
          item.text = text;
        }
        return;
      }
      case "reasoning": {
        const summary = (Array.isArray(it.summary) ? it.summary : []).map((p) => (isObject(p) ? str(p.text) : "")).join("\n\n");
        const content = (Array.isArray(it.content) ? it.content : []).map((p) => (isObject(p) ? str(p.text) : "")).join("");
        const text = summary !== "" ? summary : content;
        if (text.length > item.reasoning.length) {
          this.#grow(text.length - item.reasoning.length);
          if (item.reasoning === "") this.#emit(undefined, text);
          item.reasoning = text;
        }
        if (typeof it.encrypted_content === "string" && it.encrypted_content !== "") {
          this.#grow(it.encrypted_content.length);
          item.encrypted = it.encrypted_content;
        }
        return;
      }
      case "function_call": {
        const args = typeof it.arguments === "string" ? it.arguments : (item.call?.args ?? "");
        if (args.length > (item.call?.args.length ?? 0)) this.#grow(args.length - (item.call?.args.length ?? 0));
        item.call = { call_id: str(it.call_id), name: str(it.name), args };
        return;
      }
    }
  }

  report(req: ProviderCall): ProviderResponseFinishedReported {
    const end = this.done ? "" : " (the stream ended without response.completed)";
    if (this.status === undefined) {
      // Like chat completions: a clean end without the closing event is accepted when what came is whole.
      if (this.items.length === 0 || this.items.some((i) => i.type === "function_call" && !argumentsComplete(i.call?.args ?? "x"))) {
        throw new ProviderFailure("protocol", `the response did not complete${end}`);
      }
    }
    let text = "";
    let reasoning = "";
    const calls: ToolCall[] = [];
    const reasoningItems: ReasoningItem[] = [];
    for (const item of this.items) {
      if (!item) continue;
      if (item.type === "message") text += item.text;
      else if (item.type === "reasoning") {
        if (item.reasoning !== "") reasoning += (reasoning === "" ? "" : "\n\n") + item.reasoning;
        if (item.encrypted !== undefined) {
          if (item.id === "" || item.id.length > 1024) throw new ProviderFailure("protocol", "a reasoning item has no usable id");
          if (reasoningItems.length >= MAX_REASONING_ITEMS) throw new ProviderFailure("protocol", `more than ${MAX_REASONING_ITEMS} reasoning items`);
          reasoningItems.push({ id: item.id, encrypted_content: item.encrypted, ...(item.reasoning !== "" ? { summary: item.reasoning } : {}) });
        }
      } else if (item.type === "function_call") {
        const c = item.call;
        const index = calls.length;
        if (!c || c.call_id === "") throw new ProviderFailure("protocol", `function call ${index} has no call_id`);
        if (!ID_PATTERN.test(c.call_id)) throw new ProviderFailure("protocol", `function call ${index} has an unusable call_id`);
        if (c.name === "") throw new ProviderFailure("protocol", `function call ${index} has no name`);
        if (c.name.length > MAX_TOOL_NAME_CHARS) throw new ProviderFailure("protocol", `function call ${index} has an overlong name`);
        if (calls.length >= MAX_TOOL_CALLS) throw new ProviderFailure("protocol", `more than ${MAX_TOOL_CALLS} tool calls`);
        calls.push({ call_id: c.call_id, tool: c.name, arguments_json: c.args });
      }
    }
    const complete = calls.length > 0 && calls.every((c) => argumentsComplete(c.arguments_json));
    let finish: FinishReason;
    let server = this.status ?? "";
    if (this.status === "incomplete") {
      server = `incomplete:${this.incompleteReason}`;
      finish = this.incompleteReason === "content_filter" ? "content_filter" : "length";
      // Whole calls run whatever ended the response, as in chat completions.
      if (complete) finish = "tool_calls";
    } else {
      if (calls.length > 0 && !complete) throw new ProviderFailure("protocol", `a function call's arguments are not whole JSON${end}`);
      finish = calls.length > 0 ? "tool_calls" : "stop";
    }
    const report: ProviderResponseFinishedReported = { prompt_id: req.prompt_id, round: req.round, model: req.model, text, tool_calls: calls, finish_reason: finish };
    if (server !== "completed") report.server_finish_reason = server.slice(0, 64);
    if (reasoning !== "") report.reasoning = reasoning;
    if (reasoningItems.length > 0) report.reasoning_items = reasoningItems;
    if (this.usage !== undefined) report.usage = this.usage;
    return report;
  }
}

/** The `/responses` wire family. */
export const RESPONSES: WireFamily = {
  url: responsesUrl,
  payload: (request) => JSON.stringify(buildResponsesBody(request)),
  stream: (shared, onDelta) => new ResponsesState(shared, onDelta),
};

/** Runs one provider round against a Responses API endpoint (see streamRound). */
export function streamResponses(request: ProviderCall, profile: ProviderProfile, opts: StreamRoundOptions): Promise<RoundResult> {
  return streamRound(request, profile, opts, RESPONSES);
}
