// Prompt intake (SPEC-agent-lifecycle, SPEC-ui-commands): requests that become an agent's durable
// facts before the turn loop sees them: a UI's human prompt and an extension's internal prompt
// become `agent.prompt_submitted`, a UI's model selection becomes `agent.model_set`.
import type { Committed } from "../bus/index.js";
import type { EventName, EventPayloads } from "../../generated/index.js";
import { mintId } from "./ids.js";

/** A configured instance name (InstanceName in spec/common.tsp). */
const INSTANCE_NAME = /^[a-z][a-z0-9_-]{0,63}$/;

export interface PromptIntakePort {
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<boolean>;
  /** A UI's human prompt was admitted for the agent (its navigation becomes `active`). */
  humanPromptAdmitted?(agentId: string): void;
  generationOf(instance: string): number | undefined;
  hasAgent(agentId: string): boolean;
}

export class PromptIntake {
  constructor(private readonly port: PromptIntakePort) {}

  /** A human prompt from an attached UI becomes the durable submission fact. */
  onUiPromptSubmit(c: Committed<"ui.prompt_submit">): void {
    const agentId = c.data.agent_id;
    if (!this.port.hasAgent(agentId)) return;
    void this.port
      .publish("agent.prompt_submitted", { agent_id: agentId, prompt_id: mintId("p"), source: "human_ui", mode: c.data.mode, text: c.data.text, ...(c.data.literal === true ? { literal: true } : {}) })
      // Admitted from a UI's intake: its agent is the one the user follows (SPEC-agent-navigation).
      .then((admitted) => {
        if (admitted && c.publisher.class === "ui_attached") this.port.humanPromptAdmitted?.(agentId);
      });
  }

  onInternalPromptRequest(c: Committed<"agent.internal_prompt_request">): void {
    const agentId = c.data.agent_id;
    const p = c.publisher;
    if (!this.port.hasAgent(agentId) || p.instance === undefined || this.port.generationOf(p.instance) !== p.generation) return;
    // A restricted prompt is a turn of its own: steering it into another turn would restrict that one.
    const only = c.data.only_tools;
    void this.port.publish("agent.prompt_submitted", {
      agent_id: agentId,
      prompt_id: mintId("p"),
      source: "extension",
      mode: only !== undefined ? "queue" : c.data.mode,
      text: c.data.text,
      submitter: p.instance,
      ...(only !== undefined ? { only_tools: only } : {}),
    });
  }

  /**
   * An external-message bridge's report (SPEC-slack, "Reports"): the raw claim stays on the
   * committed report; the fact is derived only when the claim is a valid instance name equal to the
   * captured configured identity, and then stamped from that identity, never from the claim.
   */
  onExternalMessageReported(c: Committed<"agent.external_message_reported">): void {
    const p = c.publisher;
    const claim = c.data.publisher;
    if (p.instance === undefined || !INSTANCE_NAME.test(claim) || claim !== p.instance) return;
    if (!this.port.hasAgent(c.data.agent_id) || this.port.generationOf(p.instance) !== p.generation) return;
    void this.port.publish("agent.prompt_submitted", { agent_id: c.data.agent_id, prompt_id: mintId("p"), source: "extension", mode: "queue", text: c.data.text, submitter: p.instance });
  }

  onModelSelect(c: Committed<"ui.model_select">): void {
    const agentId = c.data.agent_id;
    if (!this.port.hasAgent(agentId)) return;
    void this.port.publish("agent.model_set", { agent_id: agentId, model: c.data.model });
  }
}
