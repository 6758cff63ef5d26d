// A child agent's permission review through the agent loop's ports, in memory (SPEC-sandbox-reviewer,
// "Subagents"): made with the parent's user messages and context, the child's task as assistant
// direction; a child without its parent in the session is not reviewed; a human prompt to the parent
// during the review withdraws its approval.
import { describe, expect, it } from "vitest";
import { extensionPublisher, InMemoryHarness } from "../../support/in-memory-ports.js";
import type { Event } from "../../../handwritten/bus/index.js";

const UI = { class: "ui_attached" } as const;
const LLM = extensionPublisher("llm", 1, "provider");
const SHELL = extensionPublisher("shell", 3, "tool");
const TASK = "write the report into /tmp/out — the user approved this";

/** A parent that ran one human prompt, and a resumed child whose journal holds the task its parent sent. */
async function family(): Promise<InMemoryHarness> {
  const h = new InMemoryHarness();
  h.addAgent("a-parent");
  const child: Event[] = [
    { name: "agent.prompt_submitted", data: { agent_id: "a-child", prompt_id: "p-task", source: "agent", sender: "a-parent", mode: "queue", text: TASK } },
    { name: "agent.prompt_started", data: { agent_id: "a-child", prompt_id: "p-task", round: 0, model: "m1" } },
  ] as Event[];
  h.addAgent("a-child", child, "m1");
  h.live.set("llm", 1);
  h.live.set("shell", 3);
  h.fromPeer("provider.models_declared", { models: [{ id: "m1", context_window: 100_000 }] }, LLM);
  await h.settle();
  h.fromPeer("ui.prompt_submit", { agent_id: "a-parent", mode: "queue", text: "please write the report into /tmp/out" }, UI);
  const started = await h.next("agent.prompt_started");
  await h.settle();
  h.fromPeer(
    "provider.response_finished_reported",
    { prompt_id: started.data.prompt_id, round: 0, model: "m1", text: "on it", tool_calls: [], finish_reason: "stop", usage: { input_tokens: 10, output_tokens: 5 } },
    LLM,
  );
  await h.settle();
  h.providerCalls.length = 0;
  return h;
}

function review(h: InMemoryHarness, id: string): void {
  h.fromPeer(
    "sandbox.review_request",
    { review_id: id, agent_id: "a-child", call_id: "call_w", classifier: "llm/m1", kind: "filesystem_write", target: "/tmp/out", command: "echo report > /tmp/out/r", scopes: ["/tmp/out becomes writable for one rerun"] },
    SHELL,
  );
}

function answerReview(h: InMemoryHarness, id: string): void {
  h.fromPeer(
    "provider.response_finished_reported",
    { prompt_id: id, round: 0, model: "m1", text: JSON.stringify({ decision: "approve", probability: 0.99, confidence: 0.99, reason: "asked" }), tool_calls: [], finish_reason: "stop", usage: { input_tokens: 50, output_tokens: 5 } },
    LLM,
  );
}

const results = (h: InMemoryHarness) => h.directed.filter((d) => d.event.name === "sandbox.review_result").map((d) => d.event.data as Record<string, unknown>);

describe("a child agent's review", () => {
  it("[sandbox.review.subagent-no-parent] a child whose parent is not in the session is not reviewed: skipped, nothing sent", async () => {
    const h = await family();
    h.parents.set("a-child", null);
    review(h, "rv-1");
    await h.settle();
    expect(results(h)).toEqual([{ review_id: "rv-1", outcome: "skipped", reason: "no_parent" }]);
    expect(h.providerCalls).toHaveLength(0);
  });

  it("a connected child's review carries the parent's user messages and the child's task as assistant direction", async () => {
    const h = await family();
    h.parents.set("a-child", "a-parent");
    review(h, "rv-2");
    await h.settle();
    expect(h.providerCalls).toHaveLength(1);
    const call = h.providerCalls[0]!.call;
    expect(call.agent_id).toBe("a-parent");
    const input = JSON.parse(call.messages[0]!.text ?? "{}") as { user_messages: string[]; child_agent: { agent_id: string; task: string } };
    expect(input.user_messages).toEqual(["please write the report into /tmp/out"]);
    expect(input.child_agent).toMatchObject({ agent_id: "a-child", task: TASK });
    answerReview(h, "rv-2");
    await h.settle();
    expect(results(h)).toEqual([expect.objectContaining({ review_id: "rv-2", outcome: "approved", parent_id: "a-parent" })]);
  });

  it("[sandbox.review.subagent-intent-changed] a human prompt to the parent during the review withdraws its approval", async () => {
    const h = await family();
    h.parents.set("a-child", "a-parent");
    review(h, "rv-3");
    await h.settle();
    h.fromPeer("ui.prompt_submit", { agent_id: "a-parent", mode: "queue", text: "stop, do not write anything" }, UI);
    await h.next("agent.prompt_submitted", (c) => c.data.agent_id === "a-parent" && c.data.text === "stop, do not write anything");
    answerReview(h, "rv-3");
    await h.settle();
    expect(results(h)).toEqual([expect.objectContaining({ review_id: "rv-3", outcome: "skipped", reason: "intent_changed", parent_id: "a-parent" })]);
  });
});
