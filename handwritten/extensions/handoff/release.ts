// The handoff's deferred prompts handed to the agent (SPEC-handoff): in order, exactly once, even
// across crashes. It follows which prompts of this extension each agent's journal holds and which
// of them started a turn, which is how a resumed release knows what already reached the agent.
import type { Extension } from "../../sdk/index.js";
import { formatRecovery, removeRecoveryWarn, writeAtomic } from "./recovery.js";

export interface ReleaseContext {
  readonly ext: Extension;
  readonly sessionId: string;
  readonly recoveryPath: string;
  /** Prompts of ours asked for for an agent and not yet committed. */
  readonly asked: (agentId: string) => number;
  /** The crash tests' stopping point (see HOLD_AT in handoff.ts). */
  readonly hold: (step: string) => Promise<void>;
  readonly warn: (text: string) => void;
}

export class DeferredRelease {
  /**
   * Per agent, the ids of the prompts of this extension its journal holds (replayed and live), in
   * order, and which of them started a turn: a prompt submitted but never started when the daemon
   * stopped is closed as interrupted at the next start, so only a started one has reached the agent.
   */
  private readonly ourPrompts = new Map<string, string[]>();
  private readonly startedPrompts = new Set<string>();
  private readonly promptWaiters = new Set<() => void>();
  /** Per agent, the outcome of the first outer turn that ended since a prompt of ours last started. */
  private readonly turnEnds = new Map<string, string>();
  private releasing = 0;

  constructor(private readonly c: ReleaseContext) {}

  /** Whether a release is still handing prompts to an agent. */
  get busy(): boolean {
    return this.releasing > 0;
  }

  /** A prompt of ours in an agent's journal (`agent.prompt_submitted`, replayed or live). */
  submitted(agentId: string, promptId: string): void {
    const ids = this.ourPrompts.get(agentId) ?? [];
    ids.push(promptId);
    this.ourPrompts.set(agentId, ids);
  }

  /** An agent's prompt started a turn (`agent.prompt_started`): counted when it is ours. */
  started(agentId: string, promptId: string): void {
    if (this.ourPrompts.get(agentId)?.includes(promptId)) {
      this.startedPrompts.add(promptId);
      this.turnEnds.delete(agentId);
      for (const w of [...this.promptWaiters]) w();
    }
  }

  /** An outer turn of the agent ended (`agent.outer_turn_finished`, live): the first since our last start is the one that received it. */
  finished(agentId: string, outcome: string): void {
    if (this.turnEnds.has(agentId)) return;
    this.turnEnds.set(agentId, outcome);
    for (const w of [...this.promptWaiters]) w();
  }

  /** The outcome of the turn that received the agent's last prompt of ours. */
  private receivingTurnEnd(agentId: string): Promise<string> {
    return new Promise((resolve) => {
      const check = () => {
        const outcome = this.turnEnds.get(agentId);
        if (outcome === undefined) return;
        this.promptWaiters.delete(check);
        resolve(outcome);
      };
      this.promptWaiters.add(check);
      check();
    });
  }

  /** How many of the agent's prompts of ours after the first `base` have started a turn. */
  private startedAfter(agentId: string, base: number): number {
    return (this.ourPrompts.get(agentId) ?? []).slice(base).filter((id) => this.startedPrompts.has(id)).length;
  }

  private waitForStarted(agentId: string, base: number, count: number): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.startedAfter(agentId, base) < count) return;
        this.promptWaiters.delete(check);
        resolve();
      };
      this.promptWaiters.add(check);
      check();
    });
  }

  /**
   * Sends deferred prompts to the agent, in order, exactly once, even across crashes: the recovery
   * file first records the release and how many prompts of ours the agent's journal held before it
   * (`releaseBase`); a resumed release counts those since that started a turn (they run in order,
   * so they are the first ones) and sends only the rest. The file is deleted once every one started
   * and the turn that received the last one completed; a turn that ended otherwise keeps it (a
   * resumed release with nothing left to send deletes it).
   */
  async release(agentId: string, deferred: readonly string[], base?: number): Promise<number> {
    const { ext, sessionId, recoveryPath } = this.c;
    // Prompts of ours already asked for but not yet committed count as before the release.
    const releaseBase = base ?? (this.ourPrompts.get(agentId)?.length ?? 0) + this.c.asked(agentId);
    this.releasing++;
    try {
      if (deferred.length > 0) writeAtomic(recoveryPath, formatRecovery({ session: sessionId, agent: agentId, phase: "releasing", deferred, releaseBase }));
      const sent = Math.min(deferred.length, this.startedAfter(agentId, releaseBase));
      for (const [i, text] of deferred.slice(sent).entries()) {
        void ext.emit("agent.internal_prompt_request", { agent_id: agentId, mode: "queue", text });
        if (i === 0) await this.c.hold("release");
      }
      await this.waitForStarted(agentId, releaseBase, deferred.length);
      // The file goes once the turn that received the prompts completed; any other end keeps it.
      const outcome = deferred.length > sent ? await this.receivingTurnEnd(agentId) : "completed";
      if (outcome === "completed") removeRecoveryWarn(recoveryPath, this.c.warn);
      else this.c.warn(`the turn that received the handoff's deferred prompts ended ${outcome}; the recovery file ${recoveryPath} is kept (:handoff recover shows it; resume sends nothing again and deletes it, abandon deletes it)`);
      return deferred.length - sent;
    } finally {
      this.releasing--;
    }
  }
}
