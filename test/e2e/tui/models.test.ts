// `:model` in the real interactive UI, in a pseudo-terminal, against a loopback server that lists its
// models: a name no provider lists is refused with close matches and nothing is sent; Tab completes
// model names; a listed one is selected and used.
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { has, seen, startTau, tuiWorkspace, type PtyTau } from "../../support/pty.js";
import { waitFor } from "../../support/wait.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(): Workspace {
  return tuiWorkspace(workspaceIn(cleanups, "{}\n"), fake);
}

const start = (w: Workspace): PtyTau => startTau(cleanups, w, [], { cols: 100, rows: 24 });

describe(":model in the interactive UI", () => {
  it("[tui.model.validated] refuses a model no provider lists with close matches, completes names with Tab, and uses the one chosen", async () => {
    fake.setModels(["fake-model", "other-model", "other-mini"]);
    const w = workspace();
    const t = start(w);
    await t.waitFor(has(" · ready"), "the session to be ready");
    // The listing is in once :model shows the listed models (asked again until it does).
    await waitFor(() => fake.modelRequests.length === 1, "the model listing");
    const listings = () => t.all().filter((l) => l.startsWith("models: ")).length;
    for (let asked = 1; !t.all().some((l) => l.startsWith("models: provider/fake-model, provider/other-model, provider/other-mini")); asked++) {
      if (asked > 50) throw new Error(`the listed models never showed:\n${t.all().join("\n")}`);
      t.type(":model\r");
      await t.waitFor(() => listings() >= asked, "the models shown");
    }
    t.type(":model fake-modl\r");
    await t.waitFor(seen('unknown model "fake-modl": no provider lists it; close matches: fake-model — :model lists the models'), "the refusal");
    // Tab completes as far as the candidates agree, lists them, then completes a unique one.
    t.type(":model oth\t");
    await t.waitFor((s) => s.some((l) => l === "› :model other-m"), "the common prefix");
    t.type("\t");
    await t.waitFor(seen("other-mini  other-model"), "the candidates listed");
    t.type("o\t");
    await t.waitFor((s) => s.some((l) => l === "› :model other-model"), "the completed name");
    t.type("\r");
    await t.waitFor(has("other-model"), "the selected model in the status line");
    fake.enqueue(textResponse("chosen"));
    t.type("hello\r");
    await t.waitFor(has("chosen"), "the answer");
    expect(fake.chatRequests.map((r) => (r.body as { model: string }).model)).toEqual(["other-model"]);
    t.type(":quit\r");
    expect((await t.exited).exitCode).toBe(0);
  });
});
