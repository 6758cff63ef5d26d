// `:handoff ARGS` from a UI (SPEC-handoff): start, status, cancel, and recovery of what a crashed
// handoff left.
import { existsSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Extension } from "../../sdk/index.js";
import { readRecovery, removeRecovery } from "./recovery.js";
import type { Handoff } from "./handoff.js";

/** Serves `handoff.command_request`: the answer's text, or the error's message as the refusal. */
export function serveHandoffCommand(ext: Extension, h: Handoff): void {
  ext.serve("handoff.command_request", async ({ agent_id, args }) => ({ text: (await command(h, agent_id, args)).slice(0, 1024) }));
}

function command(h: Handoff, agentId: string, args: readonly string[]): string | Promise<string> {
  const [verb = "start", sub] = args;
  const a = h.active;
  switch (verb) {
    case "start":
      return h.start(agentId, true);
    case "status":
      return h.statusLine(a?.agentId ?? agentId);
    case "cancel":
      if (!a) throw new Error("no handoff is under way");
      if (a.phase === "cutover") throw new Error("the replacement session is being created; it is too late to cancel");
      h.end(a, "cancelled");
      return `handoff cancelled; ${a.deferred.length} deferred prompt(s) sent to the agent`;
    case "recover":
      return recover(h, agentId, sub);
    default:
      throw new Error("usage: :handoff [start|status|cancel|recover [resume|abandon]]");
  }
}

/** Whether a regular, non-empty file is at `path` (its metadata only: the dossier is never read). */
function nonEmptyFile(path: string): boolean {
  try {
    const st = statSync(path);
    return st.isFile() && st.size > 0;
  } catch {
    return false;
  }
}

/**
 * `:handoff recover`: shows, resumes or abandons what a crashed handoff left. Resuming is itself
 * crash-safe: a cutover whose replacement exists is only recorded (the harness finds it by its
 * lineage and creates nothing again), one whose dossier was written is completed, and otherwise
 * the deferred prompts are released to the agent skipping those its journal already holds.
 */
async function recover(h: Handoff, agentId: string, sub: string | undefined): Promise<string> {
  const { recoveryPath, roots } = h.c;
  if (h.active) throw new Error(`a handoff is under way (${h.active.phase}); :handoff cancel ends it`);
  const r = readRecovery(recoveryPath);
  if (!r) return "no handoff recovery file for this session";
  const crossed = r.newSession !== undefined && (r.phase === "handed_off" || h.handedOff.has(r.newSession));
  const what = `recovery file ${recoveryPath}: phase ${r.phase}, ${r.deferred.length} deferred prompt(s)${crossed ? `, already handed off to ${r.newSession}` : ""}`;
  if (sub === undefined) return `${what}; :handoff recover resume or :handoff recover abandon`;
  if (sub === "abandon") {
    removeRecovery(recoveryPath);
    return `${what}: abandoned and deleted`;
  }
  if (sub !== "resume") throw new Error("usage: :handoff recover [resume|abandon]");
  // The replacement exists: its dossier holds the prompts, so none is sent here again.
  if (crossed) {
    removeRecovery(recoveryPath);
    return `${what}: nothing to send; deleted`;
  }
  const target = r.agent || agentId;
  // A cutover under way when the crash came: its dossier was written, or its replacement's folder
  // made. The harness picks up where it stopped (SPEC-handoff "Recovery"); the first turn is built
  // again from this file, so a dossier the replacement already read and deleted changes nothing.
  if (r.phase === "cutover" && r.newSession !== undefined && (nonEmptyFile(h.dossierPath()) || existsSync(join(roots.state, "sessions", r.newSession)))) {
    const result = await h.requestCutover(target, r.newSession, h.firstTurnFor(r.newSession, r.deferred));
    if (!result.ok) throw new Error(`${what}: the cutover could not be completed (${result.error ?? "refused"}); the file is kept`);
    removeRecovery(recoveryPath);
    return `${what}: cutover completed; the work continues in session ${r.newSession} (tau attach ${r.newSession}); deleted`;
  }
  // A handoff that reserved its dossier file (writing, or a cutover that never began) and ends here
  // without one: that exact file goes, as a cancel removes it.
  const reserved = r.phase === "writing" || r.phase === "cutover" ? h.dossierPath() : undefined;
  if (reserved !== undefined) rmSync(reserved, { force: true });
  const sent = await h.releases.release(target, r.deferred, r.phase === "releasing" ? r.releaseBase : undefined);
  return `${what}: ${sent} prompt(s) sent to agent ${target}, in order (${r.deferred.length - sent} already sent before)${reserved !== undefined ? `; the reserved dossier file ${reserved} removed` : ""}; deleted`;
}
