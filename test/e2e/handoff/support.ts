// Session handoff through real daemons, the real provider, shell and handoff extensions, and the
// loopback model (SPEC-handoff): shared set-up and the scripted model that answers the templates.
import { join } from "node:path";
import type { StartedDaemon, TestClient } from "../../support/daemon.js";
import { readFileSync } from "node:fs";
import { attachUi, daemonIn, killTree, processTree, workspaceIn, type Workspace } from "../../support/e2e.js";
import { textResponse, toolCallResponse, type FakeOpenAI, type ReceivedRequest, type ScriptedResponse } from "../../support/fake-openai.js";
import { listSessions } from "../../../handwritten/transport/index.js";

export type Msg = { role: string; content?: unknown; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string };
export const messages = (r: ReceivedRequest): Msg[] => (r.body as { messages: Msg[] }).messages;
export const toolNames = (r: ReceivedRequest): string[] => ((r.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name).sort();
const text = (m: Msg | undefined): string => (typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? ""));

/** `extra`: more harness.yaml keys (`roles`, …). */
export function handoffWorkspace(fake: FakeOpenAI, cleanups: Array<() => void>, handoffConfig: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Workspace {
  const yaml = JSON.stringify({
    model: "fake-model",
    ...extra,
    extensions: [
      { name: "provider", kind: "provider", command: ["tau", "ext", "provider"], config: { profile: "chat_completions", base_url: fake.baseUrl, models: [{ id: "fake-model", context_window: 100_000 }] }, startup_timeout_seconds: 30 },
      { name: "shell", kind: "tool", require: true, command: ["tau", "ext", "shell"], startup_timeout_seconds: 30 },
      { name: "handoff", kind: "tool", require: true, command: ["tau", "ext", "handoff"], config: { writer_retry_ms: 0, ...handoffConfig }, startup_timeout_seconds: 30 },
    ],
  });
  return workspaceIn(cleanups, yaml);
}

/** SIGKILL a daemon and its extensions (the daemon first: a crash, not an orderly exit). */
export const kill = killTree;

/** SIGKILL the source daemon and its extensions, sparing a replacement it started (a crash of the source alone). */
export function crashSource(pid: number, spare?: number): void {
  const spared = new Set(spare !== undefined ? processTree(spare) : []);
  for (const p of processTree(pid)) {
    if (spared.has(p)) continue;
    try {
      process.kill(p, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** The session's handoff recovery file, and the replacement session it names once minted. */
export const recoveryPath = (w: Workspace, session: string): string => join(w.home, "config", "handoff", "recovery", `recovery-${session}.md`);
export const newSessionOf = (w: Workspace, session: string): string | undefined => /new session: (s-\S+)/.exec(readFileSync(recoveryPath(w, session), "utf8"))?.[1];

export const daemon = (env: NodeJS.ProcessEnv, args: string[], cleanups: Array<() => void>): Promise<StartedDaemon> => daemonIn(cleanups, env, args);

/** Attaches a UI, live on everything, once the models and the handoff tools are there. */
export const attach = (d: { socket: string; session_id: string }, cleanups: Array<() => void>, needTool = "handoff_go"): Promise<TestClient> => attachUi(cleanups, d, { tools: [needTool] });

export const createAgent = (c: TestClient): Promise<string> => c.createAgent();

export const delivered = (c: TestClient, name: string, pred?: (d: Record<string, unknown>) => boolean, ms?: number): Promise<Record<string, unknown>> => c.delivered(name, pred, ms);

export async function command(c: TestClient, agentId: string, id: string, ...args: string[]): Promise<{ ok: boolean; text: string }> {
  c.emit("handoff.command_request", { request_id: id, agent_id: agentId, args });
  const r = await delivered(c, "handoff.command_result", (d) => d.request_id === id, 30_000);
  return { ok: r.ok === true, text: String(r.text) };
}

/** The running daemon of a session, found as `tau session list` finds it. */
export async function runningSession(home: string, sessionId: string): Promise<{ socket: string; session_id: string; pid: number } | undefined> {
  return (await listSessions(join(home, "runtime"))).rows.find((r) => r.session_id === sessionId);
}

export interface ScriptHooks {
  /** Answers the readiness template with GO-with-deferral (the user chooses Ready / Wait / Cancel). */
  deferredGo?: boolean;
  /** Answers the readiness template (and its reminder) with this instead of GO. */
  callAnswer?: (r: ReceivedRequest) => ScriptedResponse | undefined;
  /** Answers any other prompt with this instead of a plain answer. */
  other?: (r: ReceivedRequest, lastText: string) => ScriptedResponse | undefined;
  /** Held: the answer to the readiness template (the GO call). */
  call?: Promise<unknown>;
  /** Held until the test has typed its deferred prompts: the answer to GO's tool result. */
  afterGo?: Promise<unknown>;
  /** Answers GO's tool result with this instead of a plain answer. */
  goResult?: (r: ReceivedRequest) => ScriptedResponse | undefined;
  /** The dossier content the model submits. */
  dossier?: string;
  /** Answers the writer template with this instead of the submit call. */
  writer?: (r: ReceivedRequest, submissionId: string) => ScriptedResponse | undefined;
}

/** A model that answers the handoff templates: GO with the key, the submit call with the id. */
export function scriptHandoff(fake: FakeOpenAI, hooks: ScriptHooks = {}): void {
  fake.respondWith((r) => {
    const ms = messages(r);
    const last = ms.at(-1);
    const lastText = text(last);
    if (last?.role === "tool") {
      const prev = [...ms].reverse().find((m) => m.role === "assistant" && m.tool_calls?.some((t) => t.id === last.tool_call_id));
      const name = prev?.tool_calls?.find((t) => t.id === last.tool_call_id)?.function.name;
      if (name === "handoff_go") return { ...(hooks.goResult?.(r) ?? textResponse("ready to write")), ...(hooks.afterGo ? { gate: hooks.afterGo } : {}) };
      if (name === "handoff_submit") return textResponse("dossier submitted");
      return textResponse("tool seen");
    }
    const key = /correlation key ([0-9a-f]{32})/.exec(lastText)?.[1];
    const callAnswer = key ? hooks.callAnswer?.(r) : undefined;
    if (callAnswer) return callAnswer;
    if (key) return { ...toolCallResponse([{ id: `call_go_${r.rawBody.length}`, name: hooks.deferredGo ? "handoff_go_deferred" : "handoff_go", arguments: JSON.stringify({ key }) }]), ...(hooks.call ? { gate: hooks.call } : {}) };
    const id = /with id ([0-9a-f]{16})/.exec(lastText)?.[1];
    if (id) {
      const custom = hooks.writer?.(r, id);
      if (custom) return custom;
      return toolCallResponse([{ id: `call_submit_${id}`, name: "handoff_submit", arguments: JSON.stringify({ id, content: hooks.dossier ?? "DOSSIER-BODY: the goal, the state, the next steps." }) }]);
    }
    if (lastText.includes("# Handoff from session")) return textResponse("continuing in the new session");
    return hooks.other?.(r, lastText) ?? textResponse("plain answer");
  });
}
