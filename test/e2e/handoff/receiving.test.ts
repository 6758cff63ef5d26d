// The receiving side of a handoff (SPEC-handoff "Receiving"): the source session's recovery file is
// deleted by the replacement's handoff extension only once the replacement's first turn — the one
// that received the dossier file's path and the deferred prompts — completed; a first turn that
// fails keeps it, with a warning in the replacement naming it, and `:handoff recover resume` in the
// source then sends nothing again and deletes it. Real daemons, the handoff extension, the loopback model.
import { describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { errorResponse, textResponse, type FakeOpenAI, type ScriptedResponse } from "../../support/fake-openai.js";
import { attach, command, createAgent, daemon, delivered, handoffWorkspace, kill, messages, recoveryPath, runningSession, scriptHandoff } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

/** A handoff with one deferred prompt whose replacement's first turn answers `first` once the test opens it. */
async function handOff(first: ScriptedResponse) {
  const w = handoffWorkspace(fake, cleanups);
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  cleanups.push(() => open());
  let typed!: () => void;
  const afterTemplate = new Promise<void>((r) => (typed = r));
  cleanups.push(() => typed());
  scriptHandoff(fake, { afterTemplate, firstTurn: () => ({ ...first, gate }) });
  const d = await daemon(w.env, ["--project-root", w.project], cleanups);
  const c = await attach(d, cleanups);
  const agentId = await createAgent(c);
  expect((await command(c, agentId, "h1", "start")).ok).toBe(true);
  await delivered(c, "handoff.state_reported", (x) => x.phase === "writing");
  c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "DEFERRED for the new session" });
  await delivered(c, "handoff.state_reported", (x) => x.deferred === 1);
  typed();
  const successor = String((await delivered(c, "session.handed_off")).successor_session_id);
  let row: Awaited<ReturnType<typeof runningSession>>;
  await waitFor(async () => (row = await runningSession(w.home, successor)) !== undefined, "the replacement daemon", 30_000);
  cleanups.push(() => kill(row!.pid));
  const r = await attach(row!, cleanups);
  await waitFor(() => fake.chatRequests.some((q) => JSON.stringify(messages(q)).includes(`to session ${successor}`)), "the replacement's first turn at the model", 30_000);
  return { w, d, c, agentId, r, successor, file: recoveryPath(w, d.session_id), open };
}

const firstTurns = (successor: string) => fake.chatRequests.filter((q) => messages(q).filter((m) => m.role === "user").length === 1 && JSON.stringify(messages(q)).includes(`to session ${successor}`)).length;

describe("the replacement's first turn and the recovery file", () => {
  it("[handoff.receiving.completed-deletes] the recovery file outlives the cutover and is deleted only once the replacement's first turn completed", async () => {
    const h = await handOff(textResponse("read it, continuing"));
    // The handoff is recorded and the first turn is under way: the file is still there.
    expect(existsSync(h.file)).toBe(true);
    h.open();
    const done = await delivered(h.r, "agent.outer_turn_finished", undefined, 30_000);
    expect(done.outcome).toBe("completed");
    await waitFor(() => !existsSync(h.file), "the recovery file's removal", 30_000);
    expect(firstTurns(h.successor)).toBe(1);
  }, 120_000);

  it("[handoff.receiving.failed-keeps] a first turn that fails keeps the recovery file with a warning naming it; recover resume in the source sends nothing again and deletes it", async () => {
    const h = await handOff(errorResponse(400, { message: "refused by the test" }));
    h.open();
    const warning = await delivered(h.r, "extension.notice", (x) => String(x.text).includes("the handoff's first turn ended"), 30_000);
    expect(warning.level).toBe("warning");
    expect(String(warning.text)).toContain(h.file);
    expect(existsSync(h.file)).toBe(true);
    const shown = await command(h.c, h.agentId, "r1", "recover");
    expect(shown.text).toContain(`already handed off to ${h.successor}`);
    expect((await command(h.c, h.agentId, "r2", "recover", "resume")).text).toContain("nothing to send");
    expect(existsSync(h.file)).toBe(false);
    // Nothing was sent again: the source agent never got the deferred prompt, the replacement one first turn.
    expect(fake.chatRequests.filter((q) => messages(q).at(-1)?.content === "DEFERRED for the new session")).toHaveLength(0);
    expect(firstTurns(h.successor)).toBe(1);
  }, 120_000);
});
