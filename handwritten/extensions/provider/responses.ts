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
  const details = u.input_tokens_details as Record<string, unknown> | undefined;
  const cached = count(details?.cached_tokens);
  if (cached !== undefined) usage.cache_read_tokens = cached;
  const written = count(details?.cache_write_tokens);
  if (written !== undefined) usage.cache_write_tokens = written;
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

/** Why a stream that stopped before its terminal event is no answer. */
export const CUT_SHORT = "the stream ended before the response did (no response.completed, response.incomplete or response.failed)";

/** The SSE event names whose data tau reads (and `message`, an unnamed event): their data must be a JSON object. */
const READ_EVENTS: ReadonlySet<string> = new Set([
  "message",
  "response.output_item.added",
  "response.output_item.done",
  "response.output_text.delta",
  "response.refusal.delta",
  "response.reasoning_summary_text.delta",
  "response.reasoning_text.delta",
  "response.reasoning_summary_part.added",
  "response.function_call_arguments.delta",
  "response.function_call_arguments.done",
  "response.completed",
  "response.incomplete",
  "response.failed",
]);

/** Separates two messages, two reasoning items and two summary parts, streamed and kept alike. */
const PARAGRAPH = "\n\n";

class ResponsesState implements RoundStream {
  private readonly items: OutputItem[] = [];
  private size = 0;
  private usage: Usage | undefined;
  private status: "completed" | "incomplete" | undefined;
  private incompleteReason = "";
  /** Text (reasoning) already shown: the next message (reasoning item) starts a paragraph. */
  private shown = { text: false, reasoning: false };
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

  /** Adds to a message's text (a reasoning item's reasoning) and shows it, a paragraph after any earlier one. */
  #show(item: OutputItem, field: "text" | "reasoning", piece: string): void {
    if (piece === "") return;
    const lead = item[field] === "" && this.shown[field] ? PARAGRAPH : "";
    this.#grow(lead.length + piece.length);
    item[field] += piece;
    this.shown[field] = true;
    if (field === "text") this.#emit(lead + piece, undefined);
    else this.#emit(undefined, lead + piece);
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

  /** The item an event is about: by its `output_index`, else (a server that names only the item) by `item_id`, else the last one open. */
  #locate(data: Record<string, unknown>, type: string): OutputItem {
    if (data.output_index !== undefined && data.output_index !== null) return this.#item(data.output_index, type);
    const id = str(data.item_id);
    const byId = id === "" ? -1 : this.items.findIndex((i) => i?.id === id);
    if (byId >= 0) return this.items[byId] as OutputItem;
    const last = this.items.at(-1);
    if (last && !last.done && (last.type === type || last.type === "")) return this.#item(this.items.length - 1, type);
    return this.#item(this.items.length, type, id);
  }

  event(ev: SseEvent): void {
    if (this.done || ev.data.trim() === "") return; // an empty event is a keep-alive
    let data: unknown;
    try {
      data = JSON.parse(ev.data);
    } catch {
      if (ev.data === "[DONE]") return void (this.done = true);
      if (ev.event === "error") throw streamError({ error: { message: ev.data } });
      if (!READ_EVENTS.has(ev.event)) return; // a named event tau does not read may carry anything
      throw new ProviderFailure("protocol", "stream event data is not valid JSON");
    }
    if (!isObject(data)) {
      if (!READ_EVENTS.has(ev.event)) return;
      throw new ProviderFailure("protocol", "stream event data is not a JSON object");
    }
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
      case "response.refusal.delta":
        return this.#show(this.#locate(data, "message"), "text", str(data.delta));
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        return this.#show(this.#locate(data, "reasoning"), "reasoning", str(data.delta));
      case "response.reasoning_summary_part.added": {
        // Summary parts are paragraphs, as the finished item joins them.
        const item = this.#locate(data, "reasoning");
        if (typeof data.summary_index === "number" && data.summary_index > 0 && item.reasoning !== "") this.#show(item, "reasoning", PARAGRAPH);
        return;
      }
      case "response.function_call_arguments.delta":
      case "response.function_call_arguments.done": {
        const item = this.#locate(data, "function_call");
        item.call ??= { call_id: "", name: "", args: "" };
        // The whole arguments replace the deltas (a server may send only them); the finished item may still say otherwise.
        const whole = type.endsWith(".done") && typeof data.arguments === "string" ? data.arguments : undefined;
        const next = whole ?? item.call.args + str(data.delta);
        this.#grow(Math.max(0, next.length - item.call.args.length));
        item.call.args = next;
        return;
      }
      case "response.completed":
      case "response.incomplete":
        return this.#end(type, isObject(data.response) ? data.response : {});
      default:
        return; // created, in_progress, content_part.*, *.done duplicates, built-in tools' progress, anything new
    }
  }

  /** The terminal event: status, usage, and the final output for any item not finished yet. */
  #end(type: "response.completed" | "response.incomplete", r: Record<string, unknown>): void {
    this.usage = mapResponsesUsage(r.usage) ?? this.usage;
    this.status = type === "response.completed" ? "completed" : "incomplete";
    if (type === "response.incomplete") this.incompleteReason = str(isObject(r.incomplete_details) ? r.incomplete_details.reason : "");
    if (Array.isArray(r.output)) r.output.forEach((it, i) => isObject(it) && this.#finalItem(it, i));
    this.done = true;
  }

  /** An item of the final output: the streamed item with its id, else the one at its position when that is still open and of its type. */
  #finalItem(it: Record<string, unknown>, position: number): void {
    const id = str(it.id);
    const type = str(it.type);
    const byId = id === "" ? -1 : this.items.findIndex((x) => x?.id === id);
    if (byId >= 0) return this.#itemDone(this.items[byId] as OutputItem, it);
    const at = this.items[position];
    // Finished items stay as they were finished: a server may number its final output differently.
    if (at?.done) return;
    if (at === undefined || at.type === "" || at.type === type) return this.#itemDone(this.#item(position, type, id), it);
    this.#itemDone(this.#item(this.items.length, type, id), it);
  }

  /** An item's finished form: whole text, whole arguments, the encrypted reasoning. */
  #itemDone(item: OutputItem, it: Record<string, unknown>): void {
    if (item.done) return;
    item.done = true;
    switch (str(it.type)) {
      case "message": {
        const parts = Array.isArray(it.content) ? it.content : [];
        const text = parts.map((p) => (isObject(p) ? (p.type === "refusal" ? str(p.refusal) : str(p.text)) : "")).join("");
        return this.#settle(item, "text", text);
      }
      case "reasoning": {
        const summary = (Array.isArray(it.summary) ? it.summary : []).map((p) => (isObject(p) ? str(p.text) : "")).join(PARAGRAPH);
        const content = (Array.isArray(it.content) ? it.content : []).map((p) => (isObject(p) ? str(p.text) : "")).join("");
        this.#settle(item, "reasoning", summary !== "" ? summary : content);
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

  /**
   * The finished text is the authority: what the deltas did not show yet is shown now (all of it
   * when no delta came); a finished text that differs from what was shown replaces it in the report.
   */
  #settle(item: OutputItem, field: "text" | "reasoning", finished: string): void {
    const had = item[field];
    if (finished === "" || finished === had) return;
    if (!finished.startsWith(had)) {
      this.#grow(finished.length);
      item[field] = finished;
      return;
    }
    this.#show(item, field, finished.slice(had.length));
  }

  report(req: ProviderCall): ProviderResponseFinishedReported {
    // No terminal event: whatever came may be half an answer.
    if (this.status === undefined) throw new ProviderFailure("protocol", CUT_SHORT);
    const texts: string[] = [];
    const reasonings: string[] = [];
    const calls: ToolCall[] = [];
    const reasoningItems: ReasoningItem[] = [];
    for (const item of this.items) {
      if (!item) continue;
      if (item.type === "message") {
        if (item.text !== "") texts.push(item.text);
      } else if (item.type === "reasoning") {
        if (item.reasoning !== "") reasonings.push(item.reasoning);
        const kept = keptReasoning(item, reasoningItems.length);
        if (kept) reasoningItems.push(kept);
      } else if (item.type === "function_call") {
        calls.push(toolCall(item, calls.length));
      }
    }
    const text = texts.join(PARAGRAPH);
    const reasoning = reasonings.join(PARAGRAPH);
    const complete = calls.length > 0 && calls.every((c) => argumentsComplete(c.arguments_json));
    let finish: FinishReason;
    let server: string = this.status;
    if (this.status === "incomplete") {
      server = `incomplete:${this.incompleteReason}`;
      finish = this.incompleteReason === "content_filter" ? "content_filter" : "length";
      // Whole calls run whatever ended the response, as in chat completions.
      if (complete) finish = "tool_calls";
    } else {
      if (calls.length > 0 && !complete) throw new ProviderFailure("protocol", "a function call's arguments are not whole JSON");
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

/**
 * A reasoning item kept to be sent back, when it has encrypted content and a usable id and the
 * bound is not reached; otherwise it is kept only as reasoning (its answer is whole all the same).
 */
function keptReasoning(item: OutputItem, kept: number): ReasoningItem | undefined {
  if (item.encrypted === undefined || item.id === "" || item.id.length > 1024 || kept >= MAX_REASONING_ITEMS) return undefined;
  return { id: item.id, encrypted_content: item.encrypted, ...(item.reasoning !== "" ? { summary: item.reasoning } : {}) };
}

/** A function call as a tool call: a tau id, a name within bounds. */
function toolCall(item: OutputItem, index: number): ToolCall {
  const c = item.call;
  if (!c || c.call_id === "") throw new ProviderFailure("protocol", `function call ${index} has no call_id`);
  if (!ID_PATTERN.test(c.call_id)) throw new ProviderFailure("protocol", `function call ${index} has an unusable call_id`);
  if (c.name === "") throw new ProviderFailure("protocol", `function call ${index} has no name`);
  if (c.name.length > MAX_TOOL_NAME_CHARS) throw new ProviderFailure("protocol", `function call ${index} has an overlong name`);
  if (index >= MAX_TOOL_CALLS) throw new ProviderFailure("protocol", `more than ${MAX_TOOL_CALLS} tool calls`);
  return { call_id: c.call_id, tool: c.name, arguments_json: c.args };
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
