// `tau run` against a Responses API endpoint (a provider profile with `api: responses`), through
// the real daemon, provider and shell extensions and a loopback server speaking the documented
// event stream (SPEC-provider-responses): a tool call and an answer, the encrypted reasoning item
// carried into the next request, and the journal keeping it.
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runTau } from "../../support/run-tau.js";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI } from "../../support/fake-openai.js";
import { responsesStream } from "../../support/fake-responses.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

type Item = { type?: string; role?: string; content?: unknown; id?: string; encrypted_content?: string; call_id?: string; output?: string };
const input = (i: number) => (fake.responsesRequests[i]?.body as { input: Item[] }).input;

describe("tau run on the Responses API", () => {
  it("[provider.responses.run-e2e] a tool call and an answer; the encrypted reasoning goes back whole with the call and its output; --json shows the usage and the kept reasoning item", async () => {
    const yaml = `providers:\n  oa:\n    api: responses\n    base_url: ${fake.baseUrl}\n    models: [o-fake]\n    list_models: false\nmodel: oa/o-fake\n`;
    const w = workspaceIn(cleanups, yaml);
    writeFileSync(join(w.project, "notes.txt"), "the answer is 42\n");
    fake.enqueue(
      responsesStream(
        [
          { type: "reasoning", id: "rs_abc", summary: "Read the notes first.", encrypted_content: "gAAAA-ENCRYPTED-abc" },
          { type: "function_call", id: "fc_1", call_id: "call_read_1", name: "read", arguments: '{"path":"notes.txt"}' },
        ],
        { usage: { input_tokens: 500, output_tokens: 30, reasoning_tokens: 20 }, deltaChars: 4 },
      ),
      responsesStream([{ type: "message", id: "msg_2", text: "The notes say 42." }], { usage: { input_tokens: 700, output_tokens: 8, cached_tokens: 500 } }),
    );
    const r = await runTau(["run", "--json", "-p", "what do the notes say?"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    expect(fake.responsesRequests).toHaveLength(2);
    expect(fake.chatRequests).toHaveLength(0);
    // The first request: the user's prompt, stateless, encrypted reasoning asked for.
    expect(fake.responsesRequests[0]?.body).toMatchObject({ model: "o-fake", store: false, include: ["reasoning.encrypted_content"], stream: true });
    expect(input(0).at(-1)).toMatchObject({ role: "user" });
    // The second: the reasoning item exactly as it came, then the call, then its output.
    const second = input(1);
    const at = second.findIndex((x) => x.type === "reasoning");
    expect(second.slice(at)).toEqual([
      { type: "reasoning", id: "rs_abc", summary: [{ type: "summary_text", text: "Read the notes first." }], encrypted_content: "gAAAA-ENCRYPTED-abc" },
      { type: "function_call", call_id: "call_read_1", name: "read", arguments: '{"path":"notes.txt"}' },
      expect.objectContaining({ type: "function_call_output", call_id: "call_read_1", output: expect.stringContaining("the answer is 42") }),
    ]);
    const lines = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(JSON.stringify(lines)).toContain("The notes say 42.");
    // The responses as the journal keeps them: usage mapped, the reasoning item with its response.
    const responses = lines.filter((l) => l.event === "provider.response_finished").map((l) => l.data as Record<string, unknown>);
    expect(responses.map((d) => d.usage)).toEqual([
      { input_tokens: 500, output_tokens: 30, cache_read_tokens: 0, reasoning_tokens: 20 },
      { input_tokens: 700, output_tokens: 8, cache_read_tokens: 500, reasoning_tokens: 0 },
    ]);
    expect(responses[0]).toMatchObject({ finish_reason: "tool_calls", reasoning: "Read the notes first.", reasoning_items: [{ id: "rs_abc", encrypted_content: "gAAAA-ENCRYPTED-abc" }] });
    expect(responses[1]).toMatchObject({ finish_reason: "stop", text: "The notes say 42." });
  });
});
