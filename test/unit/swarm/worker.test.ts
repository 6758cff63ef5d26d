// The swarm worker's memory (SPEC-swarm, "Worker"): the command table, the incarnation, the blocker
// history and the unacknowledged updates under their bounds, driven as the link and the agent's
// events drive them.
import { describe, expect, it } from "vitest";
import type { SwarmUpdate } from "../../../generated/index.js";
import { SwarmWorker, type WorkerBounds } from "../../../handwritten/extensions/swarm/worker.js";

function worker(bounds: Partial<WorkerBounds> = {}) {
  const submitted: string[] = [];
  const sent: SwarmUpdate[] = [];
  const notes: string[] = [];
  const w = new SwarmWorker(
    { maxCommands: 8, maxBlockers: 8, maxUnacked: 64, maxTextBytes: 1024, ...bounds },
    { submit: (_agent, text) => submitted.push(text), send: (u) => sent.push(u), diagnostic: (t) => notes.push(t) },
  );
  w.agentId = "a1";
  return { w, submitted, sent, notes };
}

const prompt = (w: SwarmWorker, id: string, text = "hi", incarnation = w.incarnation) => w.take({ type: "prompt", command_id: id, incarnation, text });

describe("the swarm worker's memory", () => {
  it("[swarm.incarnation.stale] a command for another incarnation is refused and reaches no agent; each process has its own incarnation", () => {
    const { w, submitted, sent } = worker();
    expect(w.incarnation).toMatch(/^[0-9a-f]{32}$/);
    expect(worker().w.incarnation).not.toBe(w.incarnation);
    prompt(w, "c1", "old", "0".repeat(32));
    expect(submitted).toEqual([]);
    expect(sent).toMatchObject([{ kind: "rejected", command_id: "c1", reason: "stale_incarnation" }]);
  });

  it("[swarm.commands.dedupe] a command id seen before is not run again; a full table refuses new ids without evicting, so old ids stay deduplicated", () => {
    const { w, submitted, sent } = worker({ maxCommands: 2 });
    prompt(w, "c1");
    prompt(w, "c1");
    prompt(w, "c2");
    prompt(w, "c3");
    prompt(w, "c1");
    expect(submitted).toEqual(["hi", "hi"]);
    expect(sent.map((u) => [u.kind, u.command_id, u.reason])).toEqual([
      ["accepted", "c1", undefined],
      ["accepted", "c2", undefined],
      ["rejected", "c3", "table_full"],
    ]);
    expect(w.commandCount).toBe(2);
  });

  it("[swarm.bounds.text] a text over max_text_bytes (in UTF-8 bytes) is refused; a frame that fails the schema is refused naming its command only when its id is well formed", () => {
    const { w, submitted, sent } = worker({ maxTextBytes: 4 });
    prompt(w, "c1", "ééé");
    w.invalid({ type: "prompt", command_id: "c2", text: 5 }, false);
    w.invalid({ type: "prompt", command_id: "bad id\n" }, false);
    expect(submitted).toEqual([]);
    expect(sent.map((u) => [u.kind, u.command_id, u.reason])).toEqual([
      ["rejected", "c1", "oversize"],
      ["rejected", "c2", "invalid"],
      ["rejected", undefined, "invalid"],
    ]);
  });

  it("[swarm.blocker.history] a question is kept in a bounded history; an answer must name an open question and is taken once", () => {
    const { w, submitted, sent } = worker({ maxBlockers: 1 });
    const id = w.ask("which branch?") as string;
    expect(id).toMatch(/^b[0-9a-f]{16}$/);
    expect(w.ask("another?")).toBeUndefined();
    w.take({ type: "answer", command_id: "a1", incarnation: w.incarnation, blocker_id: id, text: "main" });
    w.take({ type: "answer", command_id: "a2", incarnation: w.incarnation, blocker_id: id, text: "again" });
    expect(submitted).toEqual([`The swarm coordinator answered your question ${id}:\n\nmain`]);
    expect(sent.map((u) => [u.kind, u.reason])).toEqual([["blocker", undefined], ["accepted", undefined], ["rejected", "unknown_blocker"]]);
  });

  it("[swarm.updates.unacked] updates are kept until acknowledged and resent on a new connection; past max_unacked the oldest goes, said on the diagnostics", () => {
    const { w, notes } = worker({ maxUnacked: 2 });
    prompt(w, "c1");
    prompt(w, "c2");
    w.promptSubmitted("p1");
    w.responseFinished("p1", "done");
    w.turnEnded("p1", "completed");
    expect(w.pending().map((u) => [u.seq, u.kind])).toEqual([[2, "accepted"], [3, "result"]]);
    expect(notes.join("\n")).toContain("max_unacked (2) reached");
    w.ack(2);
    expect(w.pending().map((u) => [u.seq, u.kind, u.text])).toEqual([[3, "result", "done"]]);
  });

  it("[swarm.prompt.no-agent] with no agent in the session yet a command is refused", () => {
    const { w, sent } = worker();
    w.agentId = undefined;
    prompt(w, "c1");
    expect(sent).toMatchObject([{ kind: "rejected", reason: "no_agent" }]);
  });
});
