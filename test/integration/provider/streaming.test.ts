// Long streamed answers through the real provider extension and daemon: a 64 KB answer sent a few
// bytes per server event completes every time, and arrives whole.
import { afterEach, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient, isAlive, startDaemon, tauHome, waitFor } from "../../support/daemon.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

describe("long streamed answers", () => {
  it("[provider.stream.long-answer-completes] a 64 KB answer in 16,384 events completes in 50 consecutive prompts", async () => {
    const fake = await FakeOpenAI.start();
    cleanups.push(() => fake.close());
    const h = tauHome();
    cleanups.push(h.dispose);
    writeFileSync(
      join(h.home, "config", "harness.yaml"),
      JSON.stringify({
        extensions: [{ name: "llm", kind: "provider", command: ["tau", "ext", "provider"], config: { profile: "chat_completions", base_url: fake.baseUrl, models: [{ id: "m" }] }, startup_timeout_seconds: 30 }],
      }),
    );
    const d = await startDaemon(h.env);
    cleanups.push(() => {
      if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
    });
    const ui = await TestClient.ui(d.socket);
    ui.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: ["harness.models_available", "agent.outer_turn_finished", "provider.response_finished", "provider.response_failed"] } });
    await waitFor(() => ui.deliveries().some((x) => x.name === "harness.models_available"), "the models", 30_000);
    ui.emit("ui.create_agent", { request_id: "r" });
    const created = await ui.next((m) => m.message === "direct");
    const agent = created.message === "direct" ? String(created.payload.event.data.agent_id) : "";
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
