// What an extension says during a run reaches the script's user: `tau run` writes an extension's
// warning and error notices to stderr after the extension's name, as the terminal UI shows them, and
// leaves its info notices out, as it does the harness's (SPEC-harness-notices).
import { describe, expect, it } from "vitest";
import { runTau } from "../../support/run-tau.js";
import { agentHarnessYaml, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s));
const cleanups = useCleanups();

describe("an extension's notices in tau run", () => {
  it("[run.notices.extension] warnings and errors go to stderr named by their extension (once), info stays out; with --json too", async () => {
    const plugin = { name: "plugin", kind: "tool", command: ["tau", "ext", "test-dummy"], config: { tools: ["notice"] }, startup_timeout_seconds: 30 };
    const w = workspaceIn(cleanups, agentHarnessYaml(fake, { shell: false, extensions: [plugin] }));
    const say = (id: string, level: string, text: string) => ({ id, name: "notice", arguments: JSON.stringify({ level, text }) });
    const script = () =>
      fake.enqueue(
        toolCallResponse([say("call_w", "warning", "the quota is spent: waiting 30 s")]),
        toolCallResponse([say("call_i", "info", "just so you know")]),
        toolCallResponse([say("call_e", "error", "plugin: the server \u001b[31mfailed\u001b[0m")]),
        textResponse("Done."),
      );
    script();
    const r = await runTau(["run", "-p", "say things"], { env: w.env, cwd: w.project });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Done.\n");
    const said = r.stderr.split("\n").filter((l) => l.startsWith("tau: "));
    // Each after its call (the notice travels before the call's result); the escape is shown, not obeyed.
    expect(said).toEqual(["tau: warning: plugin: the quota is spent: waiting 30 s", "tau: plugin: the server ␛[31mfailed␛[0m"]);
    expect(r.stderr).not.toContain("just so you know");
    script();
    const j = await runTau(["run", "--json", "-p", "say things"], { env: w.env, cwd: w.project });
    expect(j.code).toBe(0);
    expect(j.stderr.split("\n").filter((l) => l.startsWith("tau: "))).toEqual(said);
  });
});
