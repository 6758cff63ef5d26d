// The OpenAI-compatible `/chat/completions` wire client (SPEC-provider-chat-completions): one
// provider round in, one finished or failed execution report out, streaming deltas on the way.
import type { FinishReason, ProviderMessage, ProviderResponseFinishedReported, ReasoningField, ReasoningReplay, ToolCall, Usage } from "../../../generated/index.js";
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
import { ThinkTags } from "./think-tags.js";

export { HEADERS_TIMEOUT_MS, MAX_RESPONSE_CHARS, MAX_TOOL_CALLS, MAX_TOOL_NAME_CHARS, STREAM_IDLE_TIMEOUT_MS } from "./round.js";
export type { Failed, Finished, ProviderProfile, RetryNotice } from "./round.js";
export type StreamChatCompletionOptions = StreamRoundOptions;
export type ChatCompletionResult = RoundResult;

/**
 * Finish reasons a server may send, and what each is reported as: tau's own four, and the synonyms
 * servers use for them (the legacy `function_call`; Mistral's `model_length`, its context ran out).
 */
const FINISH_REASONS: ReadonlyMap<string, FinishReason> = new Map<string, FinishReason>([
  ["stop", "stop"],
  ["tool_calls", "tool_calls"],
  ["length", "length"],
  ["content_filter", "content_filter"],
  ["function_call", "tool_calls"],
  ["model_length", "length"],
]);

// ---------------------------------------------------------------------------------------------
// Request body

interface OpenAiToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
  extra_content?: { google: { thought_signature: string } };
}

export type OpenAiMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: OpenAiToolCall[]; reasoning_content?: string; reasoning?: string }
  | { role: "tool"; tool_call_id: string; content: string };

export interface ChatCompletionBody {
  model: string;
  messages: OpenAiMessage[];
  tools?: { type: "function"; function: { name: string; description: string; parameters: Record<string, unknown> } }[];
  stream: true;
  stream_options: { include_usage: true };
  /** The harness's bound on the answer (an MCP server's sampling); absent for a turn. */
  max_completion_tokens?: number;
}

/** How kept reasoning goes back: as the profile says, or `auto`, decided per message (mapMessage). */
export type ReasoningReplayMode = ReasoningReplay;

/**
 * How an assistant message's kept reasoning is sent back to this endpoint. An explicit setting wins;
 * `auto` (or none) is decided per message by what the server streamed: a message whose reasoning came
 * as `reasoning_content` gets it back in `reasoning_content` (thinking modes that reject a tool-using
 * turn's assistant messages without it, wherever they are served); any other message gets nothing.
 */
export function reasoningReplayFor(setting: ReasoningReplay | undefined): ReasoningReplayMode {
  return setting ?? "auto";
}

function mapMessage(m: ProviderMessage, index: number, replay: ReasoningReplayMode): OpenAiMessage {
  switch (m.role) {
    case "system":
    case "user":
      return { role: m.role, content: m.text ?? "" };
    case "assistant": {
      const calls = m.tool_calls ?? [];
      const out: OpenAiMessage & { role: "assistant" } =
        calls.length === 0
          ? { role: "assistant", content: m.text ?? "" }
          : {
              role: "assistant",
              content: m.text === undefined || m.text === "" ? null : m.text,
              // arguments_json is sent exactly as the model produced it: never parsed or re-serialised.
              tool_calls: calls.map((c) => ({
                id: c.call_id,
                type: "function",
                function: { name: c.tool, arguments: c.arguments_json },
                // Gemini refuses a call sent back without the signature it came with.
                ...(c.thought_signature !== undefined ? { extra_content: { google: { thought_signature: c.thought_signature } } } : {}),
              })),
            };
      // A thinking mode that streamed `reasoning_content` wants it back on the assistant messages of a
      // tool-using turn, even when empty; `auto` sends it where the server streamed it.
      if (replay === "reasoning_content" || (replay === "auto" && m.reasoning_field === "reasoning_content")) out.reasoning_content = m.reasoning ?? "";
      else if (replay === "reasoning" && m.reasoning !== undefined && m.reasoning !== "") out.reasoning = m.reasoning;
      return out;
    }
    case "tool":
      if (m.call_id === undefined) {
        throw new ProviderFailure("invalid_request", `message ${index}: tool result without call_id`, false);
      }
      // Chat Completions has no error flag on tool results; the text is sent as the harness gave it.
      return { role: "tool", tool_call_id: m.call_id, content: m.text ?? "" };
    default:
      throw new ProviderFailure("invalid_request", `message ${index}: unknown role`, false);
  }
}

/** Builds the `/chat/completions` request body for one provider round. */
export function buildChatCompletionBody(request: ProviderCall, replay: ReasoningReplayMode = "auto"): ChatCompletionBody {
  const messages: OpenAiMessage[] = [];
  if (request.system !== "") messages.push({ role: "system", content: request.system });
  request.messages.forEach((m, i) => messages.push(mapMessage(m, i, replay)));
  const body: ChatCompletionBody = {
    model: request.model,
    messages,
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.max_output_tokens !== undefined) body.max_completion_tokens = request.max_output_tokens;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
  }
  return body;
}

// ---------------------------------------------------------------------------------------------
// Stream accumulation

interface PartialCall {
  id?: string;
  name?: string;
  args: string[];
  /** Gemini's `extra_content.google.thought_signature`, sent back with the call. */
  signature?: string;
}

class StreamState implements RoundStream {
  text = "";
  reasoning = "";
  size = 0;
  calls: (PartialCall | undefined)[] = [];
  finish: FinishReason | undefined;
  /** The first finish reason as the server sent it. */
  serverFinish: string | undefined;
  /** The delta field the server streamed reasoning in (`reasoning_content` wins when both come). */
  reasoningField: ReasoningField | undefined;
  usage: Usage | undefined;
  /** Whether `usage` came from a usage object (else from llama.cpp's `timings`, or none yet). */
  usageReported = false;
  done = false;
  private readonly think = new ThinkTags();

  constructor(
    private readonly shared: { emitted: boolean },
    private readonly onDelta: StreamChatCompletionOptions["onDelta"],
  ) {}

  get complete(): boolean {
    return this.finish !== undefined;
  }

  #grow(n: number): void {
    this.size += n;
    if (this.size > MAX_RESPONSE_CHARS) {
      throw new ProviderFailure("protocol", `response larger than ${MAX_RESPONSE_CHARS} characters`);
    }
  }

  #emit(text: string | undefined, reasoning: string | undefined): void {
    this.shared.emitted = true;
    try {
      this.onDelta?.(text, reasoning);
    } catch (err) {
      throw new CallbackError(err);
    }
  }

  /** One SSE event: an `error` event (or llama.cpp's `error:` line) fails the round with its fields. */
  event(ev: SseEvent): void {
    if (this.done) return;
    if (ev.event === "error") {
      let body: unknown;
      try {
        body = JSON.parse(ev.data);
      } catch {
        body = { message: ev.data };
      }
      throw streamError(body);
    }
    this.data(ev.data);
  }

  data(data: string): void {
    if (this.done) return;
    if (data === "[DONE]") {
      this.done = true;
      return;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw new ProviderFailure("protocol", "stream event data is not valid JSON");
    }
    if (typeof chunk !== "object" || chunk === null || Array.isArray(chunk)) {
      throw new ProviderFailure("protocol", "stream event data is not a JSON object");
    }
    const obj = chunk as Record<string, unknown>;
    // `{"error": …}` (OpenAI, Groq, OpenRouter) or a top-level `{"object": "error", …}` (vLLM).
    if ((obj.error !== undefined && obj.error !== null) || obj.object === "error") throw streamError(obj);
    const usage = mapUsage(obj.usage) ?? mapUsage(groqUsage(obj));
    if (usage !== undefined) {
      this.usage = usage;
      this.usageReported = true;
    } else if (!this.usageReported) {
      // llama.cpp's server counts tokens only in `timings` unless asked for usage; a usage object wins.
      this.usage = timingsUsage(obj.timings) ?? this.usage;
    }
    const choices = obj.choices;
    if (choices === undefined || choices === null) return;
    if (!Array.isArray(choices)) throw new ProviderFailure("protocol", "choices is not an array");
    for (const choice of choices) {
      if (typeof choice !== "object" || choice === null) throw new ProviderFailure("protocol", "a choice is not an object");
      const c = choice as Record<string, unknown>;
      if (c.index !== undefined && c.index !== 0) continue; // only the first choice is used
      this.#delta(c.delta);
      this.#finishReason(c.finish_reason);
    }
  }

  /** Content text: inline `<think>` reasoning at its start is split out (think-tags.ts). */
  #text(text: string): void {
    if (text === "") return;
    this.#grow(text.length);
    const split = this.think.push(text);
    this.#reasoningSplit(split.reasoning);
    this.#answer(split.text);
  }

  #answer(text: string): void {
    if (text === "") return;
    this.text += text;
    this.#emit(text, undefined);
  }

  #reasoningSplit(reasoning: string): void {
    if (reasoning === "") return;
    this.reasoning += reasoning;
    this.#emit(undefined, reasoning);
  }

  #reasoning(reasoning: string): void {
    if (reasoning === "") return;
    this.#grow(reasoning.length);
    this.reasoning += reasoning;
    this.#emit(undefined, reasoning);
  }

  /**
   * `delta.content` as text, or as a list of parts (Mistral's magistral streams its thinking that
   * way): `text` parts are text, `thinking` parts reasoning, `refusal` parts the answer; other
   * kinds (images, references) carry nothing tau shows and are skipped.
   */
  #content(content: unknown): void {
    if (content === undefined || content === null) return;
    if (typeof content === "string") return this.#text(content);
    if (!Array.isArray(content)) throw new ProviderFailure("protocol", "delta.content is neither text nor a list of parts");
    for (const part of content) {
      if (typeof part === "string") {
        this.#text(part);
        continue;
      }
      if (typeof part !== "object" || part === null) throw new ProviderFailure("protocol", "a content part is not an object");
      const p = part as Record<string, unknown>;
      switch (p.type) {
        case "text":
          this.#text(partText(p.text));
          break;
        case "thinking":
        case "reasoning":
          this.#reasoning(partText(p.thinking ?? p.reasoning ?? p.text));
          break;
        case "refusal":
          this.#text(partText(p.refusal));
          break;
      }
    }
  }

  #delta(delta: unknown): void {
    if (delta === undefined || delta === null) return;
    if (typeof delta !== "object") throw new ProviderFailure("protocol", "delta is not an object");
    const d = delta as Record<string, unknown>;
    this.#content(d.content);
    // A refusal is the model's answer: shown and kept as text.
    if (typeof d.refusal === "string") this.#text(d.refusal);
    if (typeof d.reasoning_content === "string") this.reasoningField = "reasoning_content";
    else if (typeof d.reasoning === "string" && this.reasoningField === undefined) this.reasoningField = "reasoning";
    const reasoning =
      typeof d.reasoning_content === "string" && d.reasoning_content !== ""
        ? d.reasoning_content
        : typeof d.reasoning === "string"
          ? d.reasoning
          : "";
    // `reasoning_details` repeats `reasoning` where both come (OpenRouter); alone (Snowflake Cortex) it is the reasoning.
    this.#reasoning(reasoning !== "" ? reasoning : detailsText(d.reasoning_details));
    if (d.tool_calls !== undefined && d.tool_calls !== null) {
      if (!Array.isArray(d.tool_calls)) throw new ProviderFailure("protocol", "delta.tool_calls is not an array");
      for (const tc of d.tool_calls) this.#toolCall(tc);
    }
  }

  #toolCall(tc: unknown): void {
    if (typeof tc !== "object" || tc === null) throw new ProviderFailure("protocol", "a tool call delta is not an object");
    const t = tc as Record<string, unknown>;
    let index: number;
    if (t.index === undefined || t.index === null) {
      // Lenient: without an index, an id starts a new call and a fragment continues the last one.
      index = typeof t.id === "string" && t.id !== "" ? this.calls.length : Math.max(0, this.calls.length - 1);
    } else if (typeof t.index === "number" && Number.isInteger(t.index) && t.index >= 0) {
      index = t.index;
    } else {
      throw new ProviderFailure("protocol", "a tool call index is not a non-negative integer");
    }
    if (index >= MAX_TOOL_CALLS) throw new ProviderFailure("protocol", `more than ${MAX_TOOL_CALLS} tool calls`);
    let call = this.calls[index];
    if (call === undefined) {
      call = { args: [] };
      this.calls[index] = call;
    }
    if (typeof t.id === "string" && t.id !== "" && call.id === undefined) call.id = t.id;
    const google = (t.extra_content as { google?: { thought_signature?: unknown } } | undefined)?.google;
    if (typeof google?.thought_signature === "string" && google.thought_signature !== "" && call.signature === undefined) {
      this.#grow(google.thought_signature.length);
      call.signature = google.thought_signature;
    }
    const fn = t.function;
    if (fn !== undefined && fn !== null) {
      if (typeof fn !== "object") throw new ProviderFailure("protocol", "a tool call function is not an object");
      const f = fn as Record<string, unknown>;
      if (typeof f.name === "string" && f.name !== "" && call.name === undefined) {
        this.#grow(f.name.length);
        call.name = f.name;
      }
      if (typeof f.arguments === "string" && f.arguments !== "") {
        this.#grow(f.arguments.length);
        // Raw text, concatenated in arrival order; never parsed or re-serialised.
        call.args.push(f.arguments);
      }
    }
  }

  #finishReason(reason: unknown): void {
    if (reason === undefined || reason === null || this.finish !== undefined) return;
    const known = typeof reason === "string" ? FINISH_REASONS.get(reason) : undefined;
    if (known !== undefined) {
      this.finish = known;
      this.serverFinish = reason as string;
      return;
    }
    // Mistral and OpenRouter end a response that failed on the server's side with `error`.
    if (reason === "error") throw new ProviderFailure("server_error", "the server ended the response with finish_reason error");
    const shown = typeof reason === "string" ? JSON.stringify(reason.slice(0, 64)) : typeof reason;
    throw new ProviderFailure("protocol", `unsupported finish_reason ${shown}`);
  }

  /** The finished report: the tool calls, finish reason and usage the stream gave, checked whole. */
  report(req: ProviderCall): ProviderResponseFinishedReported {
    const held = this.think.end();
    this.#reasoningSplit(held.reasoning);
    this.#answer(held.text);
    const toolCalls = this.toolCalls();
    // Tool calls whose arguments are whole run whatever the finish reason says (Gemini's endpoint
    // streams them with `stop`); the server's own reason is kept beside.
    const complete = toolCalls.length > 0 && toolCalls.every((c) => argumentsComplete(c.arguments_json));
    let finish = this.finish;
    if (finish === undefined) {
      // A clean end ([DONE] or the body's end) without a finish reason is accepted when what came is
      // whole: some text or reasoning, and no tool call cut off.
      const end = this.done ? "stream ended ([DONE]) without a finish_reason" : "stream ended without a finish_reason";
      if (toolCalls.length > 0 && !complete) throw new ProviderFailure("protocol", `${end} inside a tool call`);
      if (toolCalls.length === 0 && this.text === "" && this.reasoning === "") throw new ProviderFailure("protocol", `${end} or any content`);
      finish = toolCalls.length > 0 ? "tool_calls" : "stop";
    } else if (complete) {
      finish = "tool_calls";
    }
    if (finish === "tool_calls" && toolCalls.length === 0) {
      throw new ProviderFailure("protocol", "finish_reason tool_calls without any tool call");
    }
    const report: ProviderResponseFinishedReported = {
      prompt_id: req.prompt_id,
      round: req.round,
      model: req.model,
      text: this.text,
      tool_calls: toolCalls,
      finish_reason: finish,
    };
    // The server's own word, as sent, always ("" when it sent none).
    report.server_finish_reason = (this.serverFinish ?? "").slice(0, 64);
    if (this.reasoning !== "") report.reasoning = this.reasoning;
    if (this.reasoningField !== undefined) report.reasoning_field = this.reasoningField;
    if (this.usage !== undefined) report.usage = this.usage;
    return report;
  }

  toolCalls(): ToolCall[] {
    const out: ToolCall[] = [];
    this.calls.forEach((call, index) => {
      if (call === undefined) return;
      if (call.id === undefined) throw new ProviderFailure("protocol", `tool call ${index} has no id`);
      if (!ID_PATTERN.test(call.id)) throw new ProviderFailure("protocol", `tool call ${index} has an unusable id`);
      if (call.name === undefined) throw new ProviderFailure("protocol", `tool call ${index} has no function name`);
      if (call.name.length > MAX_TOOL_NAME_CHARS) throw new ProviderFailure("protocol", `tool call ${index} has an overlong name`);
      out.push({ call_id: call.id, tool: call.name, arguments_json: call.args.join(""), ...(call.signature !== undefined ? { thought_signature: call.signature } : {}) });
    });
    return out;
  }
}

/** The text of a content part's field: a string, or a list of `{type: "text", text}` parts. */
function partText(v: unknown): string {
  if (typeof v === "string") return v;
  if (!Array.isArray(v)) return "";
  let out = "";
  for (const x of v) {
    if (typeof x === "string") out += x;
    else if (typeof x === "object" && x !== null && typeof (x as { text?: unknown }).text === "string") out += (x as { text: string }).text;
  }
  return out;
}

/** The readable text of `reasoning_details` entries (`reasoning.text`, `reasoning.summary`); encrypted ones carry none. */
function detailsText(v: unknown): string {
  if (!Array.isArray(v)) return "";
  let out = "";
  for (const x of v) {
    if (typeof x !== "object" || x === null) continue;
    const e = x as Record<string, unknown>;
    if (e.type === "reasoning.text" && typeof e.text === "string") out += e.text;
    else if (e.type === "reasoning.summary" && typeof e.summary === "string") out += e.summary;
  }
  return out;
}

/** Groq's usage inside `x_groq` (its only place in older streams). */
function groqUsage(obj: Record<string, unknown>): unknown {
  const x = obj.x_groq;
  return typeof x === "object" && x !== null ? (x as Record<string, unknown>).usage : undefined;
}

/** llama.cpp's `timings`: `prompt_n` tokens evaluated after `cache_n` taken from its cache, `predicted_n` generated. */
function timingsUsage(raw: unknown): Usage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const t = raw as Record<string, unknown>;
  const evaluated = count(t.prompt_n);
  const output = count(t.predicted_n);
  if (evaluated === undefined || output === undefined) return undefined;
  const cached = count(t.cache_n) ?? 0;
  return { input_tokens: evaluated + cached, output_tokens: output, cache_read_tokens: cached };
}

/** Maps an OpenAI `usage` object to tau's Usage; undefined when the token counts are unusable. */
export function mapUsage(raw: unknown): Usage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const u = raw as Record<string, unknown>;
  const input = count(u.prompt_tokens);
  const output = count(u.completion_tokens);
  if (input === undefined || output === undefined) return undefined;
  const usage: Usage = { input_tokens: input, output_tokens: output };
  const pd = (typeof u.prompt_tokens_details === "object" && u.prompt_tokens_details !== null ? u.prompt_tokens_details : {}) as Record<string, unknown>;
  const cd = (typeof u.completion_tokens_details === "object" && u.completion_tokens_details !== null ? u.completion_tokens_details : {}) as Record<string, unknown>;
  // The details objects first; else where other servers put the same counts: Together's top-level
  // `cached_tokens`, DeepSeek's `prompt_cache_hit_tokens`, SGLang's top-level `reasoning_tokens`.
  const cached = count(pd.cached_tokens) ?? count(u.cached_tokens) ?? count(u.prompt_cache_hit_tokens);
  if (cached !== undefined) usage.cache_read_tokens = cached;
  const written = count(pd.cache_write_tokens);
  if (written !== undefined) usage.cache_write_tokens = written;
  const reasoning = count(cd.reasoning_tokens) ?? count(u.reasoning_tokens);
  if (reasoning !== undefined) usage.reasoning_tokens = reasoning;
  return usage;
}

/** The `/chat/completions` wire family. */
const CHAT_COMPLETIONS: WireFamily = {
  url: chatCompletionsUrl,
  payload: (request, profile) => JSON.stringify(buildChatCompletionBody(request, reasoningReplayFor(profile.reasoningReplay))),
  stream: (shared, onDelta) => new StreamState(shared, onDelta),
};

/** The endpoint URL for a profile: the base URL's path plus `/chat/completions`, query kept. */
export function chatCompletionsUrl(baseUrl: string): URL {
  return endpointUrl(baseUrl, "/chat/completions");
}

/**
 * Runs one provider round against an OpenAI-compatible `/chat/completions` endpoint: streams it,
 * retries retryable failures that happen before any delta was emitted, and returns the finished
 * or failed report. Never rejects for provider, network or protocol failures; a throwing callback
 * is rethrown.
 */
export function streamChatCompletion(request: ProviderCall, profile: ProviderProfile, opts: StreamChatCompletionOptions): Promise<ChatCompletionResult> {
  return streamRound(request, profile, opts, CHAT_COMPLETIONS);
}
