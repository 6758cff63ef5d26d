// A resumed session folds its journals from their checkpoints: the fold stored at shutdown stands for
// the records before it, prompts left open are closed as the journal says, and a resumed agent's
// transcript is read from its journal when it next runs a prompt — the same transcript a full fold
// gives. A checkpoint without a usable fold means the whole journal is folded.
import { afterEach, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HarnessKit, until, type KitExtension } from "../../support/harness-kit.js";

const kits: HarnessKit[] = [];
afterEach(async () => {
  while (kits.length) await kits.pop()?.close();
});

async function provider(k: HarnessKit): Promise<KitExtension> {
  const p = k.extension("llm", "provider");
  await p.emit("provider.models_declared", { models: [{ id: "m1" }] });
  await until(() => k.committed("harness.models_available").length > 0, "the models");
  return p;
}

/** The messages of the last request the provider received, reassembled from its parts. */
function lastTranscript(p: KitExtension): Array<Record<string, unknown>> {
  const head = p.directed("provider.request").at(-1) as { prompt_id: string; round: number; parts: number };
  const parts = p.directed("provider.request_part").filter((x) => x.prompt_id === head.prompt_id && x.round === head.round);
  return parts.flatMap((x) => x.messages as Array<Record<string, unknown>>);
}

async function turn(k: HarnessKit, p: KitExtension, agentId: string, text: string, answer: string): Promise<void> {
  const n = p.directed("provider.request").length;
  await k.h.bus.publish({ name: "ui.prompt_submit", data: { agent_id: agentId, mode: "queue", text } }, k.ui.publisher);
  await until(() => p.directed("provider.request").length > n, "the request");
  const req = p.directed("provider.request").at(-1) as { prompt_id: string };
  await p.emit("provider.response_finished_reported", { prompt_id: req.prompt_id, round: 0, model: "m1", text: answer, tool_calls: [], finish_reason: "stop" });
  await until(() => k.committed("agent.outer_turn_finished", (d) => d.prompt_id === req.prompt_id).length === 1, "the turn");
}

describe("resuming from checkpoints", () => {
  it("[harness.resume.checkpoint-fold] the shutdown's fold stands for the journal: nothing before it is folded again, open prompts close, and the transcript loads whole at the next prompt", async () => {
    const first = await HarnessKit.open();
    kits.push(first); // closed last: its folder is the state of both
    const state = first.stateDir as string;
    const p = await provider(first);
    const agentId = await first.createAgent({ display_name: "keeper" });
    await first.h.bus.publish({ name: "ui.model_select", data: { agent_id: agentId, model: "llm/m1" } }, first.ui.publisher);
    for (let i = 0; i < 3; i++) await turn(first, p, agentId, `question ${i}`, `answer ${i}`);
    // One prompt left started (no answer) and one queued behind it: the daemon stops here.
    await first.h.bus.publish({ name: "ui.prompt_submit", data: { agent_id: agentId, mode: "queue", text: "left open" } }, first.ui.publisher);
    await until(() => p.directed("provider.request").length === 4, "the open request");
    await first.h.bus.publish({ name: "ui.prompt_submit", data: { agent_id: agentId, mode: "queue", text: "never started" } }, first.ui.publisher);
    await first.settled();
    const before = first.h.foldedState();
    const sessionId = first.h.sessionId;
    await first.h.shutdown("requested");

    const k = await HarnessKit.open({ stateDir: state, resume: sessionId });
    kits.push(k);
    const agent = k.h.agents.get(agentId)!;
    expect(agent.log.resumed?.seq).toBe(agent.log.nextSeq - 2); // only the two closing records were appended since
    expect(agent.fold.metadata).toEqual({ display_name: "keeper" });
    expect(agent.fold.model).toBe("llm/m1");
    expect(k.h.foldedState().agents[0]?.events.slice(0, before.agents[0]!.events.length)).toEqual(before.agents[0]?.events);
    const closed = k.h.agents.get(agentId)!.log.readAll().slice(-2).map((r) => [r.event.data.outcome, r.event.name]);
    expect(closed).toEqual([
      ["dispatch_uncertain", "agent.outer_turn_finished"],
      ["interrupted", "agent.outer_turn_finished"],
    ]);
    expect(agent.fold.open).toEqual({});
    expect(agent.fold.waiting).toEqual({});

    // The next prompt reads the transcript from the journal: every earlier question and answer.
    const p2 = await provider(k);
    await turn(k, p2, agentId, "and now?", "done");
    const texts = lastTranscript(p2).map((m) => `${String(m.role)}:${String(m.text)}`);
    expect(texts).toEqual([
      "user:<user>\nquestion 0\n</user>",
      "assistant:answer 0",
      "user:<user>\nquestion 1\n</user>",
      "assistant:answer 1",
      "user:<user>\nquestion 2\n</user>",
      "assistant:answer 2",
      "user:<user>\nleft open\n</user>",
      "user:<user>\nand now?\n</user>",
    ]);

    // Resumed, worked on and stopped again, it resumes from the new checkpoint too: the fold stored
    // counts exactly the records the journal has (each append folded once).
    expect(agent.fold.next_seq).toBe(agent.log.nextSeq);
    await k.h.shutdown("requested");
    const k3 = await HarnessKit.open({ stateDir: state, resume: sessionId });
    kits.push(k3);
    const again = k3.h.agents.get(agentId)!;
    expect(again.log.resumed?.seq).toBe(again.log.nextSeq);
    expect(again.fold.next_seq).toBe(again.log.nextSeq);
  });

  it("[harness.resume.unusable-fold-folds-whole-journal] a checkpoint whose fold cannot be read means the whole journal is folded, with the same result", async () => {
    const first = await HarnessKit.open();
    kits.push(first);
    const state = first.stateDir as string;
    const agentId = await first.createAgent({ display_name: "whole" });
    await first.h.bus.publish({ name: "ui.model_select", data: { agent_id: agentId, model: "llm/m1" } }, first.ui.publisher);
    await first.settled();
    const sessionId = first.h.sessionId;
    await first.h.shutdown("requested");
    const meta = join(state, "agents", agentId, "meta.json");
    const cp = JSON.parse(readFileSync(meta, "utf8")) as Record<string, unknown>;
    expect(cp.fold).toMatchObject({ metadata: { display_name: "whole" }, model: "llm/m1" });
    writeFileSync(meta, JSON.stringify({ ...cp, fold: { metadata: "not a map" } }));
    const k = await HarnessKit.open({ stateDir: state, resume: sessionId });
    kits.push(k);
    const agent = k.h.agents.get(agentId)!;
    expect(agent.log.resumed).toBeUndefined();
    expect(agent.fold.metadata).toEqual({ display_name: "whole" });
    expect(agent.fold.model).toBe("llm/m1");
  });
});
