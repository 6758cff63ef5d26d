// `tau run --continue` / `--resume ID`: which saved session a run continues, and which of its agents
// the prompt goes to (SPEC-cli-manners, "Continuing a session"). Read-only: summaries, checkpoints
// and file times, never a journal's records — but a fork (`--fork`) copies the agent's journal.
import { SessionCatalogError, agentToContinue, describeSession, forkSession, listSavedSessions, resolveSavedSession } from "../../sessions/index.js";
import type { TauErrorCode } from "../errors.js";
import type { RunOptions } from "./daemon.js";

/** Why a run cannot continue the session asked for (plain data: it crosses bundles). */
export interface ResumeRefusal {
  readonly ok: false;
  readonly code: TauErrorCode;
  readonly message: string;
}

export interface ResumeTarget {
  readonly ok: true;
  readonly sessionId: string;
  /** The agent the prompt goes to; none when the session has no agent a user started. */
  readonly agentId?: string;
  /** With `--fork`: the session the fork copies. */
  readonly forkedFrom?: string;
}

/**
 * The session `resume` names (`--continue`: the most recently active saved session of the project
 * folder `cwd`), refused when it is unknown, ambiguous or running; and its agent to continue. With
 * `fork`, a fork of it is made (its source may be running) and continued instead.
 */
export function resumeTarget(stateDir: string, cwd: string, resume: NonNullable<RunOptions["resume"]>): ResumeTarget | ResumeRefusal {
  let sessionId: string;
  try {
    if ("last" in resume) {
      const mine = listSavedSessions(stateDir).filter((s) => s.project_root === cwd);
      if (mine.length === 0) return { ok: false, code: "TAU-E0118", message: `tau run: --continue: no saved session of this folder (${cwd}); tau session list --all shows the others, tau run --resume ID continues one` };
      sessionId = (mine[0] as { id: string }).id;
    } else {
      sessionId = resolveSavedSession(stateDir, resume.session);
    }
  } catch (err) {
    if (err instanceof SessionCatalogError) return { ok: false, code: "TAU-E0118", message: `tau run: --resume: ${err.message}` };
    throw err;
  }
  if (resume.fork === true) {
    try {
      const forked = forkSession(stateDir, sessionId);
      return { ok: true, sessionId: forked.session_id, agentId: forked.agent_id, forkedFrom: sessionId };
    } catch (err) {
      if (err instanceof SessionCatalogError) return { ok: false, code: "TAU-E0310", message: `tau run: --fork: ${err.message}` };
      throw err;
    }
  }
  const saved = describeSession(stateDir, sessionId);
  if (saved.running_pid !== undefined) return { ok: false, code: "TAU-E0308", message: `tau run: session ${sessionId} is running (pid ${saved.running_pid}); tau attach ${sessionId} joins it` };
  const agentId = agentToContinue(stateDir, saved.agents);
  return { ok: true, sessionId, ...(agentId !== undefined ? { agentId } : {}) };
}
