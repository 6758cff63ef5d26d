import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient, isAlive, startDaemon, tauHome, waitFor } from "../../test/support/daemon.js";
import { REPO_ROOT } from "../../test/support/paths.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()?.();
});

describe("the word-count example extension", () => {
  it("registers its tool and answers a routed call through a real daemon", async () => {
    const h = tauHome();
    cleanups.push(h.dispose);
    mkdirSync(join(h.home, "config"), { recursive: true });
    writeFileSync(
      join(h.home, "config", "harness.yaml"),
      JSON.stringify({
        extensions: [
          { name: "words", command: ["node", "--import", "tsx", join(REPO_ROOT, "examples/word-count/main.ts")], config: { unit: "words" }, startup_timeout_seconds: 30 },
          { name: "driver", command: ["tau", "ext", "test-dummy"], config: { tools: ["echo"], driver: true }, call_tools: ["*"], startup_timeout_seconds: 30 },
        ],
      }),
    );
    const d = await startDaemon(h.env);
    cleanups.push(() => {
      if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
    });
    const ui = await TestClient.ui(d.socket);
    ui.send({ message: "subscribe", payload: { historical: ["tool.register"], live: ["*"] } });
    await waitFor(() => ui.deliveries().some((x) => x.name === "tool.register" && x.data.name === "word_count"), "word_count to register", 30_000);
    ui.emit("ui.create_agent", { request_id: "r1" });
    const m = await ui.next((x) => x.message === "direct");
    const agentId = m.message === "direct" ? String(m.payload.event.data.agent_id) : "";
    ui.emit("extension.event", { category: "test", name: "call", payload: { agent_id: agentId, call_id: "c-1", tool: "word_count", arguments: { text: "one two  three\nfour" } } });
    await waitFor(() => ui.deliveries().some((x) => x.name === "tool.result" && x.data.call_id === "c-1"), "the result", 30_000);
    expect(ui.deliveries().find((x) => x.name === "tool.result")?.data).toMatchObject({ outcome: "ok", output: "4 words", tool: "word_count" });
    ui.close();
  });
});
