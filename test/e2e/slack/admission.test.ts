// Admission through a real daemon, the Slack extension and the stand-in (SPEC-slack, "Admission"):
// each rejected message is dropped before it reaches the agent — the bridge logs why — and a
// message admitted afterwards shows nothing rejected reached the model (envelopes are handled in
// arrival order).
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { ALICE, CHANNEL, THREAD, ask, expectDropped, receivedByModel, route, scriptModel, slackSession, type SlackSession } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

/** After the drops, an admitted message is the only one the model ever saw. */
async function onlyAdmittedReached(s: SlackSession): Promise<void> {
  await ask(s, fake, "the admitted one");
  expect(receivedByModel(fake).map((m) => m.body)).toEqual(["the admitted one"]);
}

describe("Slack admission", () => {
  it("[slack.admit.bot-sender] a bot's message (bot_id, a bot_message subtype, this bot itself, or a sender users.info calls a bot) is not admitted", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake, { routes: [route({ users: [ALICE, "U0ROBOT"] })] }, { setUp: (sl) => sl.addUser({ id: "U0ROBOT", is_bot: true }) });
    const m = (o: Record<string, unknown>) => s.slack.message({ user: ALICE, channel: CHANNEL, thread_ts: THREAD, text: "beep", ...o });
    await expectDropped(s, m({ bot_id: "B0OTHER" }), "sent by a bot");
    await expectDropped(s, m({ subtype: "bot_message" }), "a bot_message message");
    await expectDropped(s, m({ user: "U0BOT" }), "sent by this bot");
    await expectDropped(s, m({ user: "U0ROBOT" }), "the sender is not a human");
    await onlyAdmittedReached(s);
  }, 120_000);

  it("[slack.admit.other-channel] a message in a conversation no route names is not admitted", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake);
    await expectDropped(s, s.slack.message({ user: ALICE, channel: "C0ELSEWHERE", thread_ts: THREAD, text: "hi" }), "not a configured conversation");
    // A direct message is not admitted either without a direct-message allowlist.
    await expectDropped(s, s.slack.message({ user: ALICE, channel: "D0ALICE", channel_type: "im", text: "hi" }), "not a configured conversation");
    await onlyAdmittedReached(s);
  }, 120_000);

  it("[slack.admit.wrong-thread] a message outside the route's exact thread (top level, another thread) is not admitted", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake);
    await expectDropped(s, s.slack.message({ user: ALICE, channel: CHANNEL, text: "top level" }), "not the configured thread");
    await expectDropped(s, s.slack.message({ user: ALICE, channel: CHANNEL, thread_ts: "1700000000.000999", text: "other thread" }), "not the configured thread");
    await onlyAdmittedReached(s);
  }, 120_000);

  it("[slack.admit.kind] a message whose conversation kind is not the route's is not admitted", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake);
    await expectDropped(s, s.slack.message({ user: ALICE, channel: CHANNEL, thread_ts: THREAD, channel_type: "group", text: "hi" }), "not the configured kind of conversation");
    await onlyAdmittedReached(s);
  }, 120_000);

  it("[slack.admit.sender] under strict mode only the route's native user ids are admitted; a display name or a non-native id never is", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake, { routes: [route()] }, { setUp: (sl) => sl.addUser({ id: "U0MALLORY", name: "U0ALICE" }) });
    await expectDropped(s, s.slack.message({ user: "U0MALLORY", channel: CHANNEL, thread_ts: THREAD, text: "hi" }), "a sender the route does not admit");
    await expectDropped(s, s.slack.message({ user: "alice", channel: CHANNEL, thread_ts: THREAD, text: "hi" }), "no native sender id");
    await onlyAdmittedReached(s);
  }, 120_000);

  it("[slack.admit.live-human] a sender users.info does not confirm as a live human (deactivated, unknown, an app user) is not admitted", async () => {
    scriptModel(fake);
    const users = [ALICE, "U0GONE", "U0NOBODY", "U0APPUSER"];
    const s = await slackSession(cleanups, fake, { routes: [route({ users })] }, { setUp: (sl) => (sl.addUser({ id: "U0GONE", deleted: true }), sl.addUser({ id: "U0APPUSER", is_app_user: true })) });
    await expectDropped(s, s.slack.message({ user: "U0GONE", channel: CHANNEL, thread_ts: THREAD, text: "hi" }), "the sender's account is deactivated");
    await expectDropped(s, s.slack.message({ user: "U0NOBODY", channel: CHANNEL, thread_ts: THREAD, text: "hi" }), "the sender could not be verified (user_not_found)");
    await expectDropped(s, s.slack.message({ user: "U0APPUSER", channel: CHANNEL, thread_ts: THREAD, text: "hi" }), "the sender is not a human");
    await onlyAdmittedReached(s);
  }, 120_000);

  it("[slack.admit.installation] an Events API wrapper not bound to the auth.test installation (another team, no or two authorizations, another bot user) is not admitted", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake);
    const m = () => s.slack.message({ user: ALICE, channel: CHANNEL, thread_ts: THREAD, text: "hi" });
    const auth = (o: Record<string, unknown>) => [{ enterprise_id: null, team_id: "T0TEAM", user_id: "U0BOT", is_bot: true, is_enterprise_install: false, ...o }];
    await expectDropped(s, m(), "the wrapper is for another workspace", { wrapper: { team_id: "T0OTHER", authorizations: auth({ team_id: "T0OTHER" }) } });
    await expectDropped(s, m(), "the wrapper names no team", { wrapper: { team_id: undefined } });
    await expectDropped(s, m(), "the wrapper carries no authorization", { wrapper: { authorizations: undefined } });
    await expectDropped(s, m(), "the wrapper carries more than one authorization", { wrapper: { authorizations: [...auth({}), ...auth({ user_id: "U0BOT2" })] } });
    await expectDropped(s, m(), "the wrapper's authorization is another installation's", { wrapper: { authorizations: auth({ user_id: "U0BOT2" }) } });
    await expectDropped(s, m(), "the wrapper's authorization is another installation's", { wrapper: { authorizations: auth({ team_id: "T0OTHER" }) } });
    await onlyAdmittedReached(s);
  }, 120_000);
});
