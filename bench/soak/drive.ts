// Drives a round's workload up to its kill: the warm-up prompts run to their end, the trigger's
// phase is started and waited for, the extra prompts are typed, and after the drawn delay the drawn
// target is SIGKILLed.
import { waitFor } from "../../test/support/wait.js";
import type { SoakModel } from "./model.js";
import type { RoundPlan } from "./plan.js";
import { promptText, scriptOfCall } from "./script.js";
import type { Delivery, SoakSession } from "./session.js";

export interface KillReport {
  /** The phase seen when the kill came (`missed` when the trigger never came). */
  readonly observed: string;
  /** Whether a process was there to kill. */
  readonly killed: boolean;
  /** How many deliveries this boot's UI had at the kill (those after it came after the kill). */
  readonly inboxAtKill: number;
  /** Marks of deferred handoff prompts the extension acknowledged (its state's count reached them). */
  readonly deferredAcked: readonly string[];
}

const TURN_MS = 60_000;
const TRIGGER_MS = 30_000;

/** Waits for the end of the turn of the prompt carrying `mark` on the lead agent. */
export async function turnEnd(s: SoakSession, mark: string, ms = TURN_MS): Promise<Delivery> {
  const tag = `[[soak:${mark}]]`;
  let promptId: string | undefined;
  let end: Delivery | undefined;
  await waitFor(
    () => {
      promptId ??= s.deliveries().find((d) => d.name === "agent.prompt_submitted" && String(d.data.text).includes(tag))?.data.prompt_id as string | undefined;
      end = promptId === undefined ? undefined : s.deliveries().find((d) => d.name === "agent.outer_turn_finished" && d.data.prompt_id === promptId);
      return end !== undefined;
    },
    `the end of ${mark}'s turn`,
    ms,
  );
  return end as Delivery;
}

function deliveredSince(s: SoakSession, from: number, pred: (d: Delivery) => boolean): boolean {
  const log = s.deliveries();
  for (let i = from; i < log.length; i++) if (pred(log[i] as Delivery)) return true;
  return false;
}

/** Starts the trigger's phase; resolves when it began (true) or its deadline passed (false). */
async function trigger(s: SoakSession, model: SoakModel, plan: RoundPlan, deferredAcked: string[]): Promise<boolean> {
  const t = plan.trigger;
  const from = s.deliveries().length;
  let fired = false;
  const off = model.onRequest((r) => {
    if (t.phase !== "prompt" || r.script !== t.prompt) return;
    const last = (plan.scripts.find((x) => x.id === t.prompt)?.rounds.length ?? 1) - 1;
    if (r.round === last) fired = true;
  });
  const since = (pred: (d: Delivery) => boolean) => deliveredSince(s, from, pred);
  let began: () => boolean;
  switch (t.phase) {
    case "prompt":
      s.submit(s.leadId, promptText(t.prompt));
      began = () => fired;
      break;
    case "tool":
      s.submit(s.leadId, promptText(t.prompt));
      began = () => since((d) => d.name === "tool.started" && d.data.tool === "shell" && scriptOfCall(String(d.data.call_id)) === t.prompt);
      break;
    case "compaction":
      if (t.via === "ui") s.compactRequest(s.leadId, "keep the soak marks (ui)");
      else s.submit(s.leadId, promptText(t.prompt ?? ""));
      began = () => since((d) => d.name === "agent.compaction_started");
      break;
    case "agent_start":
      s.submit(s.leadId, promptText(t.prompt));
      began = () => since((d) => d.name === "agent.started" && d.data.parent_id !== undefined);
      break;
    case "handoff":
      s.handoffCommand(s.leadId, "start");
      began = () => since((d) => d.name === "handoff.state_reported" && d.data.phase === (t.at === "requested" ? "requested" : "writing"));
      break;
  }
  try {
    await waitFor(began, `the ${t.phase} phase`, TRIGGER_MS);
    if (t.phase === "handoff" && t.at !== "requested") await typeDeferred(s, t.deferred, t.at === "writing", from, deferredAcked);
    return true;
  } catch {
    return false;
  } finally {
    off();
  }
}

/** Types the deferred prompts into the handoff's window, each once the previous was captured. */
async function typeDeferred(s: SoakSession, marks: readonly string[], toWriting: boolean, from: number, acked: string[]): Promise<void> {
  for (const [i, mark] of marks.entries()) {
    s.submit(s.leadId, promptText(mark, "a prompt typed during the handoff"));
    try {
      await waitFor(() => deliveredSince(s, from, (d) => d.name === "handoff.state_reported" && Number(d.data.deferred) >= i + 1), `the capture of ${mark}`, 5_000);
      acked.push(mark);
    } catch {
      return; // the window closed: what was typed meanwhile is an ordinary prompt (or refused)
    }
  }
  if (toWriting) await waitFor(() => deliveredSince(s, from, (d) => d.name === "tool.started" && d.data.tool === "write"), "the dossier's write", TRIGGER_MS);
}

/** Runs the round's workload and kills its target in the drawn phase. */
export async function driveToKill(s: SoakSession, model: SoakModel, plan: RoundPlan): Promise<KillReport> {
  for (const mark of plan.warmup) {
    s.submit(s.leadId, promptText(mark));
    await turnEnd(s, mark);
  }
  const deferredAcked: string[] = [];
  const began = await trigger(s, model, plan, deferredAcked);
  for (const e of plan.extras) s.submit(s.leadId, promptText(e.id, `an extra ${e.mode} prompt`), e.mode);
  // The kill point: a drawn delay into the phase (a soak's randomness, not a wait for an event).
  await new Promise((r) => setTimeout(r, plan.kill.delayMs));
  const inboxAtKill = s.deliveries().length;
  const target = plan.kill.target;
  let killed = true;
  if (target === "daemon") await s.killDaemon();
  else {
    const pid = s.extensionPid(target);
    if (pid === undefined) killed = false;
    else {
      s.remember();
      process.kill(pid, "SIGKILL");
    }
  }
  return { observed: began ? plan.trigger.phase : "missed", killed, inboxAtKill, deferredAcked };
}
