// The agent's side of the bridge (SPEC-slack, "Agent sends" and "Tools"): plain-text sends that
// refuse raw mention/control markup, the source mention, the default-off reaction tool on retained
// refs and own reactions only, and the discovery tool's static view.
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { ALICE, CHANNEL, THREAD, ask, nthResult, route, scriptModel, slackSession } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const call = (tool: string, args: Record<string, unknown>): string => `CALL ${tool} ${JSON.stringify(args)}`;
const offered = (f: FakeOpenAI): string[] => ((f.chatRequests.at(-1)?.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name);

describe("Slack agent sends and tools", () => {
  it("[slack.send.control-markup] a send carrying raw mention or control markup (<!channel>, <!here>, <@U…>, <#C…>) is refused; other < > & are sent as plain text", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake);
    const refused = ["<!channel> deploy now", "hey < !here >", `ping <@${ALICE}>`, "see <#C0OPS|ops>"];
    for (const [i, text] of refused.entries()) {
      await ask(s, fake, call("slack_reply", { reply_to: "$reply_to", text }));
      expect(await nthResult(s.c, "slack_reply", i + 1)).toMatchObject({ outcome: "error", output: expect.stringContaining("raw Slack mention or control markup") });
    }
    expect(s.slack.posted).toEqual([]);
    await ask(s, fake, call("slack_reply", { reply_to: "$reply_to", text: "if a < b && c > d" }));
    expect(await nthResult(s.c, "slack_reply", 5)).toMatchObject({ outcome: "ok" });
    expect(s.slack.posted.map((p) => p.text)).toEqual(["if a &lt; b &amp;&amp; c &gt; d"]);
    expect(s.slack.posted[0]!.args).toMatchObject({ link_names: "false", unfurl_links: "false" });
  }, 120_000);

  it("[slack.send.mention-source] mention_source names only the verified human bound to the reply selector", async () => {
    let aliceSelector = "";
    scriptModel(fake, (m) => {
      if (m.attrs.sender_id === ALICE) return ((aliceSelector = m.attrs.reply_to!), []);
      return [{ name: "slack_reply", arguments: { reply_to: aliceSelector, text: "answer", mention_source: true } }];
    });
    const s = await slackSession(cleanups, fake, { routes: [route({ users: [ALICE, "U0BOB"] })] }, { setUp: (sl) => sl.addUser({ id: "U0BOB" }) });
    await ask(s, fake, "alice asks");
    await ask(s, fake, "bob asks the agent to answer alice", { user: "U0BOB" });
    expect(await nthResult(s.c, "slack_reply", 1)).toMatchObject({ outcome: "ok" });
    expect(s.slack.posted.map((p) => [p.channel, p.thread_ts, p.text])).toEqual([[CHANNEL, THREAD, `<@${ALICE}> answer`]]);
  }, 120_000);

  it("[slack.react.default-off] the reaction tool is not offered unless reactions: true", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake, { routes: [route()] }, { tools: ["slack_reply", "slack_routes"] });
    await ask(s, fake, "hello");
    expect(offered(fake)).toEqual(expect.arrayContaining(["slack_reply", "slack_routes"]));
    expect(offered(fake)).not.toContain("slack_react");
    expect(s.c.deliveriesOf("tool.register", (d) => d.name === "slack_react")).toEqual([]);
  }, 120_000);

  it("[slack.react.own-only] with reactions on, the agent reacts only to retained exact-message refs and removes only its own reactions; it never lists reactions", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake, { routes: [route()], reactions: true }, { tools: ["slack_reply", "slack_react"] });
    const first = await ask(s, fake, call("slack_react", { message_ref: "$message_ref", name: "eyes" }));
    expect(await nthResult(s.c, "slack_react", 1)).toMatchObject({ outcome: "ok", output: "added :eyes:" });
    const [channel, , name] = [...s.slack.reactions][0]!.split(" ");
    expect([channel, name]).toEqual([CHANNEL, "eyes"]);
    // Someone else's reaction on the same message is not the agent's to remove.
    s.slack.reactions.add(`${CHANNEL} ${[...s.slack.reactions][0]!.split(" ")[1]} thumbsup`);
    await ask(s, fake, call("slack_react", { message_ref: first.attrs.message_ref!, name: "thumbsup", remove: true }));
    expect(await nthResult(s.c, "slack_react", 2)).toMatchObject({ outcome: "error", output: expect.stringContaining("only a reaction you added") });
    await ask(s, fake, call("slack_react", { message_ref: "m-AAAAAAAAAAAA", name: "eyes" }));
    expect(await nthResult(s.c, "slack_react", 3)).toMatchObject({ outcome: "error", output: expect.stringContaining("not a message this bridge retained") });
    await ask(s, fake, call("slack_react", { message_ref: first.attrs.message_ref!, name: "eyes", remove: true }));
    expect(await nthResult(s.c, "slack_react", 4)).toMatchObject({ outcome: "ok", output: "removed :eyes:" });
    expect(s.slack.reactions.size).toBe(1); // only the thumbsup the agent did not add
    expect(s.slack.callsOf("reactions.remove")).toHaveLength(1);
    expect(s.slack.calls.filter((c) => c.method === "reactions.get" || c.method === "reactions.list")).toEqual([]);
  }, 120_000);

  it("[slack.discovery.static-only] slack_routes shows static aliases and configured policy (receive-only routes too), never native ids, identities or runtime links", async () => {
    scriptModel(fake);
    const config = {
      routes: [route(), { alias: "watch", channel: "C0WATCH", kind: "group", receive: true, security_mode: "lax" }],
      direct_messages: { users: [ALICE], max_links: 4 },
    };
    const s = await slackSession(cleanups, fake, config, { tools: ["slack_reply", "slack_routes"] });
    await ask(s, fake, "hi", { channel_type: "im", channel: "D0ALICE", thread_ts: "" });
    await ask(s, fake, call("slack_routes", {}));
    const out = (await nthResult(s.c, "slack_routes", 1)).output;
    expect(out).toBe(
      [
        "routes:",
        "- ops: channel, one thread; receive; senders: 1 allowed person",
        "- watch: group, top-level messages; receive; senders: any verified human (lax)",
        "direct messages: reply-only, from 1 allowed person, at most 4 at a time",
        "reactions: off",
      ].join("\n"),
    );
    for (const secret of [CHANNEL, "C0WATCH", THREAD, ALICE, "D0ALICE", "T0TEAM", "U0BOT"]) expect(out).not.toContain(secret);
  }, 120_000);
});
