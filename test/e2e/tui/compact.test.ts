// `:compact` and the status line's context use, through the real `tau` in a pseudo-terminal read
// by a real terminal emulator (SPEC-compaction): the model's usage fills `ctx N%`, `:compact` says
// what it does, the next request holds the summary, and the context shown drops to the estimate
// the commit recorded — after a resume too.
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { has, ready, startTau, tuiWorkspace, type PtyTau } from "../../support/pty.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const YAML = "model: fake-model\nmodel_info:\n  fake-model:\n    context_window: 10000\ncompaction:\n  keep_recent_tokens: 10\n";

function workspace(): Workspace {
  return tuiWorkspace(workspaceIn(cleanups, YAML), fake);
}

const start = (w: Workspace, args: string[] = []): PtyTau => startTau(cleanups, w, args, { cols: 120, rows: 30 });

const status = (t: PtyTau) => t.screen().find((l) => l.startsWith("tau · ")) ?? "";

describe(":compact and the context shown", () => {
  it("[compaction.pty.compact-and-ctx] ctx % follows the usage, :compact replaces the earlier conversation, and the context shown drops to the commit's estimate, after a resume too", async () => {
    const w = workspace();
    const t = start(w);
    await t.waitFor(ready, "ready");
    fake.enqueue(textResponse(`first answer ${"lorem ".repeat(400)}`, { usage: { prompt_tokens: 5_000, completion_tokens: 1_000 } }), textResponse("second answer", { usage: { prompt_tokens: 6_100, completion_tokens: 50 } }));
    t.type("first question\r");
    await t.waitFor(() => status(t).includes("ctx 60%"), "ctx 60%");
    await t.waitFor(ready, "the first turn");
    t.type("second question\r");
    await t.waitFor(() => status(t).includes("ctx 62%"), "ctx 62%");
    await t.waitFor(ready, "the second turn");

    fake.enqueue(textResponse("SUMMARY-OF-QUESTIONS", { usage: { prompt_tokens: 6_200, completion_tokens: 20 } }));
    t.type(":compact keep the questions\r");
    await t.waitFor(has("compacting the conversation (user)…"), "the start notice");
    await t.waitFor(has("compacted: the earlier conversation was replaced by a summary"), "the commit notice");
    // The summary request asked with the user's instructions; its own usage is not the context's.
    const summaryRequest = fake.chatRequests[2];
    expect(JSON.stringify(summaryRequest?.body)).toContain("keep the questions");
    await t.waitFor(() => /ctx [0-9]%/.test(status(t)), "the context use down to the estimate");
    const shown = /ctx (\d+)%/.exec(status(t))?.[1];

    fake.enqueue(textResponse("third answer", { usage: { prompt_tokens: 700, completion_tokens: 5 } }));
    t.type("third question\r");
    await t.waitFor(has("third answer"), "the third answer");
    const third = JSON.stringify((fake.chatRequests[3]?.body as { messages: unknown[] }).messages);
    expect(third).toContain("SUMMARY-OF-QUESTIONS");
    expect(third).not.toContain("first question");
    await t.waitFor(() => status(t).includes("ctx 7%"), "ctx from the third response");
    await t.waitFor(ready, "the third turn");

    // Compact again, then resume: the resumed status shows the new estimate, not the 7% before it.
    fake.enqueue(textResponse("SECOND-SUMMARY", { usage: { prompt_tokens: 800, completion_tokens: 5 } }));
    t.type(":compact\r");
    await t.waitFor((_s, all) => all.filter((l) => l.includes("compacted: the earlier conversation")).length >= 2, "the second commit");
    await t.waitFor(() => /ctx [0-6]%/.test(status(t)), "the estimate again");
    const estimate = /ctx (\d+)%/.exec(status(t))?.[1];
    const sessionId = (t.all().find((l) => l.startsWith("session s-")) as string).slice("session ".length);
    t.type(":quit\r");
    expect((await t.exited).exitCode).toBe(0);
    await t.settled();
    // Leaving says how to come back: the command used next.
    expect(t.all().join("")).toContain(`left session ${sessionId}; continue it later with: tau resume ${sessionId}`);
    const r = start(w, ["resume", sessionId]);
    await r.waitFor(ready, "the resumed session");
    await r.waitFor(() => status(r).includes(`ctx ${estimate}%`), `ctx ${estimate}% after the resume`);
    expect(Number(shown)).toBeLessThan(60);
    r.type(":quit\r");
    expect((await r.exited).exitCode).toBe(0);
  });
});
