// The snapshot of an inactive journal holds the store's writer lock from before the open until the
// snapshot is closed (staging finished), so no daemon can resume, repair or append under an export.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { captureAgentJournal, closeSnapshot } from "../../../handwritten/trace/index.js";
import { JournalLockedError, acquireJournalLock, openFileStateStore } from "../../../handwritten/store/index.js";

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop() as string, { recursive: true, force: true });
});

function stateWithAgent(id: string): string {
  const state = mkdtempSync(join(tmpdir(), "tau-snap-"));
  dirs.push(state);
  const store = openFileStateStore({ stateDir: state });
  store.openAgent(id).append({ event: { name: "agent.started", data: { agent_id: id, session_id: "s-1", creator: "ui", cwd: "/w", ephemeral: false } }, source: { class: "harness" }, recorded_at: 1, parent: null });
  store.close();
  return state;
}

describe("trace snapshots", () => {
  it("[trace.snapshot.lock-until-staged] an inactive journal stays locked from capture until the snapshot closes", () => {
    const state = stateWithAgent("a-snap-1");
    const journal = join(state, "agents", "a-snap-1", "events.cbor");
    const snap = captureAgentJournal(state, "a-snap-1");
    expect(snap.mode).toBe("eof");
    expect(() => acquireJournalLock(journal)).toThrow(JournalLockedError);
    closeSnapshot(snap);
    const lock = acquireJournalLock(journal);
    lock.release();
  });

  it("[trace.snapshot.lock-until-staged] a capture that fails releases the lock it took", () => {
    const state = stateWithAgent("a-snap-2");
    mkdirSync(join(state, "agents", "a-nojournal")); // a folder, no journal: the lock is taken, the open fails
    expect(() => captureAgentJournal(state, "a-nojournal")).toThrow(/has no journal/);
    const lock = acquireJournalLock(join(state, "agents", "a-nojournal", "events.cbor"));
    lock.release();
  });
});
