// The handoff's two tools as seed 003 has them (SPEC-handoff "Template and Finish"), through a real
// daemon, the real shell and handoff extensions and the loopback model: the template's retrieval
// reserves `.tau/handoff_<session>.md` exclusively (a file in the way is refused and left as it is)
// and answers the same to a repeated call; Finish takes only the current id, refuses a stale one, a
// duplicate, and an absent or empty dossier, and cuts over once the agent is idle.
import { describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { textResponse, toolCallResponse, type FakeOpenAI, type ReceivedRequest, type ScriptedResponse } from "../../support/fake-openai.js";
import { attach, command, createAgent, daemon, delivered, handoffWorkspace, kill, messages, reservedIn, runningSession, scriptHandoff } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const lastText = (r: ReceivedRequest): string => {
  const m = messages(r).at(-1);
  return typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? "");
};
const call = (name: string, args: unknown, n: number): ScriptedResponse => toolCallResponse([{ id: `call_${name}_${n}`, name, arguments: JSON.stringify(args) }]);

describe("the handoff's template and Finish", () => {
  it("[handoff.template.collision] a file in the way of the reservation is refused and left unchanged, nothing is deferred; once it is gone, a retrieval reserves it and the handoff completes", async () => {
    const w = handoffWorkspace(fake, cleanups);
    scriptHandoff(fake, {
      templateResult: (_r, reserved) => (reserved ? undefined : textResponse("the file is in the way")),
      other: (r, text) => (text.includes("try again") ? call("session_handoff_get_template", {}, r.rawBody.length) : undefined),
    });
    const d = await daemon(w.env, ["--project-root", w.project], cleanups);
    const c = await attach(d, cleanups);
    const agentId = await createAgent(c);
    const file = join(w.project, ".tau", `handoff_${d.session_id}.md`);
    mkdirSync(join(w.project, ".tau"), { recursive: true });
    writeFileSync(file, "SOMEONE ELSE'S FILE\n");
    expect((await command(c, agentId, "h1", "start")).ok).toBe(true);
    await waitFor(() => fake.chatRequests.some((r) => lastText(r).includes("never overwritten")), "the refused retrieval", 30_000);
    expect(readFileSync(file, "utf8")).toBe("SOMEONE ELSE'S FILE\n");
    expect((await command(c, agentId, "s1", "status")).text).toMatch(/^handoff requested, 0 deferred/);
    // Not retrieved: by default a prompt typed now goes to the agent.
    rmSync(file);
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "try again" });
    const handedOff = await delivered(c, "session.handed_off", undefined, 60_000);
    const successor = String(handedOff.successor_session_id);
    let row: Awaited<ReturnType<typeof runningSession>>;
    await waitFor(async () => (row = await runningSession(w.home, successor)) !== undefined, "the replacement daemon", 30_000);
    cleanups.push(() => kill(row!.pid));
    expect(readFileSync(file, "utf8")).toContain("DOSSIER-BODY");
  }, 180_000);

  it("[handoff.finish.refusals] repeated retrievals share the path and id; Finish refuses a stale id (a cancelled handoff's), an empty and an absent dossier, accepts the current id once (a duplicate is refused) and cuts over only once the agent is idle", async () => {
    const w = handoffWorkspace(fake, cleanups);
    let openGate!: () => void;
    const removed = new Promise<void>((r) => (openGate = r));
    cleanups.push(() => openGate());
    let releaseIdle!: () => void;
    const idle = new Promise<void>((r) => (releaseIdle = r));
    cleanups.push(() => releaseIdle());
    const results: string[] = [];
    let first: { path: string; id: string } | undefined;
    let current: { path: string; id: string } | undefined;
    let step = 0;
    let sameAgain = false;
    fake.respondWith((r) => {
      const n = r.rawBody.length;
      const text = lastText(r);
      if (text.includes("# Handoff from session")) return textResponse("continuing");
      const isTool = messages(r).at(-1)?.role === "tool";
      if (isTool) results.push(text);
      if (!isTool && text.includes("session_handoff_get_template")) {
        // The first handoff: retrieve, then stop (it is cancelled); the second: the whole sequence.
        step = first === undefined ? 100 : 0;
        if (first !== undefined) results.length = 0;
        return call("session_handoff_get_template", {}, n);
      }
      if (step >= 100) {
        first = reservedIn(text);
        return textResponse("stopping here");
      }
      const got = reservedIn(text);
      switch (step++) {
        case 0:
          current = got;
          return call("session_handoff_get_template", {}, n);
        case 1:
          sameAgain = got !== undefined && JSON.stringify(got) === JSON.stringify(current);
          return call("session_handoff_finish", { id: first!.id }, n);
        case 2:
          return call("session_handoff_finish", { id: current!.id }, n);
        case 3:
          return { ...call("session_handoff_finish", { id: current!.id }, n), gate: removed };
        case 4:
          return call("write", { path: current!.path, content: "DOSSIER: written with the usual tool\n" }, n);
        case 5:
          return call("session_handoff_finish", { id: current!.id }, n);
        case 6:
          return call("session_handoff_finish", { id: current!.id }, n);
        default:
          return { ...textResponse("done"), gate: idle };
      }
    });
    const d = await daemon(w.env, ["--project-root", w.project], cleanups);
    const c = await attach(d, cleanups);
    const agentId = await createAgent(c);

    // A first handoff retrieves its template and is cancelled: its reservation goes, its id is stale.
    expect((await command(c, agentId, "h1", "start")).ok).toBe(true);
    await delivered(c, "handoff.state_reported", (x) => x.phase === "writing");
    await delivered(c, "agent.outer_turn_finished", undefined, 30_000);
    expect((await command(c, agentId, "x1", "cancel")).ok).toBe(true);
    await waitFor(() => !existsSync(first!.path), "the cancelled handoff's reservation removed", 10_000);

    expect((await command(c, agentId, "h2", "start")).ok).toBe(true);
    await waitFor(() => results.length >= 4, "the empty dossier's refusal", 30_000);
    rmSync(current!.path);
    openGate();
    await waitFor(() => results.length >= 8, "the sequence's results", 30_000);
    expect(current!.path).toBe(first!.path);
    expect(current!.id).not.toBe(first!.id);
    expect(sameAgain).toBe(true);
    expect(results[2]).toContain("not this handoff's Finish id");
    expect(results[3]).toContain("is empty");
    expect(results[4]).toContain("does not exist");
    expect(results[6]).toContain("Finish accepted");
    expect(results[7]).toContain("already accepted");
    // Finish accepted, the turn still under way: no cutover yet.
    expect((await command(c, agentId, "s2", "status")).text).toMatch(/^handoff writing/);
    expect(await runningSession(w.home, reservedSession(results[6]!)!)).toBeUndefined();
    releaseIdle();
    const handedOff = await delivered(c, "session.handed_off", undefined, 60_000);
    const successor = String(handedOff.successor_session_id);
    expect(successor).toBe(reservedSession(results[6]!));
    let row: Awaited<ReturnType<typeof runningSession>>;
    await waitFor(async () => (row = await runningSession(w.home, successor)) !== undefined, "the replacement daemon", 30_000);
    cleanups.push(() => kill(row!.pid));
  }, 180_000);
});

/** The new session a Finish answer names. */
function reservedSession(text: string): string | undefined {
  return /continues in session (s-[A-Za-z0-9_-]+)/.exec(text)?.[1];
}
