// OTLP attributes from a real session: a daemon whose provider extension talks to a loopback
// OpenAI-compatible server records where each round went (`agent.prompt_started`'s `provider`), and
// `tau agent trace --format otlp` turns it into the GenAI conventions' provider and server attributes;
// a prompt whose round failed reports no token counts.
import { describe, expect, it } from "vitest";
import { TestClient, waitFor } from "../../support/daemon.js";
import { daemonIn, fakeOpenAIIn, providerHome, useCleanups } from "../../support/e2e.js";
import { errorResponse, textResponse } from "../../support/fake-openai.js";
import { decodeOtlpJson, normalSpans, type NormalSpan } from "../../support/otlp.js";
import { runTau } from "../../support/run-tau.js";

const cleanups = useCleanups();

describe("OTLP from a real session", () => {
  it("[trace.otlp.conventions] chat spans name the provider, the server and its port, a streamed request and the session; a failed prompt has no token counts", async () => {
    const fake = await fakeOpenAIIn(cleanups);
    const h = providerHome(cleanups, fake);
    const d = await daemonIn(cleanups, h.env);
    const ui = await TestClient.ui(d.socket);
    cleanups.push(() => ui.close());
    ui.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: ["harness.models_available", "agent.prompt_started", "agent.outer_turn_finished"] } });
    await waitFor(() => ui.deliveries().some((x) => x.name === "harness.models_available"), "the models", 30_000);
    const agent = await ui.createAgent("r");
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
