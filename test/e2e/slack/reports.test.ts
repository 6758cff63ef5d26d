// What reaches the agent, and when (SPEC-slack, "Reports"): native occurrence ids are recorded
// before anything else, so a replayed event id is dropped — across a Socket Mode reconnect too —
// and a delivery that failed after the record is not retried; the bridge's Slack connection ends
// with its harness.
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { waitFor } from "../../support/wait.js";
import { ALICE, CHANNEL, THREAD, ask, expectDropped, receivedByModel, scriptModel, slackSession } from "./support.js";

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
