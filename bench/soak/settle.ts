// Waiting for a session to have no work left, as a user would before going on: prompts closed,
// compactions ended, a crashed handoff recovered (`:handoff recover resume`) or a hung one cancelled.
import { existsSync } from "node:fs";
import { waitFor } from "../../test/support/wait.js";
import { foldPrompts, type Violation } from "./checks.js";
import { marksIn } from "./script.js";
import type { SoakSession } from "./session.js";

const SETTLE_MS = 30_000;

/** Prompts the UIs were told were refused (`agent.prompt_failed`, transient), with the code. */
function refused(s: SoakSession): Map<string, string> {
  return new Map(s.allDeliveries().flatMap((d) => (d.name === "agent.prompt_failed" && d.data.prompt_id !== undefined ? [[String(d.data.prompt_id), String(d.data.code)] as const] : [])));
}

/**
 * Work the session still has: prompts open or waiting, an open compaction, a handoff under way. A
 * prompt the UI was told was refused is not waited for (refusedUnclosed reports it).
 */
function openWork(s: SoakSession): string[] {
  const out: string[] = [];
  const failed = refused(s);
  for (const a of s.members()) {
    const recs = s.agentJournal(a);
    const started = new Set(recs.filter((r) => r.event.name === "agent.prompt_started").map((r) => String(r.event.data.prompt_id)));
    for (const p of foldPrompts(recs).values()) {
      if (p.outcome !== undefined || (p.taken && !started.has(p.id)) || (!p.taken && failed.has(p.id))) continue;
      out.push(`agent ${a}: prompt ${p.id} (${marksIn(p.text).join(",") || "unmarked"}) ${p.taken ? "running" : "waiting"}`);
    }
    const open = new Set<string>();
    for (const r of recs) {
      if (r.event.name === "agent.compaction_started") open.add(String(r.event.data.compaction_id));
      if (r.event.name === "agent.compaction_committed" || r.event.name === "agent.compaction_failed") open.delete(String(r.event.data.compaction_id));
    }
    for (const c of open) out.push(`agent ${a}: compaction ${c} open`);
  }
  if (s.o.handoff && existsSync(s.recoveryFile())) out.push(RECOVERY_FILE);
  // The handoff's latest state from its live process (one that exited took its handoff with it).
  const log = s.deliveries();
  for (let i = log.length - 1; i >= 0; i--) {
    const d = log[i] as (typeof log)[number];
    if (d.name === "extension.exited" && d.data.instance === "handoff") break;
    if (d.name !== "handoff.state_reported") continue;
    if (d.data.phase !== "idle") out.push(`handoff ${String(d.data.phase)}`);
    break;
  }
  return out;
}

/** `:handoff recover resume` when a recovery file is there and no handoff runs (as a user does after a crash). */
export async function recoverHandoff(s: SoakSession): Promise<void> {
  if (!s.o.handoff || !existsSync(s.recoveryFile())) return;
  const id = s.handoffCommand(s.leadId, "recover", "resume");
  await s.delivered((d) => d.name === "handoff.command_result" && d.data.request_id === id, "the handoff's recovery", 30_000);
}

const RECOVERY_FILE = "a handoff recovery file";

/**
 * Waits until the session has no work left; a handoff that hangs is cancelled once, and a recovery
 * file left (a release whose receiving turn did not complete keeps it) is resumed, as a user would.
 */
export async function settle(s: SoakSession, when: string): Promise<Violation[]> {
  const quiet = () => openWork(s).length === 0;
  try {
    await waitFor(quiet, "the session to settle", { timeoutMs: SETTLE_MS, pollMs: 100 });
    return [];
  } catch {
    const work = openWork(s);
    if (work.some((w) => w.startsWith("handoff") || w === RECOVERY_FILE)) {
      if (work.some((w) => w.startsWith("handoff"))) s.handoffCommand(s.leadId, "cancel");
      await recoverHandoff(s).catch(() => undefined);
      if (await waitFor(quiet, "the session to settle after a cancel", { timeoutMs: SETTLE_MS, pollMs: 100 }).then(() => true, () => false)) return [];
    }
    return openWork(s).map((w) => ({ invariant: "turns.unclosed", detail: `still open ${SETTLE_MS / 1000} s ${when}: ${w}` }));
  }
}

/** Prompts refused live (`agent.prompt_failed`) whose journal still has no outcome for them. */
export function refusedUnclosed(s: SoakSession): Violation[] {
  const failed = refused(s);
  return s.members().flatMap((a) =>
    [...foldPrompts(s.agentJournal(a)).values()]
      .filter((p) => p.outcome === undefined && !p.taken && failed.has(p.id))
      .map((p) => ({ invariant: "turns.unclosed" as const, detail: `agent ${a}: prompt ${p.id} (${marksIn(p.text).join(",") || "unmarked"}) was refused live (agent.prompt_failed, ${failed.get(p.id)}) but its journal records no outcome (no agent.outer_turn_finished)` })),
  );
}

