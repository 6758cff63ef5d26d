// `:handoff` in a session whose configuration does not enable the handoff extension (SPEC-handoff
// "Enabling"): nothing answers the request, so the terminal UI says how to enable it.
import { describe, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { spawnTau } from "../../support/pty.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

describe(":handoff without the handoff extension", () => {
  it("[handoff.not-enabled.hint] says how to enable the extension", async () => {
    const yaml = JSON.stringify({
      model: "fake-model",
      extensions: [{ name: "provider", kind: "provider", command: ["tau", "ext", "provider"], config: { profile: "chat_completions", base_url: fake.baseUrl, models: [{ id: "fake-model", context_window: 100_000 }] }, startup_timeout_seconds: 30 }],
    });
    const w = workspaceIn(cleanups, yaml);
    const t = spawnTau([], { env: { ...process.env, ...w.env, TERM: "xterm-256color" }, cwd: w.project, cols: 200, rows: 40 });
    cleanups.push(() => t.kill());
    await t.waitFor((s) => s.some((l) => l.includes(" · ready")), "ready", 60_000);
    t.type(":handoff\r");
    await t.waitFor((_s, all) => all.join(" ").includes("command: [tau, ext, handoff]"), "the hint naming the extension's entry", 30_000);
  }, 120_000);
});
