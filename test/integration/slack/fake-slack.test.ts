// The Slack stand-in speaks what the official SDKs speak (test/support/fake-slack.ts): the Web API
// and Socket Mode as @slack/web-api and @slack/socket-mode use them, so the bridge's tests exercise
// the real client libraries against it.
import { SocketModeClient } from "@slack/socket-mode";
import { WebClient } from "@slack/web-api";
import { afterEach, describe, expect, it } from "vitest";
import { FakeSlack } from "../../support/fake-slack.js";
import { waitFor } from "../../support/wait.js";

const quiet = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel: () => "error", setName() {} } as never;
let slack: FakeSlack | undefined;
let client: SocketModeClient | undefined;
afterEach(async () => {
  await client?.disconnect().catch(() => {});
  await slack?.close();
});

describe("the loopback Slack stand-in", () => {
  it("[slack.stand-in.web-api] answers the Web API methods the bridge uses, refusing a wrong token", async () => {
    slack = await FakeSlack.start();
    slack.addUser({ id: "U1HUMAN" });
    const web = new WebClient(slack.botToken, { slackApiUrl: slack.apiUrl, logger: quiet, retryConfig: { retries: 0 } });
    const who = await web.auth.test();
    expect(who).toMatchObject({ ok: true, team_id: "T0TEAM", user_id: "U0BOT", bot_id: "B0BOT" });
    expect((await web.users.info({ user: "U1HUMAN" })).user).toMatchObject({ id: "U1HUMAN", is_bot: false, deleted: false });
    const sent = await web.chat.postMessage({ channel: "C1", text: "hi", thread_ts: "1700000000.000001" });
    expect(slack.posted[0]).toMatchObject({ channel: "C1", text: "hi", thread_ts: "1700000000.000001", ts: sent.ts });
    await web.reactions.add({ channel: "C1", timestamp: String(sent.ts), name: "eyes" });
    await expect(web.reactions.add({ channel: "C1", timestamp: String(sent.ts), name: "eyes" })).rejects.toThrow(/already_reacted/);
    await web.reactions.remove({ channel: "C1", timestamp: String(sent.ts), name: "eyes" });
    expect(slack.reactions.size).toBe(0);
    const wrong = new WebClient("xoxb-wrong", { slackApiUrl: slack.apiUrl, logger: quiet, retryConfig: { retries: 0 } });
    await expect(wrong.auth.test()).rejects.toThrow(/invalid_auth/);
    expect(slack.calls[0]).toMatchObject({ method: "auth.test", token: slack.botToken });
  });

  it("[slack.stand-in.socket-mode] opens a Socket Mode connection, says hello and takes the client's acknowledgements of events_api envelopes", async () => {
    slack = await FakeSlack.start();
    client = new SocketModeClient({ appToken: slack.appToken, logger: quiet, clientOptions: { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } } });
    const seen: Array<{ body: Record<string, unknown>; event: Record<string, unknown> }> = [];
    client.on("message", async ({ ack, body, event }) => {
      seen.push({ body, event });
      await ack();
    });
    await client.start();
    await slack.connected();
    const id = slack.sendEvent(slack.message({ user: "U1HUMAN", channel: "C1", text: "hello" }), { event_id: "Ev1" });
    await slack.acked(id);
    await waitFor(() => seen.length === 1, "the event");
    expect(seen[0]!.body).toMatchObject({ type: "event_callback", event_id: "Ev1", team_id: "T0TEAM", authorizations: [{ user_id: "U0BOT", team_id: "T0TEAM" }] });
    expect(seen[0]!.event).toMatchObject({ type: "message", user: "U1HUMAN", channel: "C1", text: "hello" });
    expect(slack.callsOf("apps.connections.open")[0]!.token).toBe(slack.appToken);
  });
});
