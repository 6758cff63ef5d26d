// The receiving side of a handoff (SPEC-handoff "Receiving"): in the replacement session, the
// handoff extension follows the first turn the seeding submitted — the one that carries the dossier
// file's path and the deferred prompts — and deletes the source session's recovery file only once
// that turn completed. A turn that ended otherwise keeps the file, with a warning naming it, for
// `:handoff recover` in the source session.
import type { DeliveredEvent, Extension } from "../../sdk/index.js";
import { readRecovery, recoveryFile, removeRecoveryWarn, type RecoveryState } from "./recovery.js";

/** How often, and how long, a completed first turn looks again for the source's record of the handoff. */
const RECORDED_POLL_MS = 200;
const RECORDED_WAIT_MS = 10 * 60_000;

export class Receiving {
  /** The session this one continues (`session.lineage_set`), and the first turn's prompt there. */
  private parent: string | undefined;
  private promptId: string | undefined;
  private settled = false;

  constructor(
    private readonly c: {
      readonly ext: Extension;
      readonly sessionId: string;
      readonly configRoot: string;
      readonly warn: (text: string) => void;
    },
  ) {}

  lineage(parent: string): void {
    this.parent ??= parent;
  }

  /** The seeding's first turn: a `human_ui` prompt whose first line names both sessions. */
  submitted(e: DeliveredEvent<"agent.prompt_submitted">): void {
    if (this.parent === undefined || this.promptId !== undefined || e.data.source !== "human_ui") return;
    if (e.data.text.startsWith(`# Handoff from session ${this.parent} to session ${this.c.sessionId}\n`)) this.promptId = e.data.prompt_id;
  }

  /** A turn ended (replayed too: a replacement restarted after its first turn completed still cleans up). */
  finished(e: DeliveredEvent<"agent.outer_turn_finished">): void {
    if (this.settled || this.parent === undefined || e.data.prompt_id !== this.promptId) return;
    this.settled = true;
    const path = recoveryFile(this.c.configRoot, this.parent);
    if (e.data.outcome !== "completed") {
      if (!e.replay) this.c.warn(`the handoff's first turn ended ${e.data.outcome}; the recovery file ${path} of session ${this.parent} is kept (:handoff recover there shows it; resume sends nothing again and deletes it)`);
      return;
    }
    this.whenRecorded(path, Date.now() + RECORDED_WAIT_MS);
  }

  /**
   * Deletes the recovery file once the source has recorded the handoff (phase `handed_off`): until
   * then the source may still need it to finish its cutover, so it is looked at again a little later.
   */
  private whenRecorded(path: string, deadline: number): void {
    let r: RecoveryState | undefined;
    try {
      r = readRecovery(path);
      if (r === undefined) return; // already gone: recovered in the source, or deleted before
    } catch {
      // Unreadable: still the exact file of this handoff by its name; its removal is tried.
      return removeRecoveryWarn(path, this.c.warn);
    }
    // A file of a later handoff of the source (to another session) is not this one's.
    if (r.session !== this.parent || r.newSession !== this.c.sessionId) return;
    if (r.phase === "handed_off") return removeRecoveryWarn(path, this.c.warn);
    if (Date.now() >= deadline) {
      this.c.warn(`session ${this.parent} has not recorded its handoff to this session; its recovery file ${path} is kept (:handoff recover there finishes it)`);
      return;
    }
    setTimeout(() => this.whenRecorded(path, deadline), RECORDED_POLL_MS).unref();
  }
}
