// The harness's own model-callable tools and who may use them (SPEC-compaction, "Tool policy by
// role"; SPEC-agent-team): `compact` and the agent tools are on by default, `agent_compact` off; a role's policy revokes a tool by exact
// name, group or tag, and grants an off-by-default one the same way.
import type { RolePolicy } from "../../generated/index.js";
import type { ToolListing } from "./agent-context.js";
import { AGENT_TOOL_DEFINITIONS } from "./agent-tools.js";

export interface HarnessTool extends ToolListing {
  readonly group: string;
  readonly tags: readonly string[];
  /** Listed to every agent unless revoked; otherwise only when granted. */
  readonly onByDefault: boolean;
}

export const HARNESS_TOOLS: ReadonlyMap<string, HarnessTool> = new Map(
  [
    {
      name: "compact",
      description:
        "Compact your own conversation: the older part of it is replaced by a summary you write, so you can go on with more room. " +
        "Use it when the context is nearly full, between tasks. Optional instructions say what the summary must keep.",
      parameters: { type: "object", properties: { instructions: { type: "string", maxLength: 4096 } }, additionalProperties: false },
      group: "compaction",
      tags: ["context"],
      onByDefault: true,
    },
    {
      name: "agent_compact",
      description: "Compact another agent of this session: the older part of its conversation is replaced by a summary. The result comes once its compaction ended.",
      parameters: {
        type: "object",
        properties: { agent_id: { type: "string" }, instructions: { type: "string", maxLength: 4096 } },
        required: ["agent_id"],
        additionalProperties: false,
      },
      group: "compaction",
      tags: ["context", "cross_agent"],
      onByDefault: false,
    },
    // The agent tools (SPEC-agent-team): on by default, revoked by name, `group:agents` or tag.
    ...AGENT_TOOL_DEFINITIONS,
  ].map((t) => [t.name, t] as const),
);

function matches(entry: string, tool: HarnessTool | { name: string; group?: string; tags?: readonly string[] }): boolean {
  if (entry.startsWith("group:")) return "group" in tool && tool.group === entry.slice(6);
  if (entry.startsWith("tag:")) return (tool.tags ?? []).includes(entry.slice(4));
  return entry === tool.name;
}

/** Whether the agents a policy governs may use harness tool `name`. */
export function harnessToolAllowed(policy: RolePolicy | undefined, name: string): boolean {
  const tool = HARNESS_TOOLS.get(name);
  if (!tool) return false;
  if ((policy?.deny_tools ?? []).some((e) => matches(e, tool))) return false;
  return tool.onByDefault || (policy?.allow_tools ?? []).some((e) => matches(e, tool));
}

/** The policy of a role (`default` for an agent without one). */
export function policyOf(roles: Readonly<Record<string, RolePolicy>> | undefined, role: string | undefined): RolePolicy | undefined {
  return roles?.[role ?? "default"];
}
