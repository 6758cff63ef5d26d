// Scripted streams of the OpenAI Responses API (`POST …/responses`, `stream: true`), served by the
// loopback FakeOpenAI: typed SSE events (`event: TYPE` + `data: {"type": TYPE, …}`) in the order the
// API documents them — created, output items added, their deltas, items done, then completed (or
// incomplete / failed).
import type { ScriptedChunk, ScriptedResponse } from "./fake-openai.js";

export function responsesEvent(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

export interface ResponsesUsage {
  input_tokens: number;
  output_tokens: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
}

export type ResponsesOutput =
  | { type: "reasoning"; id: string; summary?: string; encrypted_content?: string }
  | { type: "message"; id: string; text: string; refusal?: boolean }
  | { type: "function_call"; id: string; call_id: string; name: string; arguments: string };

export interface ResponsesStreamOptions {
  usage?: ResponsesUsage;
  /** How the response ends: completed (default), incomplete with a reason, or failed with an error. */
  end?: { status: "completed" } | { status: "incomplete"; reason: string } | { status: "failed"; code: string; message: string };
  /** Split each text, summary and argument string into deltas of this many characters (default: one delta). */
  deltaChars?: number;
  /** Leave out the final `output` in the completed event (deltas and item.done only). */
  omitFinalOutput?: boolean;
  delayMs?: number;
}

function pieces(s: string, n: number | undefined): string[] {
  if (!n || s.length <= n) return [s];
  const out: string[] = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out;
}

function doneItem(o: ResponsesOutput): Record<string, unknown> {
  switch (o.type) {
    case "reasoning":
      return { type: "reasoning", id: o.id, summary: o.summary !== undefined ? [{ type: "summary_text", text: o.summary }] : [], ...(o.encrypted_content !== undefined ? { encrypted_content: o.encrypted_content } : {}) };
    case "message":
      return { type: "message", id: o.id, role: "assistant", status: "completed", content: [o.refusal ? { type: "refusal", refusal: o.text } : { type: "output_text", text: o.text, annotations: [] }] };
    case "function_call":
      return { type: "function_call", id: o.id, call_id: o.call_id, name: o.name, arguments: o.arguments, status: "completed" };
  }
}

/** A whole Responses stream for `output`, as a scripted response. */
export function responsesStream(output: ResponsesOutput[], o: ResponsesStreamOptions = {}): ScriptedResponse {
  const chunks: (string | ScriptedChunk)[] = [];
  const id = "resp_fake_1";
  chunks.push(responsesEvent("response.created", { response: { id, object: "response", status: "in_progress", output: [] } }));
  output.forEach((item, i) => {
    const added = { ...doneItem(item), status: "in_progress" };
    if (item.type === "message") (added as Record<string, unknown>).content = [];
    if (item.type === "function_call") (added as Record<string, unknown>).arguments = "";
    chunks.push(responsesEvent("response.output_item.added", { output_index: i, item: added }));
    if (item.type === "message") {
      for (const d of pieces(item.text, o.deltaChars)) chunks.push({ data: responsesEvent(item.refusal ? "response.refusal.delta" : "response.output_text.delta", { item_id: item.id, output_index: i, content_index: 0, delta: d }), delayMs: o.delayMs ?? 0 });
    } else if (item.type === "reasoning" && item.summary !== undefined) {
      for (const d of pieces(item.summary, o.deltaChars)) chunks.push(responsesEvent("response.reasoning_summary_text.delta", { item_id: item.id, output_index: i, summary_index: 0, delta: d }));
    } else if (item.type === "function_call") {
      for (const d of pieces(item.arguments, o.deltaChars)) chunks.push(responsesEvent("response.function_call_arguments.delta", { item_id: item.id, output_index: i, delta: d }));
      chunks.push(responsesEvent("response.function_call_arguments.done", { item_id: item.id, output_index: i, arguments: item.arguments }));
    }
    chunks.push(responsesEvent("response.output_item.done", { output_index: i, item: doneItem(item) }));
  });
  const u = o.usage;
  const usage = u
    ? { input_tokens: u.input_tokens, input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 }, output_tokens: u.output_tokens, output_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 }, total_tokens: u.input_tokens + u.output_tokens }
    : undefined;
  const end = o.end ?? { status: "completed" };
  const response = { id, object: "response", ...(o.omitFinalOutput ? {} : { output: output.map(doneItem) }), ...(usage ? { usage } : {}) };
  if (end.status === "completed") chunks.push(responsesEvent("response.completed", { response: { ...response, status: "completed" } }));
  else if (end.status === "incomplete") chunks.push(responsesEvent("response.incomplete", { response: { ...response, status: "incomplete", incomplete_details: { reason: end.reason } } }));
  else chunks.push(responsesEvent("response.failed", { response: { ...response, status: "failed", error: { code: end.code, message: end.message } } }));
  return { chunks };
}
