// Which events are a `tau run`'s, and in what order (SPEC-cli-manners, "The --json stream"): the
// run's agent's events are held until it knows its agent and has its `agent.started`, whichever
// order the daemon's answer and the start arrive in; a continued agent's start is read; a full hold
// lets the oldest go and reads the start instead.
import { describe, expect, it } from "vitest";
import { HELD_DELIVERIES_MAX, RunFollower } from "../../../handwritten/cli/run/follow.js";
import type { Delivery } from "../../../handwritten/cli/session-client.js";

let seq = 0;
const delivery = (name: string, data: Record<string, unknown>, replay = false): Delivery =>
  ({ seq: seq++, recorded_at: 1, publisher: { class: "harness" }, event: { name, data }, ...(replay ? { replay: true } : {}) }) as unknown as Delivery;

/** A follower whose shown events are collected as `name agent`. */
function follower() {
  const shown: string[] = [];
  const f = new RunFollower({ agentEvent: (d) => void shown.push(`${d.event.name} ${String((d.event.data as { agent_id?: string }).agent_id)}${d.replay ? " (replay)" : ""}`) });
  return { f, shown };
}

const neverRead = async (): Promise<Delivery | undefined> => {
  throw new Error("the start must not be read from the journal here");
};

describe("tau run follows its agent's events", () => {
  it("holds a new agent's events until the agent is known, then shows its own in order, its start first", async () => {
    const { f, shown } = follower();
    f.deliver(delivery("agent.started", { agent_id: "a-other" }));
    f.deliver(delivery("agent.started", { agent_id: "a-run" }));
    f.deliver(delivery("harness.notice", { level: "info", text: "no agent" }));
    f.deliver(delivery("session.agent_loaded", { agent_id: "a-run" }));
    expect(shown).toEqual([]);
    await f.follow("a-run", false, neverRead);
    f.deliver(delivery("ui.prompt_submit", { agent_id: "a-run" }));
    f.deliver(delivery("agent.prompt_submitted", { agent_id: "a-other", prompt_id: "p-x", source: "human_ui" }));
    expect(shown).toEqual(["agent.started a-run", "session.agent_loaded a-run", "ui.prompt_submit a-run"]);
  });

  it("keeps holding when the daemon's answer came before the start, and lets go when the start comes", async () => {
    const { f, shown } = follower();
    await f.follow("a-run", false, neverRead);
    f.deliver(delivery("agent.metadata_set", { agent_id: "a-other" }));
    expect(shown).toEqual([]);
    f.deliver(delivery("agent.started", { agent_id: "a-run" }));
    f.deliver(delivery("session.agent_loaded", { agent_id: "a-run" }));
    expect(shown).toEqual(["agent.started a-run", "session.agent_loaded a-run"]);
  });

  it("reads a continued agent's start, shows it first as a replay, then what was held meanwhile", async () => {
    const { f, shown } = follower();
    let release!: (d: Delivery) => void;
    const read = new Promise<Delivery>((r) => (release = r));
    const following = f.follow("a-old", true, () => read);
    f.deliver(delivery("ui.model_select", { agent_id: "a-old" }));
    expect(shown).toEqual([]);
    release(delivery("agent.started", { agent_id: "a-old" }, true));
    await following;
    f.deliver(delivery("ui.prompt_submit", { agent_id: "a-old" }));
    expect(shown).toEqual(["agent.started a-old (replay)", "ui.model_select a-old", "ui.prompt_submit a-old"]);
  });

  it(`holds at most ${HELD_DELIVERIES_MAX} deliveries: the oldest go, and a start that went with them is read instead`, async () => {
    const { f, shown } = follower();
    f.deliver(delivery("agent.started", { agent_id: "a-run" }));
    for (let i = 0; i < HELD_DELIVERIES_MAX; i++) f.deliver(delivery("agent.metadata_set", { agent_id: `a-${i}` }));
    f.deliver(delivery("session.agent_loaded", { agent_id: "a-run" }));
    await f.follow("a-run", false, async () => delivery("agent.started", { agent_id: "a-run" }, true));
    expect(shown).toEqual(["agent.started a-run (replay)", "session.agent_loaded a-run"]);
  });

  it("ends with its own prompt's turn or failure, never another's; the first end wins", async () => {
    const { f } = follower();
    await f.follow("a-run", true, async () => undefined);
    f.deliver(delivery("agent.prompt_submitted", { agent_id: "a-run", prompt_id: "p-run", source: "human_ui" }));
    f.deliver(delivery("agent.outer_turn_finished", { agent_id: "a-run", prompt_id: "p-else", outcome: "completed" }));
    f.deliver(delivery("provider.response_failed", { agent_id: "a-run", prompt_id: "p-run", error_class: "network", diagnostic: "refused" }));
    expect(f.ended).toBe(false);
    f.deliver(delivery("agent.outer_turn_finished", { agent_id: "a-run", prompt_id: "p-run", outcome: "failed" }));
    f.end({ kind: "daemon_lost" });
    expect(await f.outcome).toEqual({ kind: "turn", outcome: "failed" });
    expect(f.failure).toEqual({ errorClass: "network", diagnostic: "refused" });
    expect(f.promptId).toBe("p-run");
  });
});
