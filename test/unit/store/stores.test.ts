import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { journalPath, openFileStateStore, openMemoryStateStore, type StateStore } from "../../../handwritten/store/stores.js";
import { replayJournal } from "../../../handwritten/store/journal.js";
import { JournalLockedError, RecordInvalidError, StoreError } from "../../../handwritten/store/errors.js";
import { validateJournalRecord, type JournalRecord } from "../../../handwritten/store/validate.js";
import { tempDir } from "./helpers.js";

function listTree(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true }).map(String).sort();
}

function exercise(store: StateStore): void {
  const agent = store.openAgent("agent-1");
  agent.append({ event: { name: "agent.started", data: {} }, source: { class: "harness" } });
  agent.append({ event: { name: "agent.message", data: { text: "hi" } }, parent: 0, source: { class: "extension", instance: "shell", kind: "tool" } });
  const session = store.openSession("sess-1");
  session.append({ event: { name: "session.member_added", data: { agent: "agent-1" } }, source: { class: "harness" } });
  const restore = store.openRestore("sess-1");
  restore.append({ event: { name: "session.restore_point", data: {} }, source: { class: "harness" } });
  expect(() => store.openAgent("agent-1")).toThrow(JournalLockedError);
  expect(() => agent.append({ event: { name: "Nope", data: {} }, source: { class: "harness" } })).toThrow(RecordInvalidError);
  agent.close();
  const again = store.openAgent("agent-1");
  expect(again.nextSeq).toBe(2);
  expect(again.readAll().map((r) => r.event.name)).toEqual(["agent.started", "agent.message"]);
  expect(again.readAll()[1]!.recorded_at).toBeGreaterThan(1_600_000_000_000_000);
  store.close();
}

describe("state stores", () => {
  it("file store lays journals out per agent and per session", () => {
    const dir = tempDir();
    const store = openFileStateStore({ stateDir: dir });
    exercise(store);
    expect(listTree(dir)).toEqual([
      "agents",
      "agents/agent-1",
      "agents/agent-1/events.cbor",
      "agents/agent-1/meta.json",
      "sessions",
      "sessions/sess-1",
      "sessions/sess-1/events.cbor",
      "sessions/sess-1/meta.json",
      "sessions/sess-1/restore-events.cbor",
      "sessions/sess-1/restore-meta.json",
    ]);
    expect(fs.statSync(dir + "/agents/agent-1").mode & 0o777).toBe(0o700);
    const r = replayJournal<JournalRecord>(journalPath(dir, "agent", "agent-1"), { validate: validateJournalRecord });
    expect(r.records.map((x) => x.seq)).toEqual([0, 1]);
  });

  it("[store.memory.no-files] memory-only stores behave the same and create no file in the state dir", () => {
    const dir = tempDir();
    const before = listTree(dir);
    const prevCwd = process.cwd();
    process.chdir(dir); // a stray relative write would land here too
    try {
      exercise(openMemoryStateStore());
    } finally {
      process.chdir(prevCwd);
    }
    expect(listTree(dir)).toEqual(before);
    expect(before).toEqual([]);
  });

  it("refuses ids that could leave their directory", () => {
    const store = openFileStateStore({ stateDir: tempDir() });
    for (const bad of ["../x", "a/b", ".hidden", "", "x".repeat(129)]) expect(() => store.openAgent(bad)).toThrow(StoreError);
    expect(() => store.openAgent("x".repeat(128)).close()).not.toThrow();
  });
});
