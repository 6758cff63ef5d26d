// The Python example extension (examples/python-tool/: the generated Python contracts, its own
// frames and CBOR, python3's standard library only) configured in a real daemon: its handshake, its
// tool's registration and calls routed to it end to end, and its configuration error.
import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { TestClient, isAlive, startDaemonWithExtensions, waitFor, watchSession, type StartedDaemon } from "../../support/daemon.js";
import { REPO_ROOT } from "../../support/paths.js";

const EXAMPLE = join(REPO_ROOT, "examples/python-tool/word_frequency.py");
const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()?.();
});

const daemonWith = (extensions: unknown[]): Promise<StartedDaemon> => startDaemonWithExtensions(extensions, cleanups);

const example = (config: Record<string, unknown>) => ({
  name: "words-py",
  command: ["python3", EXAMPLE],
  config,
  tool_prefix: "py_",
  startup_timeout_seconds: 20,
});
// Turns `extension.event {category: "test", name: "call"}` from the UI into tool requests.
const driver = { name: "driver", command: ["tau", "ext", "test-dummy"], config: { tools: ["echo"], driver: true }, call_tools: ["*"], startup_timeout_seconds: 20 };

async function call(ui: TestClient, agentId: string, callId: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  ui.emit("extension.event", { category: "test", name: "call", payload: { agent_id: agentId, call_id: callId, tool: "py_word_frequency", arguments: args } });
  await waitFor(() => ui.deliveriesOf("tool.result", (x) => x.call_id === callId).length === 1, `the result of ${callId}`, 30_000);
  return ui.deliveriesOf("tool.result", (x) => x.call_id === callId)[0]!.data;
}

describe("the Python example extension", () => {
  it("[sdk.python.example-tool-call] registers its tool and answers calls routed through a real daemon", async () => {
    const d = await daemonWith([example({ case_sensitive: false }), driver]);
    const ui = await watchSession(d);
    await waitFor(() => ui.deliveriesOf("tool.register", (x) => x.name === "py_word_frequency").length === 1, "py_word_frequency to register", 30_000);
    expect(ui.deliveriesOf("tool.register", (x) => x.name === "py_word_frequency")[0]?.data).toMatchObject({ owner: "words-py" });
    ui.emit("ui.create_agent", { request_id: "r-agent" });
    const created = await ui.next((m) => m.message === "direct" && m.payload.event.name === "ui.create_agent_result");
    if (created.message !== "direct") throw new Error("unreachable");
    const agentId = String(created.payload.event.data.agent_id);

    const ok = await call(ui, agentId, "c-ok", { text: "The cat saw the dog; the dog saw a Cat. Il a dit: « été »", top: 3 });
    expect(ok).toMatchObject({ outcome: "ok", tool: "py_word_frequency", output: "the 3\na 2\ncat 2" });
    // The display hint travels to UIs only, beside the result.
    await waitFor(() => ui.deliveriesOf("tool.result_display", (x) => x.call_id === "c-ok").length === 1, "the display");
    expect(ui.deliveriesOf("tool.result_display", (x) => x.call_id === "c-ok")[0]?.data).toMatchObject({ display: { summary: "14 words, 8 distinct" } });

    // A failure the tool reports becomes the call's error; the extension goes on serving.
    const bad = await call(ui, agentId, "c-bad", { text: "a b", top: 0 });
    expect(bad).toMatchObject({ outcome: "error", tool: "py_word_frequency" });
    expect(String(bad.output)).toContain("top must be a whole number from 1 to 100");
    const again = await call(ui, agentId, "c-again", { text: "été été Été" });
    expect(again).toMatchObject({ outcome: "ok", output: "été 3" });

    // It speaks this build's revision: no warning about another minor.
    expect(ui.deliveriesOf("harness.notice", (x) => String(x.text).includes("speaks protocol"))).toEqual([]);
    expect(ui.deliveriesOf("harness.notice", (x) => x.instance === "words-py")).toEqual([]);
    expect(isAlive(d.pid)).toBe(true);
    ui.close();
  });

  it("[sdk.python.example-config-error] a bad configuration is reported with config_error, never made ready", async () => {
    const d = await daemonWith([example({ case_sensitive: "yes" }), driver]);
    const ui = await watchSession(d);
    await waitFor(() => ui.deliveriesOf("harness.notice", (x) => x.instance === "words-py").length > 0, "the notice", 30_000);
    expect(ui.deliveriesOf("harness.notice", (x) => x.instance === "words-py")[0]?.data).toMatchObject({
      level: "error",
      mandatory: true,
      text: 'extension "words-py": configuration error: case_sensitive must be true or false',
    });
    // The driver came up; the example's tool never did.
    await waitFor(() => ui.deliveriesOf("tool.register", (x) => x.name === "echo").length === 1, "the driver's tool", 30_000);
    expect(ui.deliveriesOf("tool.register", (x) => x.name === "py_word_frequency")).toEqual([]);
    ui.close();
  });
});
