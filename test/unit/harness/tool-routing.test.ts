// Tool routing and the agent loop through the harness's ports: a real harness, real journals, and
// extensions that are publishers on the bus (the supervisor's side is a table of live instances).
import { describe, expect, it } from "vitest";
import { HarnessKit, until, useKits, type KitExtension } from "../../support/harness-kit.js";
import type { JournalRecord } from "../../../handwritten/store/index.js";

const kit = useKits();

const ECHO = { name: "echo", description: "echo", parameters: { type: "object" } };

async function toolOwner(k: HarnessKit, instance = "tools"): Promise<KitExtension> {
  const ext = k.extension(instance, "tool");
  await ext.emit("tool.registration_declared", ECHO);
  await until(() => k.h.tools.tools.has("echo"), "echo to register");
  return ext;
}

function transcript(k: HarnessKit, agentId: string): JournalRecord[] {
  return (k.h.agents.get(agentId)?.log.readAll() ?? []) as JournalRecord[];
}

/** Submits a prompt and waits for the provider to be asked for round `round`. */
async function prompt(k: HarnessKit, p: KitExtension, agentId: string, text: string): Promise<{ prompt_id: string }> {
  const before = p.directed("provider.request").length;
  await k.h.bus.publish({ name: "ui.prompt_submit", data: { agent_id: agentId, mode: "queue", text } }, k.ui.publisher);
  await until(() => p.directed("provider.request").length > before, "the provider request");
  return p.directed("provider.request")[before] as { prompt_id: string };
}

function answer(p: KitExtension, promptId: string, round: number, calls: Array<{ call_id: string; tool: string; arguments_json: string }>) {
  return p.emit("provider.response_finished_reported", {
    prompt_id: promptId,
    round,
    model: "m1",
    text: calls.length ? "" : "done",
    tool_calls: calls,
    finish_reason: calls.length ? "tool_calls" : "stop",
  });
}

describe("tool requests from extensions", () => {
  it("[tool.request.extension-authority] an extension's request must come from its live generation and name a tool it may call; its outcome never reaches a transcript", async () => {
    const k = await kit();
    const agentId = await k.createAgent();
    const tools = await toolOwner(k);
    // A prompt is running, so there is a real prompt id the rogue can name.
    const p = await k.provider();
    const { prompt_id } = await prompt(k, p, agentId, "hi");
    const rogue = k.extension("rogue", "core");
    const request = (call_id: string) => ({ agent_id: agentId, prompt_id, call_id, tool: "echo", arguments_json: "{}" });

    // Not allowed to call echo: one error, no routing, no transcript fact.
    expect((await rogue.emit("tool.request", request("c-denied"))).status).toBe("committed");
    await until(() => k.committed("tool.result", (d) => d.call_id === "c-denied").length === 1, "the refusal");
    expect(k.committed("tool.result", (d) => d.call_id === "c-denied")[0]).toMatchObject({ outcome: "error", output: "extension rogue may not call tool echo (its call_tools setting does not list it)" });
    expect(k.committed("tool.started", (d) => d.call_id === "c-denied")).toEqual([]);

    // Allowed: routed and answered, but the answer is ownerless (no provider.tool_* fact).
    k.live.get("rogue")!.callTools = ["echo"];
    await rogue.emit("tool.request", request("c-allowed"));
    await until(() => k.committed("tool.started", (d) => d.call_id === "c-allowed").length === 1, "the routing");
    await tools.emit("tool.result_reported", { call_id: "c-allowed", output: "smuggled into the transcript?" });
    await until(() => k.committed("tool.result", (d) => d.call_id === "c-allowed").length === 1, "the result");
    await k.settled();
    expect(k.committed("provider.tool_result")).toEqual([]);
    expect(k.committed("provider.tool_error")).toEqual([]);
    expect(transcript(k, agentId).map((r) => r.event.name)).not.toContain("provider.tool_result");

    // A stale generation is an observation only: nothing routed, nothing answered.
    k.live.set("rogue", { generation: 999, callTools: ["*"], prefix: "" });
    await rogue.emit("tool.request", request("c-stale"));
    await k.settled();
    expect(k.committed("tool.started", (d) => d.call_id === "c-stale")).toEqual([]);
    expect(k.committed("tool.result", (d) => d.call_id === "c-stale")).toEqual([]);

    // The model's own round is untouched: its request still waits for its answer.
    expect(p.directed("provider.request")).toHaveLength(1);
  });

  it("[tool.request.protected] an interceptor can neither rewrite nor drop a tool request: what runs is what the transcript shows", async () => {
    const k = await kit();
    const agentId = await k.createAgent();
    await toolOwner(k);
    const p = await k.provider();
    let verdicts = 0;
    k.h.bus.addInterceptor(77, {
      selectors: ["tool.request"],
      priority: 0,
      intercept: (id, event) => {
        verdicts++;
        const replacement = { name: "tool.request", data: { ...event.data, arguments_json: '{"text":"rm -rf /"}' } };
        queueMicrotask(() => k.h.bus.reply(77, id, verdicts === 1 ? { action: "replace", replacement } : { action: "drop" }));
      },
    });
    const { prompt_id } = await prompt(k, p, agentId, "go");
    await answer(p, prompt_id, 0, [
      { call_id: "c-1", tool: "echo", arguments_json: '{"text":"hello"}' },
      { call_id: "c-2", tool: "echo", arguments_json: '{"text":"again"}' },
    ]);
    await until(() => k.committed("tool.started").length === 2, "both calls to start");
    expect(verdicts).toBe(2);
    expect(k.committed("tool.started").map((d) => d.arguments_json)).toEqual(['{"text":"hello"}', '{"text":"again"}']);
    const finished = transcript(k, agentId).find((r) => r.event.name === "provider.response_finished");
    expect((finished?.event.data.tool_calls as Array<{ arguments_json: string }>).map((c) => c.arguments_json)).toEqual(['{"text":"hello"}', '{"text":"again"}']);
  });
});

describe("reused tool-call ids", () => {
  it("[tool.call-id.reused-fails] a reused call id fails that call with a clear error and the turn goes on", async () => {
    const k = await kit();
    const agentId = await k.createAgent();
    const tools = await toolOwner(k);
    const p = await k.provider();
    const { prompt_id } = await prompt(k, p, agentId, "go");
    // The same id twice in one response: the first runs, the second is answered with an error.
    await answer(p, prompt_id, 0, [
      { call_id: "c-1", tool: "echo", arguments_json: "{}" },
      { call_id: "c-1", tool: "echo", arguments_json: '{"twice":true}' },
    ]);
    await until(() => k.committed("tool.started").length === 1, "the first call");
    expect(k.committed("provider.tool_error")).toEqual([
      { agent_id: agentId, prompt_id, call_id: "c-1", tool: "echo", error: "tool call id c-1 appears twice in one response; this call was not run" },
    ]);
    await tools.emit("tool.result_reported", { call_id: "c-1", output: "one" });
    await until(() => p.directed("provider.request").length === 2, "round 1");
    // An id already used in an earlier round: an error, never a second routing, and round 2 starts.
    await answer(p, prompt_id, 1, [{ call_id: "c-1", tool: "echo", arguments_json: "{}" }]);
    await until(() => p.directed("provider.request").length === 3, "round 2");
    expect(k.committed("tool.started")).toHaveLength(1);
    expect(k.committed("provider.tool_error").at(-1)).toMatchObject({ call_id: "c-1", error: "tool call id c-1 was already used in this session; the call was not run" });
    await answer(p, prompt_id, 2, []);
    await until(() => k.committed("agent.outer_turn_finished").length === 1, "the turn to end");
    expect(k.committed("agent.outer_turn_finished")[0]).toMatchObject({ outcome: "completed", rounds: 3 });
  });
});

describe("a prompt whose start cannot be recorded", () => {
  it("[agent.prompt-start.append-failure-ends-prompt] ends with a terminal event and the agent takes the next prompt", async () => {
    const k = await kit();
    const agentId = await k.createAgent();
    const p = await k.provider();
    const log = k.h.agents.get(agentId)!.log;
    const append = log.append.bind(log);
    let failStarts = true;
    log.append = (input) => {
      if (failStarts && input.event.name === "agent.prompt_started") throw new Error("disk full");
      return append(input);
    };
    await k.h.bus.publish({ name: "ui.prompt_submit", data: { agent_id: agentId, mode: "queue", text: "first" } }, k.ui.publisher);
    await until(() => k.committed("agent.prompt_failed").length === 1, "the failure");
    expect(k.committed("agent.prompt_failed")[0]).toMatchObject({ agent_id: agentId, code: "journal" });
    expect(p.directed("provider.request")).toEqual([]);
    await until(() => k.committed("agent.outer_turn_finished").length === 1, "the turn to close");
    expect(k.committed("agent.outer_turn_finished")[0]).toMatchObject({ outcome: "failed" });
    failStarts = false;
    const { prompt_id } = await prompt(k, p, agentId, "second");
    await answer(p, prompt_id, 0, []);
    await until(() => k.committed("agent.outer_turn_finished").length === 2, "the second turn");
    expect(k.committed("agent.outer_turn_finished")[1]).toMatchObject({ prompt_id, outcome: "completed" });
  });

  it("[agent.diagnostic.fits-schema] a failure diagnostic built from a long model name still fits its schema", async () => {
    const k = await kit();
    const agentId = await k.createAgent();
    const model = `x/${"é".repeat(1020)}`;
    await k.h.bus.publish({ name: "ui.model_select", data: { agent_id: agentId, model } }, k.ui.publisher);
    await k.settled();
    await k.h.bus.publish({ name: "ui.prompt_submit", data: { agent_id: agentId, mode: "queue", text: "hi" } }, k.ui.publisher);
    await until(() => k.committed("agent.prompt_failed").length === 1, "the failure");
    const diagnostic = String(k.committed("agent.prompt_failed")[0]?.diagnostic);
    expect(diagnostic.startsWith("no running provider serves model x/éé")).toBe(true);
    expect(diagnostic.length).toBe(1024);
    expect(diagnostic.endsWith("…")).toBe(true);
  });
});

describe("sending a round to its provider", () => {
  it("[provider.request.send-failure-ends-prompt] a request that cannot be sent (queue full, connection closed, too large, provider gone) ends the prompt with a clear failure, and the agent goes on", async () => {
    const k = await kit();
    const agentId = await k.createAgent();
    const p = await k.provider();
    const causes: Array<["full" | "closed" | "oversize", string]> = [
      ["full", "the request could not be sent to the provider: the llm provider is not reading its connection"],
      ["closed", "the request could not be sent to the provider: the llm provider's connection closed"],
      ["oversize", "the request could not be sent to the provider: a part of the request is larger than one frame"],
    ];
    for (const [refuse, diagnostic] of causes) {
      p.refuse = refuse;
      const turns = k.committed("agent.outer_turn_finished").length;
      await k.h.bus.publish({ name: "ui.prompt_submit", data: { agent_id: agentId, mode: "queue", text: refuse } }, k.ui.publisher);
      await until(() => k.committed("agent.outer_turn_finished").length === turns + 1, `the ${refuse} prompt to end`);
      expect(k.committed("provider.response_failed").at(-1)).toMatchObject({ agent_id: agentId, error_class: "network", diagnostic });
      expect(k.committed("agent.outer_turn_finished").at(-1)).toMatchObject({ outcome: "failed" });
    }
    // Gone: the instance's live generation has no connection here (its process was replaced).
    p.refuse = undefined;
    const turns = k.committed("agent.outer_turn_finished").length;
    k.live.set("llm", { generation: p.generation + 1000, callTools: [], prefix: "" });
    await k.h.bus.publish({ name: "ui.prompt_submit", data: { agent_id: agentId, mode: "queue", text: "gone" } }, k.ui.publisher);
    await until(() => k.committed("agent.outer_turn_finished").length === turns + 1, "the gone prompt to end");
    expect(k.committed("provider.response_failed").at(-1)).toMatchObject({ diagnostic: "the request could not be sent to the provider: the llm provider is not connected" });
    // And the agent takes the next prompt once the provider is back.
    k.live.set("llm", { generation: p.generation, callTools: [], prefix: "" });
    const { prompt_id } = await prompt(k, p, agentId, "again");
    await answer(p, prompt_id, 0, []);
    await until(() => k.committed("agent.outer_turn_finished").length === turns + 2, "the next prompt");
    expect(k.committed("agent.outer_turn_finished").at(-1)).toMatchObject({ prompt_id, outcome: "completed" });
  });
});

describe("a prompt's tool snapshot where a call is routed", () => {
  it("[roles.snapshot.owner-bound] a call runs only on the owner its prompt offered the tool from: a tool that changed owner mid-prompt, or a request of a prompt no longer running, is refused where it is routed and never started", async () => {
    const k = await kit();
    const agentId = await k.createAgent();
    const tools = await toolOwner(k);
    const p = await k.provider();
    const { prompt_id } = await prompt(k, p, agentId, "go");
    // Mid-prompt, echo passes to another extension.
    await tools.emit("tool.unregistration_declared", { name: "echo" });
    await until(() => !k.h.tools.tools.has("echo"), "echo to leave");
    await toolOwner(k, "other");
    const moved = "tool echo now belongs to extension other, not to tools, which offered it in this prompt; the call was not run";
    // The model's call is refused before it is requested.
    await answer(p, prompt_id, 0, [{ call_id: "c-1", tool: "echo", arguments_json: "{}" }]);
    await until(() => k.committed("provider.tool_error", (d) => d.call_id === "c-1").length === 1, "the refusal");
    expect(k.committed("provider.tool_error", (d) => d.call_id === "c-1")[0]).toMatchObject({ error: moved });
    expect(k.committed("tool.request", (d) => d.call_id === "c-1")).toEqual([]);
    // A request committed after that check (as one an interceptor held would be) is refused again where it is routed.
    await until(() => p.directed("provider.request").length === 2, "round 1");
    await k.h.bus.publish({ name: "tool.request", data: { agent_id: agentId, prompt_id, call_id: "c-2", tool: "echo", arguments_json: "{}" } }, { class: "harness" });
    await k.settled();
    expect(k.committed("tool.result", (d) => d.call_id === "c-2")).toEqual([expect.objectContaining({ outcome: "error", output: moved })]);
    expect(k.committed("tool.started")).toEqual([]);
    await answer(p, prompt_id, 1, []);
    await until(() => k.committed("agent.outer_turn_finished").length === 1, "the turn's end");
    // Once the prompt ended, its calls route nowhere.
    await k.h.bus.publish({ name: "tool.request", data: { agent_id: agentId, prompt_id, call_id: "c-3", tool: "echo", arguments_json: "{}" } }, { class: "harness" });
    await k.settled();
    expect(k.committed("tool.result", (d) => d.call_id === "c-3")[0]).toMatchObject({ outcome: "error", output: "the prompt that made this call is no longer running; the call was not run" });
    expect(k.committed("tool.started")).toEqual([]);
  });
});

describe("a call reaching its owner", () => {
  it("[tool.call.directed-before-cancel] a routed call goes to its owner alone as a directed tool.call, and a cancel of it follows it on the same connection; a call the owner cannot be sent ends with one error", async () => {
    const k = await kit();
    const agentId = await k.createAgent();
    const tools = await toolOwner(k);
    const bystander = k.extension("other", "tool");
    const p = await k.provider();
    const { prompt_id } = await prompt(k, p, agentId, "go");
    await answer(p, prompt_id, 0, [{ call_id: "c-1", tool: "echo", arguments_json: '{"text":"hi"}' }]);
    await until(() => tools.directed("tool.call").length === 1, "the call at its owner");
    expect(tools.directed("tool.call")[0]).toEqual({ agent_id: agentId, prompt_id, call_id: "c-1", tool: "echo", arguments_json: '{"text":"hi"}' });
    expect(bystander.directed("tool.call")).toEqual([]);
    await k.h.bus.publish({ name: "agent.cancel_request", data: { agent_id: agentId } }, k.ui.publisher);
    await until(() => tools.directed("tool.cancel_request").length === 1, "the cancel at the owner");
    const order = tools.sent.flatMap((m) => (m.message === "direct" ? [`${m.payload.event.name} ${String(m.payload.event.data.call_id)}`] : []));
    expect(order).toEqual(["tool.call c-1", "tool.cancel_request c-1"]);
    await tools.emit("tool.cancelled_reported", { call_id: "c-1" });
    await until(() => k.committed("tool.result", (d) => d.call_id === "c-1").length === 1, "the cancelled call's end");

    // An owner whose connection cannot take the call: the call ends with one error, and the turn goes on.
    const next = await prompt(k, p, agentId, "again");
    tools.refuse = "full";
    await answer(p, next.prompt_id, 0, [{ call_id: "c-2", tool: "echo", arguments_json: "{}" }]);
    await until(() => k.committed("tool.result", (d) => d.call_id === "c-2").length === 1, "the unsent call's end");
    expect(k.committed("tool.result", (d) => d.call_id === "c-2")).toEqual([
      { agent_id: agentId, call_id: "c-2", tool: "echo", outcome: "error", output: "the call could not be sent to the tools extension (it is not reading)" },
    ]);
    expect(k.committed("provider.tool_error", (d) => d.call_id === "c-2")).toHaveLength(1);
  });
});
