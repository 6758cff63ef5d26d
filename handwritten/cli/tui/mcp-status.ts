// The MCP servers on the status line (SPEC-mcp, "State"): each server's latest
// `mcp.server_state_reported` (current state, kept per instance for late subscribers) counted into
// `mcp READY/ALL`, with how many failed or are restarting. `:mcp` shows the details.
import type { Delivery } from "../session-client.js";
import type { StatusPart } from "./status.js";

export class McpStatus {
  /** Instance (`mcp-SERVER`) → its server's latest state. */
  private readonly states = new Map<string, string>();

  /** Takes a server's state report; true when the line changes. */
  deliver(d: Delivery): boolean {
    if (d.event.name !== "mcp.server_state_reported") return false;
    const instance = d.publisher.instance ?? "";
    if (this.states.get(instance) === d.event.data.state) return false;
    this.states.set(instance, d.event.data.state);
    return true;
  }

  /** The status line's part, or none in a session without MCP servers. */
  part(): StatusPart | undefined {
    if (this.states.size === 0) return undefined;
    const count = (state: string): number => [...this.states.values()].filter((s) => s === state).length;
    const [ready, failed, restarting] = [count("ready"), count("failed"), count("restarting")];
    const short = `mcp ${ready}/${this.states.size}`;
    const trouble = [...(failed > 0 ? [`${failed} failed`] : []), ...(restarting > 0 ? [`${restarting} restarting`] : [])];
    // A server in trouble stays on the line longer than one that is fine.
    return trouble.length === 0 ? { text: short, keep: 1 } : { text: `${short} (${trouble.join(", ")})`, keep: 6, short: `${short} ⚠` };
  }
}
