// Shared by the MCP end-to-end tests: a `tau run` workspace with MCP servers against the scripted
// model, and what the model was offered and sent back.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { workspaceIn, type Cleanups, type Workspace } from "./e2e.js";
import type { FakeOpenAI, ReceivedRequest } from "./fake-openai.js";

/** A workspace (see workspaceIn) whose harness.yaml has `servers` as mcp_servers, its model `fake`. */
export function mcpWorkspace(cleanups: Cleanups, fake: FakeOpenAI, servers: Record<string, unknown>): Workspace {
  const w = workspaceIn(cleanups, JSON.stringify({ model: "fake-model", mcp_servers: servers }));
  return { ...w, env: { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-mcp", OPENAI_MODEL: "fake-model" } };
}

type Msg = { role: string; content?: unknown; tool_call_id?: string };
/** The messages a model request carried. */
export const messagesOf = (r: ReceivedRequest): Msg[] => (r.body as { messages: Msg[] }).messages;

/** The tool names a model request offered, sorted. */
export const toolsOf = (r: ReceivedRequest): string[] => ((r.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name).sort();

/** The result a model request carried for tool call `callId`. */
export const toolMessage = (r: ReceivedRequest, callId: string): string => String(messagesOf(r).find((m) => m.role === "tool" && m.tool_call_id === callId)?.content);

/** The session's extensions.log (a `tau run` workspace holds one session). */
export function extensionsLog(home: string): string {
  const [session] = readdirSync(join(home, "state", "sessions"));
  return readFileSync(join(home, "state", "sessions", session!, "extensions.log"), "utf8");
}
