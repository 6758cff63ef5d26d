// The transcript: delivered session events folded into display items (prompts, streamed answers,
// tool rows, shell commands, notices) per agent, and each item rendered to styled rows for a
// width. Every untrusted string goes through `sanitize`/`escapeLabel` before it becomes a span.
import { DEFAULT_THEME, renderDiffBody, renderToolRow, sanitize, truncateEnd, wrap } from "../ui/index.js";
import type { SafeText, StyledLine, Theme, ThemeKey, ToolStatus } from "../ui/index.js";

/** Output lines a finished tool or shell row shows (the rest is summarized). */
export const OUTPUT_PREVIEW_LINES = 12;
/** Items kept per agent; older ones leave the in-memory transcript (they stay in scrollback). */
export const TRANSCRIPT_MAX_ITEMS = 2000;

export type Item =
  | { kind: "user"; text: string; done: true }
  | { kind: "assistant"; key: string; text: string; reasoning: string; done: boolean }
  | { kind: "tool"; callId: string; tool: string; args: string; status: ToolStatus; output?: string; diff?: string; done: boolean }
  | { kind: "shell"; requestId: string; command: string; output: string; exit?: string; context: boolean; done: boolean }
  | { kind: "notice"; level: string; text: string; done: true };

export interface AgentView {
  readonly id: string;
  name?: string;
  model?: string;
  items: Item[];
  busy: boolean;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  contextTokens: number;
  contextWindow?: number;
}

export interface EventLike {
  readonly name: string;
  readonly data: Record<string, unknown>;
}

const str = (v: unknown): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : String(v));

function argsSummary(json: string): string {
  try {
    const v = JSON.parse(json) as unknown;
    if (v && typeof v === "object" && !Array.isArray(v)) {
      return Object.entries(v as Record<string, unknown>)
        .map(([k, x]) => `${k}=${typeof x === "string" ? x : JSON.stringify(x)}`)
        .join(" ");
    }
  } catch {
    // not JSON: show it raw (sanitized at render time)
  }
  return json;
}

export class Transcript {
  readonly agents = new Map<string, AgentView>();
  /** Session-wide notices (not tied to an agent). */
  readonly notices: Item[] = [];
  models: { provider: string; id: string }[] = [];

  agent(id: string): AgentView {
    let a = this.agents.get(id);
    if (!a) {
      a = { id, items: [], busy: false, inputTokens: 0, outputTokens: 0, costUsd: 0, contextTokens: 0 };
      this.agents.set(id, a);
    }
    return a;
  }

  private push(a: AgentView, item: Item): void {
    a.items.push(item);
    if (a.items.length > TRANSCRIPT_MAX_ITEMS) a.items.splice(0, a.items.length - TRANSCRIPT_MAX_ITEMS);
  }

  private find<K extends Item["kind"]>(a: AgentView, kind: K, pred: (i: Extract<Item, { kind: K }>) => boolean): Extract<Item, { kind: K }> | undefined {
    for (let i = a.items.length - 1; i >= 0; i--) {
      const it = a.items[i] as Item;
      if (it.kind === kind && pred(it as Extract<Item, { kind: K }>)) return it as Extract<Item, { kind: K }>;
    }
    return undefined;
  }

  /** Folds one delivered event; returns true when anything visible changed. */
  apply(e: EventLike): boolean {
    const d = e.data;
    if (e.name === "harness.notice") {
      const level = str(d.level);
      if (level === "debug") return false;
      this.notices.push({ kind: "notice", level, text: str(d.text), done: true });
      return true;
    }
    if (e.name === "harness.models_available") {
      this.models = (d.models as { provider: string; id: string }[]).map((m) => ({ provider: m.provider, id: m.id }));
      return true;
    }
    const agentId = str(d.agent_id);
    if (agentId === "") return false;
    const a = this.agent(agentId);
    switch (e.name) {
      case "agent.started":
        if (typeof d.model === "string") a.model = d.model;
        return true;
      case "agent.model_set":
        a.model = str(d.model);
        return true;
      case "agent.metadata_set":
        if (d.key === "display_name") a.name = d.value === null ? undefined : str(d.value);
        return true;
      case "agent.prompt_submitted":
        this.push(a, { kind: "user", text: str(d.text), done: true });
        return true;
      case "agent.prompt_started":
        a.busy = true;
        if (typeof d.model === "string" && d.model !== "") a.model = d.model;
        return true;
      case "provider.response_updated": {
        const key = `${str(d.prompt_id)}#${str(d.round)}`;
        let it = this.find(a, "assistant", (x) => x.key === key);
        if (!it) {
          it = { kind: "assistant", key, text: "", reasoning: "", done: false };
          this.push(a, it);
        }
        it.text += str(d.text_delta);
        it.reasoning += str(d.reasoning_delta);
        return true;
      }
      case "provider.response_finished": {
        const key = `${str(d.prompt_id)}#${str(d.round)}`;
        let it = this.find(a, "assistant", (x) => x.key === key);
        if (!it) {
          it = { kind: "assistant", key, text: "", reasoning: "", done: false };
          this.push(a, it);
        }
        it.text = str(d.text);
        it.reasoning = str(d.reasoning);
        it.done = true;
        return true;
      }
      case "provider.response_failed":
        this.closeStreams(a);
        this.push(a, { kind: "notice", level: "error", text: `the model request failed: ${str(d.error_class)}: ${str(d.diagnostic)}`, done: true });
        return true;
      case "provider.retry_scheduled":
        this.push(a, { kind: "notice", level: "warning", text: `retrying the model request (${str(d.error_class) || "transient error"})`, done: true });
        return true;
      case "tool.started":
      case "tool.request": {
        const callId = str(d.call_id);
        if (this.find(a, "tool", (x) => x.callId === callId)) return false;
        this.push(a, { kind: "tool", callId, tool: str(d.tool), args: argsSummary(str(d.arguments_json)), status: "running", done: false });
        return true;
      }
      case "tool.result": {
        const callId = str(d.call_id);
        let it = this.find(a, "tool", (x) => x.callId === callId);
        if (!it) {
          it = { kind: "tool", callId, tool: str(d.tool), args: "", status: "running", done: false };
          this.push(a, it);
        }
        it.status = str(d.outcome) as ToolStatus;
        it.output = str(d.output);
        it.done = true;
        return true;
      }
      case "tool.result_display": {
        const callId = str(d.call_id);
        const it = this.find(a, "tool", (x) => x.callId === callId);
        const display = (d.display ?? {}) as { diff?: string };
        if (it && typeof display.diff === "string") it.diff = display.diff;
        return true;
      }
      case "shell.command_started": {
        this.push(a, { kind: "shell", requestId: str(d.request_id), command: str(d.command), output: "", context: d.include_in_context === true, done: false });
        return true;
      }
      case "shell.command_progress": {
        const it = this.find(a, "shell", (x) => x.requestId === str(d.request_id));
        if (it) it.output += str(d.text);
        return true;
      }
      case "shell.command_finished": {
        let it = this.find(a, "shell", (x) => x.requestId === str(d.request_id));
        if (!it) {
          it = { kind: "shell", requestId: str(d.request_id), command: str(d.command), output: "", context: d.include_in_context === true, done: false };
          this.push(a, it);
        }
        it.output = str(d.output);
        it.exit = d.exit_code === null ? `signal ${str(d.signal) || "?"}` : `exit ${str(d.exit_code)}`;
        it.done = true;
        return true;
      }
      case "agent.prompt_failed":
        a.busy = false;
        this.closeStreams(a);
        this.push(a, { kind: "notice", level: "error", text: `the prompt failed: ${str(d.diagnostic)}`, done: true });
        return true;
      case "agent.prompt_cancelled":
        a.busy = false;
        this.closeStreams(a);
        this.push(a, { kind: "notice", level: "warning", text: "the prompt was cancelled", done: true });
        return true;
      case "agent.outer_turn_finished":
        a.busy = false;
        this.closeStreams(a);
        if (d.outcome === "dispatch_uncertain") {
          this.push(a, { kind: "notice", level: "warning", text: "the session stopped while the model was answering; that prompt is not resent automatically", done: true });
        } else if (d.outcome === "interrupted") {
          this.push(a, { kind: "notice", level: "warning", text: "the session stopped before a queued prompt started; it was not sent (send it again if you still want it)", done: true });
        }
        return true;
      case "agent.stats_updated": {
        const u = (d.usage ?? {}) as { input_tokens?: number; output_tokens?: number };
        a.inputTokens = u.input_tokens ?? a.inputTokens;
        a.outputTokens = u.output_tokens ?? a.outputTokens;
        a.costUsd = typeof d.cost_usd === "number" ? d.cost_usd : a.costUsd;
        a.contextTokens = typeof d.context_tokens === "number" ? d.context_tokens : a.contextTokens;
        if (typeof d.context_window === "number") a.contextWindow = d.context_window;
        return true;
      }
      default:
        return false;
    }
  }

  /** Ends streams left open by a failure or cancellation, so they can leave the live region. */
  private closeStreams(a: AgentView): void {
    for (const it of a.items) {
      if (it.kind === "assistant" && !it.done) it.done = true;
      if (it.kind === "tool" && !it.done) {
        it.status = "cancelled";
        it.done = true;
      }
    }
  }
}

function line(text: SafeText, key: ThemeKey, theme: Theme): StyledLine {
  return [{ text, style: theme.styles[key] }];
}

function preview(text: string, width: number, theme: Theme, key: ThemeKey = "text"): StyledLine[] {
  const rows = wrap(sanitize(text.replace(/\n+$/, "")), width);
  const shown = rows.slice(0, OUTPUT_PREVIEW_LINES).map((r) => line(r, key, theme));
  const hidden = rows.length - Math.min(rows.length, OUTPUT_PREVIEW_LINES);
  if (hidden > 0) shown.push(line(truncateEnd(`… ${hidden} more line${hidden === 1 ? "" : "s"}` as SafeText, width), "muted", theme));
  return shown;
}

/** One item as styled rows for `width` columns (no row is wider than `width`). */
export function renderItem(item: Item, width: number, theme: Theme = DEFAULT_THEME, showReasoning = false): StyledLine[] {
  if (width <= 0) return [];
  switch (item.kind) {
    case "user": {
      const rows = wrap(sanitize(item.text), Math.max(1, width - 2));
      return [[], ...rows.map((r, i) => [{ text: (i === 0 ? "› " : "  ") as SafeText, style: theme.styles.prompt }, { text: r, style: theme.styles.text }] as StyledLine)];
    }
    case "assistant": {
      const out: StyledLine[] = [];
      if (showReasoning && item.reasoning !== "") out.push(...wrap(sanitize(item.reasoning), width).map((r) => line(r, "muted", theme)));
      if (item.text !== "") out.push(...wrap(sanitize(item.text), width).map((r) => line(r, "text", theme)));
      return out;
    }
    case "tool": {
      const rows = [
        ...renderToolRow({ toolName: item.tool, callId: item.callId, status: item.status, args: item.args, ...(item.diff !== undefined ? { diff: item.diff } : {}) }, width, theme, {
          maxLines: 40,
        }),
      ];
      // Identity and status did not fit: neither header nor body (SPEC-terminal-presentation).
      if (rows.length === 0) return [];
      if (item.diff === undefined && item.output !== undefined && item.output !== "") rows.push(...preview(item.output, width, theme, item.status === "error" ? "error" : "muted"));
      return rows;
    }
    case "shell": {
      const head: StyledLine = [
        { text: (item.context ? "! " : "!! ") as SafeText, style: theme.styles.accent },
        { text: truncateEnd(sanitize(item.command, { newlines: "escape" }), Math.max(0, width - 3 - (item.exit ? item.exit.length + 2 : 0))), style: theme.styles.toolName },
        ...(item.exit ? [{ text: `  ${item.exit}` as SafeText, style: item.exit === "exit 0" ? theme.styles.toolOk : theme.styles.toolError }] : []),
      ];
      return [head, ...preview(item.output, width, theme, "muted")];
    }
    case "notice":
      return wrap(sanitize(item.text), width).map((r) => line(r, item.level === "error" || item.level === "critical" ? "error" : item.level === "warning" ? "warning" : "muted", theme));
  }
}
