// The round router (SPEC-provider-execution): every provider round the harness starts is opened here
// by the owner that asked for it (the turn loop, the permission reviewer, MCP sampling, compaction, titles), and each
// provider report of it goes to exactly that owner, found by the round's prompt id. A report whose
// round number or connection does not match the open round exactly is an observation only.
import type { Committed } from "../bus/index.js";

/** What a provider reports about its current round. */
export type ProviderReport = "provider.response_delta_reported" | "provider.response_finished_reported" | "provider.response_failed_reported" | "provider.retry_reported";

/** A round as its reports name it: its prompt id and number, and the provider connection it went to. */
export interface Round {
  readonly promptId: string;
  /** Read at each report: a turn's round number moves on with its rounds. */
  readonly round: number;
  readonly instance: string;
  readonly generation: number;
}

/** What the owner of a round does with its reports; a report it has no handler for is ignored. */
export interface RoundOwner<R extends Round> {
  finished(round: R, c: Committed<"provider.response_finished_reported">): Promise<void> | void;
  failed(round: R, c: Committed<"provider.response_failed_reported">): Promise<void> | void;
  delta?(round: R, c: Committed<"provider.response_delta_reported">): void;
  retry?(round: R, c: Committed<"provider.retry_reported">): void;
}

interface OpenRound {
  readonly round: Round;
  readonly owner: RoundOwner<Round>;
  /** The agent whose journal the round belongs to (a turn's, a compaction's), if any. */
  readonly agentId: string | undefined;
}

export class RoundRouter {
  private readonly open = new Map<string, OpenRound>();

  /**
   * Opens a round for its owner until `close`; `agentId` names the agent whose journal its provider
   * events belong to. Refused (false) while another round holds the same prompt id.
   */
  start<R extends Round>(round: R, owner: RoundOwner<R>, agentId?: string): boolean {
    if (this.open.has(round.promptId)) return false;
    this.open.set(round.promptId, { round, owner, agentId });
    return true;
  }

  /** Closes a round, if it is the one open under its prompt id. */
  close(round: Round): void {
    if (this.open.get(round.promptId)?.round === round) this.open.delete(round.promptId);
  }

  /** The agent whose turn or compaction round holds this prompt id, if one does. */
  agentOf(promptId: string): string | undefined {
    return this.open.get(promptId)?.agentId;
  }

  onDelta(c: Committed<"provider.response_delta_reported">): void {
    const o = this.owning(c);
    o?.owner.delta?.(o.round, c);
  }

  onFinished(c: Committed<"provider.response_finished_reported">): Promise<void> | void {
    const o = this.owning(c);
    return o?.owner.finished(o.round, c);
  }

  onFailed(c: Committed<"provider.response_failed_reported">): Promise<void> | void {
    const o = this.owning(c);
    return o?.owner.failed(o.round, c);
  }

  onRetry(c: Committed<"provider.retry_reported">): void {
    const o = this.owning(c);
    o?.owner.retry?.(o.round, c);
  }

  /** The open round a report answers: its prompt id, round number, instance and connection generation. */
  private owning(c: Committed<ProviderReport>): OpenRound | undefined {
    const o = this.open.get(c.data.prompt_id);
    const p = c.publisher;
    return o && o.round.round === c.data.round && p.instance === o.round.instance && p.generation === o.round.generation ? o : undefined;
  }
}
