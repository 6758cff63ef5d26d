// The `scripted` profile: an offline, deterministic demo used when no model is configured, so
// `tau run` works on a fresh machine. It is labelled as a demo in every answer and drives a real
// tool call in the workspace (`ls`) when one is available.
import type { ToolCall, Usage } from "../../../generated/index.js";
import type { ProviderCall } from "../../protocol/provider-request.js";

export const SCRIPTED_MODEL = "offline-demo";

export interface ScriptedTurn {
  readonly deltas: readonly string[];
  readonly toolCalls: readonly ToolCall[];
  readonly usage: Usage;
}

const estimateTokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

/** The scripted reply to one provider round. */
export function scriptedTurn(req: ProviderCall): ScriptedTurn {
  const promptChars = req.system.length + req.messages.reduce((n, m) => n + (m.text?.length ?? 0), 0);
  const last = req.messages[req.messages.length - 1];
  const lastUser = [...req.messages].reverse().find((m) => m.role === "user");
  const asked = (lastUser?.text ?? "").replace(/^<user>\n|\n<\/user>$/g, "").trim();
  const canList = req.tools.some((t) => t.name === "ls");
  if (last?.role === "user" && canList) {
    const call: ToolCall = { call_id: `call-${req.prompt_id}-${req.round}`, tool: "ls", arguments_json: '{"path":"."}' };
    const text = "[offline demo] Let me look at your workspace first.";
    return { deltas: [text], toolCalls: [call], usage: { input_tokens: estimateTokens(" ".repeat(promptChars)), output_tokens: estimateTokens(text) } };
  }
  const listing = last?.role === "tool" ? (last.text ?? "").split("\n").filter(Boolean).slice(0, 8) : [];
  const lines = [
    "[offline demo — no model is configured, so this answer is scripted]",
    `You asked: ${JSON.stringify(asked.length > 200 ? `${asked.slice(0, 200)}…` : asked)}`,
  ];
  if (listing.length === 1) lines.push(`Your workspace has 1 entry: ${listing[0]}.`);
  else if (listing.length > 1) lines.push(`Your workspace has ${listing.length === 8 ? `at least 8 entries, starting with` : `${listing.length} entries`}: ${listing.join(", ")}.`);
  lines.push("To use a real model, set OPENAI_API_KEY (OpenAI's endpoint; add OPENAI_BASE_URL for any other OpenAI-compatible one, OPENAI_MODEL for its model) or add one with tau provider add, and run tau again.");
  const text = lines.join("\n");
  const words = text.split(/(?<= )/);
  const deltas: string[] = [];
  for (let i = 0; i < words.length; i += 8) deltas.push(words.slice(i, i + 8).join(""));
  return { deltas, toolCalls: [], usage: { input_tokens: estimateTokens(" ".repeat(promptChars)), output_tokens: estimateTokens(text) } };
}
