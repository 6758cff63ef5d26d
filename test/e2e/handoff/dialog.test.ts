// The handoff in the real terminal UI (SPEC-handoff "Readiness", "Deferral window", "Cancel"): the
// real `tau` in a pseudo-terminal read by xterm-headless, its own daemon with the real handoff
// extension and the loopback model. The model answers a manual start with GO-with-deferral, which
// opens the Ready / Wait / Cancel choice; Wait keeps the request open, Cancel (the key, or
// `:handoff cancel`) ends it; Ready opens the deferral window, where `:new` is refused and a
// typed prompt is held; at the cutover the UI attaches to the replacement session.
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { waitFor } from "../../support/daemon.js";
import { spawnTau } from "../../support/pty.js";
import { toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { handoffWorkspace, messages, runningSession, kill, scriptHandoff } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const has = (text: string) => (screen: string[]) => screen.some((l) => l.includes(text));
const CHOICE = "[r] ready: go ahead";

describe("the handoff in the terminal UI", () => {
  it("[handoff.pty.dialog-and-cancel] GO-with-deferral opens Ready / Wait / Cancel: Wait keeps it open, c and :handoff cancel end it, Ready opens the window (:new refused, a typed prompt held), and the UI attaches to the replacement at the cutover", async () => {
    const w0 = handoffWorkspace(fake, cleanups);
    const w = { ...w0, env: { ...process.env, ...w0.env, TERM: "xterm-256color" } };
    let openWriter!: () => void;
    const writerGate = new Promise<void>((r) => (openWriter = r));
    cleanups.push(() => openWriter());
    scriptHandoff(fake, {
      deferredGo: true,
      writer: (_r, id) => ({ ...toolCallResponse([{ id: `call_submit_${id}`, name: "handoff_submit", arguments: JSON.stringify({ id, content: "DOSSIER-BODY from the terminal" }) }]), gate: writerGate }),
    });
    const t = spawnTau([], { env: w.env, cwd: w.project, cols: 160, rows: 40 });
    cleanups.push(() => t.kill());
    await t.waitFor(has(" · ready"), "ready", 60_000);
    const source = (t.all().find((l) => l.startsWith("session s-")) as string).slice("session ".length);

    // Wait: the choice closes, the request stays open; :handoff cancel ends it.
    t.type(":handoff\r");
    await t.waitFor(has(CHOICE), "the Ready / Wait / Cancel choice", 60_000);
    t.type("w");
    await t.waitFor(has("handoff: still waiting"), "the Wait answer");
    await t.waitFor((s) => !has(CHOICE)(s), "the choice closed");
    t.type(":handoff status\r");
    await t.waitFor(has("handoff confirming"), "the status: still confirming");
    t.type(":handoff cancel\r");
    await t.waitFor(has("handoff cancelled"), "the cancel by command");

    // Cancel by its key.
    t.type(":handoff\r");
    await t.waitFor(has(CHOICE), "the choice again", 60_000);
    t.type("c");
    await t.waitFor((_s, all) => all.filter((l) => l.includes("handoff cancelled")).length === 2, "the cancel by key");
    await t.waitFor((s) => !has(CHOICE)(s), "the choice closed after cancel");
    expect(existsSync(join(w.home, "config", "handoff", "recovery", `recovery-${source}.md`))).toBe(false);

    // Ready: the window opens; :new is refused; a typed prompt is held for the new session.
    t.type(":handoff\r");
    await t.waitFor(has(CHOICE), "the choice a third time", 60_000);
    t.type("r");
    await t.waitFor(has("handoff: going ahead"), "the Ready answer");
    await t.waitFor(() => fake.chatRequests.some((r) => /with id [0-9a-f]{16}/.test(JSON.stringify(messages(r).at(-1)))), "the writer turn", 60_000);
    t.type(":new\r");
    await t.waitFor(has(":new is refused while a handoff is under way"), "the refused :new");
    t.type("typed in the window, for the new session\r");
    const recovery = join(w.home, "config", "handoff", "recovery", `recovery-${source}.md`);
    await t.waitFor(() => existsSync(recovery) && readFileSync(recovery, "utf8").includes("typed in the window, for the new session"), "the prompt held");
    expect(fake.chatRequests.some((r) => messages(r).at(-1)?.content === "typed in the window, for the new session")).toBe(false);
    openWriter();

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
