// A windowed replay (`subscribe.recent`) reads each journal's most recent records, about
// REPLAY_WINDOW_BYTES of them at most, plus its first record; the session's own journals (its
// lifecycle, the restore stream) go back no further than the agents' windows, so one stretch of the
// session's recent past is replayed, not the tool calls of turns whose records were left out.
import { afterEach, describe, expect, it } from "vitest";
import { openJournalHistory } from "../../../handwritten/harness/history.js";
import { REPLAY_WINDOW_BYTES } from "../../../handwritten/harness/limits.js";
import { openFileStateStore, type EventLog, type StateStore } from "../../../handwritten/store/index.js";
import { tempDir } from "../store/helpers.js";

const stores: StateStore[] = [];
afterEach(() => {
  while (stores.length) stores.pop()?.close();
});

const harness = { class: "harness" } as const;
const put = (log: EventLog, at: number, name: string, data: Record<string, unknown>) => log.append({ event: { name, data }, source: harness, recorded_at: at });

function drain(reader: ReturnType<typeof openJournalHistory>): Array<{ name: string; seq: number; at: number }> {
  const out: Array<{ name: string; seq: number; at: number }> = [];
  for (let batch = reader.next(); batch.length > 0; batch = reader.next()) out.push(...batch.map((r) => ({ name: r.name, seq: r.seq, at: r.recordedAt })));
  return out;
}

describe("windowed replay", () => {
  it("[history.window.bytes-bound-and-one-stretch] each agent window stops at its bytes; the session and restore windows start where the agents' do", () => {
    const store = openFileStateStore({ stateDir: tempDir() });
    stores.push(store);
    const session = store.openSession("s-window-1");
    const restore = store.openRestore("s-window-1");
    const agent = store.openAgent("a-window-1");
    let t = 1_000_000;
    put(session, t++, "session.started", { session_id: "s-window-1", project_root: "/p", resumed: false, ephemeral: false });
    put(agent, t++, "agent.started", { agent_id: "a-window-1", session_id: "s-window-1", creator: "ui", cwd: "/p", ephemeral: false });
    const big = "x".repeat(64 * 1024);
    const turns = 200;
    for (let i = 0; i < turns; i++) {
      const call = `call-${i}`;
      put(restore, t++, "tool.request", { agent_id: "a-window-1", prompt_id: `p-${i}`, call_id: call, tool: "shell", arguments_json: "{}" });
      put(agent, t++, "provider.tool_result", { agent_id: "a-window-1", prompt_id: `p-${i}`, call_id: call, tool: "shell", output: big });
    }
    const reader = openJournalHistory([session, restore, agent], 2000);
    const got = drain(reader);
    const agentWindow = got.filter((r) => r.name === "provider.tool_result");
    // About REPLAY_WINDOW_BYTES of 64 KiB results, not the 2,000 records asked for.
    expect(agentWindow.length).toBeGreaterThan(REPLAY_WINDOW_BYTES / big.length - 3);
    expect(agentWindow.length).toBeLessThanOrEqual(REPLAY_WINDOW_BYTES / big.length);
    expect(agentWindow.at(-1)?.seq).toBe(turns);
    expect(got.filter((r) => r.name === "agent.started" || r.name === "session.started")).toHaveLength(2);
    // The restore stream's window is the same stretch: the calls of the replayed results, from the
    // first replayed result's call on (its request was recorded just before it).
    const calls = got.filter((r) => r.name === "tool.request");
    const since = agentWindow[0]!.at;
    expect(calls.length).toBe(agentWindow.length - 1);
    expect(calls.every((r) => r.at >= since)).toBe(true);
    // Everything left out is counted: every journal's records but the replayed ones.
    expect(reader.omitted).toBe(1 + 2 * turns + 1 - got.length);
    // Ordered by commit time across journals.
    expect(got.map((r) => r.at)).toEqual([...got.map((r) => r.at)].sort((a, b) => a - b));
  });

  it("[history.window.whole-when-unbounded] without `recent` every record of every journal is replayed", () => {
    const store = openFileStateStore({ stateDir: tempDir() });
    stores.push(store);
    const session = store.openSession("s-window-2");
    const restore = store.openRestore("s-window-2");
    const agent = store.openAgent("a-window-2");
    let t = 1;
    put(session, t++, "session.started", { session_id: "s-window-2", project_root: "/p", resumed: false, ephemeral: false });
    put(agent, t++, "agent.started", { agent_id: "a-window-2", session_id: "s-window-2", creator: "ui", cwd: "/p", ephemeral: false });
    for (let i = 0; i < 40; i++) {
      put(restore, t++, "tool.request", { agent_id: "a-window-2", prompt_id: `p-${i}`, call_id: `c-${i}`, tool: "shell", arguments_json: "{}" });
      put(agent, t++, "provider.tool_result", { agent_id: "a-window-2", prompt_id: `p-${i}`, call_id: `c-${i}`, tool: "shell", output: "y".repeat(100 * 1024) });
    }
    const reader = openJournalHistory([session, restore, agent], undefined);
    expect(drain(reader)).toHaveLength(82);
    expect(reader.omitted).toBe(0);
  });
});
