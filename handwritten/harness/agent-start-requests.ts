// Start-agent requests from extensions (SPEC-extension-declarations, "Start-agent requests"): the
// raw request has committed; only the exact live connection of the session it names is answered.
// A request id an instance used before answers with the agent it started (a restarted process
// rebinds to it); otherwise the role and parent are checked and the agent is created.
import type { Committed } from "../bus/index.js";
import { REQUESTS, type AgentStartRequest, type EventName, type EventPayloads, type RolePolicy } from "../../generated/index.js";
import { answerEvent, refusal } from "../protocol/index.js";
import { mintId } from "./ids.js";
import type { AgentState } from "./harness.js";
import type { NewAgent } from "./session-requests.js";

/** Request ids remembered per session, oldest forgotten first. */
export const START_REQUESTS_KEPT = 4096;

export interface AgentStartPort {
  readonly sessionId: string;
  readonly agents: ReadonlyMap<string, AgentState>;
  isLive(instance: string, generation: number): boolean;
  roles(): Readonly<Record<string, RolePolicy>> | undefined;
  createAgent(o: NewAgent): Promise<string | undefined>;
  sendDirected<N extends EventName>(generation: number | undefined, name: N, data: EventPayloads[N]): boolean;
}

export class AgentStartRequests {
  /** `instance\0request_id` → the agent it started. */
  private readonly started = new Map<string, string>();

  constructor(private readonly port: AgentStartPort) {}

  async onStartRequest(c: Committed<"agent.start_request">): Promise<void> {
    const p = c.publisher;
    if (p.class !== "extension" || p.instance === undefined || p.generation === undefined || !this.port.isLive(p.instance, p.generation)) return;
    if (c.data.session_id !== this.port.sessionId) return; // another session's: observation only
    const { instance, generation } = p;
    await answerEvent("agent.start_request", c.data, (req) => this.start(instance, req), (name, data) => this.port.sendDirected(generation, name, data));
  }

  private async start(instance: string, req: AgentStartRequest): Promise<{ agent_id: string }> {
    const refuse = (why: string) => refusal(REQUESTS["agent.start_request"], why);
    const key = `${instance}\0${req.request_id}`;
    const earlier = this.started.get(key);
    if (earlier !== undefined) return { agent_id: earlier };
    if (req.role !== undefined && !Object.hasOwn(this.port.roles() ?? {}, req.role)) throw refuse(`unknown role ${JSON.stringify(req.role.slice(0, 64))}`);
    const parent = req.parent_id === undefined ? undefined : this.port.agents.get(req.parent_id);
    if (req.parent_id !== undefined && parent === undefined) throw refuse(`unknown parent agent ${req.parent_id}`);
    const agentId = mintId("a");
    this.remember(key, agentId); // before the first await: a duplicate arriving meanwhile rebinds
    const problem = await this.port.createAgent({
      agentId,
      creator: "extension",
      parentId: req.parent_id,
      role: req.role,
      model: parent?.fold.model,
      ephemeral: parent?.fold.ephemeral === true,
      displayName: req.display_name,
      by: { class: "extension", instance },
    });
    if (problem !== undefined) {
      this.started.delete(key);
      throw refuse(problem);
    }
    return { agent_id: agentId };
  }

  private remember(key: string, agentId: string): void {
    this.started.set(key, agentId);
    if (this.started.size > START_REQUESTS_KEPT) this.started.delete(this.started.keys().next().value as string);
  }
}
