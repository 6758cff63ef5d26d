// A server's sampling (SPEC-mcp, "Sampling"), offered only when its entry configures `sampling`: a
// `sampling/createMessage` with text messages becomes `mcp.sampling_request` to the harness, which
// answers with one tool-less round to the configured model (`mcp.sampling_result`, directed here).
// Images, audio and tool use are refused; every sampling is said in a notice (the user configured
// it, so nobody is asked, but it spends their model budget and must be visible).
import { ErrorCode, type CreateMessageRequest, type CreateMessageResult } from "@modelcontextprotocol/sdk/types.js";
import type { McpSamplingConfig, McpSamplingMessage, McpSamplingRequest, McpSamplingResult } from "../../../generated/index.js";
import type { Extension } from "../../sdk/index.js";
import { randomHex } from "../../startup/random.js";
import { MCP_SAMPLING_MAX_MESSAGES, MCP_SAMPLING_MAX_TEXT_CHARS } from "./limits.js";

type Params = CreateMessageRequest["params"];

/** The entry's defaults (spec/config.tsp, McpSamplingConfig). */
const DEFAULT_MAX_TOKENS = 1024;
const DEFAULT_TIMEOUT_MS = 60_000;
/** The harness times a sampling out itself; this much later the extension stops waiting for its answer. */
const ANSWER_GRACE_MS = 5_000;

/**
 * An error answered to the server with its code and this message as is (an McpError's message
 * carries its code already, which the server's side would add again).
 */
export class SamplingError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const refused = (why: string): SamplingError => new SamplingError(ErrorCode.InvalidParams, `tau refused the sampling request: ${why}`);

/** The request's messages as text, bounded before anything is joined; or why tau cannot take them. */
export function samplingMessages(params: Params): McpSamplingMessage[] | SamplingError {
  if ((params.tools?.length ?? 0) > 0 || params.toolChoice !== undefined) return refused("tau offers no tool use in sampling");
  if (params.messages.length === 0 || params.messages.length > MCP_SAMPLING_MAX_MESSAGES) return refused(`it has ${params.messages.length} messages; tau takes 1 to ${MCP_SAMPLING_MAX_MESSAGES}`);
  const out: McpSamplingMessage[] = [];
  for (const [i, m] of params.messages.entries()) {
    const blocks = Array.isArray(m.content) ? m.content : [m.content];
    // The texts joined by newlines: one between two blocks.
    let chars = blocks.length - 1;
    for (const b of blocks) {
      if (b.type === "tool_use" || b.type === "tool_result") return refused("tau offers no tool use in sampling");
      if (b.type !== "text") return refused(`message ${i + 1} holds ${b.type} content; tau's sampling takes text only`);
      chars += b.text.length;
    }
    if (chars > MCP_SAMPLING_MAX_TEXT_CHARS) return refused(`message ${i + 1} is longer than ${MCP_SAMPLING_MAX_TEXT_CHARS} characters`);
    out.push({ role: m.role, text: blocks.map((b) => (b.type === "text" ? b.text : "")).join("\n") });
  }
  return out;
}

/** tau's finish reason in MCP's words. */
const stopReason = (r: string | undefined): string | undefined => (r === "stop" ? "endTurn" : r === "length" ? "maxTokens" : r);

/** The samplings of one server waiting for the harness's answer. */
export class Samplings {
  private readonly waiting = new Map<string, (r: McpSamplingResult) => void>();

  constructor(
    private readonly ext: Extension,
    private readonly config: McpSamplingConfig,
    private readonly say: (level: "info" | "warning", text: string) => void,
  ) {
    ext.onDirect("mcp.sampling_result", (r) => this.waiting.get(r.sampling_id)?.(r));
  }

  /** Answers a `sampling/createMessage`; `signal` aborts when the server withdraws it. */
  async sample(params: Params, signal: AbortSignal): Promise<CreateMessageResult> {
    const messages = samplingMessages(params);
    if (messages instanceof SamplingError) {
      this.say("warning", `a sampling request was refused (${messages.message.replace(/^tau refused the sampling request: /, "")})`);
      throw messages;
    }
    const system = params.systemPrompt;
    if (system !== undefined && system.length > MCP_SAMPLING_MAX_TEXT_CHARS) throw refused(`its system prompt is longer than ${MCP_SAMPLING_MAX_TEXT_CHARS} characters`);
    const maxTokens = Math.max(1, Math.min(params.maxTokens, this.config.max_tokens ?? DEFAULT_MAX_TOKENS));
    const timeoutMs = this.config.timeout_ms ?? DEFAULT_TIMEOUT_MS;
    const r = await this.ask({ model: this.config.model, ...(system !== undefined && system !== "" ? { system } : {}), messages, max_tokens: maxTokens, timeout_ms: timeoutMs }, signal);
    if (r.outcome !== "ok") {
      this.say("warning", `sampling with ${this.config.model} failed: ${r.reason ?? r.outcome}`);
      throw new SamplingError(ErrorCode.InternalError, `tau could not sample with ${this.config.model}: ${r.reason ?? r.outcome}`);
    }
    const tokens = r.usage !== undefined ? `${r.usage.input_tokens} tokens in, ${r.usage.output_tokens} out` : "tokens not reported";
    this.say("info", `sampled ${this.config.model} for the server (${tokens}, at most ${maxTokens} out)`);
    const stop = stopReason(r.stop_reason);
    return { role: "assistant", content: { type: "text", text: r.text ?? "" }, model: r.model ?? this.config.model, ...(stop !== undefined ? { stopReason: stop } : {}) };
  }

  /** Publishes the request and waits for its answer, the server's withdrawal, or the harness's silence. */
  private async ask(request: Omit<McpSamplingRequest, "sampling_id">, signal: AbortSignal): Promise<McpSamplingResult> {
    const id = `mcps-${randomHex(12)}`;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const fail = (reason: string): McpSamplingResult => ({ sampling_id: id, outcome: "failed", reason });
    try {
      return await new Promise<McpSamplingResult>((resolve) => {
        this.waiting.set(id, resolve);
        timer = setTimeout(() => resolve(fail("the harness did not answer")), request.timeout_ms + ANSWER_GRACE_MS);
        onAbort = () => {
          // Its round is cancelled at the provider: a withdrawn request spends no more.
          void this.ext.emit("mcp.sampling_cancel", { sampling_id: id });
          resolve(fail("the server withdrew it"));
        };
        signal.addEventListener("abort", onAbort, { once: true });
        void this.ext.emit("mcp.sampling_request", { sampling_id: id, ...request }).then((sent) => {
          if (sent !== "queued") resolve(fail(`the request could not be sent (${sent})`));
        });
      });
    } finally {
      this.waiting.delete(id);
      clearTimeout(timer);
      if (onAbort !== undefined) signal.removeEventListener("abort", onAbort);
    }
  }
}
