// A handoff survives a crash (SPEC-handoff "Recovery", GATE-handoff): the source daemon is SIGKILLed
// at each step — the request sent, the template retrieved with deferred prompts captured, the dossier
// written before Finish, in the cutover before the replacement is asked for, with the replacement started but not yet recorded, after the cutover
// before the recovery file's removal, and in the middle of a release — then resumed, and
// `:handoff recover resume` finishes the job: every deferred prompt reaches exactly one place
// (the source agent or the replacement's dossier), once, in order. Real daemons, real SIGKILL,
// the loopback model. Steps the model cannot hold open are held by TAU_HANDOFF_HOLD_AT.
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { TestClient, waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI, type Workspace } from "../../support/e2e.js";
import { textResponse, toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { attach, command, crashSource, createAgent, daemon, delivered, handoffWorkspace, kill, messages, newSessionOf, recoveryPath, runningSession, scriptHandoff } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const FIRST = "deferred one: keep this\n  exactly";
const SECOND = "deferred two: and this, after it";

/** A promise the test opens when it wants; opened at the end in any case so no response hangs. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  cleanups.push(() => open());
  return { promise, open };
}

/** Every prompt the session's journals hold for `agentId`, as a fresh UI replays them. */
async function journalPrompts(socket: string, sessionId: string, agentId: string): Promise<string[]> {
  const c = await TestClient.ui(socket, sessionId);
  try {
    c.send({ message: "subscribe", payload: { historical: ["agent.prompt_submitted"], live: [] } });
    await c.next((m) => m.message === "deliver" && m.payload.event.name === "session.replay_complete", 30_000, "replay");
    return c.inbox.flatMap((m) => (m.message === "deliver" && m.payload.event.name === "agent.prompt_submitted" && m.payload.event.data.agent_id === agentId ? [String(m.payload.event.data.text)] : []));
  } finally {
    c.close();
  }
}

/** Opens the source session, the handoff started and, optionally, two prompts typed into the window. */
async function begin(w: Workspace, env: NodeJS.ProcessEnv) {
  const d = await daemon(env, ["--project-root", w.project], cleanups);
  const c = await attach(d, cleanups);
  const agentId = await createAgent(c);
  expect((await command(c, agentId, "h1", "start")).ok).toBe(true);
  return { d, c, agentId };
}

async function typeTwo(c: TestClient, agentId: string): Promise<void> {
  await delivered(c, "handoff.state_reported", (x) => x.phase === "writing");
  c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: FIRST });
  await delivered(c, "handoff.state_reported", (x) => x.deferred === 1);
  c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: SECOND });
  await delivered(c, "handoff.state_reported", (x) => x.deferred === 2);
}

/** Restarts the crashed source session (without any hold) and attaches to it. */
async function restart(w: Workspace, sessionId: string): Promise<{ d: { socket: string; session_id: string; pid: number }; c: TestClient }> {
  const d = await daemon(w.env, ["--project-root", w.project, "--resume", sessionId], cleanups);
  const c = await attach(d, cleanups);
  return { d, c };
}

/** The deferred prompts reached the source agent's model, each once and in order, and nothing is left to recover. */
async function expectReleasedOnce(w: Workspace, d: { socket: string; session_id: string }, c: TestClient, agentId: string): Promise<void> {
  await waitFor(() => !existsSync(recoveryPath(w, d.session_id)), "the recovery file's removal", 30_000);
  const turnOf = (text: string) => fake.chatRequests.filter((r) => { const m = messages(r).at(-1); return m?.role === "user" && m.content === text; });
  await waitFor(() => turnOf(SECOND).length > 0, "the second prompt's turn", 30_000);
  expect(turnOf(FIRST)).toHaveLength(1);
  expect(turnOf(SECOND)).toHaveLength(1);
  expect(fake.chatRequests.indexOf(turnOf(FIRST)[0]!)).toBeLessThan(fake.chatRequests.indexOf(turnOf(SECOND)[0]!));
  // The second turn's history holds the first prompt once.
  expect(messages(turnOf(SECOND)[0]!).filter((m) => m.role === "user" && m.content === FIRST)).toHaveLength(1);
  expect((await command(c, agentId, "again", "recover", "resume")).text).toContain("no handoff recovery file");
}

/** The cutover happened once: one replacement, the dossier with both prompts in order, none sent to the source agent. */
async function expectHandedOffOnce(w: Workspace, source: { socket: string; session_id: string }, agentId: string, successor: string): Promise<void> {
  await waitFor(() => !existsSync(recoveryPath(w, source.session_id)), "the recovery file's removal", 30_000);
  const sessions = readdirSync(join(w.home, "state", "sessions")).filter((s) => s !== source.session_id);
  expect(sessions).toEqual([successor]);
  await waitFor(() => fake.chatRequests.some((r) => JSON.stringify(messages(r)).includes(`to session ${successor}`)), "the replacement's first request", 30_000);
  const firsts = fake.chatRequests.filter((r) => messages(r).filter((m) => m.role === "user").length === 1 && JSON.stringify(messages(r)).includes(`to session ${successor}`));
  expect(firsts).toHaveLength(1);
  const dossier = String(messages(firsts[0]!).find((m) => m.role === "user")!.content);
  const i1 = dossier.indexOf(`--- Deferred Prompt 1 of 2 ---\n${FIRST}\n`);
  expect(i1).toBeGreaterThan(0);
  expect(dossier.indexOf(`--- Deferred Prompt 2 of 2 ---\n${SECOND}\n`)).toBeGreaterThan(i1);
  expect((await journalPrompts(source.socket, source.session_id, agentId)).filter((t) => t === FIRST || t === SECOND)).toEqual([]);
  // The source's journal records the successor once.
  const c = await TestClient.ui(source.socket, source.session_id);
  try {
    c.send({ message: "subscribe", payload: { historical: ["session.handed_off"], live: [] } });
    await c.next((m) => m.message === "deliver" && m.payload.event.name === "session.replay_complete", 30_000, "replay");
    expect(c.inbox.filter((m) => m.message === "deliver" && m.payload.event.name === "session.handed_off").map((m) => (m.message === "deliver" ? m.payload.event.data.successor_session_id : ""))).toEqual([successor]);
  } finally {
    c.close();
  }
}

describe("a handoff after a SIGKILL of its source daemon", () => {
  it("[handoff.crash.readiness] killed after the request was sent: recover resume sends nothing, deletes the file, and a new handoff can start", async () => {
    const w = handoffWorkspace(fake, cleanups);
    const held = gate();
    scriptHandoff(fake, { call: held.promise });
    const { d, c, agentId } = await begin(w, w.env);
    await delivered(c, "handoff.state_reported", (x) => x.phase === "requested");
    await waitFor(() => fake.chatRequests.some((r) => JSON.stringify(messages(r).at(-1)).includes("session_handoff_get_template")), "the request at the model", 30_000);
    expect(readFileSync(recoveryPath(w, d.session_id), "utf8")).toContain("phase: requested");
    crashSource(d.pid);
    const r = await restart(w, d.session_id);
    // A start is refused while the crashed handoff's file is there.
    expect((await command(r.c, agentId, "s2", "start")).text).toContain("recovery file");
    expect((await command(r.c, agentId, "show", "recover")).text).toContain("phase requested, 0 deferred prompt(s)");
    const resumed = await command(r.c, agentId, "res", "recover", "resume");
    expect(resumed.ok).toBe(true);
    expect(resumed.text).toContain("0 prompt(s) sent");
    expect(existsSync(recoveryPath(w, d.session_id))).toBe(false);
    expect((await command(r.c, agentId, "s3", "start")).ok).toBe(true);
  }, 180_000);

  it("[handoff.crash.deferring] killed with the template retrieved and two deferred prompts captured: recover resume sends both to the agent, once, in order, and removes the reserved dossier file", async () => {
    const w = handoffWorkspace(fake, cleanups);
    const afterTemplate = gate();
    scriptHandoff(fake, { afterTemplate: afterTemplate.promise });
    const { d, c, agentId } = await begin(w, w.env);
    await typeTwo(c, agentId);
    crashSource(d.pid);
    const reserved = join(w.project, ".tau", `handoff_${d.session_id}.md`);
    expect(existsSync(reserved)).toBe(true);
    const r = await restart(w, d.session_id);
    expect((await command(r.c, agentId, "show", "recover")).text).toContain("phase writing, 2 deferred prompt(s)");
    expect((await command(r.c, agentId, "res", "recover", "resume")).text).toContain("2 prompt(s) sent");
    expect(existsSync(reserved)).toBe(false);
    await expectReleasedOnce(w, r.d, r.c, agentId);
  }, 180_000);

  it("[handoff.crash.writer] killed with the dossier written and Finish not yet called: recover resume sends both deferred prompts to the agent, once, in order; no replacement", async () => {
    const w = handoffWorkspace(fake, cleanups);
    const afterTemplate = gate();
    const finish = gate();
    scriptHandoff(fake, {
      afterTemplate: afterTemplate.promise,
      finish: (_r, id) => ({ ...toolCallResponse([{ id: `call_finish_${id}`, name: "session_handoff_finish", arguments: JSON.stringify({ id }) }]), gate: finish.promise }),
    });
    const { d, c, agentId } = await begin(w, w.env);
    await typeTwo(c, agentId);
    afterTemplate.open();
    const dossierFile = join(w.project, ".tau", `handoff_${d.session_id}.md`);
    await waitFor(() => existsSync(dossierFile) && readFileSync(dossierFile, "utf8").includes("DOSSIER-BODY"), "the dossier written", 30_000);
    crashSource(d.pid);
    const r = await restart(w, d.session_id);
    expect((await command(r.c, agentId, "show", "recover")).text).toContain("phase writing, 2 deferred prompt(s)");
    expect((await command(r.c, agentId, "res", "recover", "resume")).text).toContain("2 prompt(s) sent");
    await expectReleasedOnce(w, r.d, r.c, agentId);
    expect(readdirSync(join(w.home, "state", "sessions"))).toEqual([d.session_id]);
  }, 180_000);

  it("[handoff.crash.dossier] killed after Finish, in the cutover before the replacement was asked for: recover resume completes the cutover with both prompts in its first turn", async () => {
    const w = handoffWorkspace(fake, cleanups);
    const afterTemplate = gate();
    scriptHandoff(fake, { afterTemplate: afterTemplate.promise });
    const { d, c, agentId } = await begin(w, { ...w.env, TAU_HANDOFF_HOLD_AT: "dossier" });
    await typeTwo(c, agentId);
    afterTemplate.open();
    await delivered(c, "extension.notice", (x) => String(x.text).includes("handoff held at dossier"), 30_000);
    const successor = newSessionOf(w, d.session_id)!;
    expect(readFileSync(recoveryPath(w, d.session_id), "utf8")).toContain("phase: cutover");
    crashSource(d.pid);
    expect(existsSync(join(w.home, "state", "sessions", successor))).toBe(false);
    const r = await restart(w, d.session_id);
    const resumed = await command(r.c, agentId, "res", "recover", "resume");
    expect(resumed.text).toContain("cutover completed");
    const row = await runningSession(w.home, successor);
    cleanups.push(() => row && kill(row.pid));
    await expectHandedOffOnce(w, r.d, agentId, successor);
  }, 180_000);

  it("[handoff.crash.launched] killed with the replacement started but the handoff not yet recorded: recover resume finds it by its lineage and creates nothing again", async () => {
    const w = handoffWorkspace(fake, cleanups);
    const afterTemplate = gate();
    scriptHandoff(fake, { afterTemplate: afterTemplate.promise });
    const { d, c, agentId } = await begin(w, { ...w.env, TAU_HANDOFF_HOLD_AT: "launched" });
    await typeTwo(c, agentId);
    afterTemplate.open();
    await waitFor(() => existsSync(recoveryPath(w, d.session_id)) && newSessionOf(w, d.session_id) !== undefined, "the new session's id", 30_000);
    const successor = newSessionOf(w, d.session_id)!;
    let row: Awaited<ReturnType<typeof runningSession>>;
    await waitFor(async () => (row = await runningSession(w.home, successor)) !== undefined, "the replacement daemon", 30_000);
    cleanups.push(() => kill(row!.pid));
    await waitFor(() => fake.chatRequests.some((r) => JSON.stringify(messages(r)).includes(`to session ${successor}`)), "the replacement's first request", 30_000);
    crashSource(d.pid, row!.pid);
    const r = await restart(w, d.session_id);
    const resumed = await command(r.c, agentId, "res", "recover", "resume");
    expect(resumed.text).toContain("cutover completed");
    // Still the one replacement daemon it started before the crash.
    expect((await runningSession(w.home, successor))?.pid).toBe(row!.pid);
    await expectHandedOffOnce(w, r.d, agentId, successor);
  }, 180_000);

  it("[handoff.crash.cutover] killed after the cutover, the replacement's first turn not yet completed: recover resume sends nothing and deletes the recovery file", async () => {
    const w = handoffWorkspace(fake, cleanups);
    const afterTemplate = gate();
    // The replacement's first turn is held: it deletes the recovery file only once that turn completed.
    const received = gate();
    scriptHandoff(fake, { afterTemplate: afterTemplate.promise, firstTurn: () => ({ ...textResponse("continuing"), gate: received.promise }) });
    const { d, c, agentId } = await begin(w, { ...w.env, TAU_HANDOFF_HOLD_AT: "cutover" });
    await typeTwo(c, agentId);
    afterTemplate.open();
    const successor = String((await delivered(c, "session.handed_off")).successor_session_id);
    let row: Awaited<ReturnType<typeof runningSession>>;
    await waitFor(async () => (row = await runningSession(w.home, successor)) !== undefined, "the replacement daemon", 30_000);
    cleanups.push(() => kill(row!.pid));
    expect(existsSync(recoveryPath(w, d.session_id))).toBe(true);
    crashSource(d.pid, row!.pid);
    const r = await restart(w, d.session_id);
    expect((await command(r.c, agentId, "show", "recover")).text).toContain(`already handed off to ${successor}`);
    expect((await command(r.c, agentId, "res", "recover", "resume")).text).toContain("nothing to send");
    received.open();
    await expectHandedOffOnce(w, r.d, agentId, successor);
  }, 180_000);

  it("[handoff.crash.release] killed while a cancelled handoff's prompts were being sent (the first one's turn under way): recover resume sends only the second", async () => {
    const w = handoffWorkspace(fake, cleanups);
    const afterTemplate = gate();
    const writer = gate();
    scriptHandoff(fake, {
      afterTemplate: afterTemplate.promise,
      finish: (_r, id) => ({ ...toolCallResponse([{ id: `call_finish_${id}`, name: "session_handoff_finish", arguments: JSON.stringify({ id }) }]), gate: writer.promise }),
    });
    const { d, c, agentId } = await begin(w, { ...w.env, TAU_HANDOFF_HOLD_AT: "release" });
    await typeTwo(c, agentId);
    afterTemplate.open();
    // Cancelled while the model writes: its late Finish is refused, then the first prompt's turn starts.
    expect((await command(c, agentId, "cancel", "cancel")).ok).toBe(true);
    await waitFor(() => readFileSync(recoveryPath(w, d.session_id), "utf8").includes("phase: releasing"), "the release recorded", 30_000);
    writer.open();
    await waitFor(() => fake.chatRequests.some((r) => messages(r).at(-1)?.content === FIRST), "the first prompt's turn", 30_000);
    crashSource(d.pid);
    const r = await restart(w, d.session_id);
    expect((await command(r.c, agentId, "show", "recover")).text).toContain("phase releasing, 2 deferred prompt(s)");
    expect((await command(r.c, agentId, "res", "recover", "resume")).text).toContain("1 prompt(s) sent to agent");
    await expectReleasedOnce(w, r.d, r.c, agentId);
  }, 180_000);
});
