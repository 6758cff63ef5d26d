// Long streamed answers through the real provider extension and daemon: a 64 KB answer sent a few
// bytes per server event completes every time, and arrives whole.
import { describe, expect, it } from "vitest";
import { TestClient, waitFor } from "../../support/daemon.js";
import { daemonIn, fakeOpenAIIn, providerHome, useCleanups } from "../../support/e2e.js";
import { textResponse } from "../../support/fake-openai.js";

const cleanups = useCleanups();

describe("long streamed answers", () => {
  it("[provider.stream.long-answer-completes] a 64 KB answer in 16,384 events completes in 50 consecutive prompts", async () => {
    const fake = await fakeOpenAIIn(cleanups);
    const h = providerHome(cleanups, fake);
    const d = await daemonIn(cleanups, h.env);
    const ui = await TestClient.ui(d.socket);
    ui.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: ["harness.models_available", "agent.outer_turn_finished", "provider.response_finished", "provider.response_failed"] } });
    await waitFor(() => ui.deliveries().some((x) => x.name === "harness.models_available"), "the models", 30_000);
    const agent = await ui.createAgent("r");
    const answer = Array.from({ length: 16_384 }, (_, i) => `w${(i % 100).toString().padStart(2, "0")} `); // 4 bytes each
    for (let run = 1; run <= 50; run++) {
      fake.enqueue(textResponse(answer));
      ui.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text: `run ${run}` });
      await waitFor(() => ui.deliveries().filter((x) => x.name === "agent.outer_turn_finished").length === run, `run ${run} to finish`, 30_000);
    }
    const finished = ui.deliveries().filter((x) => x.name === "provider.response_finished");
    expect(finished).toHaveLength(50);
    for (const f of finished) expect(f.data.text).toBe(answer.join(""));
    expect(ui.deliveries().filter((x) => x.name === "agent.outer_turn_finished").every((x) => x.data.outcome === "completed")).toBe(true);
    ui.close();
  }, 300_000);
});
