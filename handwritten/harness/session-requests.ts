// The session's own requests (consumers.ts, `session`; SPEC-session-lifecycle, SPEC-agent-lifecycle,
// SPEC-agent-metadata, SPEC-skills): agents joining the session (a UI's `ui.create_agent`, a child an
// agent starts), metadata requests, skill loads, and the session's title from its first human prompt.
import type { Committed, PublishOutcome } from "../bus/index.js";
import type { EventLog, StateStore } from "../store/index.js";
import { REQUESTS, type AgentStarted, type EventName, type EventPayloads, type Publisher, type UiCreateAgent, type UiSkillLoad } from "../../generated/index.js";
import { answerEvent, fitText, refusal } from "../protocol/index.js";
import { titleFromPrompt } from "../sessions/index.js";
import { mintId } from "./ids.js";
import { emptyAgentFold, type AgentFold } from "./agent-fold.js";
import type { AgentContext } from "./agent-context.js";
import type { AgentState } from "./harness.js";

export interface SessionRequestsPort {
  readonly sessionId: string;
  readonly projectRoot: string;
  readonly store: StateStore;
  /** The session's loaded agents (an agent is added here as it is created). */
  readonly agents: Map<string, AgentState>;
  readonly context: AgentContext;
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<PublishOutcome>;
  sendDirected<N extends EventName>(generation: number | undefined, name: N, data: EventPayloads[N]): boolean;
  /** Whether a connection of this generation is still attached. */
  isPeer(generation: number): boolean;
  /** The session's first human prompt was titled from (its answer may write a better title). */
  titledFrom(agentId: string, promptId: string, text: string): void;
  /** The agent exists: its initialization begins (agent-initialization.ts). */
  beginInitialization?(agentId: string): void;
}

/** An agent to create: who creates it, where it sits, and what it starts with. */
export interface NewAgent {
  agentId: string;
  creator: AgentStarted["creator"];
  createdBy?: AgentStarted["created_by"];
  createdAt?: number;
  ephemeral?: boolean;
  parentId?: string | undefined;
  role?: string | undefined;
  model?: string | undefined;
  displayName?: string | undefined;
  by?: Publisher;
}

export class SessionRequests {
  /** A title was asked for (set once, from the first human prompt; at open, from the session's summary). */
  titleRequested = false;

  constructor(private readonly port: SessionRequestsPort) {}

  /**
   * `ui.create_agent` from the exact live UI: the agent's journal (in memory for an ephemeral
   * agent), its start and its membership. The requester is always answered.
   */
  async onCreateAgent(c: Committed<"ui.create_agent">): Promise<void> {
    const requester = this.liveUi(c);
    if (requester === undefined) return;
    await answerEvent("ui.create_agent", c.data, (req) => this.createForUi(req, c.recordedAt), (name, data) => this.port.sendDirected(requester, name, data));
  }

  /** The exact live UI that published a request, or undefined: a stale or other publisher is not answered. */
  private liveUi(c: Committed<"ui.create_agent" | "ui.skill_load">): number | undefined {
    const requester = c.publisher.generation;
    return c.publisher.class === "ui_attached" && requester !== undefined && this.port.isPeer(requester) ? requester : undefined;
  }

  private async createForUi(req: UiCreateAgent, createdAt: number): Promise<{ agent_id: string }> {
    if (req.parent_id !== undefined && !this.port.agents.has(req.parent_id)) throw refusal(REQUESTS["ui.create_agent"], "unknown parent agent");
    const agentId = mintId("a");
    const problem = await this.createAgent({
      agentId,
      creator: "ui",
      createdAt,
      ephemeral: req.ephemeral === true,
      parentId: req.parent_id,
      role: req.role,
      model: req.model,
      displayName: req.display_name,
      by: { class: "ui_attached" },
    });
    if (problem !== undefined) throw refusal(REQUESTS["ui.create_agent"], problem);
    return { agent_id: agentId };
  }

  /** A child an agent started (`agent_start`): its creation record names the parent and the call; it inherits the parent's model and ephemerality. */
  startChild(o: { agentId: string; parentId: string; callId: string; role?: string; displayName?: string }): Promise<string | undefined> {
    const parent = this.port.agents.get(o.parentId)?.fold;
    return this.createAgent({
      agentId: o.agentId,
      parentId: o.parentId,
      creator: "agent",
      createdBy: { agent_id: o.parentId, call_id: o.callId },
      role: o.role,
      model: parent?.model,
      ephemeral: parent?.ephemeral === true,
      displayName: o.displayName,
    });
  }

  /**
   * Creates an agent: its journal (in memory for an ephemeral agent), `agent.started` at seq 0,
   * its membership and display name. The agent is in `agents` before the first await (a child's
   * parent can wait for it at once). An agent whose start or membership could not be recorded is
   * let go, its journal closed; returns why, or undefined.
   */
  async createAgent(o: NewAgent): Promise<string | undefined> {
    const { agentId } = o;
    const { agents, store } = this.port;
    const ephemeral = o.ephemeral === true;
    let log: EventLog;
    try {
      log = ephemeral ? store.openEphemeralAgent(agentId) : store.openAgent(agentId);
    } catch {
      return "could not create the agent journal";
    }
    // The fold knows at once what `agent.started` will say, so everything about an ephemeral agent
    // is classified as such from its first event.
    const fold: AgentFold = { ...emptyAgentFold(), created_at: o.createdAt ?? Date.now() * 1000, ephemeral };
    if (o.parentId !== undefined) fold.parent_id = o.parentId;
    const agent: AgentState = { id: agentId, fold, log };
    agents.set(agentId, agent);
    const letGo = (error: string) => {
      agents.delete(agentId);
      log.close();
      return error;
    };
    try {
      this.port.context.initialize(agent); // AGENTS.md and skills are frozen as the agent initializes
      const started: AgentStarted = { agent_id: agentId, session_id: this.port.sessionId, creator: o.creator, cwd: this.port.projectRoot, ephemeral };
      if (o.parentId !== undefined) started.parent_id = o.parentId;
      if (o.createdBy !== undefined) started.created_by = o.createdBy;
      if (o.role !== undefined) started.role = o.role;
      if (o.model !== undefined) started.model = o.model;
      if ((await this.port.publish("agent.started", started)).status !== "committed") return letGo("could not record the agent");
      if ((await this.port.publish("session.agent_loaded", { agent_id: agentId })).status !== "committed") {
        return letGo("could not record the agent in the session");
      }
      if (o.displayName !== undefined) {
        await this.port.publish("agent.metadata_set", { agent_id: agentId, key: "display_name", value: o.displayName, by: o.by ?? { class: "harness" } });
      }
      this.port.beginInitialization?.(agentId);
      // Idle until its first prompt: its journal holds no descriptor meanwhile (SPEC-journal-storage).
      log.rest();
      return undefined;
    } catch (err) {
      return letGo(fitText(`could not create the agent: ${err instanceof Error ? err.message : String(err)}`));
    }
  }

  /** Requests commit first; the exact live requester is revalidated before the canonical fact. */
  onMetadataRequest(c: Committed<"agent.metadata_request">): void {
    const gen = c.publisher.generation;
    if (gen === undefined || !this.port.isPeer(gen)) return; // stale generation: observation only
    const agentId = c.data.agent_id;
    if (!this.port.agents.has(agentId)) return;
    const by: Publisher = { class: c.publisher.class, generation: gen };
    if (c.publisher.instance !== undefined) by.instance = c.publisher.instance;
    if (c.publisher.kind !== undefined) by.kind = c.publisher.kind;
    void this.port.publish("agent.metadata_set", { agent_id: agentId, key: c.data.key, value: c.data.value, by });
  }

  /**
   * `ui.skill_load` (SPEC-skills): the exact live UI asked to load a skill of one agent's frozen
   * snapshot. The body (plus the user's text) becomes a human prompt; anything else is a directed
   * refusal and nothing is submitted.
   */
  async onSkillLoad(c: Committed<"ui.skill_load">): Promise<void> {
    const requester = this.liveUi(c);
    if (requester === undefined) return;
    await answerEvent("ui.skill_load", c.data, (req) => this.loadSkill(req), (name, data) => this.port.sendDirected(requester, name, data));
  }

  private async loadSkill(req: UiSkillLoad): Promise<{ prompt_id: string }> {
    const refuse = (why: string) => refusal(REQUESTS["ui.skill_load"], why);
    const agent = this.port.agents.get(req.agent_id);
    if (!agent) throw refuse(`unknown agent ${req.agent_id}`);
    const prompt = this.port.context.skillPrompt(agent, req.name, req.text);
    if ("refusal" in prompt) throw refuse(prompt.refusal);
    const promptId = mintId("p");
    const o = await this.port.publish("agent.prompt_submitted", {
      agent_id: agent.id,
      prompt_id: promptId,
      source: "human_ui",
      mode: req.mode ?? "queue",
      text: prompt.text,
    });
    if (o.status !== "committed") throw refuse("could not record the prompt");
    return { prompt_id: promptId };
  }

  /** The session's title, from the first line of its first human prompt. */
  async onPromptSubmitted(c: Committed<"agent.prompt_submitted">): Promise<void> {
    if (this.titleRequested || c.data.source !== "human_ui" || this.port.agents.get(c.data.agent_id)?.fold.ephemeral === true) return;
    const title = titleFromPrompt(c.data.text);
    if (title === undefined) return;
    this.titleRequested = true;
    this.port.titledFrom(c.data.agent_id, c.data.prompt_id, c.data.text);
    await this.port.publish("session.title_set", { title, origin: "first_prompt" });
  }
}
