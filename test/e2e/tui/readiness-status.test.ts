// While an extension holds the session (SPEC-extension-declarations, "Session readiness"), the
// interactive UI's status line says which extension it waits for, instead of `ready`; a prompt typed
// meanwhile is answered once the extension says it is ready.
import { describe, expect, it } from "vitest";
import { agentHarnessYaml, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { quitTau, ready, seen, startTau, tuiWorkspace } from "../../support/pty.js";
import { subscriberOf } from "../../support/daemon.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const HOLDER = { name: "holder", kind: "tool", command: ["tau", "ext", "test-dummy"], config: { driver: true, hold_session: true }, startup_timeout_seconds: 30 };

describe("the status line while extensions hold the session", () => {
  it("[tui.status.waiting-for-extension] names the extension the session waits for until it is ready; a prompt typed meanwhile is answered after", async () => {
    const w = tuiWorkspace(workspaceIn(cleanups, agentHarnessYaml(fake, { shell: false, extensions: [HOLDER] })), fake);
    fake.enqueue(textResponse("answered after the wait"));
    const t = startTau(cleanups, w);
    await t.waitFor(seen("waiting for holder to be ready…"), "the status line naming the extension");
    t.type("hello\r");
    const watcher = await subscriberOf(w.home, cleanups);
    await watcher.sync();
    expect(fake.chatRequests).toHaveLength(0); // held: nothing reached the model
    expect(t.screen().join("\n")).not.toContain(" · ready");
    watcher.emit("extension.event", { category: "test", name: "session_ready", payload: { instance: "holder" } });
    await t.waitFor(seen("answered after the wait"), "the prompt answered once the session is ready");
    await t.waitFor(ready, "the status line back to ready");
    watcher.close();
    expect(await quitTau(t)).toBe(0);
  });
});
