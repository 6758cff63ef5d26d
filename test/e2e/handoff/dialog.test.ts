// The handoff in the real terminal UI (SPEC-handoff "Deferral window", "Cancel"): the real `tau` in
// a pseudo-terminal read by xterm-headless, its own daemon with the real handoff extension and the
// loopback model. The UI asks the user nothing: `:handoff` sends the request, the model retrieves the
// template; `:handoff cancel` ends a handoff; while the model writes, `:new` is refused and a typed
// prompt is held; at the cutover the UI attaches to the replacement session.
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { waitFor } from "../../support/daemon.js";
import { spawnTau } from "../../support/pty.js";
import { textResponse, toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { handoffWorkspace, messages, runningSession, kill, scriptHandoff } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const has = (text: string) => (screen: string[]) => screen.some((l) => l.includes(text));

describe("the handoff in the terminal UI", () => {
  it("[handoff.pty.dialog-and-cancel] no dialog: :handoff requests, :handoff cancel ends it; while the model writes, :new is refused and a typed prompt is held, and the UI attaches to the replacement at the cutover", async () => {
    const w0 = handoffWorkspace(fake, cleanups);
    const w = { ...w0, env: { ...process.env, ...w0.env, TERM: "xterm-256color" } };
    let openFinish!: () => void;
    const finishGate = new Promise<void>((r) => (openFinish = r));
    cleanups.push(() => openFinish());
    let calls = 0;
    scriptHandoff(fake, {
      // The first request is answered with words only (then cancelled); the second is followed.
      callAnswer: () => (calls++ === 0 ? textResponse("not yet") : undefined),
      finish: (_r, id) => ({ ...toolCallResponse([{ id: `call_finish_${id}`, name: "session_handoff_finish", arguments: JSON.stringify({ id }) }]), gate: finishGate }),
    });
    const t = spawnTau([], { env: w.env, cwd: w.project, cols: 160, rows: 40 });
    cleanups.push(() => t.kill());
    await t.waitFor(has(" · ready"), "ready", 60_000);
    const source = (t.all().find((l) => l.startsWith("session s-")) as string).slice("session ".length);
    const recovery = join(w.home, "config", "handoff", "recovery", `recovery-${source}.md`);

    t.type(":handoff\r");
    await t.waitFor(has("handoff requested for agent"), "the request", 60_000);
    await t.waitFor(() => fake.chatRequests.length > 0, "the request at the model", 60_000);
    t.type(":handoff status\r");
    await t.waitFor(has("handoff requested, 0 deferred"), "the status: requested");
    t.type(":handoff cancel\r");
    await t.waitFor(has("handoff cancelled"), "the cancel by command");
    await waitFor(() => !existsSync(recovery), "no recovery file after the cancel", 10_000);

    // Again: the model retrieves the template and writes; :new is refused; a typed prompt is held.
    t.type(":handoff\r");
    await t.waitFor(() => existsSync(recovery) && readFileSync(recovery, "utf8").includes("phase: writing"), "the template retrieved", 60_000);
    const dossier = join(w.project, ".tau", `handoff_${source}.md`);
    await t.waitFor(() => existsSync(dossier) && readFileSync(dossier, "utf8").includes("DOSSIER-BODY"), "the dossier written", 60_000);
    t.type(":new\r");
    await t.waitFor(has(":new is refused while a handoff is under way"), "the refused :new");
    t.type("typed in the window, for the new session\r");
    await t.waitFor(() => readFileSync(recovery, "utf8").includes("typed in the window, for the new session"), "the prompt held");
    expect(fake.chatRequests.some((r) => messages(r).at(-1)?.content === "typed in the window, for the new session")).toBe(false);
    openFinish();

    // The cutover: the UI attaches to the replacement, whose first turn is the dossier and the held prompt.
    await t.waitFor((_s, all) => all.some((l) => l.startsWith("session s-") && !l.includes(source)), "the UI on the replacement session", 60_000);
    const successor = (t.all().filter((l) => l.startsWith("session s-")).at(-1) as string).slice("session ".length);
    const row = await runningSession(w.home, successor);
    if (row) cleanups.push(() => kill(row.pid));
    await t.waitFor((_s, all) => all.some((l) => l.includes(`# Handoff from session ${source} to session ${successor}`)), "the dossier in the replacement's transcript", 60_000);
    // The transcript shows the first turn's head; the model was sent all of it, the held prompt last.
    await waitFor(() => fake.chatRequests.some((r) => JSON.stringify(messages(r)).includes(`to session ${successor}`)), "the replacement's first request", 60_000);
    const first = String(messages(fake.chatRequests.find((r) => JSON.stringify(messages(r)).includes(`to session ${successor}`))!).find((m) => m.role === "user")!.content);
    expect(first.split("--- Deferred Prompt 1 of 1 ---\ntyped in the window, for the new session\n")).toHaveLength(2);
    expect(readdirSync(join(w.home, "state", "sessions")).sort()).toEqual([source, successor].sort());
    // The replacement's UI is not in a handoff: :quit leaves.
    t.type(":quit\r");
    expect((await t.exited).exitCode).toBe(0);
  }, 180_000);
});
