// One ACP prompt turn as tau's events tell it (SPEC-acp, "Updates"): the agent's deliveries mapped
// to `session/update`s — answer and reasoning chunks, tool calls with kind, title, locations, their
// changes as diffs and their end — and the turn's stop reason from how tau ended it. No connection;
// the only I/O is reading a project file a `write` replaces, for its diff.
import type { SessionUpdate, StopReason, ToolKind } from "@agentclientprotocol/sdk";
import { lstatSync, readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import type { Delivery } from "../session-client.js";
import { callSummary } from "../tui/shown.js";

/** The ACP kind of each tau tool a client shows differently; every other tool is `other`. */
const TOOL_KINDS: Readonly<Record<string, ToolKind>> = {
  shell: "execute",
  read: "read",
  ls: "search",
  glob: "search",
  grep: "search",
  find: "search",
  write: "edit",
  edit: "edit",
  web_fetch: "fetch",
  web_search: "fetch",
};

/** Most steps a turn's plan shows (the newest). */
const PLAN_MAX_ENTRIES = 32;

/** How a turn ended for ACP: a stop reason, or a failure the prompt request answers with an error. */
export type TurnEnd = { readonly stopReason: StopReason } | { readonly failed: string };

/** Follows one submitted prompt of one agent: its updates, and how it ended. */
export class AcpTurn {
  /** The harness's id of the prompt, once its `agent.prompt_submitted` was seen. */
  promptId: string | undefined;
  private cutShort: "length" | "content_filter" | undefined;
  private failure: string | undefined;
  /** Calls whose change went out as ACP diffs already (their unified diff is not sent again). */
  private readonly diffed = new Set<string>();
  /** The work statuses the agent set in this turn, in order: the plan a client shows. */
  private readonly steps: Array<{ title: string; done: boolean }> = [];

  constructor(
    readonly agentId: string,
    /** The text submitted, to know its `agent.prompt_submitted` among the agent's. */
    private readonly text: string,
    /** The session's folder: a call's relative path is shown from it. */
    private readonly projectRoot: string,
  ) {}

  /** The updates one delivery of the session makes (none for another agent's, or one ACP does not show). */
  updates(d: Delivery): SessionUpdate[] {
    const e = d.event;
    if ((e.data as { agent_id?: unknown }).agent_id !== this.agentId) return [];
    switch (e.name) {
      case "agent.prompt_submitted":
        if (this.promptId === undefined && e.data.source === "human_ui" && e.data.text === this.text) this.promptId = e.data.prompt_id;
        return [];
      case "provider.response_updated": {
        if (!this.mine(e.data.prompt_id)) return [];
        const out: SessionUpdate[] = [];
        if (e.data.reasoning_delta) out.push({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: e.data.reasoning_delta } });
        if (e.data.text_delta) out.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: e.data.text_delta } });
        return out;
      }
      case "provider.response_finished":
        if (this.mine(e.data.prompt_id)) this.cutShort = e.data.finish_reason === "length" || e.data.finish_reason === "content_filter" ? e.data.finish_reason : undefined;
        return [];
      case "provider.response_failed":
        if (this.mine(e.data.prompt_id)) this.failure = `${e.data.error_class}: ${e.data.diagnostic}`;
        return [];
      case "agent.prompt_failed":
        if (e.data.prompt_id === undefined || this.mine(e.data.prompt_id)) this.failure = `${e.data.code}: ${e.data.diagnostic}`;
        return [];
      case "tool.request": {
        if (!this.mine(e.data.prompt_id)) return [];
        const diffs = diffsOf(e.data.tool, e.data.arguments_json, this.projectRoot);
        if (diffs.length > 0) this.diffed.add(e.data.call_id);
        return [
          {
            sessionUpdate: "tool_call",
            toolCallId: e.data.call_id,
            title: titleOf(e.data.tool, e.data.arguments_json),
            kind: TOOL_KINDS[e.data.tool] ?? "other",
            status: "pending",
            locations: locationsOf(e.data.arguments_json, this.projectRoot),
            rawInput: parsed(e.data.arguments_json),
            ...(diffs.length > 0 ? { content: diffs } : {}),
          },
        ];
      }
      case "tool.started":
        if (!this.mine(e.data.prompt_id)) return [];
        return [{ sessionUpdate: "tool_call_update", toolCallId: e.data.call_id, status: "in_progress" }];
      case "tool.progress":
        return [{ sessionUpdate: "tool_call_update", toolCallId: e.data.call_id, content: [{ type: "content", content: { type: "text", text: e.data.text } }] }];
      case "tool.result":
        return [
          {
            sessionUpdate: "tool_call_update",
            toolCallId: e.data.call_id,
            status: e.data.outcome === "ok" ? "completed" : "failed",
            content: [{ type: "content", content: { type: "text", text: e.data.output } }],
          },
        ];
      case "agent.work_status_set": {
        // Each new title is a step; the ones before it are done, and `done` closes the last.
        const last = this.steps.at(-1);
        if (last !== undefined && last.title !== e.data.title) last.done = true;
        if (last === undefined || last.title !== e.data.title) this.steps.push({ title: e.data.title, done: false });
        if (e.data.phase === "done") (this.steps.at(-1) as { done: boolean }).done = true;
        if (this.steps.length > PLAN_MAX_ENTRIES) this.steps.splice(0, this.steps.length - PLAN_MAX_ENTRIES);
        return [{ sessionUpdate: "plan", entries: this.steps.map((st, i) => ({ content: st.title, priority: "medium", status: st.done ? "completed" : i === this.steps.length - 1 ? "in_progress" : "pending" })) }];
      }
      case "tool.result_display":
        if (e.data.display.diff === undefined || this.diffed.has(e.data.call_id)) return [];
        return [{ sessionUpdate: "tool_call_update", toolCallId: e.data.call_id, content: [{ type: "content", content: { type: "text", text: `\`\`\`diff\n${e.data.display.diff}\n\`\`\`` } }] }];
      default:
        return [];
    }
  }

  /** How the turn ended, once `d` ends it (its `agent.outer_turn_finished`); undefined before. */
  end(d: Delivery): TurnEnd | undefined {
    const e = d.event;
    if (e.name === "agent.prompt_failed" && e.data.agent_id === this.agentId && (e.data.prompt_id === undefined || this.mine(e.data.prompt_id))) {
      return { failed: `the prompt failed: ${e.data.code}: ${e.data.diagnostic}` };
    }
    if (e.name !== "agent.outer_turn_finished" || e.data.agent_id !== this.agentId || e.data.prompt_id !== this.promptId) return undefined;
    switch (e.data.outcome) {
      case "completed":
        return { stopReason: this.cutShort === "length" ? "max_tokens" : this.cutShort === "content_filter" ? "refusal" : "end_turn" };
      case "cancelled":
        return { stopReason: "cancelled" };
      default:
        return { failed: `the prompt ${e.data.outcome === "failed" ? "failed" : `ended ${e.data.outcome}`}${this.failure !== undefined ? `: ${this.failure}` : ""}` };
    }
  }

  private mine(promptId: string | undefined): boolean {
    return promptId !== undefined && promptId === this.promptId;
  }
}

/** A call's title as a person reads it: the tool, and what it runs or touches. */
function titleOf(tool: string, argumentsJson: string): string {
  const what = callSummary(argumentsJson);
  return what === "" ? tool : `${tool} ${what.length > 200 ? `${what.slice(0, 199)}…` : what}`;
}

/** Largest file whose text a `write`'s diff carries as the old text. */
const DIFF_OLD_MAX_BYTES = 1024 * 1024;

/**
 * An `edit`'s replacements and a `write`'s new content as ACP diffs (SPEC-acp, "Updates"): each
 * replacement's old and new text; a write's new content, with the file's current text as the old
 * one when it is a file of the project under 1 MiB (none when it does not exist yet).
 */
function diffsOf(tool: string, argumentsJson: string, root: string): Array<{ type: "diff"; path: string; oldText?: string | null; newText: string }> {
  const v = parsed(argumentsJson);
  if (v === null || typeof v !== "object" || Array.isArray(v)) return [];
  const o = v as Record<string, unknown>;
  if (typeof o.path !== "string" || o.path === "") return [];
  const path = isAbsolute(o.path) ? o.path : resolve(root, o.path);
  if (tool === "edit" && Array.isArray(o.edits)) {
    return o.edits.flatMap((e: unknown) => {
      const r = e as { old_text?: unknown; new_text?: unknown };
      return typeof r.old_text === "string" && typeof r.new_text === "string" ? [{ type: "diff" as const, path, oldText: r.old_text, newText: r.new_text }] : [];
    });
  }
  if (tool === "write" && typeof o.content === "string") return [{ type: "diff", path, oldText: currentText(path, root), newText: o.content }];
  return [];
}

/** A project file's text now, for a write's diff; null when there is none (or it is not the project's, or too large). */
function currentText(path: string, root: string): string | null {
  if (path !== root && !path.startsWith(`${root.replace(/\/$/, "")}/`)) return null;
  try {
    const st = lstatSync(path);
    return st.isFile() && st.size <= DIFF_OLD_MAX_BYTES ? readFileSync(path, "utf8") : null;
  } catch {
    return null;
  }
}

/** The file a call names, for a client to follow along. */
function locationsOf(argumentsJson: string, root: string): Array<{ path: string; line?: number }> {
  const v = parsed(argumentsJson);
  if (v === null || typeof v !== "object" || Array.isArray(v)) return [];
  const o = v as Record<string, unknown>;
  const path = [o.path, o.file_path, o.file].find((p): p is string => typeof p === "string" && p !== "");
  if (path === undefined) return [];
  return [{ path: isAbsolute(path) ? path : resolve(root, path), ...(typeof o.offset === "number" && Number.isInteger(o.offset) && o.offset > 0 ? { line: o.offset } : {}) }];
}

function parsed(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return json;
  }
}

/**
 * What `session/load` replays of one agent's history (SPEC-acp, "Loading"): the user's prompts, the
 * answers, and each call with its end — from the journal's facts, not its live deltas.
 */
export function replayedUpdates(d: Delivery, agentId: string, projectRoot: string): SessionUpdate[] {
  const e = d.event;
  if ((e.data as { agent_id?: unknown }).agent_id !== agentId) return [];
  switch (e.name) {
    case "agent.prompt_submitted":
      return e.data.source === "human_ui" ? [{ sessionUpdate: "user_message_chunk", content: { type: "text", text: e.data.text } }] : [];
    case "provider.response_finished":
      return e.data.text === "" ? [] : [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: e.data.text } }];
    case "tool.request":
      return [{ sessionUpdate: "tool_call", toolCallId: e.data.call_id, title: titleOf(e.data.tool, e.data.arguments_json), kind: TOOL_KINDS[e.data.tool] ?? "other", status: "pending", locations: locationsOf(e.data.arguments_json, projectRoot), rawInput: parsed(e.data.arguments_json) }];
    case "tool.result":
      return [{ sessionUpdate: "tool_call_update", toolCallId: e.data.call_id, status: e.data.outcome === "ok" ? "completed" : "failed", content: [{ type: "content", content: { type: "text", text: e.data.output } }] }];
    default:
      return [];
  }
}
