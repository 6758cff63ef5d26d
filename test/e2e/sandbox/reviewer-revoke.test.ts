// Automatic reviews withdrawn before their answer, a replay that fails after an approval, and
// classifiers no running provider serves, through a real daemon, real extensions, real bubblewrap
// and the loopback model as the classifier (SPEC-sandbox-reviewer, "Approval scope" and
// "Selection"; GATE-sandbox-reviewer). The classifier's answer is held back by the loopback server
// until the test has withdrawn the review, then let go: a late approval must grant nothing.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { FakeOpenAI, errorResponse, textResponse, toolCallResponse, type ReceivedRequest, type ScriptedResponse } from "../../support/fake-openai.js";
import { waitFor } from "../../support/wait.js";
import { SandboxSession, useLoopbackHost } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const CLASSIFIER = "provider/fake-model";
const REVIEWER_SYSTEM = "You review one permission request";
/** The review's input tokens: the agent's totals reach them once the harness took the late answer. */
const REVIEW_TOKENS = 4321;
const WITHDRAWN = (n: number) => `  reviews withdrawn before an answer (cancelled, a new prompt, a policy change): ${n}`;

type Msg = { role: string; content?: unknown };
const messagesOf = (r: ReceivedRequest): Msg[] => (r.body as { messages?: Msg[] } | undefined)?.messages ?? [];
function isReview(r: ReceivedRequest): boolean {
  const system = messagesOf(r)[0]?.content;
  return typeof system === "string" && system.startsWith(REVIEWER_SYSTEM);
}
const reviews = (server: FakeOpenAI = fake): ReceivedRequest[] => server.requests.filter(isReview);

const approval = (): ScriptedResponse =>
  textResponse(JSON.stringify({ decision: "approve", probability: 0.99, confidence: 0.99, reason: "the user asked for it" }), { usage: { prompt_tokens: REVIEW_TOKENS, completion_tokens: 9 } });

async function session(globalYaml: string, harnessYaml?: string): Promise<{ s: SandboxSession; outside: string }> {
  const s = await SandboxSession.active(fake, cleanups, { globalYaml, ...(harnessYaml !== undefined ? { harnessYaml } : {}) });
  const outside = s.outsideDir();
  return { s, outside };
}

let n = 0;
interface Held {
  readonly callId: string;
  /** One line per attempt of the command. */
  readonly attempts: string;
  /** Lets the classifier's approving answer go. */
  readonly release: () => void;
}

/**
 * The user asks for a write outside the project; the model's `shell` call is denied by the sandbox
 * and reviewed; the classifier's approving answer is held back. Resolves once the review request
 * reached the classifier (the review is pending in the sandbox).
 */
async function heldReview(s: SandboxSession, outside: string): Promise<Held> {
  const callId = `call_rr_${++n}`;
  const attempts = join(s.w.project, `attempts-${n}`);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const before = reviews().length;
  const command = `echo x >> ${attempts}; echo hello > ${join(outside, "f")}`;
  fake.enqueue(toolCallResponse([{ id: callId, name: "shell", arguments: [JSON.stringify({ command })] }]), { ...approval(), gate }, textResponse("noted"));
  s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text: `please write hello into ${outside}/f` });
  await waitFor(() => reviews().length === before + 1, "the review request at the classifier", 30_000);
  return { callId, attempts, release };
}

/**
 * After the review was withdrawn: the command got the deny outcome (its `output`, unless the call was
 * cancelled) without a manual prompt; once the
 * held approval is let go and taken by the harness, nothing is granted and nothing runs again.
 */
async function expectWithdrawn(s: SandboxSession, h: Held, outside: string, output: string | undefined, lateAnswers = 1): Promise<void> {
  if (output !== undefined) expect(output).toContain(`write access to ${outside}/f was not granted: the request was withdrawn`);
  h.release();
  // The late answer reached the harness (its usage joins the agent's totals; the sandbox had it first).
  await s.next("agent.stats_updated", (d) => (d.usage as { input_tokens: number }).input_tokens >= lateAnswers * REVIEW_TOKENS);
  expect(s.client.deliveries().filter((d) => d.name === "sandbox.approval_requested")).toHaveLength(0);
  expect(existsSync(join(outside, "f"))).toBe(false);
  expect(readFileSync(h.attempts, "utf8")).toBe("x\n");
  const doctor = (await s.command("doctor")).text;
  expect(doctor).toMatch(new RegExp(`filesystem_write revoked call ${h.callId} agent \\S+ by ${CLASSIFIER} — fix`));
  expect(doctor).not.toMatch(new RegExp(`(review_approved|allowed|replay_succeeded|replay_failed) call ${h.callId}`));
}

describe("a pending automatic review is withdrawn", () => {
  it("[sandbox.review.revoked-cancel] cancelling the prompt withdraws the pending review at once: the command gets the deny outcome, no manual prompt, and a late approval grants nothing", async () => {
    const { s, outside } = await session(`classifier: ${CLASSIFIER}\n`);
    const h = await heldReview(s, outside);
    s.client.emit("agent.cancel_request", { agent_id: s.agentId });
    // The result comes while the classifier's answer is still held.
    const r = await s.next("tool.result", (d) => d.call_id === h.callId);
    // Cancelled, with what the command did: its write refused, and the request withdrawn.
    expect(r.outcome).toBe("cancelled");
    expect(r.output).toContain("Read-only file system");
    expect(r.output).toContain(`[sandbox: write access to ${join(outside, "f")} was not granted: the request was withdrawn`);
    await s.next("agent.outer_turn_finished", (d) => d.outcome === "cancelled");
    await expectWithdrawn(s, h, outside, undefined);
    const doctor = (await s.command("doctor")).text;
    expect(doctor).toContain(WITHDRAWN(1));
    expect(doctor).toContain("  reviews attempted: 0 —");
    expect(doctor).toContain("  grants after an approved review: applied 0, not applied (time budget used up) 0");
  }, 60_000);

  it("[sandbox.review.revoked-new-prompt] a new user prompt to the agent withdraws its pending review: the command gets the deny outcome, no manual prompt, and a late approval grants nothing", async () => {
    const { s, outside } = await session(`classifier: ${CLASSIFIER}\n`);
    const h = await heldReview(s, outside);
    fake.enqueue(textResponse("the new direction answered"));
    s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text: "actually, leave that file alone" });
    const r = await s.result(h.callId);
    await expectWithdrawn(s, h, outside, r.output);
    await s.next("agent.outer_turn_finished", (d) => d.outcome === "completed");
    const doctor = (await s.command("doctor")).text;
    expect(doctor).toContain(WITHDRAWN(1));
    expect(doctor).toContain("  grants after an approved review: applied 0, not applied (time budget used up) 0");
  }, 60_000);

  it("[sandbox.review.revoked-policy-change] a policy change (:sandbox network allow add, :sandbox off) withdraws the pending review: the command gets the deny outcome, no manual prompt, and a late approval grants nothing", async () => {
    const { s, outside } = await session(`classifier: ${CLASSIFIER}\n`);
    const first = await heldReview(s, outside);
    expect((await s.command("network", "allow", "add", "only.example")).ok).toBe(true);
    await expectWithdrawn(s, first, outside, (await s.result(first.callId)).output);
    expect((await s.command("doctor")).text).toContain(WITHDRAWN(1));

    // Turning the sandbox off withdraws it too; the withdrawn command is not run unsandboxed either.
    const second = await heldReview(s, outside);
    expect((await s.command("off")).ok).toBe(true);
    await expectWithdrawn(s, second, outside, (await s.result(second.callId)).output, 2);
    const doctor = (await s.command("doctor")).text;
    expect(doctor).toContain(WITHDRAWN(2));
    expect(doctor).toContain("  grants after an approved review: applied 0, not applied (time budget used up) 0");
  }, 60_000);
});

describe("a pending review of a connection", () => {
  const host = useLoopbackHost();

  it("[sandbox.review.revoked-cancel-connection] cancelling the prompt withdraws its connection's pending review: a late approval releases nothing", async () => {
    const port = await host.start();
    const { s } = await session(`classifier: ${CLASSIFIER}\nnetwork:\n  allowed_domains: [only.example]\n`);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const command = `curl -sS -f --noproxy '' -m 30 http://127.0.0.1:${port}/`;
    fake.enqueue(toolCallResponse([{ id: "call_conn", name: "shell", arguments: [JSON.stringify({ command })] }]), { ...approval(), gate }, textResponse("noted"));
    s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text: `fetch http://127.0.0.1:${port}/` });
    await waitFor(() => reviews().length === 1, "the connection's review request at the classifier", 30_000);
    s.client.emit("agent.cancel_request", { agent_id: s.agentId });
    await s.next("tool.result", (d) => d.call_id === "call_conn");
    await s.next("agent.outer_turn_finished", (d) => d.outcome === "cancelled");
    release();
    await s.next("agent.stats_updated", (d) => (d.usage as { input_tokens: number }).input_tokens >= REVIEW_TOKENS);
    const doctor = (await s.command("doctor")).text;
    expect(doctor).toMatch(new RegExp(`network revoked call call_conn agent \\S+ by ${CLASSIFIER} — fix`));
    expect(doctor).not.toMatch(/network allowed call call_conn/);
    expect(doctor).toContain(WITHDRAWN(1));
    expect(doctor).toContain("  grants after an approved review: applied 0, not applied (time budget used up) 0");
    expect(host.hits).toBe(0);
  }, 60_000);
});

describe("a failed replay", () => {
  it("[sandbox.review.failed-replay-once] an approved exception whose replay still fails is neither reviewed nor replayed again", async () => {
    const { s, outside } = await session(`classifier: ${CLASSIFIER}\n`);
    const further = join(s.w.home, "further");
    mkdirSync(further);
    const attempts = join(s.w.project, "attempts");
    // The first attempt is denied at `outside`; the replay may write there, then is denied at `further`.
    const command = `echo x >> ${attempts}; echo hello > ${join(outside, "f")} && echo again > ${join(further, "g")}`;
    fake.enqueue(toolCallResponse([{ id: "call_replay", name: "shell", arguments: [JSON.stringify({ command })] }]), approval(), textResponse("noted"));
    s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text: `write hello into ${outside}/f and again into ${further}/g` });
    const r = await s.result("call_replay");
    expect(r.output).toContain(`the automatic reviewer (${CLASSIFIER}) approved write access to ${outside} for one run; the whole command was run again`);
    expect(r.output).toContain(join(further, "g"));
    expect(readFileSync(join(outside, "f"), "utf8")).toBe("hello\n");
    expect(existsSync(join(further, "g"))).toBe(false);
    // Two attempts only, one review only, and nobody was asked about `further`.
    expect(readFileSync(attempts, "utf8")).toBe("x\nx\n");
    expect(reviews()).toHaveLength(1);
    expect(fake.unscripted).toBe(0);
    expect(s.client.deliveries().filter((d) => d.name === "sandbox.approval_requested")).toHaveLength(0);
    const doctor = (await s.command("doctor")).text;
    expect(doctor).toMatch(/filesystem_write replay_failed call call_replay/);
    expect(doctor).toContain("  reviews attempted: 1 — approved 1,");
    expect(doctor.match(/ call call_replay /g)).toHaveLength(3); // review_approved, allowed, replay_failed
  }, 60_000);
});

/** The last models the harness made available, once `pred` holds for them (a listing may still be under way). */
async function modelsWhere(s: SandboxSession, pred: (d: Record<string, unknown>) => boolean): Promise<void> {
  s.client.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: [] } });
  await s.next("harness.models_available", pred);
}

/** A write outside the project the classifier is not asked about: the manual prompt, denied; returns it. */
async function manualPrompt(s: SandboxSession, outside: string): Promise<Record<string, unknown>> {
  const callId = `call_rr_${++n}`;
  s.promptShell("write it", callId, `echo hi > ${join(outside, "f")}`);
  return s.denyWrite(callId, outside);
}

describe("a classifier no running provider serves", () => {
  it("[sandbox.review.unavailable-unlisted] a model the running provider's listing does not name is unavailable: setup is offered, the selection stays, nothing is sent", async () => {
    fake.setModels(["fake-model", "other-model"]);
    const { s, outside } = await session("classifier: provider/unlisted-model\n");
    await modelsWhere(s, (d) => Array.isArray(d.listed_providers) && d.listed_providers.includes("provider"));
    const ask = await manualPrompt(s, outside);
    expect(ask.classifier_setup).toBe("unavailable");
    expect(reviews()).toHaveLength(0);
    expect(fake.unscripted).toBe(0);
    expect((await s.command("show")).text).toContain("classifier: provider/unlisted-model (global)");
    expect((await s.command("doctor")).text).toMatch(/filesystem_write review_failed call \S+ agent \S+ by provider\/unlisted-model \(unavailable\) \(not attempted\)/);
  }, 60_000);

  it("[sandbox.review.unavailable-no-credentials] a running provider without credentials (its server refuses the review) is unavailable: setup is offered, the selection stays, no other provider is used", async () => {
    const keyless = await FakeOpenAI.start();
    cleanups.push(() => void keyless.close());
    // What a server answers a request without a usable key.
    keyless.enqueue(errorResponse(401, { message: "no API key provided", type: "invalid_request_error", code: "invalid_api_key" }));
    const harnessYaml = `model: fake-model\nproviders:\n  keyless:\n    base_url: ${keyless.baseUrl}\n    models: [keyless-model]\n    list_models: false\n`;
    const { s, outside } = await session("classifier: keyless/keyless-model\n", harnessYaml);
    await modelsWhere(s, (d) => Array.isArray(d.models) && d.models.some((m: { provider?: string }) => m.provider === "keyless"));
    const ask = await manualPrompt(s, outside);
    expect(ask.classifier_setup).toBe("unavailable");
    // The review went to the provider it names, without a key, once; never to another provider.
    expect(keyless.chatRequests).toHaveLength(1);
    expect(reviews(keyless)).toHaveLength(1);
    expect(keyless.chatRequests[0]?.headers.authorization).toBeUndefined();
    expect(reviews()).toHaveLength(0);
    expect((await s.command("show")).text).toContain("classifier: keyless/keyless-model (global)");
    expect((await s.command("doctor")).text).toMatch(/filesystem_write review_failed call \S+ agent \S+ by keyless\/keyless-model \(unavailable\) \(not attempted\)/);
    // The next permission prompt, after the offer: the selection is still the user's, reviewed again (and offered again).
    keyless.enqueue(errorResponse(401, { message: "no API key provided", type: "invalid_request_error", code: "invalid_api_key" }));
    expect((await manualPrompt(s, outside)).classifier_setup).toBe("unavailable");
    expect(reviews(keyless)).toHaveLength(2);
    expect(reviews()).toHaveLength(0);
  }, 60_000);
});
