// The agent team's bounds (SPEC-agent-team, "Bounds"): children per agent, depth, agents per
// session and starts per minute, each refusal naming its bound and what to do instead.
import type { AgentLimits } from "../../generated/index.js";
import { childrenOf, depthOf, type AgentTreePort } from "./agent-tree.js";

/** The team bounds when harness.yaml's `agent_limits` sets none (SPEC-agent-team, "Bounds"). */
export const DEFAULT_AGENT_LIMITS: Readonly<Required<AgentLimits>> = Object.freeze({
  children_per_agent: 16,
  max_depth: 4,
  agents_per_session: 128,
  starts_per_minute: 60,
});
/** The window `starts_per_minute` counts starts in (ms). */
export const AGENT_START_WINDOW_MS = 60_000;

export class AgentBounds {
  private readonly limits: Readonly<Required<AgentLimits>>;
  /** When each agent start of the last AGENT_START_WINDOW_MS began (monotonic ms), oldest first. */
  private readonly recentStarts: number[] = [];

  constructor(
    private readonly port: AgentTreePort,
    limits: AgentLimits | undefined,
  ) {
    this.limits = { ...DEFAULT_AGENT_LIMITS, ...limits };
  }

  /** A start counted against `starts_per_minute` (in the same synchronous step as its refusal check). */
  counted(): void {
    this.recentStarts.push(performance.now());
  }

  /** Why `parent` may not start an agent now (SPEC-agent-team, "Bounds"), or undefined. */
  refusal(parent: string): string | undefined {
    const { children_per_agent, max_depth, agents_per_session, starts_per_minute } = this.limits;
    const how = "agent_start was refused, nothing was started";
    const depth = depthOf(this.port, parent) + 1;
    if (depth > max_depth) {
      return `${how}: the agent would be ${depth} levels below the user's agent, and agent_limits.max_depth is ${max_depth}; do the work yourself or hand it back to your parent`;
    }
    const children = childrenOf(this.port, parent).length;
    if (children >= children_per_agent) {
      return `${how}: you already started ${children} agents, and agent_limits.children_per_agent is ${children_per_agent}; give more work to the agents you have (agent_message) or wait for them`;
    }
    const agents = this.port.agentIds().length;
    if (agents >= agents_per_session) {
      return `${how}: the session already has ${agents} agents, and agent_limits.agents_per_session is ${agents_per_session}; reuse the agents you have`;
    }
    const now = performance.now();
    while (this.recentStarts.length > 0 && now - (this.recentStarts[0] as number) >= AGENT_START_WINDOW_MS) this.recentStarts.shift();
    if (this.recentStarts.length >= starts_per_minute) {
      const wait = Math.ceil((AGENT_START_WINDOW_MS - (now - (this.recentStarts[0] as number))) / 1000);
      return `${how}: ${this.recentStarts.length} agents were started in the last minute, and agent_limits.starts_per_minute is ${starts_per_minute}; try again in ${wait} s or reuse the agents you have`;
    }
    return undefined;
  }
}
