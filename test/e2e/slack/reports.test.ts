// What reaches the agent, and when (SPEC-slack, "Reports"): native occurrence ids are recorded
// before anything else, so a replayed event id is dropped — across a Socket Mode reconnect too —
// and a delivery that failed after the record is not retried; the bridge's Slack connection ends
// with its harness.
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { waitFor } from "../../support/wait.js";
import { ALICE, CHANNEL, THREAD, ask, expectDropped, extensionsLog, receivedByModel, scriptModel, slackSession } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

describe("Slack reports", () => {
  it("[slack.report.replayed-occurrence] a replayed native event id is dropped, also when Slack redelivers it on a new Socket Mode connection", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake);
    const m = s.slack.message({ user: ALICE, channel: CHANNEL, thread_ts: THREAD, text: "once" });
    s.slack.sendEvent(m, { event_id: "EvREPLAYED1" });
    await waitFor(() => receivedByModel(fake).length === 1, "the first delivery");
    await expectDropped(s, m, "a repeated occurrence", { event_id: "EvREPLAYED1" });
    const opened = s.slack.callsOf("apps.connections.open").length;
    s.slack.askToReconnect();
    await waitFor(() => s.slack.callsOf("apps.connections.open").length > opened && s.slack.connections === 1, "the reconnection", 30_000);
    await expectDropped(s, m, "a repeated occurrence", { event_id: "EvREPLAYED1" });
    await ask(s, fake, "after the reconnection");
    expect(receivedByModel(fake).map((x) => x.body)).toEqual(["once", "after the reconnection"]);
    expect(s.c.deliveriesOf("agent.prompt_submitted", (d) => d.agent_id === s.agentId)).toHaveLength(2);
  }, 120_000);

  it("[slack.report.consumed-on-failure] an occurrence is recorded before the identity lookup: one whose lookup failed is not retried when Slack sends it again", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake);
    s.slack.failNext("users.info", "internal_error");
    const m = s.slack.message({ user: ALICE, channel: CHANNEL, thread_ts: THREAD, text: "unlucky" });
    await expectDropped(s, m, "the sender could not be verified (internal_error)", { event_id: "EvUNLUCKY1" });
    await expectDropped(s, m, "a repeated occurrence", { event_id: "EvUNLUCKY1" });
    await ask(s, fake, "a new occurrence");
    expect(receivedByModel(fake).map((x) => x.body)).toEqual(["a new occurrence"]);
  }, 120_000);

  it("[slack.report.disconnect-cleanup] when its harness goes away the bridge closes its Slack connection with a close frame, taking its routes with it", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake);
    expect(s.slack.connections).toBe(1);
    process.kill(s.d.pid, "SIGTERM");
    await waitFor(() => s.slack.connections === 0, "the Socket Mode connection to close", 30_000);
    expect(s.slack.closeCodes).toEqual([1000]);
  }, 120_000);
});

describe("Slack reports under load", () => {
  it("[slack.report.capacity] envelopes past the bridge's bound while it waits are dropped after their occurrence is recorded, so Slack's retry of one is not delivered", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake);
    const release = s.slack.hold("users.info");
    const m = (n: number) => s.slack.message({ user: ALICE, channel: CHANNEL, thread_ts: THREAD, text: `m${n}` });
    // One in hand and MAX_PENDING_ENVELOPES (256) waiting; the next is over capacity.
    for (let n = 0; n <= 256; n++) s.slack.sendEvent(m(n), { event_id: `EvLOAD${n}` });
    await expectDropped(s, m(257), "the bridge is over capacity", { event_id: "EvLOAD257" });
    release();
    // Handled in order: by the time Slack's retry is dropped as a repeat, every waiting one was admitted.
    await expectDropped(s, m(257), "a repeated occurrence", { event_id: "EvLOAD257" });
    expect(extensionsLog(s.w, s.d).match(/dropped EvLOAD\d+/g)).toEqual(["dropped EvLOAD257", "dropped EvLOAD257"]);
    await waitFor(() => s.c.deliveriesOf("agent.external_message_reported").length === 257, "the 257 reports", 60_000);
  }, 180_000);
});
