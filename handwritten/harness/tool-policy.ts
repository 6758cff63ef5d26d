// The harness's own model-callable tools, and who may use any tool (SPEC-tool-routing, "Tool policy
// by role"): `compact` and the agent tools are on by default, `agent_compact` and the peer tools
// off; every extension tool is on by default. A role's policy revokes a tool by exact name, group,
// tag or extension instance, and grants an off-by-default one the same way; a deny wins.
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

/** What a role's policy is judged on: a tool's name, group, tags and the extension instance that registered it. */
export interface PolicySubject {
  readonly name: string;
  readonly group?: string | undefined;
  readonly tags?: readonly string[] | undefined;
  /** The extension instance that registered it; undefined for the harness's own tools. */
  readonly owner?: string | undefined;
  /** Offered unless revoked; otherwise only when granted (every extension tool is on by default). */
  readonly onByDefault: boolean;
}

function matches(entry: string, tool: PolicySubject): boolean {
  if (entry.startsWith("group:")) return tool.group !== undefined && tool.group === entry.slice(6);
  if (entry.startsWith("tag:")) return (tool.tags ?? []).includes(entry.slice(4));
  if (entry.startsWith("ext:")) return tool.owner !== undefined && tool.owner === entry.slice(4);
  return entry === tool.name;
}

/**
 * Why the agents a policy governs may not use a tool (`deny_tools: ENTRY`, or that it is off by
 * default and not granted), or undefined when they may: a deny wins over every grant.
 */
export function withheldBy(policy: RolePolicy | undefined, tool: PolicySubject): string | undefined {
  const denied = (policy?.deny_tools ?? []).find((e) => matches(e, tool));
  if (denied !== undefined) return `deny_tools: ${denied}`;
  if (tool.onByDefault || (policy?.allow_tools ?? []).some((e) => matches(e, tool))) return undefined;
  return "it is off by default and allow_tools does not grant it";
}

/** Whether the agents a policy governs may use harness tool `name`. */
export function harnessToolAllowed(policy: RolePolicy | undefined, name: string): boolean {
  const tool = HARNESS_TOOLS.get(name);
  return tool !== undefined && withheldBy(policy, tool) === undefined;
}

/** The policy of a role (`default` for an agent without one). */
export function policyOf(roles: Readonly<Record<string, RolePolicy>> | undefined, role: string | undefined): RolePolicy | undefined {
  return roles?.[role ?? "default"];
}
