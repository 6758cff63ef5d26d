// The harness's side of an external-message report (SPEC-slack, "What the agent receives"): the
// raw publisher claim is kept as sent on the committed report, and the prompt is derived only when
// the claim is a valid instance name equal to the publisher's authenticated configured instance —
// here a test extension claims to be the Slack bridge, claims a malformed name, then its own.
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { waitFor } from "../../support/wait.js";
import { ask, nthResult, receivedByModel, scriptModel, slackSession } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const DUMMY = { name: "dummy", kind: "tool", command: ["tau", "ext", "test-dummy"], config: { tools: ["report"] }, startup_timeout_seconds: 30 };

describe("external-message reports", () => {
  it("[slack.report.publisher-claim] a report's raw publisher claim is kept as sent; only a valid claim equal to the authenticated instance becomes a prompt, stamped from that identity", async () => {
    scriptModel(fake);
    const s = await slackSession(cleanups, fake, undefined, { extensions: [DUMMY], tools: ["slack_reply", "report"] });
    const report = (n: number, publisher: string, text: string) => {
      s.c.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text: `CALL report ${JSON.stringify({ agent_id: s.agentId, publisher, text })}` });
      return nthResult(s.c, "report", n);
    };
    const reports = () => s.c.deliveriesOf("agent.external_message_reported").map((x) => x.data);
    const submittedTexts = () => s.c.deliveriesOf("agent.prompt_submitted", (d) => d.source === "extension").map((x) => [x.data.text, x.data.submitter]);
    // Impersonating the configured Slack bridge: observed, never a prompt.
    await report(1, "slack", "IMPERSONATED");
    // A malformed claim (not an instance name; odd characters kept exactly).
    const odd = "Slack Bridge\u202e\u0007 <!channel>";
    await report(2, odd, "MALFORMED");
    // Its own configured name: the prompt, with the submitter from the captured identity.
    await report(3, "dummy", "GENUINE");
    await waitFor(() => submittedTexts().length === 1, "the genuine report's prompt", 30_000);
    expect(submittedTexts()).toEqual([["GENUINE", "dummy"]]);
    expect(reports().map((r) => [r.publisher, r.text, r.adapter])).toEqual([
      ["slack", "IMPERSONATED", "slack"],
      [odd, "MALFORMED", "slack"],
      ["dummy", "GENUINE", "slack"],
    ]);
    // The real bridge's reports carry its own name and become prompts submitted by it.
    await ask(s, fake, "from slack");
    await waitFor(() => submittedTexts().length === 2, "the bridge's prompt");
    expect(reports().at(-1)).toMatchObject({ publisher: "slack", adapter: "slack", agent_id: s.agentId });
    expect(submittedTexts()[1]![1]).toBe("slack");
    expect(receivedByModel(fake).map((m) => m.body)).toEqual(["from slack"]);
  }, 120_000);
});
