// Session titles written by a model (SPEC-session-lifecycle, "Titles"): with `title_model` set, the
// answer to the session's first human prompt is followed by one tool-less round 0 to that model,
// whose reply becomes the title; without a usable reply the first prompt's line stays the title.
import type { Committed } from "../bus/index.js";
import type { EventName, EventPayloads } from "../../generated/index.js";
import { mintId } from "./ids.js";
import { fitText } from "../protocol/text.js";
import type { ProviderCall } from "../protocol/provider-request.js";
import { titleFromPrompt } from "../sessions/index.js";
import type { AgentLoop, AgentLoops } from "./agent-loop-state.js";
import type { Round, RoundOwner, RoundRouter } from "./round-router.js";
import type { ModelRegistry } from "./model-registry.js";
import type { UsageMeter } from "./usage.js";

/** How long a title may take before the first-prompt title simply stays. */
export const TITLE_TIMEOUT_MS = 30_000;

const TITLE_SYSTEM_PROMPT =
  "You name conversations. Reply with a title for the conversation below: at most eight words, plain text on one line, " +
  "no quotes, no punctuation at the end, in the language of the user's request. Reply with the title only.";

export interface TitlesPort {
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<boolean>;
  directToInstance<N extends EventName>(instance: string, name: N, data: EventPayloads[N]): boolean;
  sendProviderCall(instance: string, generation: number, call: ProviderCall): Promise<string | undefined>;
  generationOf(instance: string): number | undefined;
  /** The model that writes a new session's title after its first answer (`title_model`), if any. */
  titleModel?(): string | undefined;
}

/** The titles' collaborators. */
export interface TitlesDeps {
  readonly loops: AgentLoops;
  readonly router: RoundRouter;
  readonly models: Pick<ModelRegistry, "route">;
  readonly usage: Pick<UsageMeter, "account">;
  background(work: Promise<unknown>): void;
}

/** The title request of a session: one tool-less round 0 whose prompt id is minted for it. */
interface ActiveTitle extends Round {
  readonly round: 0;
  readonly agentId: string;
  /** `title_model` as configured (what a notice names). */
  readonly wanted: string;
  readonly model: string;
  readonly timer: NodeJS.Timeout;
}

export class Titles implements RoundOwner<ActiveTitle> {
  /** The first human prompt whose answer the session's title is written from. */
  private titleFor: { agentId: string; promptId: string; text: string } | undefined;
  private title: ActiveTitle | undefined;

  constructor(
    private readonly port: TitlesPort,
    private readonly deps: TitlesDeps,
  ) {}

  /** The session's first human prompt (the harness titled the session from it): its answer will be followed by a title request. */
  titleFromAnswerOf(agentId: string, promptId: string, text: string): void {
    if (this.port.titleModel?.() === undefined || this.titleFor !== undefined) return;
    this.titleFor = { agentId, promptId, text };
  }

  /** A turn completed: when it answered the first prompt, the title is asked for. */
  turnCompleted(promptId: string, l: AgentLoop): void {
    if (this.titleFor?.promptId === promptId) this.deps.background(this.requestTitle(l));
  }

  /** One tool-less round to the title model: the first prompt and its answer in, a title out. */
  private async requestTitle(l: AgentLoop): Promise<void> {
    const ask = this.titleFor;
    const wanted = this.port.titleModel?.();
    if (ask === undefined || wanted === undefined || this.title !== undefined) return;
    const answer = [...(l.conversation.transcript?.messages ?? [])].reverse().find((m) => m.role === "assistant" && (m.text ?? "") !== "")?.text ?? "";
    const target = this.deps.models.route(wanted, true);
    const generation = typeof target === "object" && "instance" in target ? this.port.generationOf(target.instance) : undefined;
    if (typeof target !== "object" || !("instance" in target) || generation === undefined) return this.titleFailed(wanted, "no running provider serves it");
    const id = mintId("c");
    const timer = setTimeout(() => {
      if (this.title?.promptId !== id) return;
      this.port.directToInstance(target.instance, "provider.cancel_request", { prompt_id: id, round: 0 });
      this.titleFailed(wanted, `no answer within ${TITLE_TIMEOUT_MS / 1000} s`);
    }, TITLE_TIMEOUT_MS);
    timer.unref?.();
    this.title = { promptId: id, round: 0, agentId: ask.agentId, wanted, model: target.model, instance: target.instance, generation, timer };
    this.deps.router.start(this.title, this);
    const clip = (s: string) => (s.length > 4000 ? `${s.slice(0, 4000)}…` : s);
    const problem = await this.port.sendProviderCall(target.instance, generation, {
      agent_id: ask.agentId,
      prompt_id: id,
      round: 0,
      model: target.model,
      system: TITLE_SYSTEM_PROMPT,
      messages: [{ role: "user", text: `The user asked:\n${clip(ask.text)}\n\nThe answer began:\n${clip(answer)}` }],
      tools: [],
    });
    if (problem !== undefined && this.title?.promptId === id) this.titleFailed(wanted, "the request could not be sent");
  }

  async finished(ti: ActiveTitle, c: Committed<"provider.response_finished_reported">): Promise<void> {
    this.endTitle();
    const l = this.deps.loops.find(ti.agentId);
    if (l && c.data.usage) this.deps.usage.account(ti.agentId, l, ti.model, c.data.usage, "summary");
    // Cleaned like a prompt's title; quotes a model adds anyway are dropped. Nothing usable: the first-prompt title stays.
    const title = titleFromPrompt(c.data.text.replace(/^[\s"'“”‘’`*#]+|[\s"'“”‘’`*.]+$/g, ""));
    if (title === undefined) return this.titleFailed(ti.wanted, "an empty answer");
    await this.port.publish("session.title_set", { title, origin: "model" });
  }

  failed(ti: ActiveTitle, c: Committed<"provider.response_failed_reported">): void {
    this.titleFailed(ti.wanted, `provider error (${c.data.error_class})`);
  }

  /** The first-prompt title stays; the user is told once why the configured model wrote none. */
  private titleFailed(wanted: string, why: string): void {
    this.endTitle();
    void this.port.publish("harness.notice", { level: "info", text: fitText(`title_model ${wanted} wrote no session title (${why}); the first prompt's line stays the title`), mandatory: false });
  }

  private endTitle(): void {
    if (this.title) {
      clearTimeout(this.title.timer);
      this.deps.router.close(this.title);
    }
    this.title = undefined;
  }
}
