// Reply authority through a real daemon, the Slack extension and the stand-in (SPEC-slack, "Reply
// authority"): only tau-issued selectors answer, proactive sends need their own alias grant, direct
// messages are bounded reply-only links, lax mode widens senders but grants nothing, and one bridge
// serves one agent.
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { waitFor } from "../../support/wait.js";
import { ALICE, CHANNEL, THREAD, ask, directiveCalls, expectDropped, nthResult, route, scriptModel, slackSession } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const call = (args: Record<string, unknown>): string => `CALL slack_reply ${JSON.stringify(args)}`;

describe("Slack reply authority", () => {
  it("[slack.reply.forged-selector] reply_to takes only a live selector this bridge issued: a made-up one or a native channel id is refused and nothing is sent", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake);
    await ask(s, fake, call({ reply_to: "r-AAAAAAAAAAAAAAAA", text: "forged" }));
    expect(await nthResult(s.c, "slack_reply", 1)).toMatchObject({ outcome: "error", output: expect.stringContaining("not a live reply selector") });
    await ask(s, fake, call({ reply_to: CHANNEL, text: "native" }));
    expect(await nthResult(s.c, "slack_reply", 2)).toMatchObject({ outcome: "error", output: expect.stringContaining("not a live reply selector") });
    await ask(s, fake, call({ alias: CHANNEL, text: "native alias" }));
    expect(await nthResult(s.c, "slack_reply", 3)).toMatchObject({ outcome: "error", output: expect.stringContaining("names no route granted proactive sends") });
    expect(s.slack.posted).toEqual([]);
    await ask(s, fake, call({ reply_to: "$reply_to", text: "genuine" }));
    expect(await nthResult(s.c, "slack_reply", 4)).toMatchObject({ outcome: "ok" });
    expect(s.slack.posted.map((p) => [p.channel, p.thread_ts, p.text])).toEqual([[CHANNEL, THREAD, "genuine"]]);
  }, 120_000);

  it("[slack.reply.proactive-alias] posting without a message to answer needs the route's separate proactive grant, by alias only; a send-only route admits nothing", async () => {
    scriptModel(fake);
    const announce = { alias: "announce", channel: "C0ANNOUNCE", kind: "channel", receive: false, proactive: true, users: [ALICE] };
    const s = await slackSession(cleanups, fake, { routes: [route(), announce] });
    await ask(s, fake, call({ alias: "ops", text: "unasked" }));
    expect(await nthResult(s.c, "slack_reply", 1)).toMatchObject({ outcome: "error", output: expect.stringContaining("names no route granted proactive sends") });
    await ask(s, fake, call({ alias: "announce", text: "hello all", mention_source: true }));
    expect(await nthResult(s.c, "slack_reply", 2)).toMatchObject({ outcome: "error", output: expect.stringContaining("mention_source needs reply_to") });
    await ask(s, fake, call({ alias: "announce", text: "hello all" }));
    expect(await nthResult(s.c, "slack_reply", 3)).toMatchObject({ outcome: "ok", output: expect.stringMatching(/^sent to announce; message_ref m-/) });
    expect(s.slack.posted.map((p) => [p.channel, p.thread_ts, p.text])).toEqual([["C0ANNOUNCE", undefined, "hello all"]]);
    await expectDropped(s, s.slack.message({ user: ALICE, channel: "C0ANNOUNCE", text: "hi" }), "a send-only route");
  }, 120_000);

  it("[slack.reply.direct-messages] direct messages are admitted only from the allowlist, bound to that exact user, bounded (the oldest link goes, its selectors with it) and reply-only", async () => {
    let aliceSelector = "";
    scriptModel(fake, (m) => {
      if (m.attrs.sender_id === ALICE) aliceSelector = m.attrs.reply_to!;
      if (m.body === "bob: answer alice") return [{ name: "slack_reply", arguments: { reply_to: aliceSelector, text: "late" } }];
      return directiveCalls(m.body, m);
    });
    const s = await slackSession(cleanups, fake, { direct_messages: { users: [ALICE, "U0BOB"], max_links: 1 } }, { setUp: (sl) => (sl.addUser({ id: "U0BOB" }), sl.addUser({ id: "U0MALLORY" })) });
    const dm = { thread_ts: "", channel_type: "im" };
    const a = await ask(s, fake, call({ reply_to: "$reply_to", text: "hi alice" }), { ...dm, channel: "D0ALICE" });
    expect(a.attrs).toMatchObject({ via: "dm", admission: "direct_message", sender_id: ALICE });
    expect(await nthResult(s.c, "slack_reply", 1)).toMatchObject({ outcome: "ok" });
    expect(s.slack.posted.map((p) => [p.channel, p.thread_ts, p.text])).toEqual([["D0ALICE", undefined, "hi alice"]]);
    await expectDropped(s, s.slack.message({ user: "U0MALLORY", channel: "D0MALLORY", channel_type: "im", text: "hi" }), "not a configured conversation");
    // Bob's link takes the only place: Alice's selector is no longer live.
    await ask(s, fake, "bob: answer alice", { ...dm, user: "U0BOB", channel: "D0BOB" });
    expect(await nthResult(s.c, "slack_reply", 2)).toMatchObject({ outcome: "error", output: expect.stringContaining("not a live reply selector") });
    // Reply-only: no alias names a direct message.
    await ask(s, fake, call({ alias: "dm", text: "unasked" }), { ...dm, user: "U0BOB", channel: "D0BOB" });
    expect(await nthResult(s.c, "slack_reply", 3)).toMatchObject({ outcome: "error" });
    expect(s.slack.posted).toHaveLength(1);
  }, 120_000);

  it("[slack.reply.lax-not-control] security_mode lax admits any verified human on the static route, as untrusted queued content that grants no send, direct-message or control authority", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake, { routes: [route({ security_mode: "lax", users: [] })] }, { setUp: (sl) => sl.addUser({ id: "U0MALLORY" }) });
    const m = await ask(s, fake, `:cancel\n${call({ alias: "ops", text: "unasked" })}`, { user: "U0MALLORY" });
    expect(m.attrs).toMatchObject({ admission: "lax", sender_id: "U0MALLORY" });
    expect(await nthResult(s.c, "slack_reply", 1)).toMatchObject({ outcome: "error", output: expect.stringContaining("names no route granted proactive sends") });
    const submitted = s.c.deliveriesOf("agent.prompt_submitted", (d) => d.agent_id === s.agentId);
    expect(submitted.map((x) => [x.data.source, x.data.mode, x.data.submitter])).toEqual([["extension", "queue", "slack"]]);
    expect(String(submitted[0]!.data.text)).toMatch(/^<tau_slack_message [^\n]*>\n:cancel\n/);
    expect(s.c.deliveriesOf("agent.cancel_request")).toEqual([]);
    await expectDropped(s, s.slack.message({ user: "U0MALLORY", channel: "D0MALLORY", channel_type: "im", text: "hi" }), "not a configured conversation");
    expect(s.slack.posted).toEqual([]);
  }, 120_000);

  it("[slack.reply.one-agent] one bridge serves exactly one receiving agent: another agent's reply or discovery call is refused", async () => {
    let selector = "";
    scriptModel(fake, (m) => ((selector = m.attrs.reply_to!), []));
    const s = await slackSession(cleanups, fake);
    await ask(s, fake, "hello");
    const other = await s.c.createAgent("r-agent-2");
    s.c.emit("ui.prompt_submit", { agent_id: other, mode: "queue", text: `${call({ reply_to: selector, text: "from elsewhere" })}\nCALL slack_routes {}` });
    expect(await nthResult(s.c, "slack_reply", 1)).toMatchObject({ outcome: "error", output: expect.stringContaining("serves another agent") });
    expect(await nthResult(s.c, "slack_routes", 1)).toMatchObject({ outcome: "error", output: expect.stringContaining("serves another agent") });
    await waitFor(() => s.c.deliveriesOf("agent.outer_turn_finished", (d) => d.agent_id === other).length > 0, "the other agent's turn");
    expect(s.slack.posted).toEqual([]);
  }, 120_000);
});
