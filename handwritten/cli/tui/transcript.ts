// The transcript: delivered session events folded into display items (prompts, streamed answers,
// tool rows, shell commands, notices) per agent, and each item rendered to styled rows for a
// width. Every untrusted string goes through `sanitize`/`escapeLabel` before it becomes a span.
import { DEFAULT_THEME, MarkdownStream, cutShortNotice, endWithoutTrailingNewlines, extensionNoticeText, renderToolRow, sanitize, truncateEnd, wrap, wrapHead, wrapTail } from "../ui/index.js";
import type { SafeText, StyledLine, Theme, ThemeKey, ToolStatus } from "../ui/index.js";
import { agentIdOf, type Event } from "../../protocol/index.js";
import { MODEL_PROBLEMS, callSummary, elapsed, shownOutput } from "./shown.js";

export { callSummary, elapsed, shownOutput };

/** Output lines a finished tool or shell row shows (the rest is summarized). */
export const OUTPUT_PREVIEW_LINES = 12;
/** Output lines a running tool or shell command shows: the newest ones. */
export const LIVE_TAIL_LINES = 6;
/** Output lines an expanded tool row shows (Ctrl-O), then how many it leaves out. */
export const EXPANDED_OUTPUT_LINES = 2000;
/** Live output a running tool keeps in memory (the newest characters). */
export const LIVE_OUTPUT_MAX_CHARS = 256 * 1024;
/** Items kept per agent; older ones leave the in-memory transcript (counted in `AgentView.earlier`). */
export const TRANSCRIPT_MAX_ITEMS = 2000;

export type Item =
  | { kind: "user"; text: string; done: true }
  | { kind: "assistant"; key: string; text: string; reasoning: string; done: boolean }
  | {
      kind: "tool";
      callId: string;
      tool: string;
      args: string;
      status: ToolStatus;
      output?: string;
      diff?: string;
      done: boolean;
      /** While it runs: when this UI saw it start, and the newest of its live output (bounded). */
      startedAt?: number;
      progress?: string;
      /** Its whole output is shown, not a preview or a tail (Ctrl-O). */
      expanded?: boolean;
    }
  | { kind: "shell"; requestId: string; command: string; output: string; exit?: string; context: boolean; done: boolean; startedAt?: number; expanded?: boolean }
  | { kind: "notice"; level: string; text: string; done: true };

export interface AgentView {
  readonly id: string;
  name?: string;
  model?: string;
  items: Item[];
  /** Items of this agent that are not (or no longer) in `items`: older than all of them. */
  earlier: number;
  busy: boolean;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  contextTokens: number;
  contextWindow?: number;
  /** Its work status (`work_status`): model-authored, escaped wherever it is shown. */
  work?: { phase: string; title: string };
  /** Why its model cannot be used, as its last request failed (a refused key, no answer); gone with the next answer. */
  modelProblem?: string;
  /** Its pending initialization and the extensions it waits for (agent.initialization_started); gone once it is set. */
  initializing?: { readonly id: string; readonly waitingFor: readonly string[] };
}

export class Transcript {
  readonly agents = new Map<string, AgentView>();
  /** Session-wide notices (not tied to an agent). */
  readonly notices: Item[] = [];
  models: { provider: string; id: string }[] = [];
  /** Providers whose model lists are complete (`harness.models_available.listed_providers`). */
  listedProviders: string[] = [];
  /** The session's first extensions have started (`session.initialized`): their commands are known. */
  sessionInitialized = false;
  /** The extensions the session's pending initialization waits for (`session.initialization_started`). */
  sessionWaitingFor: readonly string[] = [];
  /** The model an agent without its own goes to (`harness.models_available.default_model`). */
  defaultModel: string | undefined;
  /** Per agent, the newest item of each key (`keyOf`): folding an event never scans the items. */
  private readonly keyed = new Map<AgentView, Map<string, Item>>();
  /** Per agent, items pushed unfinished that a failure or cancellation closes (a superset). */
  private readonly open = new Map<AgentView, Set<Item>>();
  /**
   * Rows of calls that were requested (`tool.request` or `tool.started` seen): the harness ends
   * each with an outcome and its display, even after the turn was cancelled, so only that ends them.
   */
  private readonly requested = new WeakSet<Item>();

  agent(id: string): AgentView {
    let a = this.agents.get(id);
    if (!a) {
      a = { id, items: [], earlier: 0, busy: false, inputTokens: 0, outputTokens: 0, costUsd: 0, contextTokens: 0 };
      this.agents.set(id, a);
    }
    return a;
  }

  private keys(a: AgentView): Map<string, Item> {
    let m = this.keyed.get(a);
    if (!m) this.keyed.set(a, (m = new Map()));
    return m;
  }

  private openItems(a: AgentView): Set<Item> {
    let o = this.open.get(a);
    if (!o) this.open.set(a, (o = new Set()));
    return o;
  }

  private push(a: AgentView, item: Item): void {
    a.items.push(item);
    const key = keyOf(item);
    if (key !== undefined) this.keys(a).set(key, item);
    if (!item.done && (item.kind === "assistant" || item.kind === "tool")) this.openItems(a).add(item);
    // One item at a time, with shift(): V8 drops an array's first element without moving the rest.
    while (a.items.length > TRANSCRIPT_MAX_ITEMS) {
      const old = a.items.shift() as Item;
      a.earlier++;
      const k = keyOf(old);
      if (k !== undefined && this.keyed.get(a)?.get(k) === old) this.keyed.get(a)?.delete(k);
      this.open.get(a)?.delete(old);
    }
  }

  /** Appends an item made locally (a note of the UI's own) to an agent's transcript. */
  append(agentId: string, item: Item): void {
    this.push(this.agent(agentId), item);
  }

  /**
   * Older items of an agent, oldest first, arriving after its newer ones (paging back through
   * history the replay left out): they go before the items held, in place of as many `earlier`
   * ones. Items that no longer fit under TRANSCRIPT_MAX_ITEMS are not taken (oldest first).
   */
  prepend(agentId: string, older: readonly Item[]): void {
    const a = this.agent(agentId);
    const taken = older.slice(Math.max(0, older.length - Math.max(0, TRANSCRIPT_MAX_ITEMS - a.items.length)));
    a.items.unshift(...taken);
    a.earlier = Math.max(0, a.earlier - taken.length);
    const keys = this.keys(a);
    for (const item of taken) {
      const key = keyOf(item);
      // A newer item with the same key stays the one events find.
      if (key !== undefined && !keys.has(key)) keys.set(key, item);
    }
  }

  /** The newest item of a kind with a key (a tool's call id, a shell command's request id, an answer's prompt#round). */
  private find<K extends "assistant" | "tool" | "shell">(a: AgentView, kind: K, key: string): Extract<Item, { kind: K }> | undefined {
    return this.keyed.get(a)?.get(`${kind}:${key}`) as Extract<Item, { kind: K }> | undefined;
  }

  /** Folds one delivered event; returns true when anything visible changed. */
  apply(e: Event): boolean {
    if (e.name === "harness.notice") {
      if (e.data.level === "debug") return false;
      this.notices.push({ kind: "notice", level: e.data.level, text: e.data.text, done: true });
      return true;
    }
    // An extension's notice (SPEC-harness-notices): shown like the harness's, naming the extension.
    if (e.name === "extension.notice") {
      if (e.data.level === "debug") return false;
      this.notices.push({ kind: "notice", level: e.data.level, text: extensionNoticeText(e.data.instance, e.data.text), done: true });
      return true;
    }
    if (e.name === "session.initialization_started") {
      this.sessionWaitingFor = [...e.data.waiting_for];
      return true;
    }
    if (e.name === "session.initialized") {
      this.sessionInitialized = true;
      this.sessionWaitingFor = [];
      return true;
    }
    if (e.name === "harness.models_available") {
      this.models = e.data.models.map((m) => ({ provider: m.provider, id: m.id }));
      this.listedProviders = [...(e.data.listed_providers ?? [])];
      this.defaultModel = e.data.default_model ?? this.models[0]?.id;
      return true;
    }
    const agentId = agentIdOf(e);
    if (agentId === undefined || agentId === "") return false;
    const a = this.agent(agentId);
    return this.agentEvent(a, e) ?? this.answerEvent(a, e) ?? this.callEvent(a, e) ?? false;
  }

  /**
   * An agent's own facts: its model, name and work status, its prompts' lifecycle, compaction and
   * usage. Undefined when `e` is none of them (as for the two below).
   */
  private agentEvent(a: AgentView, e: Event): boolean | undefined {
    switch (e.name) {
      case "agent.started":
        if (e.data.model !== undefined) a.model = e.data.model;
        return true;
      case "agent.model_set":
        a.model = e.data.model;
        return true;
      case "agent.metadata_set":
        if (e.data.key === "display_name") a.name = e.data.value ?? undefined;
        return true;
      case "agent.initialization_started":
        if (e.data.waiting_for.length > 0) a.initializing = { id: e.data.initialization_id, waitingFor: [...e.data.waiting_for] };
        return true;
      case "agent.initialization_context_set":
        if (a.initializing?.id === e.data.initialization_id) delete a.initializing;
        return true;
      case "agent.work_status_set":
        // Model-authored: kept as sent, escaped wherever it is shown.
        a.work = { phase: e.data.phase, title: e.data.title };
        return true;
      case "agent.prompt_submitted":
        // A harness advisory is shown as what it is, never as something the user typed.
        if (e.data.internal_kind === "context_size_alert") this.push(a, { kind: "notice", level: "warning", text: `context-size alert ${e.data.alert ?? ""}: ${e.data.text}`, done: true });
        else if (e.data.internal_kind === "sandbox_state") return true; // for the model: the UI shows the state itself
        else if (e.data.internal_kind === "tools_changed") this.push(a, { kind: "notice", level: "info", text: e.data.text, done: true });
        else this.push(a, { kind: "user", text: e.data.text, done: true });
        return true;
      case "agent.compaction_started":
        this.push(a, { kind: "notice", level: "info", text: `compacting the conversation (${e.data.trigger})…`, done: true });
        return true;
      case "agent.compaction_committed":
        this.push(a, { kind: "notice", level: "info", text: "compacted: the earlier conversation was replaced by a summary", done: true });
        return true;
      case "agent.compaction_failed":
        this.push(a, { kind: "notice", level: "error", text: `compaction failed, the conversation is unchanged: ${e.data.reason}`, done: true });
        return true;
      case "agent.prompt_started":
        a.busy = true;
        if (e.data.model !== "") a.model = e.data.model;
        return true;
      case "agent.prompt_failed":
        a.busy = false;
        this.closeStreams(a);
        this.push(a, { kind: "notice", level: "error", text: `the prompt failed: ${e.data.diagnostic}`, done: true });
        return true;
      case "agent.prompt_cancelled":
        a.busy = false;
        if (e.data.round !== undefined) this.shownAnswer(a, e.data.prompt_id, e.data.round, e.data.shown_text, e.data.shown_reasoning);
        this.closeStreams(a);
        this.push(a, { kind: "notice", level: "warning", text: "the prompt was cancelled", done: true });
        return true;
      case "agent.outer_turn_finished":
        a.busy = false;
        // A turn closed by a resume after the session stopped: no outcome of its calls is coming.
        this.closeStreams(a, e.data.outcome === "dispatch_uncertain" || e.data.outcome === "interrupted");
        if (e.data.outcome === "dispatch_uncertain") {
          this.push(a, { kind: "notice", level: "warning", text: "the session stopped while the model was answering; that prompt is not resent automatically", done: true });
        } else if (e.data.outcome === "interrupted") {
          this.push(a, { kind: "notice", level: "warning", text: "the session stopped before a queued prompt started; it was not sent (send it again if you still want it)", done: true });
        }
        return true;
      case "agent.stats_updated":
        a.inputTokens = e.data.usage.input_tokens;
        a.outputTokens = e.data.usage.output_tokens;
        a.costUsd = e.data.cost_usd ?? a.costUsd;
        a.contextTokens = e.data.context_tokens ?? a.contextTokens;
        if (e.data.context_window !== undefined) a.contextWindow = e.data.context_window;
        return true;
      default:
        return undefined;
    }
  }

  /** A model answer streaming, finished, failed or retried. */
  private answerEvent(a: AgentView, e: Event): boolean | undefined {
    switch (e.name) {
      case "provider.response_updated": {
        const it = this.answer(a, `${e.data.prompt_id}#${e.data.round}`);
        it.text += e.data.text_delta ?? "";
        it.reasoning += e.data.reasoning_delta ?? "";
        return true;
      }
      case "provider.response_finished": {
        delete a.modelProblem;
        const it = this.answer(a, `${e.data.prompt_id}#${e.data.round}`);
        it.text = e.data.text;
        it.reasoning = e.data.reasoning ?? "";
        it.done = true;
        // The durable response names its calls: their rows come from here, live or replayed (the
        // tool.request that follows live, and whose record may be outside a replay, finds them).
        for (const call of e.data.tool_calls) this.toolRow(a, call.call_id, call.tool, call.arguments_json);
        // An answer cut short says so (the same words as `tau run`), live and replayed alike.
        const short = e.data.tool_calls.length === 0 ? cutShortNotice(e.data.finish_reason) : undefined;
        if (short !== undefined) this.push(a, { kind: "notice", level: "warning", text: short, done: true });
        return true;
      }
      case "provider.response_failed":
        if (MODEL_PROBLEMS[e.data.error_class] !== undefined) a.modelProblem = MODEL_PROBLEMS[e.data.error_class];
        this.shownAnswer(a, e.data.prompt_id, e.data.round, e.data.shown_text, e.data.shown_reasoning);
        this.closeStreams(a);
        this.push(a, { kind: "notice", level: "error", text: `the model request failed: ${e.data.error_class}: ${e.data.diagnostic}`, done: true });
        return true;
      case "provider.retry_scheduled":
        this.push(a, { kind: "notice", level: "warning", text: `retrying the model request (${e.data.error_class || "transient error"})`, done: true });
        return true;
      default:
        return undefined;
    }
  }

  /** A tool call's or a user shell command's row: made, its progress and its outcome. */
  private callEvent(a: AgentView, e: Event): boolean | undefined {
    switch (e.name) {
      case "tool.started":
      case "tool.request": {
        const made = this.toolRow(a, e.data.call_id, e.data.tool, e.data.arguments_json);
        const it = this.find(a, "tool", e.data.call_id);
        if (it && !it.done) this.requested.add(it);
        return made;
      }
      // A call's outcome: its output from the durable transcript fact (or, live, from tool.result),
      // its final status and display from tool.result_display (kept in the agent's journal too), so
      // an attached or resumed UI shows what the live one did (SPEC-tool-routing).
      // Only the display ends the row: the ephemeral tool.result may overtake the durable facts,
      // and a row ended early would leave the live region before its diff arrived.
      case "provider.tool_result":
        this.toolOutcome(a, e.data.call_id, e.data.tool, "ok", e.data.output, false);
        return true;
      case "provider.tool_error":
        this.toolOutcome(a, e.data.call_id, e.data.tool, "error", e.data.error, false);
        return true;
      case "tool.result":
        this.toolOutcome(a, e.data.call_id, e.data.tool, e.data.outcome, e.data.output, false);
        return true;
      case "tool.result_display": {
        const it = this.toolOutcome(a, e.data.call_id, e.data.tool, e.data.outcome, undefined, true);
        if (e.data.display.diff !== undefined) it.diff = e.data.display.diff;
        return true;
      }
      case "tool.progress": {
        const it = this.find(a, "tool", e.data.call_id);
        if (!it || it.done || it.status !== "running") return false;
        const text = (it.progress ?? "") + e.data.text;
        it.progress = text.length > LIVE_OUTPUT_MAX_CHARS ? text.slice(text.length - LIVE_OUTPUT_MAX_CHARS) : text;
        return true;
      }
      case "shell.command_started": {
        this.push(a, { kind: "shell", requestId: e.data.request_id, command: e.data.command, output: "", context: e.data.include_in_context === true, done: false, startedAt: Date.now() });
        return true;
      }
      case "shell.command_progress": {
        const it = this.find(a, "shell", e.data.request_id);
        if (it) {
          const text = it.output + e.data.text;
          it.output = text.length > LIVE_OUTPUT_MAX_CHARS ? text.slice(text.length - LIVE_OUTPUT_MAX_CHARS) : text;
        }
        return true;
      }
      case "shell.command_finished": {
        let it = this.find(a, "shell", e.data.request_id);
        if (!it) {
          it = { kind: "shell", requestId: e.data.request_id, command: e.data.command, output: "", context: e.data.include_in_context === true, done: false };
          this.push(a, it);
        }
        it.output = e.data.output;
        it.exit = e.data.exit_code === null ? `signal ${e.data.signal || "?"}` : `exit ${e.data.exit_code}`;
        it.done = true;
        delete it.startedAt;
        return true;
      }
      default:
        return undefined;
    }
  }

  /** A tool call's row, made by the first event that names the call; false when it was there. */
  private toolRow(a: AgentView, callId: string, tool: string, argumentsJson: string): boolean {
    if (this.find(a, "tool", callId)) return false;
    this.push(a, { kind: "tool", callId, tool, args: callSummary(argumentsJson), status: "running", done: false, startedAt: Date.now() });
    return true;
  }

  /** Gives a tool call's row its `status` (and `output`, when the event carries it); `end` ends the row. */
  private toolOutcome(a: AgentView, callId: string, tool: string, status: ToolStatus, output: string | undefined, end: boolean): Extract<Item, { kind: "tool" }> {
    let it = this.find(a, "tool", callId);
    if (!it) {
      it = { kind: "tool", callId, tool, args: "", status: "running", done: false };
      this.push(a, it);
    }
    it.status = status;
    if (output !== undefined) it.output = shownOutput(tool, output);
    // What only a running call shows: a finished one is the same live and replayed.
    delete it.progress;
    delete it.startedAt;
    if (end) {
      it.done = true;
      this.open.get(a)?.delete(it);
    }
    return it;
  }

  /**
   * The answer of a round cut by a cancel or a failure as far as UIs were shown it: live it is there
   * already, replayed it is made here (the deltas are not kept).
   */
  private shownAnswer(a: AgentView, promptId: string, round: number, text: string | undefined, reasoning: string | undefined): void {
    if (text === undefined && reasoning === undefined) return;
    const it = this.answer(a, `${promptId}#${round}`);
    it.text = text ?? "";
    it.reasoning = reasoning ?? "";
  }

  /** The answer item of a prompt round, made when its first event arrives. */
  private answer(a: AgentView, key: string): Extract<Item, { kind: "assistant" }> {
    let it = this.find(a, "assistant", key);
    if (!it) {
      it = { kind: "assistant", key, text: "", reasoning: "", done: false };
      this.push(a, it);
    }
    return it;
  }

  /**
   * Ends streams left open by a failure or cancellation, so they can leave the live region. A
   * requested call's row without an outcome stays open for it (a cancelled call may still end
   * `ok`), unless `all`: the session stopped, and no outcome is coming.
   */
  private closeStreams(a: AgentView, all = false): void {
    const open = this.open.get(a);
    if (!open) return;
    for (const it of [...open]) {
      if (it.kind === "assistant" && !it.done) it.done = true;
      // A call still without an outcome may yet report one; one with an outcome (its display may
      // be missing from an older journal) ends here, or it would hold the rows after it in view.
      if (it.kind === "tool" && !it.done && this.requested.has(it) && !all && it.status === "running") continue;
      if (it.kind === "tool" && !it.done) {
        // A call whose outcome came but not its display keeps the outcome.
        if (it.status === "running") it.status = "cancelled";
        it.done = true;
        delete it.progress;
        delete it.startedAt;
      }
      open.delete(it);
    }
  }
}

/** The key events find an item by, for the kinds they find. */
function keyOf(item: Item): string | undefined {
  if (item.kind === "tool") return `tool:${item.callId}`;
  if (item.kind === "shell") return `shell:${item.requestId}`;
  if (item.kind === "assistant") return `assistant:${item.key}`;
  return undefined;
}

/** Per answer, its text cut into markdown chunks and their rows (made on first render). */
const streams = new WeakMap<Item, MarkdownStream>();

function streamOf(item: Extract<Item, { kind: "assistant" }>): MarkdownStream {
  let s = streams.get(item);
  if (s === undefined) streams.set(item, (s = new MarkdownStream()));
  s.update(item.text);
  return s;
}

/**
 * How many of an item's first rows are final: all of a finished item's; of an answer still
 * streaming, those before its open markdown chunk (or all but the last row of reasoning alone).
 */
export function finalRows(item: Item, width: number, theme: Theme, showReasoning: boolean): number {
  if (item.done) return renderItem(item, width, theme, showReasoning).length;
  if (item.kind !== "assistant" || width <= 0) return 0;
  const reasoning = showReasoning && item.reasoning !== "" ? wrap(sanitize(item.reasoning), width).length : 0;
  if (item.text === "") return Math.max(0, reasoning);
  // The blank row, the reasoning, and every chunk but the open one (their rows are cached).
  const s = streamOf(item);
  let n = reasoning;
  for (let i = 0; i < s.chunks - 1; i++) n += s.rows(i, width, theme, false).length;
  return n > 0 ? 1 + n : 0;
}

function line(text: SafeText, key: ThemeKey, theme: Theme): StyledLine {
  return [{ text, style: theme.styles[key] }];
}

/**
 * The first OUTPUT_PREVIEW_LINES rows of an output, then how many of its lines they leave out.
 * Only the lines shown are wrapped, each only as far as its rows (`wrapHead`): a huge output, or one
 * huge line, costs the preview's size.
 */
function preview(text: string, width: number, theme: Theme, key: ThemeKey = "text", lines = OUTPUT_PREVIEW_LINES): StyledLine[] {
  const { rows, hiddenLines } = wrapHead(text.slice(0, endWithoutTrailingNewlines(text)), width, lines);
  const shown = rows.map((r) => line(r, key, theme));
  if (hiddenLines > 0) shown.push(line(truncateEnd(`… ${hiddenLines} more line${hiddenLines === 1 ? "" : "s"}` as SafeText, width), "muted", theme));
  return shown;
}

/** The newest rows of a running command's output (all of it, bounded, when expanded). */
function liveTail(text: string, width: number, theme: Theme, expanded: boolean): StyledLine[] {
  const end = endWithoutTrailingNewlines(text);
  if (end === 0) return [];
  const { rows, more } = wrapTail(text.slice(0, end), width, expanded ? EXPANDED_OUTPUT_LINES : LIVE_TAIL_LINES);
  const shown = rows.map((r) => line(r, "muted", theme));
  if (more) shown.unshift(line(truncateEnd("… earlier output not shown" as SafeText, width), "muted", theme));
  return shown;
}

/**
 * A prompt of more lines than this is shown by its first PROMPT_HEAD_LINES and how many more (a
 * pasted file need not fill the scrollback; the model got it whole).
 */
const PROMPT_MAX_LINES = 12;
const PROMPT_HEAD_LINES = 8;

/** What of a prompt is shown, and how many of its lines are not. */
function shownPrompt(text: string): { head: string; more: number } {
  const lines = text.split("\n", PROMPT_MAX_LINES + 1);
  if (lines.length <= PROMPT_MAX_LINES) return { head: text, more: 0 };
  let total = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) total++;
  return { head: lines.slice(0, PROMPT_HEAD_LINES).join("\n"), more: total + 1 - PROMPT_HEAD_LINES };
}

function moreLinesRow(more: number, width: number, theme: Theme): StyledLine {
  return line(truncateEnd(`  … ${more} more lines` as SafeText, width), "muted", theme);
}

/** One item as styled rows for `width` columns (no row is wider than `width`). */
export function renderItem(item: Item, width: number, theme: Theme = DEFAULT_THEME, showReasoning = false): StyledLine[] {
  if (width <= 0) return [];
  switch (item.kind) {
    case "user": {
      const { head, more } = shownPrompt(item.text);
      const rows = wrap(sanitize(head), Math.max(1, width - 2));
      return [
        [],
        ...rows.map((r, i) => [{ text: (i === 0 ? "› " : "  ") as SafeText, style: theme.styles.prompt }, { text: r, style: theme.styles.text }] as StyledLine),
        ...(more > 0 ? [moreLinesRow(more, width, theme)] : []),
      ];
    }
    case "assistant": {
      const out: StyledLine[] = [];
      if (showReasoning && item.reasoning !== "") out.push(...wrap(sanitize(item.reasoning), width).map((r) => line(r, "muted", theme)));
      if (item.text !== "") {
        const s = streamOf(item);
        for (let i = 0; i < s.chunks; i++) out.push(...s.rows(i, width, theme, !item.done && i === s.chunks - 1));
      }
      // A blank row sets an answer apart from the prompt or the tool rows before it.
      return out.length > 0 ? [[], ...out] : out;
    }
    case "tool": {
      const running = !item.done && item.startedAt !== undefined;
      const rows = [
        ...renderToolRow(
          { toolName: item.tool, status: item.status, args: item.args, ...(running ? { detail: elapsed(Date.now() - (item.startedAt as number)) } : {}), ...(item.diff !== undefined ? { diff: item.diff } : {}) },
          width,
          theme,
          { maxLines: item.expanded ? EXPANDED_OUTPUT_LINES : 40 },
        ),
      ];
      // Identity and status did not fit: neither header nor body (SPEC-terminal-presentation).
      if (rows.length === 0) return [];
      if (running && item.progress !== undefined) rows.push(...liveTail(item.progress, width, theme, item.expanded === true));
      const lines = item.expanded ? EXPANDED_OUTPUT_LINES : OUTPUT_PREVIEW_LINES;
      if (item.diff === undefined && item.output !== undefined && item.output !== "") rows.push(...preview(item.output, width, theme, item.status === "error" ? "error" : "muted", lines));
      return rows;
    }
    case "shell": {
      const status = item.exit ?? (item.startedAt !== undefined && !item.done ? `running ${elapsed(Date.now() - item.startedAt)}` : undefined);
      const head: StyledLine = [
        { text: (item.context ? "! " : "!! ") as SafeText, style: theme.styles.accent },
        { text: truncateEnd(sanitize(item.command, { newlines: "escape" }), Math.max(0, width - 3 - (status ? status.length + 2 : 0))), style: theme.styles.toolName },
        ...(status ? [{ text: `  ${status}` as SafeText, style: item.exit === undefined ? theme.styles.toolRunning : item.exit === "exit 0" ? theme.styles.toolOk : theme.styles.toolError }] : []),
      ];
      if (!item.done) return [head, ...liveTail(item.output, width, theme, item.expanded === true)];
      return [head, ...preview(item.output, width, theme, "muted", item.expanded ? EXPANDED_OUTPUT_LINES : OUTPUT_PREVIEW_LINES)];
    }
    case "notice":
      return wrap(sanitize(item.text), width).map((r) => line(r, noticeStyle(item.level), theme));
  }
}

function noticeStyle(level: string): ThemeKey {
  return level === "error" || level === "critical" ? "error" : level === "warning" ? "warning" : "muted";
}

/**
 * The last rows of an item, at most `maxRows` of them: the same rows as the end of `renderItem`,
 * with long texts wrapped only as far back as those rows need (`wrapTail`). `cut` tells whether
 * the item has rows before them.
 */
export function renderItemTail(item: Item, width: number, theme: Theme, showReasoning: boolean, maxRows: number): { rows: StyledLine[]; cut: boolean } {
  if (width <= 0) return { rows: [], cut: false };
  switch (item.kind) {
    case "user": {
      const { head, more } = shownPrompt(item.text);
      if (more > 0 && maxRows <= 1) return { rows: [moreLinesRow(more, width, theme)].slice(0, maxRows), cut: true };
      const body = wrapTail(head, Math.max(1, width - 2), more > 0 ? maxRows - 1 : maxRows);
      const rows = body.rows.map((r, i) => [{ text: (i === 0 && !body.more ? "› " : "  ") as SafeText, style: theme.styles.prompt }, { text: r, style: theme.styles.text }] as StyledLine);
      if (more > 0) rows.push(moreLinesRow(more, width, theme));
      // The blank row above a prompt is its first row.
      if (!body.more && rows.length < maxRows) return { rows: [[], ...rows], cut: false };
      return { rows, cut: true };
    }
    case "assistant": {
      // Chunks from the newest back, each rendered whole (the same rows as `renderItem`'s), until
      // the rows are there; the blank row above the answer is its first row.
      let rows: StyledLine[] = [];
      let room = maxRows;
      if (item.text !== "") {
        const s = streamOf(item);
        for (let i = s.chunks - 1; i >= 0; i--) {
          const r = s.rows(i, width, theme, !item.done && i === s.chunks - 1);
          if (r.length > 0 && r.length >= room) return { rows: [...r.slice(r.length - room), ...rows], cut: true };
          rows = [...r, ...rows];
          room -= r.length;
        }
      }
      if (showReasoning && item.reasoning !== "") {
        const reasoning = wrapTail(item.reasoning, width, room);
        rows = [...reasoning.rows.map((r) => line(r, "muted", theme)), ...rows];
        if (reasoning.more || reasoning.rows.length >= room) return { rows, cut: true };
        room -= reasoning.rows.length;
      }
      if (rows.length === 0) return { rows, cut: false };
      return room > 0 ? { rows: [[], ...rows], cut: false } : { rows, cut: true };
    }
    case "notice": {
      const text = wrapTail(item.text, width, maxRows);
      return { rows: text.rows.map((r) => line(r, noticeStyle(item.level), theme)), cut: text.more };
    }
    case "tool":
    case "shell": {
      // Bounded already: a header, a preview or a diff of at most 40 lines.
      const rows = renderItem(item, width, theme, showReasoning);
      return { rows: rows.slice(Math.max(0, rows.length - maxRows)), cut: rows.length > maxRows };
    }
  }
}

/**
 * The newest rows of `items[from, to)`, at most `budget`: whole items, newest first, while they fit;
 * the newest item alone is cut to its last rows when it does not fit, and with `fill` so is the
 * oldest one reached. `first` is the oldest item shown at all, `cut` whether it is shown in part.
 * Items older than `first` are not rendered at all.
 */
export function newestRows(
  items: readonly Item[],
  from: number,
  to: number,
  width: number,
  theme: Theme,
  showReasoning: boolean,
  budget: number,
  fill: boolean,
): { rows: StyledLine[]; first: number; cut: boolean } {
  const parts: StyledLine[][] = [];
  let used = 0;
  let i = to;
  let cut = false;
  while (i > from && used < budget) {
    const t = renderItemTail(items[i - 1] as Item, width, theme, showReasoning, budget - used);
    if (t.cut && !fill && used > 0) break;
    parts.push(t.rows);
    used += t.rows.length;
    i--;
    if (t.cut) {
      cut = true;
      break;
    }
  }
  return { rows: parts.reverse().flat(), first: i, cut };
}
