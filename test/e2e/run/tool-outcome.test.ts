// A command that exits non-zero is a failed call everywhere the harness's one outcome is read:
// `tau run`'s tool line names it and its exit, `tau session stats` counts it as an error, and the
// model still reads its output and exit code (issue 40, item 4).
import { describe, expect, it } from "vitest";
import { runTau } from "../../support/run-tau.js";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s));
const cleanups = useCleanups();

describe("a failed command's outcome", () => {
  it("[run.tool-outcome.failed-command] a non-zero exit prints `[shell failed: exit code N] command`, counts as an error in session stats, and the model reads the output", async () => {
    const { env, project } = workspaceIn(cleanups);
    const failing = "echo broken; exit 56";
    fake.enqueue(
      toolCallResponse([{ id: "call_fail", name: "shell", arguments: JSON.stringify({ command: failing }) }]),
      toolCallResponse([{ id: "call_ok", name: "shell", arguments: JSON.stringify({ command: "echo fine" }) }]),
      textResponse("Done."),
    );
    const before = fake.chatRequests.length;
    const openai = { ...env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "k", OPENAI_MODEL: "fake-model" };
    const r = await runTau(["run", "--no-sandbox", "-p", "try it"], { env: openai, cwd: project });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`[shell failed: exit code 56] ${failing}\n[shell ok] echo fine\n`);
    expect(r.stdout).toBe("Done.\n");
    // The model reads the failed command's output and exit code as before.
    const second = fake.chatRequests[before + 1]!.body as { messages: Array<{ role: string; content?: unknown }> };
    const tools = second.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(tools).toHaveLength(1);
    expect(tools[0]?.endsWith("\nbroken\n[exit code 56]")).toBe(true);
    const stats = await runTau(["session", "stats", "--json"], { env: openai });
    expect(stats.code).toBe(0);
    expect((JSON.parse(stats.stdout) as { tools: unknown }).tools).toEqual({ shell: { ok: 1, error: 1 } });
  });
});
