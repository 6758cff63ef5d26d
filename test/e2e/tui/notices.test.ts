// An answer cut short by the model's output limit or the provider's content filter says so in the
// terminal UI, with the same words as `tau run`, live and after a resume (SPEC-provider-chat-completions).
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { has, ready, startTau, tuiWorkspace, type PtyTau } from "../../support/pty.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";
import { CUT_SHORT } from "../../../handwritten/cli/ui/index.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(): Workspace {
  return tuiWorkspace(workspaceIn(cleanups), fake);
}

const start = (w: Workspace, args: string[] = []): PtyTau => startTau(cleanups, w, args, { cols: 160, rows: 30 });

describe("answers cut short", () => {
  it("[tui.pty.cut-short-notice] length and content_filter endings show the notice tau run prints, live and after a resume; a whole answer shows none", async () => {
    const w = workspace();
    const t = start(w);
    await t.waitFor(ready, "ready");
    fake.enqueue(textResponse("a whole answer"), textResponse("the first half of a long ans", { finishReason: "length" }), textResponse("partly", { finishReason: "content_filter" }));
    t.type("one\r");
    await t.waitFor(has("a whole answer"), "the whole answer");
    await t.waitFor(ready, "the first turn");
    expect(t.all().some((l) => l.includes("the answer is incomplete"))).toBe(false);
    t.type("two\r");
    await t.waitFor(has(CUT_SHORT.length), "the length notice");
    await t.waitFor(ready, "the second turn");
    t.type("three\r");
    await t.waitFor(has(CUT_SHORT.content_filter), "the content filter notice");
    await t.waitFor(ready, "the third turn");
    const sessionId = (t.all().find((l) => l.startsWith("session s-")) as string).slice("session ".length);
    t.type(":quit\r");
    expect((await t.exited).exitCode).toBe(0);
    const r = start(w, ["resume", sessionId]);
    await r.waitFor(ready, "the resumed session");
    await r.waitFor((_s, all) => all.some((l) => l.includes(CUT_SHORT.length)) && all.some((l) => l.includes(CUT_SHORT.content_filter)), "both notices replayed");
    r.type(":quit\r");
    expect((await r.exited).exitCode).toBe(0);
  });
});
