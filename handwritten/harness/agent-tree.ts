// The agent team's tree (SPEC-agent-team): the parent edges of each agent's valid creation record,
// read from the folds — an agent's children, its depth below the agent no agent started, and
// whether it descends from another (for bounds and for cancels that reach descendants only).
import type { AgentFold } from "./agent-fold.js";

/** What the tree is read from (a part of the team's port). */
export interface AgentTreePort {
  fold(agentId: string): AgentFold | undefined;
  agentIds(): readonly string[];
}

/** The loaded agents `parent` started. */
export function childrenOf(port: AgentTreePort, parent: string): string[] {
  return port.agentIds().filter((id) => port.fold(id)?.parent_id === parent);
}

/** How many parents up an agent's chain goes to one that no agent started (0 for that one). */
export function depthOf(port: AgentTreePort, agentId: string): number {
  const seen = new Set<string>();
  let depth = 0;
  for (let at = port.fold(agentId)?.parent_id; at !== undefined && !seen.has(at); at = port.fold(at)?.parent_id) {
    seen.add(at);
    depth++;
  }
  return depth;
}

/** Whether `ancestor` is up `agentId`'s parent chain. */
export function isDescendant(port: AgentTreePort, agentId: string, ancestor: string): boolean {
  const seen = new Set<string>();
  for (let at = port.fold(agentId)?.parent_id; at !== undefined && !seen.has(at); at = port.fold(at)?.parent_id) {
    if (at === ancestor) return true;
    seen.add(at);
  }
  return false;
}
