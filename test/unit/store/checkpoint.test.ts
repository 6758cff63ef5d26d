import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { openFileStateStore } from "../../../handwritten/store/stores.js";
import { DEFAULT_REPAIR_BUDGET, inspectAgent, listAgents, metaPath, writeCheckpoint } from "../../../handwritten/store/checkpoint.js";
import {
  CHECKPOINT_REPAIR_MAX_BYTES,
  CHECKPOINT_REPAIR_MAX_MS,
  CHECKPOINT_REPAIR_MAX_RECORDS,
} from "../../../handwritten/store/limits.js";
import { encodeFrame } from "../../../handwritten/store/codec.js";
import { rawFrame, rec, tempDir } from "./helpers.js";

const big = { maxBytes: 1 << 30, maxRecords: 1 << 30, maxMs: 60_000 };

function agentWith(stateDir: string, id: string, n: number): string {
  const store = openFileStateStore({ stateDir });
  const log = store.openAgent(id);
  for (let i = 0; i < n; i++) log.append({ event: { name: "agent.message", data: { i } }, parent: i === 0 ? null : i - 1, source: { class: "harness" }, recorded_at: 1 });
  store.close(); // writes meta.json
  return `${stateDir}/agents/${id}`;
}

/** Appends `k` records outside the store (so meta.json goes stale) and returns the bytes added. */
function growBehindCheckpoint(dir: string, from: number, k: number): number {
  const frames = Buffer.concat(Array.from({ length: k }, (_, i) => encodeFrame(rec(from + i))));
  fs.appendFileSync(`${dir}/events.cbor`, frames);
  return frames.length;
}

describe("meta.json checkpoints", () => {
  it("closing an agent journal writes a content-minimised 0600 checkpoint that lists as current", () => {
    const state = tempDir();
    const dir = agentWith(state, "a1", 3);
    const meta = JSON.parse(fs.readFileSync(metaPath(dir), "utf8")) as Record<string, unknown>;
    expect(Object.keys(meta).sort()).toEqual(["anchors", "boundary", "dev", "ino", "next_seq", "version", "witness"]);
    expect(meta.anchors).toEqual([0]); // frame offsets only: the first frame of each FRAME_ANCHOR_EVERY
    expect(fs.statSync(metaPath(dir)).mode & 0o777).toBe(0o600);
    expect(listAgents(state)).toEqual([
      { id: "a1", status: "current", routable: true, next_seq: 3, boundary: fs.statSync(`${dir}/events.cbor`).size },
    ]);
  });

  it("metadata-only, empty, corrupt and replaced artifacts reserve ids but are not routable", () => {
    const state = tempDir();
    fs.mkdirSync(`${state}/agents/meta-only`, { recursive: true });
    fs.writeFileSync(`${state}/agents/meta-only/meta.json`, "{}");
    agentWith(state, "empty", 0);
    const bad = agentWith(state, "bad", 2);
    fs.appendFileSync(`${bad}/events.cbor`, rawFrame(Buffer.from([0xff])));
    const replaced = agentWith(state, "replaced", 2);
    // The same bytes under a new inode (made while the old one still exists, so the file system
    // cannot hand the freed number back): the checkpoint's identity no longer matches.
    fs.copyFileSync(`${replaced}/events.cbor`, `${replaced}/events.cbor.new`);
    fs.renameSync(`${replaced}/events.cbor.new`, `${replaced}/events.cbor`);
    fs.mkdirSync(`${state}/agents/..bad-id`);
    const out = Object.fromEntries(listAgents(state).map((a) => [a.id, a]));
    expect(Object.keys(out).sort()).toEqual(["bad", "empty", "meta-only", "replaced"]);
    expect(out["meta-only"]).toMatchObject({ status: "empty", routable: false });
    expect(out["empty"]).toMatchObject({ status: "empty", routable: false });
    expect(out["bad"]).toMatchObject({ status: "corrupt", routable: false });
    expect(out["replaced"]).toMatchObject({ status: "repaired", routable: true, next_seq: 2 });
  });

  it("a witness mismatch (bytes before the boundary changed) forces a full rescan", () => {
    const state = tempDir();
    const dir = agentWith(state, "w", 3);
    const cp = writeCheckpoint(dir, fs.statSync(`${dir}/events.cbor`).size, 3);
    const forged = { ...cp, witness: "0".repeat(64) };
    fs.writeFileSync(metaPath(dir), JSON.stringify(forged));
    expect(inspectAgent(dir, "w", { budget: { ...big, maxRecords: 2 } })).toMatchObject({ status: "unverified", routable: false });
    expect(inspectAgent(dir, "w", { budget: { ...big, maxRecords: 3 } })).toMatchObject({ status: "repaired", next_seq: 3 });
    expect(inspectAgent(dir, "w")).toMatchObject({ status: "current", next_seq: 3 });
  });

  it("[checkpoint.repair.budgets] a stale checkpoint is repaired only within its record, byte and time budgets (at, one below, one above)", () => {
    expect(DEFAULT_REPAIR_BUDGET).toEqual({ maxBytes: CHECKPOINT_REPAIR_MAX_BYTES, maxRecords: CHECKPOINT_REPAIR_MAX_RECORDS, maxMs: CHECKPOINT_REPAIR_MAX_MS });
    const k = 5;
    // Records budget: the stale suffix holds exactly k records.
    for (const [maxRecords, expected] of [[k - 1, "unverified"], [k, "repaired"], [k + 1, "repaired"]] as const) {
      const state = tempDir();
      const dir = agentWith(state, "r", 2);
      const before = fs.readFileSync(metaPath(dir), "utf8");
      growBehindCheckpoint(dir, 2, k);
      const journalBefore = fs.readFileSync(`${dir}/events.cbor`);
      const res = inspectAgent(dir, "r", { budget: { ...big, maxRecords } });
      expect(res.status, `maxRecords=${maxRecords}`).toBe(expected);
      expect(fs.readFileSync(`${dir}/events.cbor`).equals(journalBefore)).toBe(true); // repair never writes the journal
      if (expected === "unverified") {
        expect(res.routable).toBe(false);
        expect(fs.readFileSync(metaPath(dir), "utf8")).toBe(before); // nothing published
      } else {
        expect(res).toMatchObject({ routable: true, next_seq: 2 + k });
        expect(inspectAgent(dir, "r", { repair: false }).status).toBe("current");
      }
    }
    // Byte budget: the stale suffix is exactly `added` bytes.
    for (const delta of [-1, 0, 1]) {
      const state = tempDir();
      const dir = agentWith(state, "b", 2);
      const added = growBehindCheckpoint(dir, 2, k);
      const res = inspectAgent(dir, "b", { budget: { ...big, maxBytes: added + delta } });
      expect(res.status, `maxBytes=added${delta >= 0 ? "+" : ""}${delta}`).toBe(delta < 0 ? "unverified" : "repaired");
    }
    // Time budget: an already-expired budget repairs nothing; a generous one repairs.
    const state = tempDir();
    const dir = agentWith(state, "t", 2);
    growBehindCheckpoint(dir, 2, k);
    expect(inspectAgent(dir, "t", { budget: { ...big, maxMs: -1 } }).status).toBe("unverified");
    expect(inspectAgent(dir, "t", { budget: { ...big, maxMs: 60_000 } }).status).toBe("repaired");
    // With repair disabled a stale checkpoint is only reported.
    growBehindCheckpoint(dir, 2 + k, 1);
    expect(inspectAgent(dir, "t", { repair: false })).toMatchObject({ status: "unverified", routable: false });
  });

  it("locked recovery of a crash tail invalidates the checkpoint", () => {
    const state = tempDir();
    const dir = agentWith(state, "c", 2);
    fs.appendFileSync(`${dir}/events.cbor`, encodeFrame(rec(2)).subarray(0, 5));
    const store = openFileStateStore({ stateDir: state });
    const log = store.openAgent("c");
    expect(fs.existsSync(metaPath(dir))).toBe(false);
    log.close();
    expect(inspectAgent(dir, "c", { repair: false })).toMatchObject({ status: "current", next_seq: 2 });
  });
});
