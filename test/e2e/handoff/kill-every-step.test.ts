// Nothing a user typed and tau acknowledged is lost or doubled by a handoff (SPEC-handoff
// "Recovery", GATE-handoff handoff.kill.*), whichever process is SIGKILLed at whichever step: the
// source daemon, the replacement daemon, or both at once. Each test types prompts into the session
// around the handoff, counts those tau acknowledged (a deferred capture, or a prompt committed to
// the source agent), kills, recovers as a user would (`:handoff recover resume` in the restarted
// source), and then finds every acknowledged prompt in exactly one place: a turn of the source
// agent (or its history, closed by the crash), or the replacement's first turn. Real daemons, real
// SIGKILL, the loopback model; steps the model cannot hold open are held by TAU_HANDOFF_HOLD_AT.
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { TestClient, waitFor } from "../../support/daemon.js";
import { agentJournal, killTree, useCleanups, useFakeOpenAI, type Workspace } from "../../support/e2e.js";
import { toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { foldPrompts } from "../../../bench/soak/checks.js";
import { lineageParentOf } from "../../../handwritten/harness/handoff-request.js";
import { attach, command, crashSource, createAgent, daemon, delivered, handoffWorkspace, messages, newSessionOf, recoveryPath, runningSession, scriptHandoff } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  cleanups.push(() => open());
  return { promise, open };
}

/** The prompts a test typed, and those tau acknowledged. */
class Ledger {
  readonly typed: string[] = [];
  readonly acked: string[] = [];
  private n = 0;

  /** Types a prompt and waits for its acknowledgement: captured into the window, or committed to the agent. */
  async type(c: TestClient, agentId: string, what: string): Promise<void> {
    const text = `PROMPT-${++this.n}: ${what}\n  kept exactly`;
    const from = c.deliveries().length;
    this.typed.push(text);
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text });
    const deferredBefore = Math.max(0, ...c.deliveries().slice(0, from).filter((d) => d.name === "handoff.state_reported").map((d) => Number(d.data.deferred)));
    await waitFor(
      () =>
        c.deliveries().slice(from).some((d) => (d.name === "handoff.state_reported" && Number(d.data.deferred) > deferredBefore) || (d.name === "agent.prompt_submitted" && d.data.text === text)),
      `the acknowledgement of ${what}`,
      30_000,
    );
    this.acked.push(text);
  }

  /**
   * Where each acknowledged prompt ended: a source-agent prompt of its text that started a turn or
   * was closed with an outcome, or a replacement agent's prompt (its first turn) holding it.
   */
  places(w: Workspace, sourceAgent: string): Map<string, number> {
    const counts = new Map(this.acked.map((t) => [t, 0]));
    for (const agent of readdirSync(join(w.home, "state", "agents"))) {
      let prompts: ReturnType<typeof foldPrompts>;
      try {
        prompts = foldPrompts(agentJournal(w.home, agent));
      } catch {
        continue; // being written
      }
      for (const p of prompts.values()) {
        for (const t of this.acked) {
          const here = agent === sourceAgent ? p.text === t && (p.taken || p.outcome !== undefined) : p.text.includes(t);
          if (here) counts.set(t, (counts.get(t) ?? 0) + 1);
        }
      }
    }
    return counts;
  }

  /** Every acknowledged prompt in exactly one place, once the places settled; nothing typed went unacknowledged. */
  async expectExactlyOnce(w: Workspace, sourceAgent: string): Promise<void> {
    expect(this.acked).toEqual(this.typed);
    await waitFor(() => [...this.places(w, sourceAgent).values()].every((n) => n >= 1), "every acknowledged prompt in a place", 60_000);
    const lost = [...this.places(w, sourceAgent)].filter(([, n]) => n === 0).map(([t]) => t);
    const doubled = [...this.places(w, sourceAgent)].filter(([, n]) => n > 1).map(([t]) => t);
    expect({ typed: this.typed.length, acked: this.acked.length, lost, doubled }).toEqual({ typed: this.typed.length, acked: this.typed.length, lost: [], doubled: [] });
  }
}

interface Run {
  w: Workspace;
  d: { socket: string; session_id: string; pid: number };
  c: TestClient;
  agentId: string;
  ledger: Ledger;
}

/** The source session with a handoff started; `hold`: the step TAU_HANDOFF_HOLD_AT stops at (once only when `once`). */
async function begin(o: { hold?: string; once?: boolean; call?: Promise<unknown>; afterGo?: Promise<unknown>; writer?: Promise<unknown> }): Promise<Run> {
  const w = handoffWorkspace(fake, cleanups);
  // afterGo: the answer to the template's retrieval (the window open); writer: the Finish call.
  scriptHandoff(fake, {
    ...(o.call ? { call: o.call } : {}),
    ...(o.afterGo ? { afterTemplate: o.afterGo } : {}),
    ...(o.writer ? { finish: (_r, id) => ({ ...toolCallResponse([{ id: `call_finish_${id}`, name: "session_handoff_finish", arguments: JSON.stringify({ id }) }]), gate: o.writer! }) } : {}),
  });
  const env = { ...w.env, ...(o.hold ? { TAU_HANDOFF_HOLD_AT: o.hold } : {}), ...(o.once ? { TAU_HANDOFF_HOLD_ONCE: join(w.home, "hold-once") } : {}) };
  const d = await daemon(env, ["--project-root", w.project], cleanups);
  const c = await attach(d, cleanups);
  const agentId = await createAgent(c);
  expect((await command(c, agentId, "h1", "start")).ok).toBe(true);
  return { w, d, c, agentId, ledger: new Ledger() };
}

/** Two prompts typed into the deferral window. */
async function typeDeferred(r: Run): Promise<void> {
  await delivered(r.c, "handoff.state_reported", (x) => x.phase === "writing");
  await r.ledger.type(r.c, r.agentId, "deferred one");
  await r.ledger.type(r.c, r.agentId, "deferred two");
}

/** Restarts the crashed source session and recovers as a user does after a crash. */
async function restartAndRecover(r: Run): Promise<TestClient> {
  const d = await daemon(r.w.env, ["--project-root", r.w.project, "--resume", r.d.session_id], cleanups);
  const c = await attach(d, cleanups);
  const resumed = await command(c, r.agentId, "res", "recover", "resume");
  expect(resumed.ok, resumed.text).toBe(true);
  return c;
}

/** The replacement's daemon once it runs (killed with the test's cleanups). */
async function replacement(r: Run): Promise<{ id: string; pid: number }> {
  let id: string | undefined;
  await waitFor(() => existsSync(recoveryPath(r.w, r.d.session_id)) && (id = newSessionOf(r.w, r.d.session_id)) !== undefined, "the new session's id", 30_000);
  let row: Awaited<ReturnType<typeof runningSession>>;
  await waitFor(async () => (row = await runningSession(r.w.home, id!)) !== undefined, "the replacement daemon", 30_000);
  cleanups.push(() => killTree(row!.pid));
  return { id: id!, pid: row!.pid };
}

const seedDir = (r: Run, id: string) => join(r.w.home, "state", "sessions", id);

/** Held in the replacement at `step` (`replacement`: seed claimed, nothing committed; `lineage`: the lineage committed, no agent yet). */
async function replacementHeld(r: Run, step: "replacement" | "lineage"): Promise<{ id: string; pid: number }> {
  const rep = await replacement(r);
  if (step === "replacement") await waitFor(() => existsSync(join(seedDir(r, rep.id), "handoff-seed.claimed.json")), "the seed claimed", 30_000);
  else await waitFor(() => lineageParentOf(join(r.w.home, "state"), rep.id) === r.d.session_id, "the replacement's lineage", 30_000);
  return rep;
}

/** A handoff that ended in a replacement: exactly one, linked to the source. */
function expectOneReplacement(r: Run): void {
  const others = readdirSync(join(r.w.home, "state", "sessions")).filter((s) => s !== r.d.session_id);
  expect(others).toHaveLength(1);
  expect(lineageParentOf(join(r.w.home, "state"), others[0]!)).toBe(r.d.session_id);
}

describe("a handoff killed at every step loses and doubles no acknowledged prompt", () => {
  it("[handoff.kill.source-requested] the source killed with the handoff's request at the model, one prompt typed meanwhile", async () => {
    const call = gate();
    const r = await begin({ call: call.promise });
    await delivered(r.c, "handoff.state_reported", (x) => x.phase === "requested");
    await r.ledger.type(r.c, r.agentId, "typed while the agent is asked");
    crashSource(r.d.pid);
    await restartAndRecover(r);
    await r.ledger.expectExactlyOnce(r.w, r.agentId);
  }, 180_000);

  it("[handoff.kill.source-deferring] the source killed with the template retrieved and two prompts deferred", async () => {
    const afterGo = gate();
    const r = await begin({ afterGo: afterGo.promise });
    await typeDeferred(r);
    crashSource(r.d.pid);
    await restartAndRecover(r);
    await r.ledger.expectExactlyOnce(r.w, r.agentId);
  }, 180_000);

  it("[handoff.kill.source-writing] the source killed with the dossier written, Finish not yet called", async () => {
    const afterGo = gate();
    const writer = gate();
    const r = await begin({ afterGo: afterGo.promise, writer: writer.promise });
    await typeDeferred(r);
    afterGo.open();
    const file = join(r.w.project, ".tau", `handoff_${r.d.session_id}.md`);
    await waitFor(() => existsSync(file) && readFileSync(file, "utf8").includes("DOSSIER-BODY"), "the dossier written", 30_000);
    crashSource(r.d.pid);
    await restartAndRecover(r);
    await r.ledger.expectExactlyOnce(r.w, r.agentId);
  }, 180_000);

  it("[handoff.kill.source-dossier] the source killed in the cutover after Finish, the replacement not yet asked for", () => sourceInCutover("dossier"), 180_000);
  it("[handoff.kill.source-seed] the source killed in the cutover with the replacement's seed written, nothing started", () => sourceInCutover("seed"), 180_000);
  it("[handoff.kill.source-launched] the source killed with the replacement seeded, the handoff not recorded", () => sourceAfterSeeding("launched"), 180_000);
  it("[handoff.kill.source-cutover] the source killed with the handoff recorded, the recovery file not yet removed", () => sourceAfterSeeding("cutover"), 180_000);

  it("[handoff.kill.source-release] the source killed while a cancelled handoff's prompts were being released", async () => {
    const afterGo = gate();
    const writer = gate();
    const r = await begin({ hold: "release", afterGo: afterGo.promise, writer: writer.promise });
    await typeDeferred(r);
    afterGo.open();
    await delivered(r.c, "handoff.state_reported", (x) => x.phase === "writing");
    expect((await command(r.c, r.agentId, "cancel", "cancel")).ok).toBe(true);
    writer.open();
    await waitFor(() => fake.chatRequests.some((q) => messages(q).at(-1)?.content === r.ledger.acked[0]), "the first released prompt's turn", 30_000);
    crashSource(r.d.pid);
    await restartAndRecover(r);
    await r.ledger.expectExactlyOnce(r.w, r.agentId);
  }, 180_000);

  it("[handoff.kill.replacement-replacement] the replacement killed with its seed claimed, nothing committed, a prompt typed in the cutover: the source starts it again and the handoff completes", () => replacementKilled("replacement"), 180_000);
  it("[handoff.kill.replacement-lineage] the replacement killed just after its lineage record, a prompt typed in the cutover: the source starts it again and the handoff completes", () => replacementKilled("lineage"), 180_000);
  it("[handoff.kill.both-replacement] source and replacement killed at once before the lineage record, a prompt typed in the cutover: recover resume completes the handoff", () => replacementKilled("replacement", true), 180_000);
  it("[handoff.kill.both-lineage] source and replacement killed at once just after the lineage record, a prompt typed in the cutover: recover resume completes the handoff", () => replacementKilled("lineage", true), 180_000);
  it("[handoff.kill.both-lineage-replacement-resumed] source and replacement killed just after the lineage record, the replacement resumed by the user first: it takes its claimed seed, and recover resume in the source only records the handoff", async () => {
    const afterGo = gate();
    const r = await begin({ hold: "lineage", once: true, afterGo: afterGo.promise });
    await typeDeferred(r);
    afterGo.open();
    const rep = await replacementHeld(r, "lineage");
    killTree(r.d.pid);
    killTree(rep.pid);
    const resumed = await daemon(r.w.env, ["--project-root", r.w.project, "--resume", rep.id], cleanups);
    await waitFor(() => !existsSync(join(seedDir(r, rep.id), "handoff-seed.claimed.json")), "the claimed seed taken by the resumed replacement", 30_000);
    await restartAndRecover(r);
    expect((await runningSession(r.w.home, rep.id))?.pid).toBe(resumed.pid);
    await r.ledger.expectExactlyOnce(r.w, r.agentId);
    expectOneReplacement(r);
  }, 180_000);
});

/** The source killed in the cutover before the replacement runs: at the dossier written, or the seed written. */
async function sourceInCutover(step: "dossier" | "seed"): Promise<void> {
  const afterGo = gate();
  const r = await begin({ hold: step, afterGo: afterGo.promise });
  await typeDeferred(r);
  afterGo.open();
  let id: string | undefined;
  await waitFor(() => existsSync(recoveryPath(r.w, r.d.session_id)) && (id = newSessionOf(r.w, r.d.session_id)) !== undefined, "the new session's id", 30_000);
  if (step === "seed") await waitFor(() => existsSync(join(seedDir(r, id!), "handoff-seed.json")), "the seed", 30_000);
  // Held once the dossier file is written whole (its mere existence could be seen mid-write).
  else await delivered(r.c, "extension.notice", (x) => String(x.text).includes("handoff held at dossier"), 30_000);
  crashSource(r.d.pid);
  await restartAndRecover(r);
  const row = await runningSession(r.w.home, id!);
  cleanups.push(() => row && killTree(row.pid));
  await r.ledger.expectExactlyOnce(r.w, r.agentId);
  expectOneReplacement(r);
}

/** The source killed once the replacement took its seed: before the record (`launched`), or after it (`cutover`). */
async function sourceAfterSeeding(step: "launched" | "cutover"): Promise<void> {
  const afterGo = gate();
  const r = await begin({ hold: step, afterGo: afterGo.promise });
  await typeDeferred(r);
  afterGo.open();
  const rep = await replacement(r);
  if (step === "cutover") await delivered(r.c, "session.handed_off");
  else await waitFor(() => fake.chatRequests.some((q) => JSON.stringify(messages(q)).includes(`to session ${rep.id}`)), "the replacement's first turn", 30_000);
  crashSource(r.d.pid, rep.pid);
  await restartAndRecover(r);
  await r.ledger.expectExactlyOnce(r.w, r.agentId);
  expectOneReplacement(r);
}

/**
 * The replacement held at `step` and a prompt typed in the cutover, then the replacement alone
 * killed (the source starts it again) or both at once (the user recovers in the restarted source).
 */
async function replacementKilled(step: "replacement" | "lineage", both = false): Promise<void> {
  const afterGo = gate();
  const r = await begin({ hold: step, once: true, afterGo: afterGo.promise });
  await typeDeferred(r);
  afterGo.open();
  const rep = await replacementHeld(r, step);
  await r.ledger.type(r.c, r.agentId, "typed during the cutover");
  if (both) killTree(r.d.pid);
  killTree(rep.pid);
  if (both) await restartAndRecover(r);
  else await delivered(r.c, "session.handed_off", undefined, 60_000).catch((err: unknown) => {
    // What the replacement's daemons wrote, to tell a slow start from a stuck one.
    const log = (dir: string) => (existsSync(join(dir, "daemon.log")) ? readFileSync(join(dir, "daemon.log"), "utf8").slice(-4000) : "(no log)");
    throw new Error(`${(err as Error).message}\nreplacement ${rep.id} files: ${readdirSync(seedDir(r, rep.id)).join(", ")}\nits log:\n${log(seedDir(r, rep.id))}\nsource log:\n${log(seedDir(r, r.d.session_id))}`);
  });
  const row = await runningSession(r.w.home, rep.id);
  cleanups.push(() => row && killTree(row.pid));
  await r.ledger.expectExactlyOnce(r.w, r.agentId);
  expectOneReplacement(r);
}
