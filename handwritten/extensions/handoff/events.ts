// The events a handoff follows (SPEC-handoff): its own prompts committed and started, the ends of
// the call's and the writer's turns (one reminder; writer retries), context usage that starts a
// handoff automatically, and the successors this session's journal records.
import type { DeliveredEvent, Extension } from "../../sdk/index.js";
import type { Handoff, PromptKind } from "./handoff.js";

/** A prompt of ours committed: counted for releases, and matched to what it was asked for. */
function promptSubmitted(ext: Extension, h: Handoff, e: DeliveredEvent<"agent.prompt_submitted">): void {
  if (!e.replay && h.active?.agentId === e.data.agent_id) h.active.promptsSince.add(e.data.prompt_id);
  if (e.data.source !== "extension" || e.data.submitter !== ext.instance) return;
  h.releases.submitted(e.data.agent_id, e.data.prompt_id);
  if (e.replay) return;
  const i = h.expected.findIndex((x) => x.agentId === e.data.agent_id);
  if (i < 0) return;
  const kind = (h.expected.splice(i, 1)[0] as { kind: PromptKind }).kind;
  const a = h.active;
  if (!a || a.agentId !== e.data.agent_id) return;
  if (kind !== "writer") a.callPromptId = e.data.prompt_id;
  else a.writerPromptId = e.data.prompt_id;
}

/** The call's turn ended unanswered (one reminder), or the writer's without a dossier (a retry, or the end). */
function turnEnded(h: Handoff, e: DeliveredEvent<"agent.outer_turn_finished"> | DeliveredEvent<"agent.prompt_failed">): void {
  const a = h.active;
  if (e.replay || !a) return;
  const { settings } = h.c;
  const promptId = e.data.prompt_id;
  if (e.name === "agent.outer_turn_finished" && e.data.agent_id === a.agentId && e.data.outcome === "completed" && promptId !== undefined) h.emergencyAfterTurn(a, promptId);
  if (promptId === a.callPromptId && a.phase === "requested") {
    a.callPromptId = undefined;
    // No answer in this turn: one reminder after reminder_ms, never a second.
    if (a.reminded) return;
    a.reminded = true;
    a.reminder = setTimeout(() => {
      if (h.active === a && a.phase === "requested") h.sendCall(a, "reminder");
    }, settings.reminderMs);
  } else if (promptId === a.writerPromptId && !a.submitted) {
    a.writerPromptId = undefined;
    if (a.writerAttempts >= settings.writerAttempts) return h.end(a, `no dossier after ${a.writerAttempts} writer turn(s)`);
    if (a.phase === "writing") a.phase = "deferring";
    a.retry = setTimeout(() => {
      if (h.active === a && !a.submitted) h.sendWriter(a);
    }, settings.writerRetryMs);
  }
}

/** Context usage noted; past `auto_percent` (then `critical_percent`) a handoff starts by itself. */
function statsUpdated(ext: Extension, h: Handoff, e: DeliveredEvent<"agent.stats_updated">): void {
  const { settings } = h.c;
  const { agent_id, context_tokens, context_window } = e.data;
  h.usage.set(agent_id, { tokens: context_tokens, ...(context_window !== undefined ? { window: context_window } : {}) });
  if (e.replay || settings.autoPercent <= 0 || h.active || !context_window) return;
  const percent = (context_tokens / context_window) * 100;
  const attempts = h.autoAttempts.get(agent_id) ?? 0;
  const threshold = attempts === 0 ? settings.autoPercent : attempts === 1 ? settings.criticalPercent : Infinity;
  if (percent < threshold) return;
  h.autoAttempts.set(agent_id, attempts + 1);
  try {
    h.start(agent_id, false);
    ext.notice("info", `handoff started automatically at ${Math.round(percent)}% of the context window (attempt ${attempts + 1} of 2)`);
  } catch (err) {
    h.warn(`automatic handoff not started: ${(err as Error).message}`);
  }
}

export function followHandoffEvents(ext: Extension, h: Handoff): void {
  ext.subscribe(
    ["session.handed_off", "agent.prompt_submitted", "agent.prompt_started"],
    ["session.handed_off", "agent.prompt_submitted", "agent.prompt_started", "agent.outer_turn_finished", "agent.prompt_failed", "agent.stats_updated", "agent.compaction_committed"],
  );
  ext.on("session.handed_off", (e) => void h.handedOff.add(e.data.successor_session_id));
  ext.on("agent.prompt_submitted", (e) => promptSubmitted(ext, h, e));
  ext.on("agent.prompt_started", (e) => {
    h.releases.started(e.data.agent_id, e.data.prompt_id);
    const a = h.active;
    if (e.replay || !a || e.data.prompt_id !== a.writerPromptId || a.phase !== "deferring") return;
    h.setPhase(a, "writing");
  });
  ext.on("agent.outer_turn_finished", (e) => {
    if (!e.replay) h.releases.finished(e.data.agent_id, e.data.outcome);
    turnEnded(h, e);
  });
  ext.on("agent.prompt_failed", (e) => turnEnded(h, e));
  ext.on("agent.stats_updated", (e) => statsUpdated(ext, h, e));
  ext.on("agent.compaction_committed", (e) => {
    if (!e.replay) h.autoAttempts.delete(e.data.agent_id);
  });
}
