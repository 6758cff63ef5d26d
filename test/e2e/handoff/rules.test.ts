// The handoff's rules through a real daemon and the loopback model (SPEC-handoff): the request's templates
// resolved project over global over built-in at use, what the deferral window refuses, the status
// action, the one reminder, the automatic start (at most two attempts, reset by a compaction), and
// ephemeral sessions refused.
import { describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { textResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { attach, command, createAgent, daemon, delivered, handoffWorkspace, messages, scriptHandoff } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const lastText = (r: { body: unknown }) => JSON.stringify(messages(r as never).at(-1));

describe("handoff rules", () => {
  it("[handoff.templates.e2e-precedence] the request's template sent is the project's .tau/handoff/call.md over the global one, the global one over the built-in, re-read at each start", async () => {
    const w = handoffWorkspace(fake, cleanups);
    scriptHandoff(fake, { callAnswer: () => textResponse("not now") });
    const d = await daemon(w.env, ["--project-root", w.project], cleanups);
    const c = await attach(d, cleanups);
    const agentId = await createAgent(c);
    const round = async (n: number): Promise<string> => {
      expect((await command(c, agentId, `s${n}`, "start")).ok).toBe(true);
      await waitFor(() => fake.chatRequests.filter((r) => lastText(r).includes("session_handoff_get_template")).length === n, `start ${n} at the model`, 30_000);
      const text = lastText(fake.chatRequests.filter((r) => lastText(r).includes("session_handoff_get_template"))[n - 1]!);
      expect((await command(c, agentId, `c${n}`, "cancel")).ok).toBe(true);
      await waitFor(async () => (await command(c, agentId, `st${n}`, "status")).text.startsWith("no handoff"), "the handoff ended", 30_000);
      return text;
    };
    expect(await round(1)).toContain("The user asked to hand this session off");
    mkdirSync(join(w.home, "config", "handoff"), { recursive: true });
    writeFileSync(join(w.home, "config", "handoff", "call.md"), "GLOBAL-CALL via {{get_template_tool}} then {{finish_tool}}");
    const global = await round(2);
    expect(global).toContain("GLOBAL-CALL via session_handoff_get_template then session_handoff_finish");
    mkdirSync(join(w.project, ".tau", "handoff"), { recursive: true });
    writeFileSync(join(w.project, ".tau", "handoff", "call.md"), "PROJECT-CALL {{get_template_tool}}");
    expect(await round(3)).toContain("PROJECT-CALL session_handoff_get_template");
  }, 120_000);

  it("[handoff.window.refusals-and-status] during the window a compaction request is dropped with a notice, a second start is refused, and the status reports phase, deferred count, context usage and thresholds", async () => {
    const w = handoffWorkspace(fake, cleanups, { auto_percent: 70, critical_percent: 85 });
    let release!: () => void;
    const afterTemplate = new Promise<void>((r) => (release = r));
    cleanups.push(() => release());
    scriptHandoff(fake, { afterTemplate, other: () => textResponse("answer", { usage: { prompt_tokens: 30_000, completion_tokens: 10 } }) });
    const d = await daemon(w.env, ["--project-root", w.project], cleanups);
    const c = await attach(d, cleanups);
    const agentId = await createAgent(c);
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "some work" });
    await delivered(c, "agent.stats_updated", (x) => x.context_tokens === 30_010);
    const idle = await command(c, agentId, "st0", "status");
    expect(idle.text).toBe("no handoff; context 30010 of 100000 tokens (30%); automatic at 70% then 85% (attempts 0 of 2)");
    await command(c, agentId, "h1", "start");
    await delivered(c, "handoff.state_reported", (x) => x.phase === "writing");
    c.emit("ui.compact_request", { agent_id: agentId });
    const notice = await delivered(c, "extension.notice", (x) => String(x.text).includes("compaction is refused"));
    expect(notice.level).toBe("warning");
    const again = await command(c, agentId, "h2", "start");
    expect(again.ok).toBe(false);
    expect(again.text).toContain("already under way");
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "held one" });
    await delivered(c, "handoff.state_reported", (x) => x.deferred === 1);
    const status = await command(c, agentId, "st1", "status");
    expect(status.text).toMatch(/^handoff writing, 1 deferred prompt\(s\); context 30010 of 100000 tokens \(30%\); automatic at 70% then 85%/);
    // No compaction started for the dropped request.
    expect(c.inbox.some((m) => m.message === "deliver" && m.payload.event.name === "agent.compaction_started")).toBe(false);
    release();
    await delivered(c, "session.handed_off");
  }, 120_000);

  it("[handoff.reminder.once] the request's turn ended without Finish: one reminder after reminder_ms, never a second", async () => {
    const w = handoffWorkspace(fake, cleanups, { reminder_ms: 200 });
    scriptHandoff(fake, { callAnswer: () => textResponse("busy, later") });
    const d = await daemon(w.env, ["--project-root", w.project], cleanups);
    const c = await attach(d, cleanups);
    const agentId = await createAgent(c);
    await command(c, agentId, "h1", "start");
    const reminders = () => fake.chatRequests.filter((r) => lastText(r).includes("Reminder: a handoff of this session is waiting")).length;
    await waitFor(() => reminders() === 1, "the reminder", 30_000);
    await waitFor(() => c.inbox.filter((m) => m.message === "deliver" && m.payload.event.name === "agent.outer_turn_finished").length === 2, "the reminder's turn", 30_000);
    // timing-under-test: ten reminder periods after the reminder's turn ended, still no second reminder
    await new Promise((r) => setTimeout(r, 2000));
    expect(reminders()).toBe(1);
    expect((await command(c, agentId, "st", "status")).text).toMatch(/^handoff requested/);
  }, 120_000);

  it("[handoff.auto.two-attempts] the automatic start at auto_percent, a second only at critical_percent, never a third; a committed compaction resets the count", async () => {
    const w = handoffWorkspace(fake, cleanups, { auto_percent: 30, critical_percent: 60 });
    // Below the harness's own automatic compaction (80%), whose commit would reset the count as well.
    const fill: Record<string, number> = { "fill 35": 35_000, "fill 45": 45_000, "fill 65": 65_000, "fill 70": 70_000 };
    scriptHandoff(fake, {
      callAnswer: () => textResponse("no dossier from me"),
      other: (_r, text) => {
        const k = Object.keys(fill).find((f) => text.includes(f));
        return k ? textResponse(`filled ${k}`, { usage: { prompt_tokens: fill[k]!, completion_tokens: 0 } }) : undefined;
      },
    });
    const d = await daemon(w.env, ["--project-root", w.project], cleanups);
    const c = await attach(d, cleanups);
    const agentId = await createAgent(c);
    // The requests (an emergency steering at 65% ≥ critical_percent follows attempt 2 and is not one).
    const calls = () => fake.chatRequests.filter((r) => lastText(r).startsWith('{"role":"user","content":"The user asked to hand this session off')).length;
    const turn = async (text: string, tokens: number, n: string) => {
      c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text });
      await delivered(c, "agent.stats_updated", (x) => x.context_tokens === tokens);
      return command(c, agentId, n, "status");
    };
    // 35% ≥ 30%: attempt 1 (the model does not follow it; the user cancels it).
    await turn("fill 35", 35_000, "a");
    await waitFor(() => calls() === 1, "attempt 1", 30_000);
    expect((await command(c, agentId, "x1", "cancel")).ok).toBe(true);
    // 45%: below the critical threshold, no second attempt.
    expect((await turn("fill 45", 45_000, "b")).text).toMatch(/^no handoff; .*\(attempts 1 of 2\)$/);
    expect(calls()).toBe(1);
    // 65% ≥ 60%: attempt 2.
    await turn("fill 65", 65_000, "c");
    await waitFor(() => calls() === 2, "attempt 2", 30_000);
    expect((await command(c, agentId, "x2", "cancel")).ok).toBe(true);
    // 70%: no third.
    expect((await turn("fill 70", 70_000, "d")).text).toMatch(/^no handoff; .*\(attempts 2 of 2\)$/);
    expect(calls()).toBe(2);
    // A committed compaction resets the count: the next turn past 30% starts attempt 1 again.
    c.emit("ui.compact_request", { agent_id: agentId });
    await delivered(c, "agent.compaction_committed");
    expect((await command(c, agentId, "e", "status")).text).toMatch(/\(attempts 0 of 2\)$/);
    await turn("fill 35 again", 35_000, "f");
    await waitFor(() => calls() === 3, "attempt 1 after the compaction", 30_000);
  }, 180_000);

  it("[handoff.ephemeral.refused] an ephemeral session refuses a handoff: it has no journal to link to", async () => {
    const w = handoffWorkspace(fake, cleanups);
    scriptHandoff(fake);
    const d = await daemon(w.env, ["--ephemeral", "--project-root", w.project], cleanups);
    const c = await attach(d, cleanups);
    const agentId = await createAgent(c);
    const r = await command(c, agentId, "h1", "start");
    expect(r.ok).toBe(false);
    expect(r.text).toContain("ephemeral session cannot be handed off");
    expect(fake.chatRequests.some((q) => lastText(q).includes("session_handoff_get_template"))).toBe(false);
  }, 60_000);
});
