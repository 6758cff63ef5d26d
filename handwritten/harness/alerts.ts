// What an agent is told at its next round's start, as steered harness prompts: the context-size
// alerts its context use crossed (SPEC-compaction), the sandbox's newest change of state
// (SPEC-sandbox, "The model's view") and the tools that joined or left since its previous prompt
// (SPEC-tool-routing, "Tools that join or leave").
import type { Committed } from "../bus/index.js";
import type { ContextAlert, EventName, EventPayloads } from "../../generated/index.js";
import { mintId } from "./ids.js";
import type { AgentLoop, AgentLoops } from "./agent-loop-state.js";
import type { ModelRegistry } from "./model-registry.js";

export interface AlertsPort {
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<boolean>;
  /** `alerts`: the configured alerts (`context_alerts`), by rising threshold. */
  readonly compaction: { readonly alerts: readonly ContextAlert[] };
}

/** Most tool names one change names of each kind. */
const TOOLS_NAMED = 24;

export class Alerts {
  /** The last sandbox state reported (SPEC-sandbox), once one was. */
  private sandboxState: string | undefined;

  constructor(
    private readonly port: AlertsPort,
    private readonly models: Pick<ModelRegistry, "contextWindow">,
    private readonly loops: AgentLoops,
  ) {}

  /**
   * The sandbox of the shell commands changed state: every agent learns it at its next round's start.
   * The first state a daemon hears is its starting point, not a change; only the newest change is delivered.
   */
  onSandboxState(c: Committed<"sandbox.state_reported">): void {
    const previous = this.sandboxState;
    if (c.data.state === "pending") return;
    this.sandboxState = c.data.state;
    if (previous === undefined || previous === c.data.state) return;
    const text = sandboxStateText(c.data.state, c.data.reason, c.data.fix);
    for (const l of this.loops.values()) l.alerts.sandbox = text;
  }

  /**
   * A prompt's tools were fixed: against the agent's previous prompt, the tools that joined or left
   * are told at this round's start (a prompt restricted to some tools neither compares nor counts).
   */
  offered(l: AgentLoop, names: readonly string[], restricted: boolean): void {
    if (restricted) return;
    const previous = l.alerts.offered;
    const now = new Set(names);
    l.alerts.offered = now;
    if (previous === undefined) return;
    const joined = names.filter((n) => !previous.has(n));
    const left = [...previous].filter((n) => !now.has(n));
    if (joined.length === 0 && left.length === 0) return;
    const list = (xs: readonly string[]): string => (xs.length > TOOLS_NAMED ? `${xs.slice(0, TOOLS_NAMED).join(", ")} and ${xs.length - TOOLS_NAMED} more` : xs.join(", "));
    const parts = [...(joined.length > 0 ? [`now available: ${list(joined)}`] : []), ...(left.length > 0 ? [`no longer available: ${list(left)}`] : [])];
    l.alerts.tools = `The tools you can call changed since your previous prompt (an extension or MCP server started, restarted or stopped): ${parts.join("; ")}.`;
  }

  /** Alerts whose threshold this response's context use reached for the first time since they armed. */
  weigh(l: AgentLoop, model: string): void {
    const window = this.models.contextWindow(model);
    if (window === undefined) return;
    for (const a of this.port.compaction.alerts) {
      if (l.usage.contextTokens >= a.threshold * window && !l.alerts.crossed.has(a.name)) {
        l.alerts.crossed.add(a.name);
        l.alerts.queued.push(a);
      }
    }
  }

  /** After a compaction: alerts the context use is now below re-arm, and are no longer queued. */
  rearm(l: AgentLoop, model: string): void {
    const window = this.models.contextWindow(model);
    if (window === undefined) return;
    const s = l.alerts;
    for (const a of this.port.compaction.alerts) if (l.usage.contextTokens < a.threshold * window) s.crossed.delete(a.name);
    s.queued = s.queued.filter((a) => s.crossed.has(a.name));
  }

  /** What waits for this round's start enters now, as steered harness prompts (SPEC-compaction). */
  async deliver(agentId: string, l: AgentLoop): Promise<void> {
    const sandbox = l.alerts.sandbox;
    l.alerts.sandbox = undefined;
    if (sandbox !== undefined) {
      await this.port.publish("agent.prompt_submitted", { agent_id: agentId, prompt_id: mintId("p"), source: "harness_internal", mode: "steer", text: sandbox, internal_kind: "sandbox_state" });
    }
    const tools = l.alerts.tools;
    l.alerts.tools = undefined;
    if (tools !== undefined) {
      await this.port.publish("agent.prompt_submitted", { agent_id: agentId, prompt_id: mintId("p"), source: "harness_internal", mode: "steer", text: tools, internal_kind: "tools_changed" });
    }
    for (const a of l.alerts.queued.splice(0)) {
      const pct = Math.round(a.threshold * 100);
      await this.port.publish("agent.prompt_submitted", {
        agent_id: agentId,
        prompt_id: mintId("p"),
        source: "harness_internal",
        mode: "steer",
        text: a.text ?? `Context-size alert ${a.name}: this conversation uses ${pct}% or more of the model's context window. Consider finishing the current step and calling compact.`,
        internal_kind: "context_size_alert",
        alert: a.name,
      });
    }
  }
}

/** What an agent is told when the sandbox of its shell commands changes state. */
export function sandboxStateText(state: string, reason?: string, fix?: string): string {
  const why = reason ? ` (${reason})` : "";
  switch (state) {
    case "active":
      return "[sandbox] Your shell commands run in the sandbox again: writes outside the workspace, reads of protected files and connections to hosts not on the allowlist are blocked or need the user's approval.";
    case "suspended":
      return `[sandbox] The user suspended the sandbox${why}: your shell commands now run with the user's full rights until it is switched back on. Take the same care as before.`;
    case "bypassed":
      return `[sandbox] The sandbox is bypassed${why}: your shell commands run with the user's full rights.`;
    default:
      return `[sandbox] The sandbox is blocked${why}: your shell commands are refused until the user fixes it${fix ? ` (${fix})` : ""}. Do not try to work around it.`;
  }
}
