// Colon commands an extension owns (SPEC-extension-commands): the real interactive UI in a
// pseudo-terminal, its own daemon and the test-dummy extension's sensitive `:dummy-secret`. The
// code must reach the extension whole, and nothing else: not the screen, not any file under the
// tau home (prompt history, events.jsonl, journals, logs), not a UI subscribed to every event.
import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { agentHarnessYaml, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { quitTau, ready, seen, startTau, tuiWorkspace } from "../../support/pty.js";
import { TestClient } from "../../support/daemon.js";
import { waitFor } from "../../support/wait.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";
import { listSessions } from "../../../handwritten/transport/index.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

/** Every regular file under `dir`, read whole. */
function everyFile(dir: string): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    const st = statSync(path, { throwIfNoEntry: false });
    if (st?.isDirectory()) out.push(...everyFile(path));
    else if (st?.isFile()) out.push({ path, text: readFileSync(path, "utf8") });
  }
  return out;
}

const DUMMY = { name: "dummy", kind: "tool", command: ["tau", "ext", "test-dummy"], config: {}, startup_timeout_seconds: 30 };

describe("colon commands owned by an extension", () => {
  it("[ext.command.sensitive-nowhere] a sensitive command's code reaches its extension only: not the screen, history, events.jsonl, journals or a subscriber", async () => {
    const w = tuiWorkspace(workspaceIn(cleanups, agentHarnessYaml(fake, { shell: false, extensions: [DUMMY] })), fake);
    const code = "4/0AeanS0b-SECRET-CODE-7f3c9e";
    const digest = createHash("sha256").update(code).digest("hex").slice(0, 16);
    fake.enqueue(textResponse("an ordinary answer"));
    const t = startTau(cleanups, w);
    await t.waitFor(ready, "ready");
    // A debug subscriber: a second UI of the session subscribed to every event.
    let socket = "";
    await waitFor(async () => ((socket = (await listSessions(join(w.home, "runtime"))).rows[0]?.socket ?? "") !== ""), "the session's socket", { timeoutMs: 15_000, pollMs: 100 });
    const watcher = await TestClient.ui(socket);
    cleanups.push(() => watcher.close());
    watcher.send({ message: "subscribe", payload: { historical: ["*"], live: ["*"] } });
    await watcher.sync();
    t.type(`:dummy-secret ${code}\r`);
    await t.waitFor(seen(`sha256 ${digest}`), "the extension's answer: the whole code reached it");
    t.type("hello\r");
    await t.waitFor(seen("an ordinary answer"), "an ordinary prompt afterwards");
    await t.waitFor(ready, "the turn to finish");
    await watcher.sync();
    expect(t.all().join("\n")).toContain(":dummy-secret ‹redacted›");
    expect(t.all().join("\n")).not.toContain(code);
    expect(JSON.stringify(watcher.inbox)).not.toContain(code);
    watcher.close();
    expect(await quitTau(t)).toBe(0);
    const files = everyFile(w.home);
    expect(files.some((f) => f.path.endsWith("events.jsonl")), "the debug log was written").toBe(true);
    expect(files.some((f) => f.text.includes(":dummy-secret ‹redacted›")), "the prompt history holds the redacted line").toBe(true);
    expect(files.filter((f) => f.text.includes(code)).map((f) => f.path)).toEqual([]);
    expect(fake.requests.map((r) => r.rawBody).join("")).not.toContain(code);
  });
});
