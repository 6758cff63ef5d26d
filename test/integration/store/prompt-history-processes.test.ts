// Real processes sharing one prompt-history file: incremental pickup of another process's appends,
// fallback to a full read on replacement / truncation / a rewritten last frame, and concurrent
// appends from two processes losing nothing.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { PromptHistory } from "../../../handwritten/store/prompt-history.js";
import { replayJournal } from "../../../handwritten/store/journal.js";
import { validatePromptHistoryRecord, type PromptHistoryRecord } from "../../../handwritten/store/validate.js";
import { encodeFrame } from "../../../handwritten/store/codec.js";
import { bundleFixture } from "../../fixtures/store/bundle.js";
import { tempDir } from "../../unit/store/helpers.js";

let child = "";
beforeAll(async () => {
  child = await bundleFixture("prompt-history-child");
});

/**
 * Appends from a child process. With `goFile`, `ready` resolves once the child has started and waits
 * for that file to exist before it appends.
 */
function appendFromChild(file: string, tag: string, count: number, goFile?: string): Promise<void> & { ready: Promise<void> } {
  let markReady!: () => void;
  const ready = new Promise<void>((r) => (markReady = r));
  const done = new Promise<void>((resolve, reject) => {
    const proc = spawn(process.execPath, [child, "append", file, tag, String(count), ...(goFile ? [goFile] : [])], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    proc.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.startsWith("ready\n")) markReady();
    });
    proc.once("close", (code) => {
      markReady();
      const rest = out.replace(/^ready\n/, "");
      if (code === 0 && rest.startsWith("done")) resolve();
      else reject(new Error(`child ${tag}: ${code} ${out}`));
    });
  });
  return Object.assign(done, { ready });
}

const texts = (h: PromptHistory) => h.entries().map((e) => e.text);

describe("prompt history across processes", () => {
  it("[prompt-history.witness-fallback] picks up another process's appends incrementally; replacement, truncation and a rewritten last frame force a full reread", async () => {
    const file = tempDir() + "/state/prompt-history.cbor";
    const h = new PromptHistory(file);
    expect(h.refresh()).toMatchObject({ mode: "full", reason: "first", newRecords: 0 });
    h.append({ text: "mine-0" });
    await appendFromChild(file, "other", 3);

    // Unchanged prefix: only the tail after the witnessed boundary is scanned.
    const boundary = h.lastRefresh!.end;
    expect(h.refresh()).toEqual({ mode: "incremental", scannedFrom: boundary, newRecords: 3, end: fs.statSync(file).size });
    expect(texts(h)).toEqual(["mine-0", "other-0", "other-1", "other-2"]);
    expect(h.entries().map((e) => e.seq)).toEqual([0, 1, 2, 3]);
    expect(h.refresh()).toMatchObject({ mode: "unchanged", newRecords: 0 });
    // Our own append after another process's is incremental too, with the next seq.
    await appendFromChild(file, "again", 1);
    expect(h.append({ text: "mine-1" }).seq).toBe(5);
    expect(h.lastRefresh).toMatchObject({ mode: "incremental", newRecords: 1 });
    expect(texts(h).slice(-2)).toEqual(["again-0", "mine-1"]);

    // Replacement: a different file renamed over it (new inode) → full read of the new content.
    const other = file + ".new";
    const w = new PromptHistory(other);
    w.append({ text: "replaced-0" });
    w.append({ text: "replaced-1" });
    fs.renameSync(other, file);
    expect(h.refresh()).toMatchObject({ mode: "full", reason: "replaced", newRecords: 2 });
    expect(texts(h)).toEqual(["replaced-0", "replaced-1"]);

    // Truncation below the boundary → full read.
    const first = replayJournal<PromptHistoryRecord>(file, { validate: validatePromptHistoryRecord });
    expect(first.records.length).toBe(2);
    const firstEnd = encodeFrame(first.records[0]).length;
    fs.truncateSync(file, firstEnd);
    expect(h.refresh()).toMatchObject({ mode: "full", reason: "truncated", newRecords: 1 });
    expect(texts(h)).toEqual(["replaced-0"]);

    // Growth after the truncation is incremental again.
    await appendFromChild(file, "grow", 2);
    expect(h.refresh()).toMatchObject({ mode: "incremental", newRecords: 2 });
    expect(texts(h)).toEqual(["replaced-0", "grow-0", "grow-1"]);
    const bytes = fs.readFileSync(file);
    const recs = replayJournal<PromptHistoryRecord>(file, { validate: validatePromptHistoryRecord }).records;
    const last = recs[recs.length - 1]!;
    const lastFrame = encodeFrame(last);
    // Rewrite the last frame in place with a valid record of the same length (same inode, same size).
    const rewritten = encodeFrame({ ...last, text: "GROW-1" });
    expect(rewritten.length).toBe(lastFrame.length);
    const fd = fs.openSync(file, "r+");
    fs.writeSync(fd, rewritten, 0, rewritten.length, bytes.length - lastFrame.length);
    fs.closeSync(fd);
    expect(h.refresh()).toMatchObject({ mode: "full", reason: "tail-changed", newRecords: 3 });
    expect(texts(h)).toEqual(["replaced-0", "grow-0", "GROW-1"]);
    // And the next append from here continues the file's seq, incrementally.
    expect(h.append({ text: "after" }).seq).toBe(3);
    expect(h.lastRefresh).toMatchObject({ mode: "unchanged" });
  });

  it("[prompt-history.concurrent-appends] two processes appending at once lose nothing and keep seq contiguous", async () => {
    const dir = tempDir();
    const file = dir + "/state/prompt-history.cbor";
    const n = 400;
    // Both children start appending at the same moment: once both are up, the go file appears.
    const go = `${dir}/go`;
    const children = [appendFromChild(file, "left", n, go), appendFromChild(file, "right", n, go)];
    await Promise.all(children.map((c) => c.ready));
    fs.writeFileSync(go, "");
    await Promise.all(children);
    const r = replayJournal<PromptHistoryRecord>(file, { validate: validatePromptHistoryRecord });
    expect(r.tornTail).toBeNull();
    expect(r.records.length).toBe(2 * n);
    r.records.forEach((rec, i) => expect(rec.seq).toBe(i));
    for (const tag of ["left", "right"]) {
      const mine = r.records.filter((x) => x.session_id === tag).map((x) => x.text);
      expect(mine).toEqual(Array.from({ length: n }, (_, i) => `${tag}-${i}`));
    }
    // The appends really interleaved (the children pace themselves so that they must: see the fixture).
    let switches = 0;
    for (let i = 1; i < r.records.length; i++) if (r.records[i]!.session_id !== r.records[i - 1]!.session_id) switches++;
    console.log(`[prompt-history.concurrent-appends] ${switches} writer switches over ${2 * n} appends`);
    expect(switches).toBeGreaterThan(2);
    expect(fs.existsSync(file + ".lock")).toBe(false);
    const h = new PromptHistory(file);
    h.refresh();
    expect(h.entries().length).toBe(2 * n);
  });
});
