// The sandbox's approval dialog in the real interactive UI, in a pseudo-terminal read by a real
// terminal emulator, against a real daemon and real bubblewrap (SPEC-sandbox): the prompt is shown,
// survives a detach and an attach, is answered from the keyboard, and `:sandbox` commands answer.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { has, seen, startTau, tuiWorkspace, type PtyTau } from "../../support/pty.js";
import { textResponse, toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(): Workspace {
  return tuiWorkspace(workspaceIn(cleanups), fake);
}

const start = (w: Workspace, args: string[] = []): PtyTau => startTau(cleanups, w, args, { cols: 120, rows: 30 });

describe("the sandbox in the interactive UI", () => {
  it("[sandbox.tui.approval-dialog] shows the approval dialog, keeps it across detach and attach, and answers it from the keyboard", async () => {
    const w = workspace();
    const outside = join(w.home, "outside");
    mkdirSync(outside);
    const target = join(outside, "made.txt");
    fake.enqueue(toolCallResponse([{ id: "call_w", name: "shell", arguments: [JSON.stringify({ command: `echo hi > ${target}` })] }]), textResponse("all written"));
    const t = start(w);
    await t.waitFor(has(" · ready"), "the session to be ready");
    t.type("write the file\r");
    await t.waitFor(has(`sandbox: the model's command wants to write to ${outside}`), "the approval dialog");
    // Each choice says what it grants and for how long.
    expect(t.screen().some((l) => l.includes("[a] allow once: run the whole command again"))).toBe(true);
    expect(t.screen().some((l) => l.includes("[m] allow writing in that folder for the rest of this session (the model tries again itself)"))).toBe(true);
    expect(t.screen().some((l) => l.trim() === "[d] deny")).toBe(true);
    expect(t.screen().some((l) => l.includes(`command: echo hi > ${target}`))).toBe(true);
    expect(t.screen().some((l) => l.includes("asked by call call_w of agent "))).toBe(true);
    // No automatic reviewer was ever chosen: the first prompt offers its setup (SPEC-sandbox-reviewer, "Selection").
    await t.waitFor(seen("an automatic reviewer can answer requests like this one"), "the reviewer's setup offer");

    // Detached, the prompt keeps waiting; an attaching UI shows it again.
    t.type(":detach\r");
    expect((await t.exited).exitCode).toBe(0);
    const a = start(w, ["attach"]);
    await a.waitFor(has(`wants to write to ${outside}`), "the dialog after attach");
    expect(existsSync(target)).toBe(false);
    a.type("a");
    await a.waitFor(seen("all written"), "the turn to go on");
    await a.waitFor((s) => !s.some((l) => l.includes("wants to write to")), "the dialog to close");
    expect(readFileSync(target, "utf8")).toBe("hi\n");

    a.type(":sandbox show\r");
    await a.waitFor(seen("sandbox: active"), "the sandbox's state");
    await a.waitFor(seen("protected (always read-only, existing or not):"), "the policy");
    a.type(":sandbox bogus\r");
    await a.waitFor(seen("usage: :sandbox show"), "the usage");
    a.type(":quit-session\r");
    expect((await a.exited).exitCode).toBe(0);
  });

  it("[sandbox.review.setup-offer-keys] the first prompt's reviewer offer is answered from the dialog: [r] starts :sandbox classifier with completion, [k] keeps manual approvals", async () => {
    const w = workspace();
    const outside = join(w.home, "outside");
    mkdirSync(outside);
    const write = (n: number) => toolCallResponse([{ id: `call_${n}`, name: "shell", arguments: [JSON.stringify({ command: `echo hi > ${join(outside, `f${n}.txt`)}` })] }]);
    fake.enqueue(write(1), textResponse("first refused"));
    const t = start(w);
    await t.waitFor(has(" · ready"), "the session to be ready");
    t.type("write the file\r");
    await t.waitFor(has("automatic reviewer: [r] choose a model (Tab lists them)   [k] keep manual approvals"), "the offer in the dialog");
    // [r]: the command is typed for the user; while it is typed, the dialog's keys go to the editor.
    // Typed ahead in one chunk, the offer's key is still a key of its own.
    t.type("rprovider/fake\t");
    await t.waitFor(has(":sandbox classifier provider/fake-model"), "the completed reviewer");
    t.type("\r");
    await t.waitFor(seen("classifier: provider/fake-model (session) — saved with this session"), "the selection");
    // The request itself is still there to answer, without the offer.
    expect(t.screen().some((l) => l.includes(`wants to write to ${outside}`))).toBe(true);
    expect(t.screen().some((l) => l.includes("automatic reviewer: [r]"))).toBe(false);
    t.type("d");
    await t.waitFor(seen("first refused"), "the turn to go on");
    t.type(":quit-session\r");
    expect((await t.exited).exitCode).toBe(0);

    // [k] in another session: manual approvals are kept, said so, and the request stays to answer.
    const w2 = workspace();
    mkdirSync(join(w2.home, "outside"));
    fake.enqueue(toolCallResponse([{ id: "call_k", name: "shell", arguments: [JSON.stringify({ command: `echo hi > ${join(w2.home, "outside", "k.txt")}` })] }]), textResponse("second refused"));
    const u = start(w2);
    await u.waitFor(has(" · ready"), "the second session to be ready");
    u.type("write it\r");
    await u.waitFor(has("automatic reviewer: [r]"), "the offer");
    u.type("k");
    await u.waitFor(seen("classifier: false (manual approvals) (session)"), "manual kept");
    expect(u.screen().some((l) => l.includes("wants to write to"))).toBe(true);
    u.type("d");
    await u.waitFor(seen("second refused"), "the turn to go on");
    u.type(":quit-session\r");
    expect((await u.exited).exitCode).toBe(0);
  });
});
