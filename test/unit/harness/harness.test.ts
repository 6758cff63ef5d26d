import { describe, expect, it } from "vitest";
import { useTempDirs } from "../../support/temp-dirs.js";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Harness, ResumeError, type Peer } from "../../../handwritten/harness/index.js";
import { MemorySink } from "../../../handwritten/bus/index.js";
import type { WireMessage } from "../../../generated/index.js";
import { until } from "../../support/harness-kit.js";

const tmp = useTempDirs("tau-harness-");

/** Records what the harness sends to one connection (the transport's side of the boundary). */
function uiPeer(generation: number): Peer & { sent: WireMessage[] } {
  const sent: WireMessage[] = [];
  return { generation, publisher: { class: "ui_attached", generation }, send: (m) => (sent.push(m), "queued"), sendAsync: async (m) => (sent.push(m), "queued"), sent };
}


async function createAgent(h: Harness, peer: Peer & { sent: WireMessage[] }, request_id: string, extra: Record<string, unknown> = {}): Promise<string> {
  const before = peer.sent.length;
  const out = await h.bus.publish({ name: "ui.create_agent", data: { request_id, ...extra } }, peer.publisher);
  expect(out.status).toBe("committed");
  await until(() => peer.sent.length > before);
  const msg = peer.sent[peer.sent.length - 1];
  if (msg?.message !== "direct") throw new Error("expected a direct result");
  expect(msg.payload.event.name).toBe("ui.create_agent_result");
  const data = msg.payload.event.data as { ok: boolean; agent_id?: string; error?: string };
  if (!data.ok) throw new Error(data.error);
  return data.agent_id as string;
}

describe("harness sessions and agents", () => {
  it("creates agents for attached UIs and answers only the requester, never publishing the result", async () => {
    const h = await Harness.open({ stateDir: tmp(), projectRoot: "/work/project" });
    const ui = uiPeer(1);
    const other = uiPeer(2);
    h.addPeer(ui);
    h.addPeer(other);
    const watcher = new MemorySink();
    h.bus.subscribe({ historical: ["*"], live: ["*"] }, watcher);
    const agentId = await createAgent(h, ui, "req-1", { display_name: "helper" });
    expect(other.sent).toEqual([]);
    await until(() => h.agents.get(agentId)?.fold.metadata.display_name === "helper");
    const names = watcher.drain().map((d) => d.event.name);
    expect(names).toContain("agent.started");
    expect(names).toContain("session.agent_loaded");
    expect(names).not.toContain("ui.create_agent_result");
    await h.shutdown("requested");
  });

  it("refuses an unknown parent with a bounded error to the requester only", async () => {
    const h = await Harness.open({ stateDir: tmp(), projectRoot: "/p" });
    const ui = uiPeer(1);
    h.addPeer(ui);
    await expect(createAgent(h, ui, "req-1", { parent_id: "a-missing" })).rejects.toThrow("unknown parent agent");
    expect(h.agents.size).toBe(0);
    await h.shutdown("requested");
  });

  it("turns metadata requests from live requesters into canonical facts; stale generations stay observations", async () => {
    const h = await Harness.open({ stateDir: tmp(), projectRoot: "/p" });
    const ui = uiPeer(1);
    h.addPeer(ui);
    const agentId = await createAgent(h, ui, "req-1");
    const ext = { generation: 7, publisher: { class: "extension", kind: "tool", instance: "shell", generation: 7 } as const, send: () => "queued" as const, sendAsync: async () => "queued" as const };
    h.addPeer(ext);
    await h.bus.publish({ name: "agent.metadata_request", data: { agent_id: agentId, key: "cwd", value: "/w/sub" } }, ext.publisher);
    await until(() => h.agents.get(agentId)?.fold.metadata.cwd === "/w/sub");
    h.removePeer(7);
    await h.bus.publish({ name: "agent.metadata_request", data: { agent_id: agentId, key: "cwd", value: "/stale" } }, ext.publisher);
    // A live requester's later request is the barrier: its fact commits after any fact the stale one made.
    await h.bus.publish({ name: "agent.metadata_request", data: { agent_id: agentId, key: "note", value: "after" } }, ui.publisher);
    await until(() => h.agents.get(agentId)?.fold.metadata.note === "after", "the live requester's fact");
    expect(h.agents.get(agentId)?.fold.metadata.cwd).toBe("/w/sub");
    await h.shutdown("requested");
  });

  it("resumes a session with the same agents, metadata and transcript", async () => {
    const state = tmp();
    const h = await Harness.open({ stateDir: state, projectRoot: "/p" });
    const ui = uiPeer(1);
    h.addPeer(ui);
    const a1 = await createAgent(h, ui, "r1", { display_name: "one" });
    await createAgent(h, ui, "r2", { parent_id: a1 });
    await until(() => Object.keys(h.agents.get(a1)?.fold.metadata ?? {}).length === 1);
    const before = h.foldedState();
    await h.shutdown("requested");

    const resumed = await Harness.open({ stateDir: state, projectRoot: "/p", resume: h.sessionId });
    expect(resumed.foldedState()).toEqual(before);
    const sink = new MemorySink();
    resumed.bus.subscribe({ historical: ["session.*"], live: [] }, sink);
    const names: string[] = [];
    while (names.at(-1) !== "session.replay_complete") names.push(...(await sink.take(1)).map((d) => d.event.name));
    expect(names.filter((n) => n === "session.agent_loaded")).toHaveLength(2);
    expect(names.at(-1)).toBe("session.replay_complete");
    await resumed.shutdown("requested");
  });

  it("fails a resume closed on a corrupt journal, naming the file, and leaves it unchanged", async () => {
    const state = tmp();
    const h = await Harness.open({ stateDir: state, projectRoot: "/p" });
    const ui = uiPeer(1);
    h.addPeer(ui);
    await createAgent(h, ui, "r1");
    await h.shutdown("requested");
    const file = join(state, "sessions", h.sessionId, "events.cbor");
    const bytes = readFileSync(file);
    const corrupt = Buffer.from(bytes);
    corrupt[12] = 0xff; // inside the first record's CBOR payload
    writeFileSync(file, corrupt);
    const err = await Harness.open({ stateDir: state, projectRoot: "/p", resume: h.sessionId }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResumeError);
    expect(String((err as Error).message)).toContain("events.cbor");
    expect(readFileSync(file)).toEqual(corrupt);
  });

  it("keeps no files for an ephemeral session", async () => {
    const root = tmp();
    const h = await Harness.open({ projectRoot: root });
    const ui = uiPeer(1);
    h.addPeer(ui);
    await createAgent(h, ui, "r1");
    await h.shutdown("requested");
    expect(h.ephemeral).toBe(true);
    expect(readdirSync(root)).toEqual([]);
    expect(existsSync(join(root, "sessions"))).toBe(false);
  });
});
