// The Slack bridge's configured policy (SPEC-slack, "Routes" and "Admission"): static routes by
// alias, dynamic direct-message allowlist, and the admission decision for one inbound message
// event. Everything here is pure: no Slack call, no clock.
import type { SlackRoute, SlackSettings } from "../../../generated/index.js";

export type SecurityMode = "strict" | "lax";

export interface Route {
  readonly alias: string;
  readonly channel: string;
  readonly kind: string;
  readonly threadTs: string | undefined;
  readonly receive: boolean;
  readonly proactive: boolean;
  readonly mode: SecurityMode;
  readonly users: ReadonlySet<string>;
}

export interface Policy {
  readonly routes: ReadonlyMap<string, Route>;
  readonly dmUsers: ReadonlySet<string>;
  readonly maxDmLinks: number;
  readonly reactions: boolean;
  readonly discovery: boolean;
  readonly occurrenceCache: number;
  readonly apiUrl: string;
  readonly teamId: string | undefined;
  readonly agentRole: string | undefined;
  readonly botTokenSecret: string;
  readonly appTokenSecret: string;
}

export const DEFAULT_API_URL = "https://slack.com/api/";

/** Native Slack user ids: the only sender identity the bridge trusts. */
export const NATIVE_USER_ID = /^[UW][A-Z0-9]{2,20}$/;

/** The policy of valid settings, or what is wrong with them (a `config_error`). */
export function policyOf(s: SlackSettings): Policy | string {
  const routes = new Map<string, Route>();
  const places = new Set<string>();
  for (const r of s.routes ?? []) {
    if (routes.has(r.alias)) return `setting routes: alias ${r.alias} is configured twice`;
    const place = `${r.channel} ${r.thread_ts ?? ""}`;
    if (places.has(place)) return `setting routes: ${r.alias} names the same conversation and thread as another route`;
    places.add(place);
    routes.set(r.alias, routeOf(r));
  }
  return {
    routes,
    dmUsers: new Set(s.direct_messages?.users ?? []),
    maxDmLinks: s.direct_messages?.max_links ?? 16,
    reactions: s.reactions === true,
    discovery: s.discovery !== false,
    occurrenceCache: s.occurrence_cache ?? 4096,
    apiUrl: s.api_url ?? DEFAULT_API_URL,
    teamId: s.team_id,
    agentRole: s.agent_role,
    botTokenSecret: s.bot_token_secret ?? "slack-bot-token",
    appTokenSecret: s.app_token_secret ?? "slack-app-token",
  };
}

function routeOf(r: SlackRoute): Route {
  return {
    alias: r.alias,
    channel: r.channel,
    kind: r.kind,
    threadTs: r.thread_ts,
    receive: r.receive !== false,
    proactive: r.proactive === true,
    mode: r.security_mode ?? "strict",
    users: new Set(r.users ?? []),
  };
}

/** The installation `auth.test` reported for the bot token. */
export interface Installation {
  readonly teamId: string;
  readonly botUserId: string;
}

/** The fields of a `message` event the bridge reads; everything else is ignored. */
export interface MessageEvent {
  readonly channel: string;
  readonly channelType: string;
  readonly user: string;
  readonly text: string;
  readonly ts: string;
  readonly threadTs: string | undefined;
}

/** Where an admitted message came from: a static route or a dynamic direct message. */
export type Source = { readonly kind: "route"; readonly route: Route } | { readonly kind: "dm" };

export type Verdict = { readonly ok: true; readonly event: MessageEvent; readonly source: Source } | { readonly ok: false; readonly why: string };

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const TS = /^[0-9]{1,12}\.[0-9]{6}$/;

/**
 * Binds the Events API wrapper to the installation: its `team_id` and exactly one authorization,
 * naming this bot user in this workspace. Missing, ambiguous or mismatched evidence fails closed.
 */
export function wrapperProblem(body: Record<string, unknown>, installation: Installation | undefined): string | undefined {
  if (installation === undefined) return "the installation is not known yet (auth.test)";
  if (body.type !== "event_callback") return "not an event_callback wrapper";
  if (str(body.team_id) === undefined) return "the wrapper names no team";
  if (body.team_id !== installation.teamId) return "the wrapper is for another workspace";
  const auths = body.authorizations;
  if (!Array.isArray(auths) || auths.length === 0) return "the wrapper carries no authorization";
  if (auths.length !== 1) return "the wrapper carries more than one authorization";
  const a = auths[0] as Record<string, unknown> | null;
  if (a === null || typeof a !== "object") return "the wrapper's authorization is malformed";
  if (a.team_id !== installation.teamId || a.user_id !== installation.botUserId) return "the wrapper's authorization is another installation's";
  return undefined;
}

/**
 * Decides an inbound `message` event against the policy: a plain message (no subtype, no bot) from
 * a native user id, in a conversation of exactly the configured kind and thread, from an allowed
 * sender. Whether the sender is a live human is checked afterwards (users.info).
 */
export function admit(raw: Record<string, unknown>, policy: Policy, installation: Installation): Verdict {
  if (raw.type !== "message") return { ok: false, why: "not a message event" };
  if (raw.subtype !== undefined) return { ok: false, why: `a ${String(raw.subtype).slice(0, 40)} message` };
  if (raw.bot_id !== undefined || raw.bot_profile !== undefined) return { ok: false, why: "sent by a bot" };
  const user = str(raw.user);
  if (user === undefined || !NATIVE_USER_ID.test(user)) return { ok: false, why: "no native sender id" };
  if (user === installation.botUserId) return { ok: false, why: "sent by this bot" };
  const channel = str(raw.channel);
  const channelType = str(raw.channel_type);
  const ts = str(raw.ts);
  const text = str(raw.text);
  const threadTs = str(raw.thread_ts);
  if (channel === undefined || channelType === undefined || ts === undefined || !TS.test(ts) || text === undefined) return { ok: false, why: "a malformed message" };
  if (threadTs !== undefined && !TS.test(threadTs)) return { ok: false, why: "a malformed thread" };
  const event: MessageEvent = { channel, channelType, user, text, ts, threadTs };
  const candidates = [...policy.routes.values()].filter((r) => r.channel === channel);
  if (candidates.length === 0) {
    if (channelType === "im" && policy.dmUsers.has(user)) return { ok: true, event, source: { kind: "dm" } };
    return { ok: false, why: "not a configured conversation" };
  }
  const route = candidates.find((r) => r.threadTs === (threadTs === ts ? undefined : threadTs));
  if (route === undefined) return { ok: false, why: "not the configured thread" };
  if (route.kind !== channelType) return { ok: false, why: "not the configured kind of conversation" };
  if (!route.receive) return { ok: false, why: "a send-only route" };
  if (route.mode === "strict" && !route.users.has(user)) return { ok: false, why: "a sender the route does not admit" };
  return { ok: true, event, source: { kind: "route", route } };
}
