// The automatic permission reviewer (SPEC-sandbox-reviewer): a `sandbox.review_request` becomes the
// review input (the user's messages from the whole journal, the agent's recent context, a child's
// own), one tool-less round 0 to the classifier's provider, and the decision rule's outcome
// directed back to the extension that asked. The input and decision rules are permission-review.ts.
import type { Committed, Event } from "../bus/index.js";
import type { EventName, EventPayloads } from "../../generated/index.js";
import { fitText } from "../protocol/text.js";
import type { ProviderCall } from "../protocol/provider-request.js";
import { REVIEW_TIMEOUT_MS, adapterOf, buildReviewInput, childRecords, decideReview, reviewRequest, transcriptRecords, type ReviewAdapter, type ReviewRecord } from "./permission-review.js";
import type { AgentLoop, AgentLoops, UserIntent } from "./agent-loop-state.js";
import type { Round, RoundOwner, RoundRouter } from "./round-router.js";
import type { ModelRegistry } from "./model-registry.js";
import { oneOffTimeout, sendOneOff, servingProvider } from "./one-off-round.js";
import type { UsageMeter } from "./usage.js";
import { JOURNAL_READ_STEP_BYTES, type Conversations, type JournalReader } from "./conversation.js";

export interface ReviewerPort extends JournalReader {
  directToInstance<N extends EventName>(instance: string, name: N, data: EventPayloads[N]): boolean;
  sendProviderCall(instance: string, generation: number, call: ProviderCall): Promise<string | undefined>;
  generationOf(instance: string): number | undefined;
  hasAgent(agentId: string): boolean;
  /**
   * The parent of an agent another agent started, while it is a member of the session (a review is
   * delegated to it); `null` for such an agent without that connection; undefined for a top-level agent.
   */
  parentOf?(agentId: string): string | null | undefined;
}

/** An automatic permission review under way: one tool-less round 0 whose prompt id is the review id. */
interface ActiveReview extends Round {
  readonly round: 0;
  readonly agentId: string;
  /** The extension instance that asked: the result is directed to it. */
  readonly requester: string;
  readonly model: string;
  readonly adapter: ReviewAdapter;
  readonly timer: NodeJS.Timeout;
  /** A child's review delegated to its parent: the parent, and its journal's length when the review began. */
  readonly delegated?: { readonly parent: string; readonly at: number };
}

/** The reviewer's collaborators. */
export interface ReviewerDeps {
  readonly loops: AgentLoops;
  readonly router: RoundRouter;
  readonly models: Pick<ModelRegistry, "declares" | "route">;
  readonly usage: Pick<UsageMeter, "account">;
  readonly conversations: Pick<Conversations, "ensure">;
}

type ReviewAnswer = Omit<EventPayloads["sandbox.review_result"], "review_id">;

/** What a review reads: the agent whose context it weighs (a child's parent), and its input text. */
type Gathered = { owner: string; parent: string | undefined; text: string } | { answer: ReviewAnswer };

export class PermissionReviewer implements RoundOwner<ActiveReview> {
  /** Reviews under way, by review id. */
  private readonly reviews = new Map<string, ActiveReview>();

  constructor(
    private readonly port: ReviewerPort,
    private readonly deps: ReviewerDeps,
  ) {}

  /** `sandbox.review_request`: the review input, then one round to the classifier's provider. */
  async onReviewRequest(c: Committed<"sandbox.review_request">): Promise<void> {
    const d = c.data;
    const requester = c.publisher.instance;
    if (requester === undefined || this.reviews.has(d.review_id)) return;
    const answer = (a: ReviewAnswer): void => void this.port.directToInstance(requester, "sandbox.review_result", { review_id: d.review_id, ...a });
    const input = await this.gather(d);
    if ("answer" in input) return answer(input.answer);
    const target = servingProvider(d.classifier, this.deps.models, this.port);
    if (target === undefined) return answer({ outcome: "unavailable", reason: `no running provider serves ${d.classifier}` });
    const delegatedAt = input.parent !== undefined ? this.port.agentRecordCount(input.parent) : undefined;
    const adapter = adapterOf(d.classifier);
    const request = reviewRequest(input.text, adapter);
    const timer = oneOffTimeout(this.port, d.timeout_ms ?? REVIEW_TIMEOUT_MS, () => this.reviews.get(d.review_id), (rv) => this.end(rv, { outcome: "failed", reason: "timeout" }));
    const rv: ActiveReview = {
      promptId: d.review_id,
      round: 0,
      agentId: input.owner,
      requester,
      model: target.model,
      instance: target.instance,
      generation: target.generation,
      adapter,
      timer,
      ...(input.parent !== undefined && delegatedAt !== undefined ? { delegated: { parent: input.parent, at: delegatedAt } } : {}),
    };
    // A review id another round holds (an extension's id is its own choice) is a duplicate too.
    if (!this.deps.router.start(rv, this)) return clearTimeout(timer);
    this.reviews.set(rv.promptId, rv);
    const call: ProviderCall = { agent_id: input.owner, prompt_id: rv.promptId, round: 0, model: target.model, system: request.system, messages: request.messages, tools: [] };
    const stillOpen = () => this.reviews.get(rv.promptId) === rv;
    if (!(await sendOneOff(this.port, rv, call, stillOpen)) && stillOpen()) this.end(rv, { outcome: "failed", reason: "the review request could not be sent" });
  }

  /**
   * The review input from the agent's transcript. A child agent's review is its parent's: the
   * parent's user intent and context (SPEC-sandbox-reviewer, "Subagents"); a child without that
   * connection stays manual. Anything missing answers the review as skipped.
   */
  private async gather(d: EventPayloads["sandbox.review_request"]): Promise<Gathered> {
    const skip = (reason: ReviewAnswer["reason"]): Gathered => ({ answer: { outcome: "skipped", reason } });
    const parent = this.port.parentOf?.(d.agent_id);
    if (parent === null) return skip("no_parent");
    const owner = parent ?? d.agent_id;
    const ol = this.deps.loops.find(owner);
    const cl = this.deps.loops.find(d.agent_id);
    if (ol === undefined || cl === undefined || !this.port.hasAgent(owner)) return skip("incomplete");
    let users: readonly string[];
    let child: { agentId: string; task: string; records: ReviewRecord[] } | undefined;
    let records: ReviewRecord[];
    try {
      await this.deps.conversations.ensure(owner, ol);
      if (parent !== undefined) await this.deps.conversations.ensure(d.agent_id, cl);
      // The user's messages come from the whole journal: a compaction's cut never shortens them.
      users = await this.userIntent(owner, ol);
      // A user direction submitted but not yet in the conversation may change what the user wants:
      // no inference until it enters (the manual prompt follows).
      if ((ol.intent.read?.unsent.size ?? 0) > 0) return skip("queued_direction");
      records = transcriptRecords(ol.conversation.transcript?.messages ?? []).filter((r) => r.role !== "user");
      if (parent !== undefined) child = { agentId: d.agent_id, ...childRecords(cl.conversation.transcript?.messages ?? []) };
    } catch {
      return skip("incomplete");
    }
    const input = buildReviewInput({
      permission: {
        kind: d.kind,
        target: d.target,
        command: d.command,
        scopes: d.scopes,
        ...(d.evidence !== undefined ? { evidence: { text: d.evidence, provenance: d.evidence_provenance ?? "unknown" } } : {}),
      },
      records: [...users.map((text): ReviewRecord => ({ role: "user", text })), ...records],
      ...(child !== undefined ? { child } : {}),
    });
    return input.ok ? { owner, parent, text: input.text } : skip(input.skip);
  }

  finished(rv: ActiveReview, c: Committed<"provider.response_finished_reported">): void {
    const verdict = decideReview(c.data.text, rv.adapter);
    const usage = c.data.usage;
    const l = this.deps.loops.find(rv.agentId);
    if (l && usage) this.deps.usage.account(rv.agentId, l, rv.model, usage, "summary");
    this.end(rv, {
      ...(verdict.outcome === "invalid" ? { outcome: "invalid", reason: verdict.note } : { outcome: verdict.outcome, label: verdict.label }),
      ...(usage ? { usage } : {}),
    });
  }

  /**
   * A provider whose server refuses its credentials cannot serve the classifier (SPEC-sandbox-reviewer,
   * "Selection"): unavailable, offered for setup again; any other error is transient.
   */
  failed(rv: ActiveReview, c: Committed<"provider.response_failed_reported">): void {
    this.end(rv, c.data.error_class === "authentication" ? { outcome: "unavailable", reason: `the ${rv.instance} provider's credentials were refused` } : { outcome: "failed", reason: `provider error (${c.data.error_class})` });
  }

  /** A provider connection ended: the reviews it was answering fail. */
  providerGone(instance: string, generation: number): void {
    for (const rv of [...this.reviews.values()]) {
      if (rv.instance === instance && rv.generation === generation) this.end(rv, { outcome: "failed", reason: `the ${instance} provider exited` });
    }
  }

  private end(rv: ActiveReview, a: ReviewAnswer): void {
    if (this.reviews.get(rv.promptId) !== rv) return;
    this.reviews.delete(rv.promptId);
    this.deps.router.close(rv);
    clearTimeout(rv.timer);
    // A delegated approval stands only while the parent's user directions are unchanged.
    if (a.outcome === "approved" && rv.delegated !== undefined && this.userDirected(rv.delegated.parent, rv.delegated.at)) {
      a = { outcome: "skipped", reason: "intent_changed", ...(a.usage !== undefined ? { usage: a.usage } : {}) };
    }
    const by = rv.delegated !== undefined ? { parent_id: rv.delegated.parent } : {};
    this.port.directToInstance(rv.requester, "sandbox.review_result", { review_id: rv.promptId, ...a, ...by, ...(a.reason !== undefined ? { reason: fitText(a.reason) } : {}) });
  }

  /** Whether a user prompt reached `agentId`'s journal at or after `from`. */
  private userDirected(agentId: string, from: number): boolean {
    const end = this.port.agentRecordCount(agentId);
    try {
      return this.port.agentRecords(agentId, from, end, JOURNAL_READ_STEP_BYTES).some((e) => e.name === "agent.prompt_submitted" && e.data.source === "human_ui");
    } catch {
      return true;
    }
  }

  /**
   * The ordinary user messages of an agent's whole journal, in order, never shortened: read on from
   * where the last review stopped, step by step (other work runs between steps).
   */
  private async userIntent(agentId: string, l: AgentLoop): Promise<readonly string[]> {
    const state = l.intent;
    const s = (state.read ??= { at: 0, unsent: new Map(), messages: [] });
    // One read at a time: a later review waits for the one under way, then reads what came after it.
    while (state.reading !== undefined) await state.reading.catch(() => {});
    const reading = (async () => {
      for (;;) {
        const end = this.port.agentRecordCount(agentId);
        if (s.at >= end) break;
        const records = this.port.agentRecords(agentId, s.at, end, JOURNAL_READ_STEP_BYTES);
        if (records.length === 0) break;
        for (const e of records) foldUserIntent(s, e);
        s.at += records.length;
        if (s.at < this.port.agentRecordCount(agentId)) await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    state.reading = reading;
    try {
      await reading;
    } finally {
      if (state.reading === reading) state.reading = undefined;
    }
    return [...s.messages];
  }
}

/** Folds one record into the user's messages: a user prompt counts once it entered the conversation (as the transcript's fold). */
function foldUserIntent(s: UserIntent, e: Event): void {
  switch (e.name) {
    case "agent.prompt_submitted":
      if (e.data.source === "human_ui") s.unsent.set(e.data.prompt_id, { text: e.data.text, steer: e.data.mode === "steer" });
      break;
    case "agent.prompt_started": {
      const own = e.data.prompt_id;
      for (const [id, p] of [...s.unsent]) {
        if (p.steer && id !== own) {
          s.messages.push(p.text);
          s.unsent.delete(id);
        }
      }
      const mine = s.unsent.get(own);
      if (e.data.round === 0 && mine) {
        s.messages.push(mine.text);
        s.unsent.delete(own);
      }
      break;
    }
    case "agent.outer_turn_finished":
    case "agent.prompt_cancelled":
      s.unsent.delete(e.data.prompt_id);
      break;
    case "agent.prompt_failed":
      if (e.data.prompt_id !== undefined) s.unsent.delete(e.data.prompt_id);
      break;
  }
}
