// Colon commands an extension owns (SPEC-extension-commands): the real interactive UI in a
// pseudo-terminal, its own daemon and the test-dummy extension's sensitive `:dummy-secret`. The
// code must reach the extension whole, and nothing else: not the screen, not any file under the
// tau home (prompt history, events.jsonl, journals, logs), not a UI subscribed to every event.
import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { agentHarnessYaml, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { quitTau, ready, seen, startTau, tuiWorkspace } from "../../support/pty.js";
import { subscriberOf } from "../../support/daemon.js";
import { filesHolding } from "../../support/files.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const DUMMY = { name: "dummy", kind: "tool", command: ["tau", "ext", "test-dummy"], config: {}, startup_timeout_seconds: 30 };

describe("colon commands owned by an extension", () => {
  it("[ext.command.sensitive-nowhere] a sensitive command's code reaches its extension only: not the screen, history, events.jsonl, journals or a subscriber", async () => {
    const w = tuiWorkspace(workspaceIn(cleanups, agentHarnessYaml(fake, { shell: false, extensions: [DUMMY] })), fake);
    const code = "4/0AeanS0b-SECRET-CODE-7f3c9e";
    const digest = createHash("sha256").update(code).digest("hex").slice(0, 16);
    fake.enqueue(textResponse("an ordinary answer"));
    w.env.TAU_UI_TRACE = "1"; // the UI's diagnostics file is one more place the code must not be
    const t = startTau(cleanups, w);
    await t.waitFor(ready, "ready");
    // A debug subscriber: a second UI of the session subscribed to every event.
    const watcher = await subscriberOf(w.home, cleanups);
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
    expect(filesHolding(w.home, '"name":"session.started"').some((p) => p.endsWith("events.jsonl")), "the debug log was written").toBe(true);
    expect(filesHolding(w.home, ":dummy-secret ‹redacted›"), "the prompt history holds the redacted line").not.toEqual([]);
    expect(filesHolding(w.home, '"component":"renderer"'), "the UI's diagnostics were written").not.toEqual([]);
    expect(filesHolding(w.home, code)).toEqual([]);
    expect(fake.requests.map((r) => r.rawBody).join("")).not.toContain(code);
  });

  it("[ext.command.typed-before-start] a command line typed before its extension started waits and is read again then: /NAME and :NAME reach the extension, never the model or the history", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tau-gate-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const gate = join(dir, "dummy-gate");
    const held = { ...DUMMY, config: { ready_gate: gate } };
    const w = tuiWorkspace(workspaceIn(cleanups, agentHarnessYaml(fake, { shell: false, extensions: [held] })), fake);
    writeFileSync(gate, "");
    const slashCode = "4/0AeanS0b-SLASH-CODE-1a2b3c";
    const colonCode = "4/0AeanS0b-COLON-CODE-4d5e6f";
    const digest = (code: string) => createHash("sha256").update(code).digest("hex").slice(0, 16);
    fake.enqueue(textResponse("an ordinary answer"));
    const t = startTau(cleanups, w);
    await t.waitFor(seen("tau"), "the first frame");
    t.type(`/dummy-secret ${slashCode}\r`);
    t.type(`:dummy-secret ${colonCode}\r`);
    await t.waitFor(seen("extensions are still starting"), "the lines wait for the extensions");
    rmSync(gate);
    await t.waitFor(seen(`sha256 ${digest(slashCode)}`), "the /line read as the extension's command");
    await t.waitFor(seen(`sha256 ${digest(colonCode)}`), "the :line read as the extension's command");
    t.type("hello\r");
    await t.waitFor(seen("an ordinary answer"), "an ordinary prompt afterwards");
    await t.waitFor(ready, "the turn to finish");
    expect(t.all().join("\n")).not.toContain(slashCode);
    expect(t.all().join("\n")).not.toContain(colonCode);
    expect(await quitTau(t)).toBe(0);
    expect(filesHolding(w.home, ":dummy-secret ‹redacted›"), "the prompt history holds the redacted lines").not.toEqual([]);
    expect(filesHolding(w.home, slashCode)).toEqual([]);
    expect(filesHolding(w.home, colonCode)).toEqual([]);
    const sent = fake.requests.map((r) => r.rawBody).join("");
    expect(sent).not.toContain(slashCode);
    expect(sent).not.toContain(colonCode);
  });
});
