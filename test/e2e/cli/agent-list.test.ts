// `tau agent list` and `tau agent trace` without an id (issue: trace needed an id and nothing
// listed them): after a `tau run` in a project, the list shows its agent with how its prompt ended
// and its tokens, and the trace takes that agent by default.
import { describe, expect, it } from "vitest";
import { runTau } from "../../support/run-tau.js";
import { openaiEnv, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { textResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { exitCodeOf } from "../../../handwritten/cli/errors.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

describe("tau agent list", () => {
  it("[cli.agent-list.this-folder] lists this folder's latest session's agents with outcome and tokens; agent trace takes its agent by default", async () => {
    const w = workspaceIn(cleanups);
    const env = { ...w.env, ...openaiEnv(fake) };
    // Before any session: a clear refusal naming the folder.
    const none = await runTau(["agent", "list"], { env, cwd: w.project });
    expect(none.code).toBe(exitCodeOf("TAU-E0118"));
    expect(none.stderr).toContain(`no saved session of this folder (${w.project})`);

    fake.enqueue(textResponse("hello", { usage: { prompt_tokens: 321, completion_tokens: 9 } }));
    const run = await runTau(["run", "-p", "say hello"], { env, cwd: w.project });
    expect(run.code, run.stderr).toBe(0);
    const listed = await runTau(["agent", "list", "--json"], { env, cwd: w.project });
    expect(listed.code, listed.stderr).toBe(0);
    const json = JSON.parse(listed.stdout) as { session_id: string; title: string; agents: Array<{ id: string; creator: string; last_outcome: string; input_tokens: number; output_tokens: number }> };
    expect(json.title).toBe("say hello");
    expect(json.agents).toHaveLength(1);
    expect(json.agents[0]).toMatchObject({ creator: "ui", last_outcome: "completed", input_tokens: 321, output_tokens: 9 });
    const table = await runTau(["agent", "list"], { env, cwd: w.project });
    expect(table.stdout.split("\n")[0]).toBe(`session ${json.session_id} — say hello`);
    expect(table.stdout).toMatch(new RegExp(`${json.agents[0]?.id}\\s+-\\s+ui\\s+completed\\s+321/9`));

    const trace = await runTau(["agent", "trace", "--perf"], { env, cwd: w.project });
    expect(trace.code, trace.stderr).toBe(0);
    expect(trace.stdout).toContain(json.agents[0]?.id as string);
  });
});
