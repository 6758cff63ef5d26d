// Session handoff through real daemons, the real provider, shell and handoff extensions, and the
// loopback model (SPEC-handoff): shared set-up and the scripted model that follows the handoff's request.
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
      { name: "handoff", kind: "tool", require: true, command: ["tau", "ext", "handoff"], config: { ...handoffConfig }, startup_timeout_seconds: 30 },
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
export const attach = (d: { socket: string; session_id: string }, cleanups: Array<() => void>, needTool = "session_handoff_finish"): Promise<TestClient> => attachUi(cleanups, d, { tools: [needTool] });

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
  /** Answers the handoff's request (and its reminder) with this instead of the template's retrieval. */
  callAnswer?: (r: ReceivedRequest) => ScriptedResponse | undefined;
  /** Answers any other prompt with this instead of a plain answer. */
  other?: (r: ReceivedRequest, lastText: string) => ScriptedResponse | undefined;
  /** Held: the retrieval call answering the request. */
  call?: Promise<unknown>;
  /** Held until the test has typed its deferred prompts: the answer to the retrieval's result (the write call). */
  afterTemplate?: Promise<unknown> | (() => Promise<unknown>);
  /** Answers the retrieval's result with this instead of the write call. */
  templateResult?: (r: ReceivedRequest, reserved: { path: string; id: string } | undefined) => ScriptedResponse | undefined;
  /** The dossier the model writes. */
  dossier?: string;
  /** Answers the replacement's first turn with this instead of a plain answer. */
  firstTurn?: (r: ReceivedRequest) => ScriptedResponse | undefined;
  /** Answers the write's result with this instead of the Finish call. */
  finish?: (r: ReceivedRequest, id: string) => ScriptedResponse | undefined;
}

/** What the template's retrieval answered: the reserved file and the Finish id (undefined: refused). */
export function reservedIn(toolText: string): { path: string; id: string } | undefined {
  const path = /Reserved dossier file [^:]*: (\S+)/.exec(toolText)?.[1];
  const id = /Finish id: ([0-9a-f]{32})/.exec(toolText)?.[1];
  return path !== undefined && id !== undefined ? { path, id } : undefined;
}

/** The tool call `name` of the assistant message that `tool` answers. */
function calledTool(ms: Msg[], tool: Msg): { name?: string; arguments?: string } {
  const prev = [...ms].reverse().find((m) => m.role === "assistant" && m.tool_calls?.some((t) => t.id === tool.tool_call_id));
  const fn = prev?.tool_calls?.find((t) => t.id === tool.tool_call_id)?.function;
  return fn ?? {};
}

/**
 * A model that follows the handoff's request as seed 003 has it: retrieve the template, write the
 * dossier into the reserved file with the shell extension's `write` tool, then Finish by id.
 */
export function scriptHandoff(fake: FakeOpenAI, hooks: ScriptHooks = {}): void {
  fake.respondWith((r) => {
    const ms = messages(r);
    const last = ms.at(-1);
    const lastText = text(last);
    const n = r.rawBody.length;
    if (last?.role === "tool") {
      const name = calledTool(ms, last).name;
      if (name === "session_handoff_get_template") {
        const reserved = reservedIn(lastText);
        const custom = hooks.templateResult?.(r, reserved);
        const answer = custom ?? (reserved ? toolCallResponse([{ id: `call_write_${n}`, name: "write", arguments: JSON.stringify({ path: reserved.path, content: hooks.dossier ?? "DOSSIER-BODY: the goal, the state, the next steps.\n" }) }]) : textResponse("no template"));
        const gate = typeof hooks.afterTemplate === "function" ? hooks.afterTemplate() : hooks.afterTemplate;
        return { ...answer, ...(gate ? { gate } : {}) };
      }
      if (name === "write") {
        const id = [...ms].reverse().map((m) => reservedIn(text(m))).find((x) => x !== undefined)?.id;
        if (id === undefined) return textResponse("written");
        return hooks.finish?.(r, id) ?? toolCallResponse([{ id: `call_finish_${n}`, name: "session_handoff_finish", arguments: JSON.stringify({ id }) }]);
      }
      if (name === "session_handoff_finish") return textResponse("handoff finished");
      return textResponse("tool seen");
    }
    if (lastText.includes("# Handoff from session")) return hooks.firstTurn?.(r) ?? textResponse("continuing in the new session");
    if (lastText.includes("session_handoff_get_template")) {
      const callAnswer = hooks.callAnswer?.(r);
      if (callAnswer) return callAnswer;
      return { ...toolCallResponse([{ id: `call_get_${n}`, name: "session_handoff_get_template", arguments: "{}" }]), ...(hooks.call ? { gate: hooks.call } : {}) };
    }
    return hooks.other?.(r, lastText) ?? textResponse("plain answer");
  });
}
