// The restore stream (SPEC-journal-storage, "The restore stream"): it keeps only what a resume needs,
// so thousands of finished calls leave it within its bound, and a resume still finds the call left
// open and ends it with exactly one outcome, once, however often the session is resumed.
import * as fs from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HarnessKit, until, type KitExtension } from "../../support/harness-kit.js";
import { Harness } from "../../../handwritten/harness/index.js";
import { RESTORE_STREAM_COMPACT_BYTES } from "../../../handwritten/harness/limits.js";
import { replayJournal, validateJournalRecord, type JournalRecord } from "../../../handwritten/store/index.js";

const kits: HarnessKit[] = [];
afterEach(async () => {
  for (const k of kits.splice(0)) await k.close();
});

const ECHO = { name: "echo", description: "echo", parameters: { type: "object" } };
const CALLS = 5_000;
/** Arguments of about 600 bytes: the calls' records add up to several times the bound. */
const ARGS = JSON.stringify({ text: "x".repeat(600) });

function records(file: string): JournalRecord[] {
  return replayJournal<JournalRecord>(file, { validate: validateJournalRecord }).records;
}

describe("the restore stream", () => {
  it("[restore-stream.bounded] 5,000 finished calls leave the stream within its bound, and a resume ends the one left open exactly once", async () => {
    const k = await HarnessKit.open({ debugLog: false });
    kits.push(k);
    const stateDir = k.stateDir as string;
    const agentId = await k.createAgent();
    const tools: KitExtension = k.extension("tools", "tool");
    await tools.emit("tool.registration_declared", ECHO);
    await until(() => k.h.tools.tools.has("echo"), "echo registered");
    const caller = k.extension("caller", "core", { callTools: ["echo"] });
    const stream = join(stateDir, "sessions", k.h.sessionId, "restore-events.cbor");

    let largest = 0;
    let compactions = 0;
    let last = 0;
    for (let i = 0; i < CALLS; i++) {
      const callId = `c-${i}`;
      await caller.emit("tool.request", { agent_id: agentId, call_id: callId, tool: "echo", arguments_json: ARGS });
      if (i === 100) continue; // left open: its owner never answers
      await until(() => tools.directed("tool.call").length > 0 && tools.directed("tool.call").at(-1)?.call_id === callId, "the call at its owner");
      await tools.emit("tool.result_reported", { call_id: callId, output: "ok" });
      const size = fs.statSync(stream).size;
      if (size < last) compactions++;
      last = size;
      largest = Math.max(largest, size);
    }
    await k.settled();
    // Bound: RESTORE_STREAM_COMPACT_BYTES or twice what the open calls' records take, whichever is
    // more, plus the record just appended (here the open call's records are far under half of it).
    const recordBytes = 2 * 1024;
    expect(largest).toBeLessThanOrEqual(RESTORE_STREAM_COMPACT_BYTES + recordBytes);
    expect(compactions).toBeGreaterThan(1);
    const kept = records(stream);
    console.log(`[restore-stream.bounded] ${JSON.stringify({ calls: CALLS, largestBytes: largest, compactions, keptRecords: kept.length, endBytes: fs.statSync(stream).size })}`);
    expect(kept.length).toBeLessThan((RESTORE_STREAM_COMPACT_BYTES / 600) * 1.1);
    // The open call's request and start survived every compaction.
    expect(kept.filter((r) => r.event.data.call_id === "c-100").map((r) => r.event.name)).toEqual(["tool.request", "tool.started"]);
    expect(k.committed("tool.result_display")).toHaveLength(CALLS - 1);

    // The daemon ends without the call's outcome. Each resume starts from the stream as it was while
    // the daemon ran — finished calls not yet compacted out, as a SIGKILL would leave it — and the
    // second one after the first had recorded the cut call's outcome: neither records it twice.
    const running = fs.readFileSync(stream);
    kits.splice(0);
    await k.h.shutdown("requested");
    expect(records(stream).map((r) => r.event.data.call_id)).toEqual(["c-100", "c-100"]); // compacted at shutdown
    const displays = (): JournalRecord[] => records(join(stateDir, "agents", agentId, "events.cbor")).filter((r) => r.event.name === "tool.result_display");
    for (let resume = 1; resume <= 2; resume++) {
      fs.writeFileSync(stream, running);
      fs.rmSync(join(stateDir, "sessions", k.h.sessionId, "restore-meta.json"), { force: true });
      const h = await Harness.open({ projectRoot: "/work/project", stateDir, resume: k.h.sessionId, debugLog: false });
      await h.bus.settled();
      const cut = displays().filter((r) => r.event.data.call_id === "c-100");
      expect(cut, `resume ${resume}`).toHaveLength(1);
      expect(cut[0]?.event.data).toMatchObject({ outcome: "error" });
      expect(displays()).toHaveLength(CALLS);
      // Nothing is left open, so the stream holds nothing.
      expect(records(stream)).toEqual([]);
      await h.shutdown("requested");
    }
    fs.rmSync(stateDir, { recursive: true, force: true });
  }, 240_000);

});
