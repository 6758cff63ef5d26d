// A scripted conversation through the Slack bridge (SPEC-slack): a human asks in the configured
// thread, the message reaches the receiving agent as framed untrusted content with a tau-issued
// reply selector, and the model's slack_reply answers in that same thread.
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { waitFor } from "../../support/wait.js";
import { ALICE, CHANNEL, THREAD, extensionsLog, receivedByModel, route, scriptModel, slackSession, toolResults } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

describe("a Slack conversation", () => {
  it("[slack.conversation.thread-reply] a human's message in the configured thread reaches the agent, whose slack_reply answers in that thread", async () => {
    scriptModel(fake, (m) => [{ name: "slack_reply", arguments: { reply_to: m.attrs.reply_to, text: `you said: ${m.body}`, mention_source: true } }]);
    const s = await slackSession(cleanups, fake);
    const ask = s.slack.message({ user: ALICE, channel: CHANNEL, thread_ts: THREAD, text: "what is the build status?" });
    await s.slack.acked(s.slack.sendEvent(ask, { event_id: "EvCONVERSATION1" }));
    await waitFor(() => s.slack.posted.length === 1, "the agent's answer in Slack", 30_000);
    expect(s.slack.posted[0]).toMatchObject({ channel: CHANNEL, thread_ts: THREAD, text: `<@${ALICE}> you said: what is the build status?` });
    const got = receivedByModel(fake);
    expect(got).toHaveLength(1);
    expect(got[0]!.attrs).toMatchObject({ via: "ops", sender_id: ALICE, sender_name: "alice", admission: "strict" });
    expect(got[0]!.attrs.reply_to).toMatch(/^r-[A-Za-z0-9_-]{12}$/);
    expect(got[0]!.prompt).toContain("untrusted external content");
    // The submission is the extension's: the harness stamps the configured instance as its submitter.
    const submitted = s.c.deliveriesOf("agent.prompt_submitted", (d) => d.agent_id === s.agentId);
    expect(submitted.map((x) => [x.data.source, x.data.submitter])).toEqual([["extension", "slack"]]);
    await waitFor(() => toolResults(s.c, "slack_reply").length === 1, "the reply's result");
    expect(toolResults(s.c, "slack_reply")[0]).toMatchObject({ outcome: "ok" });
    expect(toolResults(s.c, "slack_reply")[0]!.output).toMatch(/^sent to ops \(in the thread\); message_ref m-/);
    // The tokens went only where they belong: the bot token on Web API calls, the app token on connections.open.
    expect(s.slack.calls.filter((c) => c.method !== "apps.connections.open").every((c) => c.token === s.slack.botToken)).toBe(true);
    const log = extensionsLog(s.w, s.d);
    expect(log).toContain("[slack] slack: connected (Socket Mode)");
    expect(log).not.toContain(s.slack.botToken);
    expect(log).not.toContain(s.slack.appToken);
  }, 120_000);
});

describe("the Slack bridge's installation", () => {
  it("[slack.installation.fail-closed] a bot token of another workspace than the configured team_id keeps the bridge off: no Socket Mode connection is opened", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake, { routes: [route()], team_id: "T0OTHER" }, { connect: false });
    await waitFor(() => extensionsLog(s.w, s.d).includes("the bot token belongs to workspace T0TEAM, not the configured T0OTHER; the bridge stays off"), "the refusal", 30_000);
    expect(s.slack.callsOf("apps.connections.open")).toEqual([]);
    expect(s.slack.connections).toBe(0);
  }, 120_000);

  it("[slack.tokens.configure-only] the tokens come only from the extension's configure secrets: settings naming secrets it was not given are a configuration error that names the secrets, never a value", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake, { routes: [route()], bot_token_secret: "work-slack-bot" }, { connect: false, tools: [] });
    await waitFor(() => extensionsLog(s.w, s.d).includes("the Slack tokens are missing: list the secrets work-slack-bot and slack-app-token under the extension's secrets"), "the configuration error", 30_000);
    expect(s.slack.calls).toEqual([]);
    expect(extensionsLog(s.w, s.d)).not.toContain(s.slack.appToken);
  }, 120_000);
});
