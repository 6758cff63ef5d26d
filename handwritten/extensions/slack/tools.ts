// The bridge's model tools (SPEC-slack, "Tools"): `slack_reply` (a tau-issued reply selector, or a
// static alias holding the separate proactive grant), `slack_react` (only when `reactions: true`:
// retained exact-message refs, removing only this agent's own reactions, never listing) and
// `slack_routes` (static aliases and configured policy only). Every tool serves only the receiving
// agent.
import type { WebClient } from "@slack/web-api";
import { ToolFailure, type Extension, type ToolContext } from "../../sdk/index.js";
import type { Authority } from "./authority.js";
import { sendBody, sendProblem, MAX_SEND_CHARS } from "./outbound.js";
import type { Policy } from "./policy.js";
import { slackError } from "./log.js";

export interface ToolDeps {
  readonly ext: Extension;
  readonly policy: Policy;
  readonly authority: Authority;
  web(): WebClient | undefined;
  agent(): string | undefined;
}

const REACTION = /^[a-z0-9_+'-]{1,64}$/;

function servedAgent(d: ToolDeps, ctx: ToolContext): string {
  const agent = d.agent();
  if (agent === undefined) throw new ToolFailure("the Slack bridge has no receiving agent yet");
  if (ctx.agentId !== agent) throw new ToolFailure("this Slack bridge serves another agent; only its receiving agent may use it");
  return agent;
}

function client(d: ToolDeps): WebClient {
  const web = d.web();
  if (web === undefined) throw new ToolFailure("the Slack bridge is not connected to Slack");
  return web;
}

interface ReplyArgs {
  reply_to?: unknown;
  alias?: unknown;
  text?: unknown;
  mention_source?: unknown;
}

async function reply(d: ToolDeps, a: ReplyArgs, ctx: ToolContext): Promise<string> {
  const agent = servedAgent(d, ctx);
  if (typeof a.text !== "string") throw new ToolFailure("text is required");
  const problem = sendProblem(a.text);
  if (problem !== undefined) throw new ToolFailure(problem);
  if ((a.reply_to === undefined) === (a.alias === undefined)) throw new ToolFailure("give exactly one of reply_to (from a Slack message) or alias (a route granted proactive sends)");
  let channel: string;
  let threadTs: string | undefined;
  let via: string;
  let user: string;
  let mention: string | undefined;
  if (a.reply_to !== undefined) {
    const target = typeof a.reply_to === "string" ? d.authority.reply(a.reply_to) : undefined;
    if (target === undefined || target.agentId !== agent) throw new ToolFailure("reply_to is not a live reply selector this bridge issued to you; answer only messages you received");
    ({ channel, threadTs, via, user } = target);
    if (a.mention_source === true) mention = target.user;
  } else {
    const route = typeof a.alias === "string" ? d.policy.routes.get(a.alias) : undefined;
    if (route === undefined || !route.proactive) throw new ToolFailure("alias names no route granted proactive sends (slack_routes lists them)");
    if (a.mention_source === true) throw new ToolFailure("mention_source needs reply_to: it names only the person you answer");
    ({ channel, threadTs, alias: via } = route);
    user = "";
  }
  const body = sendBody(a.text, mention); // frozen: every retry sends exactly this
  let ts: string;
  try {
    const r = await client(d).chat.postMessage({ channel, text: body, ...(threadTs !== undefined ? { thread_ts: threadTs } : {}), unfurl_links: false, unfurl_media: false, link_names: false });
    ts = String(r.ts ?? "");
  } catch (err) {
    throw new ToolFailure(`Slack refused the message: ${slackError(err)}`);
  }
  const ref = d.authority.retain({ channel, ts, agentId: agent, via, user });
  return `sent to ${via}${threadTs !== undefined ? " (in the thread)" : ""}; message_ref ${ref}`;
}

interface ReactArgs {
  message_ref?: unknown;
  name?: unknown;
  remove?: unknown;
}

async function react(d: ToolDeps, a: ReactArgs, ctx: ToolContext): Promise<string> {
  const agent = servedAgent(d, ctx);
  if (typeof a.name !== "string" || !REACTION.test(a.name)) throw new ToolFailure("name must be an emoji name such as eyes or white_check_mark");
  const ref = typeof a.message_ref === "string" ? a.message_ref : "";
  const m = d.authority.message(ref);
  if (m === undefined || m.agentId !== agent) throw new ToolFailure("message_ref is not a message this bridge retained for you");
  // The route must still be configured (a DM ref is live only while its link is: Authority.message).
  if (m.via !== "dm" && d.policy.routes.get(m.via)?.channel !== m.channel) throw new ToolFailure("that message's route is no longer configured");
  const remove = a.remove === true;
  if (remove && !d.authority.ownsReaction(ref, a.name, agent)) throw new ToolFailure("you can remove only a reaction you added");
  try {
    if (remove) await client(d).reactions.remove({ channel: m.channel, timestamp: m.ts, name: a.name });
    else await client(d).reactions.add({ channel: m.channel, timestamp: m.ts, name: a.name });
  } catch (err) {
    throw new ToolFailure(`Slack refused the reaction: ${slackError(err)}`);
  }
  if (remove) d.authority.forgetReaction(ref, a.name);
  else d.authority.recordReaction(ref, a.name, agent);
  return `${remove ? "removed" : "added"} :${a.name}:`;
}

/** Static aliases and configured policy: no native ids, links, identities or runtime state. */
export function describeRoutes(p: Policy): string {
  const lines = [...p.routes.values()].map((r) => {
    const grants = [r.receive ? "receive" : "", r.proactive ? "proactive" : ""].filter(Boolean).join(", ") || "none";
    const senders = r.mode === "lax" ? "any verified human (lax)" : `${r.users.size} allowed ${r.users.size === 1 ? "person" : "people"}`;
    return `- ${r.alias}: ${r.kind}${r.threadTs !== undefined ? ", one thread" : ", top-level messages"}; ${grants}; senders: ${senders}`;
  });
  const dm = p.dmUsers.size > 0 ? `direct messages: reply-only, from ${p.dmUsers.size} allowed ${p.dmUsers.size === 1 ? "person" : "people"}, at most ${p.maxDmLinks} at a time` : "direct messages: none";
  return [lines.length > 0 ? "routes:" : "routes: none", ...lines, dm, `reactions: ${p.reactions ? "on" : "off"}`].join("\n");
}

export function registerSlackTools(d: ToolDeps): void {
  d.ext.registerTool({
    name: "slack_reply",
    description:
      `Send plain text to Slack: answer a Slack message with its reply_to, or post to a route alias granted proactive sends. ` +
      `Write plain text (at most ${MAX_SEND_CHARS} characters); Slack mention or control markup such as <!channel> or <@U…> is refused. ` +
      `mention_source: true mentions the person whose message you answer.`,
    parameters: {
      type: "object",
      properties: {
        reply_to: { type: "string", description: "The reply_to of the Slack message you answer." },
        alias: { type: "string", description: "A route alias granted proactive sends (see slack_routes)." },
        text: { type: "string" },
        mention_source: { type: "boolean", description: "Mention the person you answer (reply_to only)." },
      },
      required: ["text"],
      additionalProperties: false,
    },
    group: "slack",
    tags: ["network", "writes"],
    run: async (args, ctx) => ({ output: await reply(d, (args ?? {}) as ReplyArgs, ctx) }),
  });
  if (d.policy.reactions)
    d.ext.registerTool({
      name: "slack_react",
      description: "Add an emoji reaction to a Slack message you received or sent (its message_ref), or remove one you added. Reactions are visible to everyone in the conversation.",
      parameters: {
        type: "object",
        properties: { message_ref: { type: "string" }, name: { type: "string", description: "The emoji name, such as eyes." }, remove: { type: "boolean" } },
        required: ["message_ref", "name"],
        additionalProperties: false,
      },
      group: "slack",
      tags: ["network", "writes"],
      run: async (args, ctx) => ({ output: await react(d, (args ?? {}) as ReactArgs, ctx) }),
    });
  if (d.policy.discovery)
    d.ext.registerTool({
      name: "slack_routes",
      description: "List the Slack routes configured for you (their aliases and policy).",
      parameters: { type: "object", properties: {}, additionalProperties: false },
      group: "slack",
      tags: ["read"],
      run: async (_args, ctx) => {
        servedAgent(d, ctx);
        return { output: describeRoutes(d.policy) };
      },
    });
}
