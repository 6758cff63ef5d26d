// An agent's conversation as its provider requests carry it (SPEC-provider-execution): the
// transcript folded from the agent's journal in journal order, the prompts submitted and not yet in
// it, and a resumed agent's transcript loaded from its journal when it is first needed.
import type { Event } from "../bus/index.js";
import type { ProviderMessage } from "../../generated/index.js";
import { userEnvelope } from "./context.js";
import { agentEnvelope } from "./agent-tools.js";
import { peerEnvelope } from "./peer-messaging.js";
import { applySummary, emptyTranscript } from "./compaction.js";
import type { AgentLoop, TranscriptFold } from "./agent-loop-state.js";

/**
 * Events of an agent's journal, read for a lazy transcript load: [from, to), at most about
 * `maxBytes` (each checked against its schema: a record that fails throws).
 */
export type AgentRecords = (agentId: string, from: number, to: number, maxBytes: number) => readonly Event[];

/** Journal bytes read per step of a journal read, between which other work runs. */
export const JOURNAL_READ_STEP_BYTES = 4 * 1024 * 1024;

export interface JournalReader {
  /** An agent journal's records (for loading a resumed agent's transcript) and its length. */
  agentRecords: AgentRecords;
  agentRecordCount(agentId: string): number;
}

export class Conversations {
  constructor(private readonly journals: JournalReader) {}

  /** A resumed agent: its transcript stays in the journal, from `from` on, until it is needed. */
  restore(l: AgentLoop, from: number): void {
    l.conversation.transcript = undefined;
    l.conversation.from = from;
  }

  /**
   * Loads a resumed agent's transcript from its journal, step by step (other work runs between
   * steps), then folds what was appended meanwhile, in the same step as it takes the result.
   */
  ensure(agentId: string, l: AgentLoop): Promise<void> {
    const s = l.conversation;
    if (s.transcript) return Promise.resolve();
    if (s.loading) return s.loading;
    // Cleared a step after it is set: a load with nothing to wait for ends within this call, and
    // clearing it inside would be undone by the assignment (the agent then stayed "running" forever).
    const loading = (async () => {
      const fold: TranscriptFold = { transcript: emptyTranscript(), unsent: new Map(), summaries: new Map() };
      // A compacted journal is read from its last cut (or an earlier waiting prompt's submission):
      // every message before it is in the summary, which is recorded after the cut.
      let at = s.from;
      for (;;) {
        const end = this.journals.agentRecordCount(agentId);
        if (at >= end) break;
        const records = this.journals.agentRecords(agentId, at, end, JOURNAL_READ_STEP_BYTES);
        records.forEach((e, i) => foldTranscript(fold, e, at + i));
        at += records.length;
        if (at < this.journals.agentRecordCount(agentId)) await new Promise((resolve) => setImmediate(resolve));
      }
      s.transcript = fold.transcript;
      s.unsent = fold.unsent;
      s.summaries = fold.summaries;
    })().finally(() => {
      if (s.loading === loading) s.loading = undefined;
    });
    s.loading = loading;
    return loading;
  }

  /** A load that failed is forgotten, so the next prompt tries again. */
  forgetFailedLoad(l: AgentLoop): void {
    l.conversation.loading = undefined;
  }
}

/** A tool call without a result (an interrupted round) gets a synthetic error so the transcript stays closed. */
export function closeDanglingCalls(messages: readonly ProviderMessage[]): ProviderMessage[] {
  const answered = new Set(messages.filter((m) => m.role === "tool").map((m) => m.call_id));
  const out: ProviderMessage[] = [];
  for (const m of messages) {
    out.push(m);
    for (const call of m.tool_calls ?? []) {
      if (!answered.has(call.call_id)) out.push({ role: "tool", call_id: call.call_id, text: "interrupted: this call has no result", is_error: true });
    }
  }
  return out;
}

/** The text a submitted prompt enters the conversation with: only the user's prompts get the `<user>` envelope; another agent's words are framed as its (SPEC-agent-team). */
function promptText(e: Event<"agent.prompt_submitted">): string {
  const d = e.data;
  if (d.source === "human_ui") return userEnvelope(d.text);
  if (d.source === "agent") return agentEnvelope(d.sender ?? "unknown", d.text);
  if (d.source === "peer") return peerEnvelope(d.peer ?? { session_id: "unknown", agent_id: "unknown", message_id: "unknown" }, d.text);
  return d.text;
}

/** Folds one record (at journal position `seq`) into a transcript and its prompts not yet sent, in journal order. */
export function foldTranscript(f: TranscriptFold, e: Event, seq: number): void {
  const t = f.transcript;
  const push = (m: ProviderMessage) => {
    t?.messages.push(m);
    t?.seqs.push(seq);
  };
  switch (e.name) {
    case "agent.prompt_submitted":
      f.unsent.set(e.data.prompt_id, { text: promptText(e), steer: e.data.mode === "steer" });
      break;
    case "agent.prompt_started": {
      // Steered prompts join at the next round boundary; a turn's own prompt at its first round.
      const own = e.data.prompt_id;
      for (const [id, p] of [...f.unsent]) {
        if (p.steer && id !== own) {
          push({ role: "user", text: p.text });
          f.unsent.delete(id);
        }
      }
      const mine = f.unsent.get(own);
      if (e.data.round === 0 && mine) {
        push({ role: "user", text: mine.text });
        f.unsent.delete(own);
      }
      break;
    }
    case "agent.outer_turn_finished":
      f.unsent.delete(e.data.prompt_id); // closed before it started (cancelled, interrupted)
      break;
    case "provider.response_finished": {
      const calls = e.data.tool_calls;
      // The reasoning is kept: some servers need it back (SPEC-provider-chat-completions).
      push({
        role: "assistant",
        text: e.data.text,
        tool_calls: calls,
        ...(e.data.reasoning !== undefined ? { reasoning: e.data.reasoning } : {}),
        ...(e.data.reasoning_items !== undefined ? { reasoning_items: e.data.reasoning_items } : {}),
        ...(e.data.reasoning_field !== undefined ? { reasoning_field: e.data.reasoning_field } : {}),
      });
      for (const call of calls) t?.calls.add(call.call_id);
      break;
    }
    // A tool message only ever answers a call an assistant message made (defence in depth: only
    // the router publishes these, and only for the agent loop's own requests).
    case "provider.tool_result":
      if (t?.calls.has(e.data.call_id)) push({ role: "tool", call_id: e.data.call_id, text: e.data.output });
      break;
    case "provider.tool_error":
      if (t?.calls.has(e.data.call_id)) push({ role: "tool", call_id: e.data.call_id, text: e.data.error, is_error: true });
      break;
    case "agent.compaction_summarized":
      f.summaries.set(e.data.compaction_id, e.data.summary);
      break;
    case "agent.compaction_committed": {
      // Only a recorded summary commits, once: a duplicate commit finds none.
      const summary = f.summaries.get(e.data.compaction_id);
      f.summaries.delete(e.data.compaction_id);
      if (summary !== undefined && t) applySummary(t, summary, e.data.cut_seq);
      break;
    }
    case "agent.compaction_failed":
      f.summaries.delete(e.data.compaction_id);
      break;
    case "shell.command_finished":
      if (e.data.include_in_context === true) push({ role: "user", text: `$ ${e.data.command}\n${e.data.output}` });
      break;
  }
}
