// The soak's model: answers the loopback OpenAI-compatible server's requests from the scripts a
// round registered (script.ts), statelessly — what to answer follows from the request's messages —
// so it answers the same after any crash. It keeps every request's identity, the boot it came in
// and what it was for, so a round can tell whether a request was sent twice.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { textResponse, toolCallResponse, type ReceivedRequest, type ScriptedResponse } from "../../test/support/fake-openai.js";
import { currentIn, currentMark, marksIn, seenIn, seenList, type Action, type ModelRound, type Script } from "./script.js";

export type Msg = { role: string; content?: unknown; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string };

export type RequestKind = "round" | "summary" | "handoff";

export interface SeenRequest {
  readonly key: string;
  readonly kind: RequestKind;
  readonly boot: number;
  /** The script and round it answered (ordinary rounds of a soak prompt). */
  readonly script?: string;
  readonly round?: number;
}

/** How long the slow parts of a round's answers take. */
export interface ModelPacing {
  summaryMs: number;
  goAnswerMs: number;
  writerMs: number;
}

const text = (m: Msg | undefined): string => (typeof m?.content === "string" ? m.content : m?.content === undefined || m.content === null ? "" : JSON.stringify(m.content));
const USUAL = { prompt_tokens: 300, completion_tokens: 12 };
const HOT = { prompt_tokens: 9_200, completion_tokens: 12 };

export class SoakModel {
  readonly requests: SeenRequest[] = [];
  boot = 0;
  pacing: ModelPacing = { summaryMs: 300, goAnswerMs: 800, writerMs: 300 };
  private scripts = new Map<string, Script>();
  /** The messages of the requests of the scripts `keep` named. */
  private bodies = new Map<string, Msg[]>();
  private kept = new Set<string>();
  private nonce = 0;
  private listeners: Array<(r: SeenRequest, round: ModelRound | undefined) => void> = [];
  /** With `--dump DIR`: every request's messages are written there, one JSON file each. */
  dumpDir: string | undefined;

  /** A fresh round: its scripts, nothing seen yet. */
  reset(scripts: Iterable<Script>, pacing: ModelPacing): void {
    this.scripts = new Map([...scripts].map((s) => [s.id, s]));
    this.requests.length = 0;
    this.boot = 0;
    this.nonce = 0;
    this.pacing = pacing;
    this.listeners = [];
    this.bodies.clear();
    this.kept.clear();
  }

  /** Keeps the messages of the (last) request answering script `id`. */
  keep(id: string): void {
    this.kept.add(id);
  }

  messagesOf(id: string): Msg[] | undefined {
    return this.bodies.get(id);
  }

  addScript(s: Script): void {
    this.scripts.set(s.id, s);
  }

  /** Called with each request as it arrives (a round waits for its kill point with it). */
  onRequest(f: (r: SeenRequest, round: ModelRound | undefined) => void): () => void {
    this.listeners.push(f);
    return () => (this.listeners = this.listeners.filter((g) => g !== f));
  }

  /** The responder for FakeOpenAI.respondWith. */
  readonly respond = (r: ReceivedRequest): ScriptedResponse => {
    const body = r.body as { messages?: Msg[]; tools?: unknown[] } | undefined;
    const messages = body?.messages ?? [];
    const n = ++this.nonce;
    const last = messages.at(-1);
    const summary = body?.tools === undefined && last?.role === "user" && text(last).startsWith("Summarize the conversation above");
    if (summary) return this.note({ key: `S|${requestKey(messages)}`, kind: "summary", boot: this.boot }, undefined, this.summary(messages, n), messages);
    const handoff = this.handoffAnswer(messages, n);
    if (handoff) return this.note({ key: `H|${requestKey(messages)}`, kind: "handoff", boot: this.boot }, undefined, handoff, messages);
    const directive = this.directive(messages);
    const key = `R|${requestKey(messages)}`;
    if (!directive) return this.note({ key, kind: "round", boot: this.boot }, undefined, textResponse(`plain answer (n${n})`, { usage: USUAL }), messages);
    const { script, round } = directive;
    const planned = script.rounds[round];
    const seen: SeenRequest = { key, kind: "round", boot: this.boot, script: script.id, round };
    if (this.kept.has(script.id)) this.bodies.set(script.id, messages);
    if (!planned || planned.kind === "text") {
      const ms = planned?.streamMs ?? 0;
      const parts = ["answer ", `to ${script.id} `, `round ${round} `, `(n${n})`];
      return this.note(seen, planned, textResponse(parts, { delayMs: Math.round(ms / parts.length), usage: planned?.hot ? HOT : USUAL }), messages);
    }
    const calls = planned.calls.map((a, i) => call(a, `call_${script.id}_${round}_${i}_n${n}`, n));
    return this.note(seen, planned, toolCallResponse(calls, { usage: planned.hot ? HOT : USUAL, text: `working (n${n})` }), messages);
  };

  private note(seen: SeenRequest, round: ModelRound | undefined, response: ScriptedResponse, messages?: readonly Msg[]): ScriptedResponse {
    this.requests.push(seen);
    if (this.dumpDir !== undefined && messages) {
      const name = `${String(this.requests.length).padStart(3, "0")}-boot${seen.boot}-${seen.kind}-${seen.script ?? "x"}-${seen.round ?? "x"}.json`;
      writeFileSync(join(this.dumpDir, name), JSON.stringify(messages, null, 1));
    }
    for (const f of this.listeners) f(seen, round);
    return response;
  }

  /** The script and round a request answers: the last user message's mark, and the answers since. */
  private directive(messages: readonly Msg[]): { script: Script; round: number } | undefined {
    const at = turnOf(messages);
    const script = at === undefined ? undefined : this.scripts.get(at.id);
    return script && at ? { script, round: at.answers } : undefined;
  }

  private summary(messages: readonly Msg[], n: number): ScriptedResponse {
    const prefix = messages.slice(0, -1);
    const marks = prefix.flatMap((m) => (m.role === "user" ? [...marksIn(text(m)), ...seenIn(text(m))] : []));
    const turn = turnOf(prefix);
    const parts = [`SUMMARY (n${n}) `, seenList(marks), turn ? ` ${currentMark(turn.id, turn.answers)}` : ""];
    return { ...textResponse(parts, { usage: { prompt_tokens: 2_000, completion_tokens: 40 } }), headersDelayMs: this.pacing.summaryMs };
  }

  /**
   * The handoff's request (SPEC-handoff): the template's retrieval, then the dossier written into the
   * reserved file with the shell extension's `write` tool (after `goAnswerMs`: the window is open),
   * then Finish by id (after `writerMs`), and the tools' results.
   */
  private handoffAnswer(messages: readonly Msg[], n: number): ScriptedResponse | undefined {
    const last = messages.at(-1);
    const lastText = text(last);
    if (last?.role === "tool") {
      const prev = [...messages].reverse().find((m) => m.role === "assistant" && m.tool_calls?.some((t) => t.id === last.tool_call_id));
      const name = prev?.tool_calls?.find((t) => t.id === last.tool_call_id)?.function.name ?? "";
      const reserved = [...messages].reverse().map((m) => reservedIn(text(m))).find((x) => x !== undefined);
      if (name.endsWith("session_handoff_get_template")) {
        if (!reserved) return textResponse(`no template (n${n})`, { usage: USUAL });
        const marks = messages.flatMap((m) => (m.role === "user" ? [...marksIn(text(m)), ...seenIn(text(m))] : []));
        const content = `DOSSIER (n${n}) ${seenList(marks)}\n`;
        return { ...toolCallResponse([{ id: `call_write_n${n}`, name: "write", arguments: JSON.stringify({ path: reserved.path, content }) }], { usage: USUAL }), headersDelayMs: this.pacing.goAnswerMs };
      }
      if (name === "write" && reserved) return { ...toolCallResponse([{ id: `call_finish_n${n}`, name: "session_handoff_finish", arguments: JSON.stringify({ id: reserved.id }) }], { usage: USUAL }), headersDelayMs: this.pacing.writerMs };
      if (name.endsWith("session_handoff_finish")) return textResponse(`handoff finished (n${n})`, { usage: USUAL });
      return undefined;
    }
    if (last?.role !== "user") return undefined;
    if (lastText.includes("# Handoff from session")) return textResponse(`continuing (n${n})`, { usage: USUAL });
    if (lastText.includes("session_handoff_get_template")) return toolCallResponse([{ id: `call_get_n${n}`, name: "session_handoff_get_template", arguments: "{}" }], { usage: USUAL });
    return undefined;
  }
}

/** The reserved dossier file and Finish id a template's retrieval answered, if `s` is one. */
function reservedIn(s: string): { path: string; id: string } | undefined {
  const path = /Reserved dossier file [^:]*: (\S+)/.exec(s)?.[1];
  const id = /Finish id: ([0-9a-f]{32})/.exec(s)?.[1];
  return path !== undefined && id !== undefined ? { path, id } : undefined;
}

/**
 * The turn a transcript is in: the prompt of its last user message and the answers since — or,
 * when that message is a summary that cut a turn, that turn with the answers it summarized too.
 */
function turnOf(messages: readonly Msg[]): { id: string; answers: number } | undefined {
  let at = -1;
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === "user") { at = i; break; }
  if (at < 0) return undefined;
  const since = messages.slice(at + 1).filter((m) => m.role === "assistant").length;
  const id = marksIn(text(messages[at])).at(0);
  if (id !== undefined) return { id, answers: since };
  const cut = currentIn(text(messages[at]));
  return cut ? { id: cut.id, answers: cut.answers + since } : undefined;
}

function call(a: Action, id: string, n: number): { id: string; name: string; arguments: string } {
  switch (a.t) {
    case "shell":
      return { id, name: "shell", arguments: JSON.stringify({ command: `echo ${id} >> soak-runs.log; sleep ${(a.sleepMs / 1000).toFixed(2)}; echo done ${id}`, timeout_seconds: 60 }) };
    case "read":
      return { id, name: "read", arguments: JSON.stringify({ path: "notes.txt" }) };
    case "write":
      return { id, name: "write", arguments: JSON.stringify({ path: `out-${id}.txt`, content: `${id}\n` }) };
    case "compact":
      return { id, name: "compact", arguments: JSON.stringify({ instructions: `keep the soak marks (n${n})` }) };
    case "start":
      return { id, name: "agent_start", arguments: JSON.stringify({ task: `[[soak:${a.child}]] a child's task`, display_name: a.child }) };
    case "wait":
      return { id, name: "agent_wait", arguments: JSON.stringify({ timeout_seconds: 60 }) };
  }
}

/**
 * A request's identity: its length, the nonce of the last answer it holds and what follows that
 * answer (roles, tool call ids, prompt marks or a hash of an unmarked message). Two requests with
 * one identity ask the same question of the same transcript: the second is the first sent again.
 */
export function requestKey(messages: readonly Msg[]): string {
  let lastAnswer = -1;
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === "assistant") { lastAnswer = i; break; }
  const answer = lastAnswer < 0 ? undefined : messages[lastAnswer];
  const nonce = answer === undefined ? "none" : (/\(n(\d+)\)/.exec(text(answer))?.[1] ?? /_n(\d+)$/.exec(answer.tool_calls?.[0]?.id ?? "")?.[1] ?? hash(text(answer)));
  const tail = messages.slice(lastAnswer + 1).map((m) => {
    if (m.role === "tool") return `tool:${m.tool_call_id ?? ""}`;
    const marks = marksIn(text(m));
    return `${m.role}:${marks.length > 0 ? marks.join("+") : hash(text(m))}`;
  });
  return `${messages.length}|${nonce}|${tail.join(",")}`;
}

function hash(s: string): string {
  return createHash("sha256").update(s).digest("hex").slice(0, 12);
}
