// The harness's agent tools as the model sees them (SPEC-agent-team), and the rules for what an
// agent may write about itself or another agent's words look like in a prompt: work-status titles
// bounded to one line of 160 bytes, untrusted text escaped, another agent's words exact-close framed.

/** A tool the harness answers itself (listed with the extensions' tools). */
export interface AgentToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  readonly group: string;
  readonly tags: readonly string[];
  readonly onByDefault: boolean;
}

const ID = { type: "string", maxLength: 128 };

export const AGENT_TOOL_DEFINITIONS: readonly AgentToolDefinition[] = [
  {
    name: "agent_start",
    description:
      "Start a helper agent (a child of yours) on a task. It runs in parallel with its own conversation and tools; the result names its id. " +
      "Use agent_wait to get its answer. Optional: a role (one your instructions list) and a display name.",
    parameters: {
      type: "object",
      properties: { task: { type: "string", maxLength: 65536 }, role: { type: "string", maxLength: 64 }, display_name: { type: "string", maxLength: 128 } },
      required: ["task"],
      additionalProperties: false,
    },
    group: "agents",
    tags: ["delegation"],
    onByDefault: true,
  },
  {
    name: "agent_message",
    description: "Send a message to another agent of this session; it reads it as its next prompt.",
    parameters: { type: "object", properties: { agent_id: ID, text: { type: "string", maxLength: 65536 } }, required: ["agent_id", "text"], additionalProperties: false },
    group: "agents",
    tags: ["delegation"],
    onByDefault: true,
  },
  {
    name: "agent_wait",
    description:
      "Wait until agents (by default: all your children) have finished their work, then get each one's latest answer. " +
      "Waits at most timeout_seconds (default 300, at most 600); agents still running then are reported as running.",
    parameters: {
      type: "object",
      properties: { agent_ids: { type: "array", items: ID, maxItems: 64 }, timeout_seconds: { type: "number", minimum: 1, maximum: 600 } },
      additionalProperties: false,
    },
    group: "agents",
    tags: ["delegation"],
    onByDefault: true,
  },
  {
    name: "agent_cancel",
    description: "Cancel the current work of an agent you started (directly or through your children), and of the agents it started.",
    parameters: { type: "object", properties: { agent_id: ID }, required: ["agent_id"], additionalProperties: false },
    group: "agents",
    tags: ["delegation"],
    onByDefault: true,
  },
  {
    name: "agent_watch",
    description: "Watch another agent: each time it finishes a turn you get a prompt with its answer. Watches may not form a cycle.",
    parameters: { type: "object", properties: { agent_id: ID }, required: ["agent_id"], additionalProperties: false },
    group: "agents",
    tags: ["watch"],
    onByDefault: true,
  },
  {
    name: "agent_unwatch",
    description: "Stop watching an agent.",
    parameters: { type: "object", properties: { agent_id: ID }, required: ["agent_id"], additionalProperties: false },
    group: "agents",
    tags: ["watch"],
    onByDefault: true,
  },
  {
    name: "work_status",
    description: "Say what you are doing now: a phase and a one-line title (at most 160 bytes), shown to the user and other agents.",
    parameters: {
      type: "object",
      properties: { phase: { type: "string", enum: ["planning", "working", "waiting", "blocked", "reviewing", "done"] }, title: { type: "string", maxLength: 160 } },
      required: ["phase", "title"],
      additionalProperties: false,
    },
    group: "agents",
    tags: ["status"],
    onByDefault: true,
  },
  // Peer messaging (SPEC-peer-messaging): off by default, granted by role policy (`tag:peer`).
  {
    name: "peer_message",
    description:
      "Send a message to an agent of another running tau session of this user, addressed SESSION_ID/AGENT_ID (peer_list shows them). " +
      "It reads it as a framed message from you, not as its user's words. Each session admits only a few messages per minute from another.",
    parameters: {
      type: "object",
      properties: { to: { type: "string", maxLength: 257 }, text: { type: "string", maxLength: 65536 } },
      required: ["to", "text"],
      additionalProperties: false,
    },
    group: "peers",
    tags: ["peer"],
    onByDefault: false,
  },
  {
    name: "peer_list",
    description: "List the other running tau sessions of this user and the agents each lets you message with peer_message.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    group: "peers",
    tags: ["peer"],
    onByDefault: false,
  },
];

export const AGENT_TOOL_NAMES: ReadonlySet<string> = new Set(AGENT_TOOL_DEFINITIONS.map((t) => t.name));

export const WORK_PHASES = ["planning", "working", "waiting", "blocked", "reviewing", "done"] as const;
export type WorkPhaseName = (typeof WORK_PHASES)[number];

/** Most UTF-8 bytes of a work-status title. */
export const WORK_TITLE_MAX_BYTES = 160;

// eslint-disable-next-line no-control-regex
const LINE_BREAKING = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Why a work-status title is not one canonical line of at most 160 bytes, or undefined. */
export function workTitleProblem(title: string): string | undefined {
  const bytes = Buffer.byteLength(title, "utf8");
  if (bytes > WORK_TITLE_MAX_BYTES) return `the title is ${bytes} bytes; at most ${WORK_TITLE_MAX_BYTES} are allowed`;
  if (LINE_BREAKING.test(title)) return "the title must be one line without control characters";
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(title)) return "the title holds an unpaired surrogate";
  return undefined;
}

// Controls, bidi and other structural Unicode, and the delimiters a frame or a quoted field uses.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff<>"\\]/g;

/**
 * Model-authored text (a title, a display name) made safe to show on one line or inside a frame's
 * attribute: every unsafe character becomes a visible `\u{…}` escape.
 */
export function escapeUntrusted(text: string): string {
  return text.replace(UNSAFE, (ch) => `\\u{${(ch.codePointAt(0) ?? 0).toString(16)}}`);
}

/** Cuts text to at most `max` UTF-16 units, never inside a surrogate pair, marking the cut. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const c = text.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * `<tag attr="…">` body `</tag>`: attributes escaped, an exact close inside the body defused, so
 * text from another agent can never end the frame that attributes it.
 */
export function exactCloseFrame(tag: string, attrs: Readonly<Record<string, string>>, body: string): string {
  const head = Object.entries(attrs)
    .map(([k, v]) => ` ${k}="${escapeUntrusted(v)}"`)
    .join("");
  return `<${tag}${head}>\n${body.replaceAll(`</${tag}>`, `</ ${tag}>`)}\n</${tag}>`;
}

/** The provider form of a prompt another agent sent (its task or message). */
export function agentEnvelope(sender: string, text: string): string {
  return exactCloseFrame("agent_message", { from: sender }, text);
}
