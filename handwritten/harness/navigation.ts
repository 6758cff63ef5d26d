// Navigation modes (SPEC-agent-navigation): how the attached UIs present each agent. UI control
// state only: held in memory, never published or journaled, forgotten with the process; it
// authorizes nothing. Only the daemon's UI intake and the admitted human prompt write it.
import type { NavigationMode } from "../../generated/index.js";

export class Navigation {
  /** Modes set by a UI (or a human prompt); an agent without one has its default. */
  private readonly set = new Map<string, NavigationMode>();

  constructor(private readonly creatorOf: (agentId: string) => string | undefined | null) {}

  /** The agent's mode, or undefined when it is not loaded. */
  modeOf(agentId: string): NavigationMode | undefined {
    const creator = this.creatorOf(agentId);
    if (creator === null) {
      this.set.delete(agentId);
      return undefined;
    }
    return this.set.get(agentId) ?? (creator === "ui" ? "active" : "active_auto");
  }

  /** An attached UI's request: the mode the loaded agent has now, or undefined when it is not loaded. */
  request(agentId: string, mode: NavigationMode): NavigationMode | undefined {
    if (this.creatorOf(agentId) === null) return undefined;
    this.set.set(agentId, mode);
    return mode;
  }

  /** A UI's human prompt was admitted for the agent: it is the one the user follows. */
  humanPromptAdmitted(agentId: string): void {
    if (this.creatorOf(agentId) !== null) this.set.set(agentId, "active");
  }
}
