// A prompt on a transcript larger than one frame reaches the provider whole: a 20 MiB session, built
// through the store API, is resumed by a real daemon whose real provider extension talks to a
// loopback OpenAI-compatible server.
import { describe, expect, it } from "vitest";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { TestClient, waitFor } from "../../support/daemon.js";
import { daemonIn, fakeOpenAIIn, providerHome, useCleanups } from "../../support/e2e.js";
import { textResponse } from "../../support/fake-openai.js";
import { generateSession } from "../../support/session-generator.js";

const cleanups = useCleanups();

describe("a transcript larger than a frame", () => {
  it("[provider.request.long-transcript-reaches-provider] a prompt on a 20 MiB transcript reaches the provider with every message", async () => {
    const fake = await fakeOpenAIIn(cleanups);
    const h = providerHome(cleanups, fake, ["gen-model"]);
    const project = join(h.home, "project");
    mkdirSync(project);
    const g = generateSession(join(h.home, "state"), { targetBytes: 20 * 1024 * 1024, projectRoot: project });
    const d = await daemonIn(cleanups, h.env, ["--resume", g.sessionId, "--project-root", project]);
    fake.enqueue(textResponse("read it all"));
    const ui = await TestClient.ui(d.socket);
    ui.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: ["harness.models_available", "agent.*", "provider.response_failed"] } });
    await waitFor(() => ui.deliveries().some((x) => x.name === "harness.models_available"), "the provider's models", 30_000);
    ui.emit("ui.prompt_submit", { agent_id: g.agentId, mode: "queue", text: "what did we find?" });
    await waitFor(() => ui.deliveries().some((x) => x.name === "agent.outer_turn_finished"), "the turn", 60_000);
    expect(ui.deliveries().find((x) => x.name === "agent.outer_turn_finished")?.data).toMatchObject({ outcome: "completed" });
    const req = fake.chatRequests[0]!;
    expect(req.rawBody.length).toBeGreaterThan(16 * 1024 * 1024);
    const messages = (req.body as { messages: Array<{ role: string; content: string; tool_call_id?: string }> }).messages;
    expect(messages[0]?.role).toBe("system");
    expect(messages[1]?.content).toContain(g.firstPrompt);
    expect(messages.filter((m) => m.role === "tool")).toHaveLength(g.turns);
    expect(messages.at(-1)?.content).toContain("what did we find?");
    ui.close();
  }, 120_000);
});
