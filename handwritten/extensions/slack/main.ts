// `tau ext slack` (SPEC-slack): one Slack app installation bridged to exactly one receiving agent,
// on the official Slack SDK (DECISION-slack-sdk). Inbound messages arrive over Socket Mode and are
// admitted by exact configured policy (inbound.ts, policy.ts); the agent answers through its tools
// (tools.ts) with tau-issued authority kept in this process only (authority.ts). Tokens come from
// `configure` secrets and are never logged.
import { Extension, type DeliveredEvent } from "../../sdk/index.js";
import { Authority } from "./authority.js";
import { Inbound } from "./inbound.js";
import { Occurrences } from "./occurrences.js";
import { NATIVE_USER_ID, policyOf, type Installation, type Policy } from "./policy.js";

const TEAM_ID = /^[TE][A-Z0-9]{2,20}$/;
import { logLine, slackError } from "./log.js";
import type { SlackClients } from "./slack-api.js";
import { registerSlackTools } from "./tools.js";

/**
 * The receiving agent: the session's first top-level agent (of the configured role). Once bound it
 * stays until it is unloaded or the session changes; then every route, link and ref is forgotten.
 */
class Receiver {
  agentId: string | undefined;
  private sessionId: string;

  constructor(
    private readonly ext: Extension,
    private readonly policy: Policy,
    private readonly authority: Authority,
  ) {
    this.sessionId = ext.configuration.session_id;
    ext.subscribe(["agent.started", "session.agent_unloaded"], ["agent.started", "session.agent_unloaded", "session.started"]);
    ext.on("agent.started", (e) => this.started(e));
    ext.on("session.agent_unloaded", (e) => {
      if (e.data.agent_id === this.agentId) this.release("its receiving agent was unloaded");
    });
    ext.on("session.started", (e) => {
      if (e.replay || e.data.session_id === this.sessionId) return;
      this.sessionId = e.data.session_id;
      this.release("the session changed");
    });
  }

  private started(e: DeliveredEvent<"agent.started">): void {
    if (this.agentId !== undefined || e.data.parent_id !== undefined || e.data.session_id !== this.sessionId) return;
    if (this.policy.agentRole !== undefined && e.data.role !== this.policy.agentRole) return;
    this.agentId = e.data.agent_id;
    logLine(`serving agent ${e.data.agent_id}`);
  }

  private release(why: string): void {
    this.agentId = undefined;
    this.authority.clear();
    logLine(`routes cleared: ${why}`);
  }
}

/** A notice to the user that also goes to the session's extensions.log. */
function fail(ext: Extension, text: string): void {
  logLine(text);
  ext.notice("error", `slack: ${text}`);
}

export async function main(): Promise<void> {
  const ext = await Extension.connect();
  const settings = ext.settings("slack");
  if (settings === undefined) return;
  const policy = policyOf(settings);
  if (typeof policy === "string") return (logLine(policy), ext.configError(policy));
  const botToken = ext.configuration.secrets[policy.botTokenSecret];
  const appToken = ext.configuration.secrets[policy.appTokenSecret];
  if (botToken === undefined || appToken === undefined) {
    const text = `the Slack tokens are missing: list the secrets ${policy.botTokenSecret} and ${policy.appTokenSecret} under the extension's secrets`;
    logLine(text);
    return ext.configError(text);
  }
  const authority = new Authority(policy.maxDmLinks);
  const receiver = new Receiver(ext, policy, authority);
  let clients: SlackClients | undefined;
  let installation: Installation | undefined;
  registerSlackTools({ ext, policy, authority, web: () => (installation !== undefined ? clients?.web : undefined), agent: () => receiver.agentId });
  ext.ready();

  const { slackClients } = await import("./slack-api.js"); // after ready: the SDK takes about half a second to load
  clients = slackClients({ apiUrl: policy.apiUrl, botToken, appToken });
  const { web, socket } = clients;
  const inbound = new Inbound({
    ext,
    policy,
    occurrences: new Occurrences(policy.occurrenceCache),
    authority,
    web,
    installation: () => installation,
    agent: () => receiver.agentId,
    replyTool: `${ext.configuration.tool_prefix}slack_reply`,
  });
  socket.on("slack_event", ({ ack, type, body }: { ack: () => Promise<void>; type: string; body: unknown }) => {
    void ack().catch(() => {});
    void inbound.take(type, body);
  });
  socket.on("error", (err: unknown) => logLine(`Socket Mode: ${slackError(err)}`));
  ext.onHarnessGone(() => socket.disconnect().catch(() => {}));
  // The installation first: until auth.test names it, every envelope fails closed.
  try {
    const who = await web.auth.test();
    if (typeof who.team_id !== "string" || !TEAM_ID.test(who.team_id) || typeof who.user_id !== "string" || !NATIVE_USER_ID.test(who.user_id)) {
      throw new Error("auth.test named no valid team or bot user");
    }
    if (policy.teamId !== undefined && who.team_id !== policy.teamId) {
      fail(ext, `the bot token belongs to workspace ${who.team_id}, not the configured ${policy.teamId}; the bridge stays off`);
      return;
    }
    installation = { teamId: who.team_id, botUserId: who.user_id };
  } catch (err) {
    fail(ext, `auth.test failed (${slackError(err)}); the bridge stays off`);
    return;
  }
  try {
    await socket.start();
    logLine("connected (Socket Mode)");
  } catch (err) {
    fail(ext, `could not open the Socket Mode connection (${slackError(err)})`);
  }
}
