// A 100 MiB session, built through the store API, resumed by a real daemon: a bounded attach
// reaches replay-complete with the newest records only, pages back to the first turn, a consumer
// asking for everything gets it all streamed, and the daemon's memory stays far below the history.
import { afterEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient, isAlive, startDaemon, tauHome, waitFor } from "../../support/daemon.js";
import { generateSession } from "../../support/session-generator.js";
import { connectUnix } from "../../../handwritten/transport/index.js";
import { REVISION } from "../../../handwritten/protocol/index.js";
import { PERSISTENCE, type EventName } from "../../../generated/index.js";

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024;
}

describe("a 100 MiB session", () => {
  it("[session.long.attach-window-and-page-back] a bounded attach, paging back to the first turn, a whole replay streamed, and bounded memory", async () => {
    const h = tauHome();
    cleanups.push(h.dispose);
    const g = generateSession(join(h.home, "state"), { targetBytes: 100 * 1024 * 1024, outputBytes: 16 * 1024, projectRoot: h.home });
    const d = await startDaemon(h.env, ["--resume", g.sessionId, "--project-root", h.home]);
    cleanups.push(() => {
      if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
    });

    // Resumed from checkpoints, nothing of the history in memory (it was 300+ MiB when it all was).
    expect(rssMiB(d.pid)).toBeLessThan(100);
    // A bounded attach: the newest records of each journal, the rest counted.
    const ui = await TestClient.ui(d.socket);
    ui.send({ message: "subscribe", payload: { historical: ["*"], live: ["*"], recent: 500 } });
    const boundary = await ui.next((m) => m.message === "deliver" && m.payload.event.name === "session.replay_complete", 60_000);
    if (boundary.message !== "deliver") throw new Error("unreachable");
    expect(Number(boundary.payload.event.data.omitted)).toBeGreaterThan(g.records - 600);
    const replayedAgent = ui.deliveries().filter((x) => x.replay && x.data.agent_id === g.agentId && x.name.startsWith("agent.started"));
    expect(replayedAgent).toHaveLength(1); // who the journal is about comes with every window
    expect(ui.deliveries().some((x) => x.name === "agent.prompt_submitted" && x.data.text === g.lastPrompt)).toBe(true);

    expect(rssMiB(d.pid)).toBeLessThan(130);
    // Paging back, a page at a time, to the first turn.
    let before: number | undefined;
    let pages = 0;
    let first: Array<{ event: { name: string; data: Record<string, unknown> } }> = [];
    for (;;) {
      ui.send({ message: "ui_history_request", payload: { request_id: `h${pages}`, agent_id: g.agentId, limit: 1000, ...(before !== undefined ? { before } : {}) } });
      const m = await ui.next((x) => x.message === "ui_history_result" && x.payload.request_id === `h${pages}`, 30_000);
      if (m.message !== "ui_history_result") throw new Error("unreachable");
      pages++;
      expect(m.payload.total).toBe(g.records);
      expect(m.payload.records.length).toBeGreaterThan(0);
      expect(m.payload.records[0]?.seq).toBe(m.payload.first);
      before = m.payload.first;
      first = m.payload.records as typeof first;
      if (before === 0) break;
    }
    expect(pages).toBeGreaterThan(20); // bytes bound pages, not only the record limit
    expect(first[0]?.event.name).toBe("agent.started");
    expect(first.find((r) => r.event.name === "agent.prompt_submitted")?.event.data.text).toBe(g.firstPrompt);

    // A consumer that asks for everything gets it all, streamed at the pace it reads.
    const all = await connectUnix(d.socket);
    cleanups.push(() => all.destroy());
    let agentRecords = 0;
    let done = false;
    all.onMessage((m) => {
      if (m.message !== "deliver") return;
      if (m.payload.event.name === "session.replay_complete") done = true;
      // The agent journal's records (not the session's or restore stream's, nor current-state snapshots).
      else if (m.payload.replay && m.payload.event.data.agent_id === g.agentId && PERSISTENCE[m.payload.event.name as EventName] === "agent") agentRecords++;
    });
    all.send({ message: "hello", payload: { revision: { ...REVISION }, role: "ui" } });
    all.send({ message: "subscribe", payload: { historical: ["*"], live: [] } });
    await waitFor(() => done, "the whole replay", 120_000);
    expect(agentRecords).toBe(g.records);

    // Replay reads the journals a batch at a time and keeps about 1 MiB queued: what is left is the
    // heap its decoding used, not the history (which an attach once took 370–420 MiB to serve).
    expect(rssMiB(d.pid)).toBeLessThan(220);
    ui.close();
  }, 300_000);
});
