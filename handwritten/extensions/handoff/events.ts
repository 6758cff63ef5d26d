// The events a handoff follows (SPEC-handoff): its own prompts committed and started, the ends of
// the agent's turns (the cutover once idle after Finish; one reminder; emergency steering), context
// usage that starts a handoff automatically, the successors this session's journal records, and in
// a replacement session the end of its first turn (receiving.ts).
import type { DeliveredEvent, Extension } from "../../sdk/index.js";
import type { Handoff } from "./handoff.js";
import type { Receiving } from "./receiving.js";

/** A prompt of ours committed: counted for releases, and matched to what it was asked for. */
function promptSubmitted(ext: Extension, h: Handoff, e: DeliveredEvent<"agent.prompt_submitted">): void {
  if (!e.replay && h.active?.agentId === e.data.agent_id) h.active.promptsSince.add(e.data.prompt_id);
  if (e.data.source !== "extension" || e.data.submitter !== ext.instance) return;
  h.releases.submitted(e.data.agent_id, e.data.prompt_id);
  if (e.replay) return;
  const i = h.expected.findIndex((x) => x.agentId === e.data.agent_id);
  if (i < 0) return;
  h.expected.splice(i, 1);
  const a = h.active;
  if (a && a.agentId === e.data.agent_id) a.callPromptId = e.data.prompt_id;
}

/** A turn of the agent ended: a finished handoff cuts over; a request's turn ended unfinished gets one reminder. */
function turnEnded(h: Handoff, e: DeliveredEvent<"agent.outer_turn_finished"> | DeliveredEvent<"agent.prompt_failed">): void {
  const a = h.active;
  if (e.replay || !a || e.data.agent_id !== a.agentId) return;
  const promptId = e.data.prompt_id;
  if (e.name === "agent.outer_turn_finished") {
    if (a.finished) return h.idle(a);
    if (e.data.outcome === "completed" && promptId !== undefined) h.emergencyAfterTurn(a, promptId);
  }
  if (promptId !== a.callPromptId || a.finished) return;
  a.callPromptId = undefined;
  // No Finish in this turn: one reminder after reminder_ms, never a second.
  if (a.reminded) return;
  a.reminded = true;
  a.reminder = setTimeout(() => {
    if (h.active === a && !a.finished && a.phase !== "cutover") h.sendCall(a, "reminder");
  }, h.c.settings.reminderMs);
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

export function followHandoffEvents(ext: Extension, h: Handoff, receiving: Receiving): void {
  ext.subscribe(
    ["session.handed_off", "session.lineage_set", "agent.prompt_submitted", "agent.prompt_started", "agent.outer_turn_finished"],
    ["session.handed_off", "session.lineage_set", "agent.prompt_submitted", "agent.prompt_started", "agent.outer_turn_finished", "agent.prompt_failed", "agent.stats_updated", "agent.compaction_committed"],
  );
  ext.on("session.handed_off", (e) => void h.handedOff.add(e.data.successor_session_id));
  ext.on("session.lineage_set", (e) => receiving.lineage(e.data.parent_session_id));
  ext.on("agent.prompt_submitted", (e) => {
    receiving.submitted(e);
    promptSubmitted(ext, h, e);
  });
  ext.on("agent.prompt_started", (e) => {
    h.releases.started(e.data.agent_id, e.data.prompt_id);
    if (!e.replay) h.busyAgents.add(e.data.agent_id);
  });
  ext.on("agent.outer_turn_finished", (e) => {
    receiving.finished(e);
    if (e.replay) return;
    h.releases.finished(e.data.agent_id, e.data.outcome);
    h.turnEnded(e.data.agent_id);
    turnEnded(h, e);
  });
  ext.on("agent.prompt_failed", (e) => turnEnded(h, e));
  ext.on("agent.stats_updated", (e) => statsUpdated(ext, h, e));
  ext.on("agent.compaction_committed", (e) => {
    if (!e.replay) h.autoAttempts.delete(e.data.agent_id);
  });
}
