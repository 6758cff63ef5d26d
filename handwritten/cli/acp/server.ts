// `tau acp`: tau as an Agent Client Protocol agent on standard input and output (SPEC-acp), for
// editors that drive coding agents over ACP. Each ACP session is a tau session this process owns;
// prompts stream back as `session/update`s. Built on the official `@agentclientprotocol/sdk`, which
// parses and checks every message: a malformed or unknown one is answered with a JSON-RPC error.
import { Readable, Writable } from "node:stream";
import { PROTOCOL_VERSION, RequestError, agent, ndJsonStream, type AgentContext, type ContentBlock, type PermissionOption, type SessionUpdate, type StopReason } from "@agentclientprotocol/sdk";
import type { SandboxApprovalRequested, SandboxDecision } from "../../../generated/index.js";
import { choiceLabel } from "../tui/sandbox-dialog.js";
import type { Roots } from "../../config/index.js";
import { AcpRefusal, AcpSession } from "./session.js";

/** Longest prompt text tau takes from a client (the harness's own bound on a prompt). */
export const ACP_PROMPT_MAX_CHARS = 8 * 1024 * 1024;

export interface AcpOptions {
  readonly roots: Roots;
  readonly version: string;
  /** `--harness-config` overrides of every session (the sandbox's approval policy among them). */
  readonly overrides: readonly string[];
}

/** Serves ACP on `input`/`output` until the client closes the connection; then every session is left. */
export async function serveAcp(input: Readable, output: Writable, o: AcpOptions): Promise<void> {
  const sessions = new Map<string, AcpSession>();
  const session = (id: string): AcpSession => {
    const s = sessions.get(id);
    if (s === undefined) throw RequestError.sessionNotFound(id);
    return s;
  };
  /** Whether the client reads files for tau (`fs.readTextFile`, SPEC-acp "The editor's files"). */
  let editorReads = false;
  const opened = async (cwd: string, mcpServers: Parameters<typeof AcpSession.open>[4], resume?: string): Promise<AcpSession> => {
    try {
      const s = await AcpSession.open(o.roots, cwd, o.overrides, resume, mcpServers);
      sessions.set(s.id, s);
      if (editorReads) s.offerEditorFiles(async (path, line, limit) => await connection.client.request("fs/read_text_file", { sessionId: s.id, path, line, limit }));
      s.askPermission = (request, signal) => askPermission(connection.client, s.id, request, signal);
      s.askCallPermission = (callId, title, signal) => askCall(connection.client, s.id, callId, title, signal);
      s.onConfigChanged = (configOptions) => void connection.client.notify("session/update", { sessionId: s.id, update: { sessionUpdate: "config_option_update", configOptions } }).catch(() => {});
      s.onModeChanged = (currentModeId) => void connection.client.notify("session/update", { sessionId: s.id, update: { sessionUpdate: "current_mode_update", currentModeId } }).catch(() => {});
      return s;
    } catch (err) {
      throw err instanceof AcpRefusal ? RequestError.invalidParams(undefined, err.message) : RequestError.internalError(undefined, (err as Error).message);
    }
  };
  const app = agent({ name: "tau" })
    .onRequest("initialize", ({ params }) => {
      editorReads = params.clientCapabilities?.fs?.readTextFile === true;
      return {
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: { loadSession: true, promptCapabilities: { image: false, audio: false, embeddedContext: true }, mcpCapabilities: { http: true, sse: false } },
      agentInfo: { name: "tau", version: o.version },
      authMethods: [],
      };
    })
    .onRequest("session/new", async ({ params }) => {
      const s = await opened(params.cwd, params.mcpServers);
      return { sessionId: s.id, configOptions: s.configOptions(), ...withModes(s) };
    })
    .onRequest("session/load", async ({ params, client }) => {
      if (sessions.has(params.sessionId)) throw RequestError.invalidParams(undefined, `session ${params.sessionId} is open on this connection already`);
      const s = await opened(params.cwd, params.mcpServers, params.sessionId);
      for (const update of await s.history) await client.notify("session/update", { sessionId: s.id, update });
      return { configOptions: s.configOptions(), ...withModes(s) };
    })
    .onRequest("session/set_config_option", ({ params, client }) => setConfigOption(session(params.sessionId), params.configId, params.value, client))
    .onRequest("session/set_mode", async ({ params, client }) => {
      const s = session(params.sessionId);
      await refusalsAsParams(() => s.setMode(params.modeId));
      await client.notify("session/update", { sessionId: s.id, update: { sessionUpdate: "config_option_update", configOptions: s.configOptions() } });
      return {};
    })
    .onRequest("session/prompt", ({ params, client }) => runPrompt(session(params.sessionId), params.prompt, client))
    .onNotification("session/cancel", ({ params }) => sessions.get(params.sessionId)?.cancel());
  const connection = app.connect(ndJsonStream(Writable.toWeb(output) as WritableStream<Uint8Array>, Readable.toWeb(input) as ReadableStream<Uint8Array>));
  try {
    await connection.closed;
  } finally {
    for (const s of sessions.values()) s.close();
  }
}

/** `fn`, with a refusal of the client's request answered as invalid params (its message the user's). */
async function refusalsAsParams<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw err instanceof AcpRefusal ? RequestError.invalidParams(undefined, err.message) : err;
  }
}

/** `session/set_config_option`: the model, or the mode (which also sends the mode's update). */
async function setConfigOption(s: AcpSession, configId: string, value: unknown, client: AgentContext): Promise<{ configOptions: ReturnType<AcpSession["configOptions"]> }> {
  if ((configId !== "model" && configId !== "mode") || typeof value !== "string") {
    throw RequestError.invalidParams(undefined, `tau's configuration options are "model" (a choice of PROVIDER/MODEL) and "mode"`);
  }
  if (configId === "model") return { configOptions: await refusalsAsParams(() => s.setModel(value)) };
  await refusalsAsParams(() => s.setMode(value));
  await client.notify("session/update", { sessionId: s.id, update: { sessionUpdate: "current_mode_update", currentModeId: value } });
  return { configOptions: s.configOptions() };
}

/** `session/prompt`: runs it to its end, its updates sent in order, each before the answer. */
async function runPrompt(s: AcpSession, blocks: readonly ContentBlock[], client: AgentContext): Promise<{ stopReason: StopReason }> {
  const text = promptText(blocks);
  if (text.trim() === "") throw RequestError.invalidParams(undefined, "the prompt holds no text");
  if (text.length > ACP_PROMPT_MAX_CHARS) throw RequestError.invalidParams(undefined, `the prompt is over ${ACP_PROMPT_MAX_CHARS} characters`);
  let sent = Promise.resolve();
  const send = (update: SessionUpdate) => {
    sent = sent.then(() => client.notify("session/update", { sessionId: s.id, update })).catch(() => {});
  };
  const end = await refusalsAsParams(() => s.prompt(text, send, (request, signal) => askPermission(client, s.id, request, signal)));
  await sent;
  if ("failed" in end) throw RequestError.internalError(undefined, end.failed);
  return { stopReason: end.stopReason };
}

/** A session's modes for a `session/new` or `session/load` answer, when it has them. */
function withModes(s: AcpSession): { modes?: NonNullable<ReturnType<AcpSession["modes"]>> } {
  const modes = s.modes();
  return modes === undefined ? {} : { modes };
}

/** How each sandbox choice reads to an ACP client: once, for the session, or a refusal. */
const OPTION_KINDS: Readonly<Record<SandboxDecision, PermissionOption["kind"]>> = { allow: "allow_once", allow_retry: "allow_once", allow_adapt: "allow_always", deny: "reject_once" };

/**
 * A sandbox request as `session/request_permission` (SPEC-acp, "Approvals"): its call, what it asks
 * for, and tau's own choices with their words; a cancelled or withdrawn request answers nothing.
 */
async function askPermission(client: AgentContext, sessionId: string, request: SandboxApprovalRequested, signal: AbortSignal): Promise<SandboxDecision | undefined> {
  const what = request.kind === "network" ? `connect to ${request.target}` : request.kind === "filesystem_write" ? `write to ${request.target}` : `read ${request.target}`;
  const options: PermissionOption[] = request.choices.map((c) => ({
    optionId: c,
    name: choiceLabel(request, c).replace(/^\[[a-z]\] /, ""),
    kind: request.kind === "network" && c === "deny" ? "reject_always" : OPTION_KINDS[c],
  }));
  const answer = await client.request("session/request_permission", { sessionId, toolCall: { toolCallId: request.call_id, title: `sandbox: ${request.command} wants to ${what}` }, options }, { cancellationSignal: signal, stopWaitingOnCancel: true });
  if (answer.outcome.outcome !== "selected") return undefined;
  const chosen = answer.outcome.optionId;
  return request.choices.find((c) => c === chosen);
}

/** An MCP tool call held by its server's `ask` as `session/request_permission`: allow once, or refuse. */
async function askCall(client: AgentContext, sessionId: string, toolCallId: string, title: string, signal: AbortSignal): Promise<boolean | undefined> {
  const options: PermissionOption[] = [
    { optionId: "allow", name: "allow this call", kind: "allow_once" },
    { optionId: "deny", name: "deny", kind: "reject_once" },
  ];
  const answer = await client.request("session/request_permission", { sessionId, toolCall: { toolCallId, title }, options }, { cancellationSignal: signal, stopWaitingOnCancel: true });
  return answer.outcome.outcome === "selected" ? answer.outcome.optionId === "allow" : undefined;
}

/**
 * A prompt's blocks as the text the agent is sent: text as it is, a resource link as its name and
 * URI, an embedded text resource with its URI and its text; other blocks are named, not sent.
 */
export function promptText(blocks: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const b of blocks) {
    if (b.type === "text") parts.push(b.text);
    else if (b.type === "resource_link") parts.push(`[${b.name}](${b.uri})`);
    else if (b.type === "resource" && "text" in b.resource) parts.push(`<context uri="${b.resource.uri.replace(/"/g, "%22")}">\n${b.resource.text}\n</context>`);
    else if (b.type === "resource") parts.push(`[${b.resource.uri}] (binary, not included)`);
    else parts.push(`[${b.type} not included: tau takes text]`);
  }
  return parts.join("\n\n");
}
