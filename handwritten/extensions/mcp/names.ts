// What an MCP server's tools become in tau (SPEC-mcp, "Tools"): a tau tool name under the instance's
// `mcp__SERVER__` prefix, and an argument schema tau can offer. A tool that cannot be offered is
// reported by name with the reason, never dropped silently.
import type { McpConfinement } from "../../../generated/index.js";
import { MCP_MAX_DESCRIPTION_CHARS, MCP_MAX_SCHEMA_BYTES, MCP_MAX_TOOL_NAME_CHARS } from "./limits.js";

/** The tool prefix of server `server`'s instance: `mcp__SERVER__`. */
export function mcpToolPrefix(server: string): string {
  return `mcp__${server}__`;
}

/**
 * The tau name of an MCP tool (without the prefix): camelCase split at its humps, lowercased, every
 * other character than `a-z0-9_` turned to `_`. `getTinyImage` → `get_tiny_image`, `get-sum` → `get_sum`.
 */
export function tauToolName(mcpName: string): string {
  const snake = mcpName.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
  return snake.replace(/[^a-z0-9_]/g, "_");
}

/** One MCP tool as a server lists it (the parts used here). */
export interface ListedTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: unknown;
  readonly annotations?: { readonly readOnlyHint?: boolean; readonly title?: string };
}

export interface OfferedTool {
  /** The tau name, without the instance prefix. */
  readonly name: string;
  /** The server's own name for it. */
  readonly mcpName: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  /** The server says the tool changes nothing (`readOnlyHint`): it may relax asking, never widen access. */
  readonly readOnly: boolean;
}

export interface ToolPlan {
  readonly offered: OfferedTool[];
  /** `TOOL: reason`, one per tool that is not offered. */
  readonly refused: string[];
}

/** Which of a server's listed tools tau offers, and why each other one is not. */
export function planTools(server: string, listed: readonly ListedTool[], maxTools: number): ToolPlan {
  const offered: OfferedTool[] = [];
  const refused: string[] = [];
  const taken = new Map<string, string>();
  const prefix = mcpToolPrefix(server);
  for (const tool of listed) {
    const name = tauToolName(tool.name);
    const why = nameProblem(prefix, name) ?? schemaProblem(tool.inputSchema);
    if (why !== undefined) {
      refused.push(`${tool.name}: ${why}`);
      continue;
    }
    const other = taken.get(name);
    if (other !== undefined) {
      refused.push(`${tool.name}: its tau name ${prefix}${name} is already taken by ${other}`);
      continue;
    }
    if (offered.length >= maxTools) {
      refused.push(`${tool.name}: the server offers more than ${maxTools} tools`);
      continue;
    }
    taken.set(name, tool.name);
    offered.push({ name, mcpName: tool.name, description: describe(tool), parameters: tool.inputSchema as Record<string, unknown>, readOnly: tool.annotations?.readOnlyHint === true });
  }
  return { offered, refused };
}

function nameProblem(prefix: string, name: string): string | undefined {
  if (!/^[a-z0-9_]+$/.test(name)) return "its name has no usable characters";
  if (prefix.length + name.length > MCP_MAX_TOOL_NAME_CHARS) return `${prefix}${name} is longer than ${MCP_MAX_TOOL_NAME_CHARS} characters`;
  return undefined;
}

/** Why an input schema cannot be offered: tau offers object schemas of bounded size. */
export function schemaProblem(schema: unknown): string | undefined {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return "its input schema is not a JSON object";
  if ((schema as { type?: unknown }).type !== "object") return 'its input schema is not of type "object"';
  let text: string;
  try {
    text = JSON.stringify(schema);
  } catch {
    return "its input schema cannot be written as JSON";
  }
  if (Buffer.byteLength(text) > MCP_MAX_SCHEMA_BYTES) return `its input schema is larger than ${MCP_MAX_SCHEMA_BYTES} bytes`;
  return undefined;
}

/** The description the model reads: the server's words, marked as coming from the server, bounded. */
function describe(tool: ListedTool): string {
  const title = tool.title ?? tool.annotations?.title;
  const text = [title, tool.description].filter((t): t is string => typeof t === "string" && t !== "").join(": ");
  const framed = `(MCP tool ${JSON.stringify(tool.name)}; its description comes from the server) ${text}`;
  return framed.length > MCP_MAX_DESCRIPTION_CHARS ? `${framed.slice(0, MCP_MAX_DESCRIPTION_CHARS - 1)}…` : framed;
}

/** Whether a call of `tool` is asked of the user first, by the entry's `ask` (its default: see `askOf`). */
export function callNeedsAsking(ask: "never" | "writes" | "always", tool: Pick<OfferedTool, "readOnly">): boolean {
  return ask === "always" || (ask === "writes" && !tool.readOnly);
}

/**
 * The entry's `ask`, or its default (SPEC-mcp, "Asking before a call"): a server that runs inside
 * the sandbox has its effects confined by it, so it is not asked about; one that runs elsewhere or
 * with the user's rights — for whatever reason: its entry, `--no-sandbox`, `enabled: false` in
 * sandbox.yaml — or whose confinement is not known yet, is asked about each call of a tool that
 * does not say it only reads. `confinement` is how the server runs as its start found it.
 */
export function askOf(def: { ask?: "never" | "writes" | "always" }, confinement: McpConfinement | undefined): "never" | "writes" | "always" {
  if (def.ask !== undefined) return def.ask;
  return confinement === "sandboxed" ? "never" : "writes";
}
