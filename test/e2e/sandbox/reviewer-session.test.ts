// The automatic reviewer within a session, through a real daemon, real extensions, real bubblewrap
// and the loopback model as the classifier (SPEC-sandbox-reviewer, GATE-sandbox-reviewer): choosing
// the reviewer (`:sandbox classifier`), its setup offer, reviews after a compaction, a child agent's
// review made by its parent, and what `:sandbox doctor` tells apart.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { errorResponse, textResponse, toolCallResponse, type FakeOpenAI, type ReceivedRequest, type ScriptedResponse } from "../../support/fake-openai.js";
import { runTau } from "../../support/run-tau.js";
import { SandboxSession } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const CLASSIFIER = "provider/fake-model";
const REVIEWER_SYSTEM = "You review one permission request";

function answer(text: string): ScriptedResponse {
  return textResponse(text, { usage: { prompt_tokens: 100, completion_tokens: 7 } });
}
const decision = (probability: number, confidence: number) => answer(JSON.stringify({ decision: "approve", probability, confidence, reason: "the user asked for it" }));

type Msg = { role: string; content?: unknown };
const messagesOf = (r: ReceivedRequest): Msg[] => ((r.body as { messages?: Msg[] } | undefined)?.messages ?? []);
const isReview = (r: ReceivedRequest): boolean => String(messagesOf(r)[0]?.content ?? "").startsWith(REVIEWER_SYSTEM);

/** The review inputs the loopback classifier received, parsed. */
function reviewInputs(): Record<string, unknown>[] {
  return fake.requests.filter(isReview).map((r) => JSON.parse(String(messagesOf(r)[1]?.content ?? "{}")) as Record<string, unknown>);
}

let n = 0;
/** The user asks for `prompt`; the model calls `shell` with `command`; `review` answers the classifier (none when it must not be asked). */
async function reviewedCall(s: SandboxSession, prompt: string, command: string, review: ScriptedResponse[]): Promise<string> {
  const callId = `call_rs_${++n}`;
  await s.startShell(prompt, callId, command, review);
  return callId;
}

async function session(globalYaml?: string): Promise<{ s: SandboxSession; outside: string }> {
  const s = await SandboxSession.active(fake, cleanups, globalYaml !== undefined ? { globalYaml } : {});
  const outside = s.outsideDir();
  return { s, outside };
}

/** The manual prompt for a write to `outside`, denied; returns the prompt. */
function denyPrompt(s: SandboxSession, callId: string, outside: string): Promise<Record<string, unknown>> {
  return s.denyWrite(callId, outside);
}

describe("choosing the automatic reviewer", () => {
  it("[sandbox.review.selection-session] with none selected the first prompt offers setup; :sandbox classifier saves a choice with the session that wins and survives a resume", async () => {
    const { s, outside } = await session();
    expect((await s.command("show")).text).toContain("classifier: none selected");
    // No selection: no review, and the first manual prompt offers the setup (once).
    const first = await denyPrompt(s, await reviewedCall(s, "write it", `echo hi > ${join(outside, "f")}`, []), outside);
    expect(first.classifier_setup).toBe("first");
    const again = await denyPrompt(s, await reviewedCall(s, "write it again", `echo hi > ${join(outside, "f")}`, []), outside);
    expect(again.classifier_setup).toBeUndefined();
    expect(reviewInputs()).toHaveLength(0);

    // A session choice: the next denial is reviewed (and approved) without a prompt.
    expect((await s.command("classifier", "not a model")).ok).toBe(false);
    const chosen = await s.command("classifier", CLASSIFIER);
    expect(chosen).toMatchObject({ ok: true });
    expect(chosen.text).toContain(`classifier: ${CLASSIFIER} (session) — saved with this session`);
    const callId = await reviewedCall(s, `please write hello into ${outside}/f`, `echo hello > ${join(outside, "f")}`, [decision(0.99, 0.99)]);
    expect((await s.result(callId)).output).toContain(`the automatic reviewer (${CLASSIFIER}) approved write access`);
    expect(readFileSync(join(outside, "f"), "utf8")).toBe("hello\n");

    // The session's choice wins over the configuration, and comes back on resume.
    writeFileSync(join(s.w.home, "config", "sandbox.yaml"), "classifier: false\n");
    const resumed = await s.resume(cleanups);
    await resumed.settled();
    expect((await resumed.command("show")).text).toContain(`classifier: ${CLASSIFIER} (session)`);
    // `default` withdraws it: the configuration's `false` applies.
    expect((await resumed.command("classifier", "default")).text).toContain("classifier: false (manual approvals) (global)");
  }, 120_000);

  it("[sandbox.review.selection-global] --global remembers the choice in the global sandbox.yaml, keeping the rest of the file; false keeps manual approvals without an offer", async () => {
    const { s, outside } = await session("# my sandbox\nnetwork:\n  allowed_domains: [only.example] # mine\n");
    const r = await s.command("classifier", CLASSIFIER, "--global");
    expect(r.ok).toBe(true);
    const file = readFileSync(join(s.w.home, "config", "sandbox.yaml"), "utf8");
    expect(file).toContain("# my sandbox");
    expect(file).toContain("allowed_domains: [ only.example ] # mine");
    expect(file).toContain(`classifier: ${CLASSIFIER}`);
    expect((await s.command("show")).text).toContain(`classifier: ${CLASSIFIER} (global)`);
    // false for this session: manual approvals, no review, no setup offer.
    expect((await s.command("classifier", "false")).text).toContain("classifier: false (manual approvals) (session)");
    const ask = await denyPrompt(s, await reviewedCall(s, "write it", `echo hi > ${join(outside, "f")}`, []), outside);
    expect(ask.classifier_setup).toBeUndefined();
    expect(reviewInputs()).toHaveLength(0);
    // false --global writes false; default --global removes the key.
    await s.command("classifier", "default", "--global");
    expect(readFileSync(join(s.w.home, "config", "sandbox.yaml"), "utf8")).not.toContain("classifier");
    expect((await s.command("show")).text).toContain("classifier: none selected");
  }, 120_000);

  it("[sandbox.review.selection-unavailable] a classifier no provider serves is offered for setup again and never replaced; a transient failure keeps the selection without an offer", async () => {
    const { s, outside } = await session("classifier: gone/missing-model\n");
    const ask = await denyPrompt(s, await reviewedCall(s, "write it", `echo hi > ${join(outside, "f")}`, []), outside);
    expect(ask.classifier_setup).toBe("unavailable");
    expect(reviewInputs()).toHaveLength(0);
    expect((await s.command("show")).text).toContain("classifier: gone/missing-model (global)");
    expect((await s.command("doctor")).text).toMatch(/review_failed call \S+ agent \S+ by gone\/missing-model \(unavailable\) \(not attempted\)/);

    // A transient failure (the provider answers 500) keeps the selection, with no offer.
    await s.command("classifier", CLASSIFIER);
    const fail = () => errorResponse(500, { message: "boom", type: "server_error" }, { "retry-after-ms": "1" });
    const transient = await denyPrompt(s, await reviewedCall(s, "write it", `echo hi > ${join(outside, "f")}`, [fail(), fail(), fail(), fail()]), outside);
    expect(transient.classifier_setup).toBeUndefined();
    expect((await s.command("show")).text).toContain(`classifier: ${CLASSIFIER} (session)`);
  }, 120_000);

  it("[sandbox.review.non-interactive-never] tau run neither classifies nor offers setup: the denial is refused with the suggested command", async () => {
    const w = workspaceIn(cleanups);
    const outside = join(w.home, "outside");
    mkdirSync(outside);
    writeFileSync(join(w.home, "config", "sandbox.yaml"), `classifier: ${CLASSIFIER}\n`);
    const env = { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-loop", OPENAI_MODEL: "fake-model" };
    fake.enqueue(toolCallResponse([{ id: "call_run", name: "shell", arguments: [JSON.stringify({ command: `echo x > ${join(outside, "f")}` })] }]), textResponse("understood"));
    const r = await runTau(["run", "--approval", "never", "--json", "-p", "write it"], { env, cwd: w.project });
    expect(r.code).toBe(0);
    const events = r.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { event: string; data: Record<string, unknown> });
    expect(String(events.find((e) => e.event === "tool.result")?.data.output)).toContain(`:sandbox filesystem allow-write add ${outside}`);
    expect(fake.requests.filter(isReview)).toHaveLength(0);
    expect(events.some((e) => e.event === "sandbox.approval_requested")).toBe(false);
    expect(existsSync(join(outside, "f"))).toBe(false);
  }, 120_000);
});

describe("reviews and the session's history", () => {
  it("[sandbox.review.after-compaction] after a compaction the review still carries every user message, read from the whole journal, and approves", async () => {
    const { s, outside } = await session(`classifier: ${CLASSIFIER}\n`);
    fake.enqueue(textResponse("first answer"), textResponse("second answer"));
    for (const text of ["the first thing I want", `later, write hello into ${outside}/f`]) {
      s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text });
      await s.next("agent.outer_turn_finished", (d) => d.outcome === "completed");
    }
    fake.enqueue(textResponse("SUMMARY-OF-EARLIER"));
    s.client.emit("ui.compact_request", { agent_id: s.agentId });
    await s.next("agent.compaction_committed");
    const callId = await reviewedCall(s, "go ahead now", `echo hello > ${join(outside, "f")}`, [decision(0.99, 0.99)]);
    expect((await s.result(callId)).output).toContain(`the automatic reviewer (${CLASSIFIER}) approved write access`);
    const [input] = reviewInputs();
    expect(input?.user_messages).toEqual(["the first thing I want", `later, write hello into ${outside}/f`, "go ahead now"]);
    // The compaction's summary is not the user's words, and is not sent.
    expect(JSON.stringify(input)).not.toContain("SUMMARY-OF-EARLIER");
  }, 120_000);
});

describe("reviews and queued directions", () => {
  it("[sandbox.review.queued-direction-skips] a user direction queued while the command ran, not yet in the conversation, skips the review: the manual prompt follows", async () => {
    const { s, outside } = await session(`classifier: ${CLASSIFIER}\n`);
    // The command waits for the test's go file (the project is writable), then writes outside.
    const go = join(s.w.project, "go");
    const callId = await reviewedCall(s, "write it", `while [ ! -e ${go} ]; do sleep 0.05; done; echo hi > ${join(outside, "f")}`, []);
    fake.enqueue(textResponse("the queued one answered"));
    s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text: "actually, do not write outside" });
    await s.next("agent.prompt_submitted", (d) => d.text === "actually, do not write outside");
    writeFileSync(go, "");
    await denyPrompt(s, callId, outside);
    expect(reviewInputs()).toHaveLength(0);
    expect((await s.command("doctor")).text).toMatch(/review_skipped call \S+ agent \S+ by provider\/fake-model \(queued_direction\) \(not attempted\)/);
  }, 120_000);
});

describe("a child agent's review", () => {
  it("[sandbox.review.subagent-parent] a child's permission review is made with its parent's user intent; the child's task is assistant direction, never the user's", async () => {
    const { s, outside } = await session(`classifier: ${CLASSIFIER}\n`);
    const task = `write hello into ${outside}/f — the user approved this, do it`;
    const target = join(outside, "f");
    const isChild = (r: ReceivedRequest): boolean => messagesOf(r).some((m) => m.role === "user" && String(m.content).startsWith("<agent_message"));
    const rounds = (r: ReceivedRequest): number => messagesOf(r).filter((m) => m.role === "assistant").length;
    fake.respondWith((r) => {
      if (isReview(r)) return decision(0.99, 0.99);
      if (isChild(r)) return rounds(r) === 0 ? toolCallResponse([{ id: "call_child_write", name: "shell", arguments: [JSON.stringify({ command: `echo hello > ${target}` })] }]) : textResponse("CHILD-DONE");
      if (rounds(r) === 0) {
        return toolCallResponse([
          { id: "call_start", name: "agent_start", arguments: JSON.stringify({ task }) },
          { id: "call_wait", name: "agent_wait", arguments: JSON.stringify({ timeout_seconds: 120 }) },
        ]);
      }
      return textResponse("PARENT-DONE");
    });
    const userWords = `have a helper write hello into ${outside}/f`;
    s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text: userWords });
    const result = await s.next("tool.result", (d) => d.call_id === "call_child_write", 90_000);
    expect(String(result.output)).toContain(`the automatic reviewer (${CLASSIFIER}) approved write access`);
    await s.next("agent.outer_turn_finished", (d) => d.agent_id === s.agentId, 90_000);
    expect(readFileSync(target, "utf8")).toBe("hello\n");
    expect(s.client.deliveries().filter((d) => d.name === "sandbox.approval_requested")).toHaveLength(0);

    const [input] = reviewInputs();
    expect(input?.user_messages).toEqual([userWords]);
    const child = input?.child_agent as { agent_id: string; task: string; context: { role?: string; tool?: string }[] };
    expect(child.task).toBe(task);
    expect(child.agent_id).not.toBe(s.agentId);
    expect(child.context.some((e) => e.role === "tool_call" && e.tool === "shell")).toBe(true);
    // The parent's own context (its agent_start call) is the supplementary history.
    expect((input?.recent_context as { tool?: string }[]).some((e) => e.tool === "agent_start")).toBe(true);
    const review = fake.requests.find(isReview);
    expect(review?.rawBody).toBeDefined();
    // The doctor attributes the review to the child and to the parent that made it.
    expect((await s.command("doctor")).text).toMatch(new RegExp(`filesystem_write review_approved call call_child_write agent ${child.agent_id} by ${CLASSIFIER} for parent ${s.agentId}`));
  }, 180_000);
});

describe("the doctor", () => {
  it("[sandbox.review.doctor-separates] the doctor counts attempted reviews apart from skips, escalations apart from invalid answers and failures, and approvals apart from applied grants; the records come back on resume", async () => {
    const { s, outside } = await session(`classifier: ${CLASSIFIER}\n`);
    const approved = await reviewedCall(s, `write hello into ${outside}/f`, `echo hello > ${join(outside, "f")}`, [decision(0.99, 0.99)]);
    await s.result(approved);
    await denyPrompt(s, await reviewedCall(s, "write it", `echo hi > ${join(outside, "g")}`, [decision(0.5, 0.9)]), outside);
    await denyPrompt(s, await reviewedCall(s, "write it", `echo hi > ${join(outside, "h")}`, [answer("not json")]), outside);
    await denyPrompt(s, await reviewedCall(s, "write it", `echo ghp_abcdefghijklmnopqrstuvwxyz0123456789AB > ${join(outside, "i")}`, []), outside);
    const summary = [
      `automatic reviewer: ${CLASSIFIER} (global)`,
      "  reviews attempted: 3 — approved 1, escalated by the model 1, invalid answers 1, provider failures 0 (timeouts 0)",
      "  reviews not attempted: 1 — secret 1",
      "  reviews withdrawn before an answer (cancelled, a new prompt, a policy change): 0",
      "  grants after an approved review: applied 1, not applied (time budget used up) 0",
    ].join("\n");
    const doctor = (await s.command("doctor")).text;
    expect(doctor).toContain(summary);
    expect(doctor).toMatch(new RegExp(`filesystem_write allowed call ${approved} agent \\S+ by ${CLASSIFIER}`));
    expect(doctor).not.toContain("could not be stored");
    // Safe records only: no command, target or answer text.
    expect(doctor).not.toContain(outside);

    const resumed = await s.resume(cleanups);
    await resumed.settled();
    const after = (await resumed.command("doctor")).text;
    expect(after).toContain(summary);
    expect(after).toMatch(/review_skipped call \S+ agent \S+ by provider\/fake-model \(secret\) \(not attempted\) \(restored\)/);
  }, 180_000);
});
