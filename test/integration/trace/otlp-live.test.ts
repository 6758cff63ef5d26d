// OTLP attributes from a real session: a daemon whose provider extension talks to a loopback
// OpenAI-compatible server records where each round went (`agent.prompt_started`'s `provider`), and
// `tau agent trace --format otlp` turns it into the GenAI conventions' provider and server attributes;
// a prompt whose round failed reports no token counts.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TestClient, isAlive, startDaemon, tauHome, waitFor } from "../../support/daemon.js";
import { FakeOpenAI, errorResponse, textResponse } from "../../support/fake-openai.js";
import { decodeOtlpJson, normalSpans, type NormalSpan } from "../../support/otlp.js";
import { runTau } from "../../support/run-tau.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

describe("OTLP from a real session", () => {
  it("[trace.otlp.conventions] chat spans name the provider, the server and its port, a streamed request and the session; a failed prompt has no token counts", async () => {
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
    cleanups.push(() => ui.close());
    ui.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: ["harness.models_available", "agent.prompt_started", "agent.outer_turn_finished"] } });
    await waitFor(() => ui.deliveries().some((x) => x.name === "harness.models_available"), "the models", 30_000);
    ui.emit("ui.create_agent", { request_id: "r" });
    const created = await ui.next((m) => m.message === "direct");
    const agent = created.message === "direct" ? String(created.payload.event.data.agent_id) : "";
    fake.enqueue(textResponse("hello", { usage: { prompt_tokens: 12, completion_tokens: 3 } }));
    ui.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text: "one" });
    await waitFor(() => ui.deliveries().filter((x) => x.name === "agent.outer_turn_finished").length === 1, "the first prompt", 30_000);
    fake.enqueue(errorResponse(400, { message: "bad request" }));
    ui.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text: "two" });
    await waitFor(() => ui.deliveries().filter((x) => x.name === "agent.outer_turn_finished").length === 2, "the second prompt", 30_000);

    // The journal says where the rounds went.
    const port = Number(new URL(fake.baseUrl).port);
    const provider = { instance: "llm", api: "chat_completions", server_address: "127.0.0.1", server_port: port };
    expect(ui.deliveries().filter((x) => x.name === "agent.prompt_started").map((x) => x.data.provider)).toEqual([provider, provider]);

    const r = await runTau(["agent", "trace", agent, "--format", "otlp"], { env: h.env });
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const spans = r.stdout.split("\n").filter(Boolean).flatMap((l) => normalSpans(decodeOtlpJson(JSON.parse(l))));
    const chats = spans.filter((s) => s.attributes["gen_ai.operation.name"] === "chat");
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat.attributes).toMatchObject({
        "gen_ai.provider.name": "openai",
        "server.address": "127.0.0.1",
        "server.port": port,
        "gen_ai.request.stream": true,
        "gen_ai.request.model": "m",
        "gen_ai.conversation.id": d.session_id,
      });
    }
    const roots = spans.filter((s) => s.parentSpanId === "");
    const byOutcome = (o: string) => roots.find((s) => s.attributes["tau.prompt.outcome"] === o) as NormalSpan;
    expect(byOutcome("completed").attributes).toMatchObject({ "gen_ai.provider.name": "openai", "gen_ai.usage.input_tokens": 12, "gen_ai.usage.output_tokens": 3 });
    const failed = byOutcome("failed");
    expect(failed.attributes).toMatchObject({ "gen_ai.provider.name": "openai", "error.type": "invalid_request" });
    for (const s of spans.filter((x) => x.traceId === failed.traceId)) expect(Object.keys(s.attributes).filter((k) => k.startsWith("gen_ai.usage."))).toEqual([]);
  }, 120_000);
});
