// The Slack bridge through a real daemon, the real provider and Slack extensions, the loopback
// model and the loopback Slack stand-in (SPEC-slack): shared set-up and the scripted model.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { StartedDaemon, TestClient } from "../../support/daemon.js";
import { agentHarnessYaml, attachUi, daemonIn, workspaceIn, type Cleanups, type Workspace } from "../../support/e2e.js";
import { textResponse, toolCallResponse, type FakeOpenAI, type ReceivedRequest, type ScriptedResponse } from "../../support/fake-openai.js";
import { FakeSlack } from "../../support/fake-slack.js";
import { waitFor } from "../../support/wait.js";

export const CHANNEL = "C0OPS";
export const THREAD = "1700000000.000100";
export const ALICE = "U0ALICE";

type Msg = { role: string; content?: unknown; tool_calls?: Array<{ id: string; function: { name: string } }>; tool_call_id?: string };
const messages = (r: ReceivedRequest): Msg[] => (r.body as { messages: Msg[] }).messages;
const textOf = (m: Msg | undefined): string => (typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? ""));

/** A Slack message as the agent received it: its tau-issued attributes and body. */
export interface Received {
  readonly attrs: Record<string, string>;
  readonly body: string;
  readonly prompt: string;
}

/** The Slack messages in the prompts the model was sent, in order (each once). */
export function receivedByModel(fake: FakeOpenAI): Received[] {
  const seen = new Map<string, Received>();
  for (const r of fake.chatRequests)
    for (const m of messages(r)) {
      const t = textOf(m);
      const open = /<tau_slack_message ([^>]*)>\n([\s\S]*?)\n<\/tau_slack_message>/.exec(t);
      if (m.role !== "user" || !open) continue;
      const attrs = Object.fromEntries([...open[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1]!, x[2]!]));
      if (!seen.has(attrs.reply_to!)) seen.set(attrs.reply_to!, { attrs, body: open[2]!, prompt: t });
    }
  return [...seen.values()];
}

/**
 * A directive in a message's text: `CALL <tool> <json>` (one or more lines) asks the scripted model
 * for those tool calls; `$reply_to` and `$message_ref` in the JSON become the received message's.
 */
export function directiveCalls(text: string, m?: Received): Array<{ name: string; arguments: Record<string, unknown> }> {
  const out: Array<{ name: string; arguments: Record<string, unknown> }> = [];
  for (const line of text.split("\n")) {
    const d = /^CALL (\S+) (\{.*\})$/.exec(line.trim());
    if (!d) continue;
    const json = d[2]!.replace(/\$reply_to/g, m?.attrs.reply_to ?? "").replace(/\$message_ref/g, m?.attrs.message_ref ?? "");
    out.push({ name: d[1]!, arguments: JSON.parse(json) as Record<string, unknown> });
  }
  return out;
}

/**
 * The model: a prompt carrying a Slack message is answered by `plan(message)`'s tool calls (by
 * default its text's CALL directives; none: a plain answer); a UI prompt by its CALL directives; a
 * tool result by a plain answer.
 */
export function scriptModel(fake: FakeOpenAI, plan: (m: Received) => Array<{ name: string; arguments: Record<string, unknown> }> = (m) => directiveCalls(m.body, m)): void {
  let n = 0;
  fake.respondWith((r): ScriptedResponse => {
    const last = messages(r).at(-1);
    if (last?.role === "tool") return textResponse("done");
    const text = textOf(last);
    const mine = receivedByModel({ chatRequests: [r] } as never).at(-1);
    const calls = mine && text.includes("<tau_slack_message") ? plan(mine) : directiveCalls(text);
    if (calls.length === 0) return textResponse("noted");
    return toolCallResponse(calls.map((c) => ({ id: `call_${++n}`, name: c.name, arguments: JSON.stringify(c.arguments) })));
  });
}

export interface SlackSession {
  readonly w: Workspace;
  readonly d: StartedDaemon;
  readonly c: TestClient;
  readonly agentId: string;
  readonly slack: FakeSlack;
}

export const route = (o: Record<string, unknown> = {}): Record<string, unknown> => ({ alias: "ops", channel: CHANNEL, kind: "channel", thread_ts: THREAD, users: [ALICE], ...o });

/** A stand-in with Alice (a human), a daemon whose Slack extension has `config`, a UI and the receiving agent. */
export async function slackSession(
  cleanups: Cleanups,
  fake: FakeOpenAI,
  config: Record<string, unknown> = { routes: [route()] },
  o: { tools?: string[]; setUp?: (s: FakeSlack) => void; connect?: boolean; extensions?: unknown[] } = {},
): Promise<SlackSession> {
  const slack = await FakeSlack.start();
  cleanups.push(() => slack.close());
  slack.addUser({ id: ALICE, name: "alice" });
  o.setUp?.(slack);
  const ext = { name: "slack", kind: "tool", command: ["tau", "ext", "slack"], config: { api_url: slack.apiUrl, ...config }, secrets: ["slack-bot-token", "slack-app-token"], startup_timeout_seconds: 30 };
  const w = workspaceIn(cleanups, agentHarnessYaml(fake, { shell: false, extensions: [ext, ...(o.extensions ?? [])] }));
  const env = { ...w.env, TAU_SECRET_SLACK_BOT_TOKEN: slack.botToken, TAU_SECRET_SLACK_APP_TOKEN: slack.appToken };
  const d = await daemonIn(cleanups, env, ["--project-root", w.project]);
  const c = await attachUi(cleanups, d, { tools: o.tools ?? ["slack_reply"] });
  const agentId = await c.createAgent();
  if (o.connect === false) return { w, d, c, agentId, slack };
  await waitFor(() => extensionsLog(w, d).includes(`serving agent ${agentId}`), "the bridge to bind its receiving agent", 30_000);
  await slack.connected();
  return { w, d, c, agentId, slack };
}

/** The session's extensions.log (the bridge's stderr), "" before it exists. */
export function extensionsLog(w: Workspace, d: { session_id: string }): string {
  try {
    return readFileSync(join(w.home, "state", "sessions", d.session_id, "extensions.log"), "utf8");
  } catch {
    return "";
  }
}

/** Sends `event` and waits until the bridge has logged its drop (`why` in the line). */
export async function expectDropped(s: SlackSession, event: Record<string, unknown>, why: string, o: { event_id?: string; wrapper?: Record<string, unknown> } = {}): Promise<void> {
  const id = o.event_id ?? `Ev${Math.random().toString(36).slice(2, 12).toUpperCase()}`;
  s.slack.sendEvent(event, { ...o, event_id: id });
  await waitFor(() => extensionsLog(s.w, s.d).includes(`dropped ${id}: ${why}`), `the bridge to drop ${id} (${why})`, 20_000);
}

/** Sends a human's message on the default route's thread (Alice unless `user`) and waits for the model to have it. */
export async function ask(s: SlackSession, fake: FakeOpenAI, text: string, o: { user?: string; channel?: string; thread_ts?: string; channel_type?: string } = {}): Promise<Received> {
  const before = receivedByModel(fake).length;
  s.slack.sendEvent(s.slack.message({ user: o.user ?? ALICE, channel: o.channel ?? CHANNEL, ...(o.thread_ts !== "" ? { thread_ts: o.thread_ts ?? THREAD } : {}), text, ...(o.channel_type !== undefined ? { channel_type: o.channel_type } : {}) }));
  await waitFor(() => receivedByModel(fake).length > before, "the message to reach the model", 30_000);
  return receivedByModel(fake).at(-1)!;
}

/** Waits for the `n`th result of `tool` and returns it. */
export async function nthResult(c: TestClient, tool: string, n: number): Promise<{ outcome: string; output: string }> {
  await waitFor(() => toolResults(c, tool).length >= n, `result ${n} of ${tool}`, 30_000);
  return toolResults(c, tool)[n - 1]!;
}

/** The tool results the UI saw for `tool`, in order. */
export function toolResults(c: TestClient, tool: string): Array<{ outcome: string; output: string }> {
  return c.deliveriesOf("tool.result", (x) => x.tool === tool).map((d) => ({ outcome: String(d.data.outcome), output: String(d.data.output) }));
}
