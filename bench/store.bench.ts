// Storage benchmark: framed CBOR journal vs the JSONL pattern (JSON.stringify + appendFileSync per
// record, one open/write/close each) measured in the same run, best of three interleaved trials to
// damp noise on a shared machine. Prints figures and ratios; asserts nothing.
import * as fs from "node:fs";
import * as os from "node:os";
import {
  DebugLogWriter,
  FileJournal,
  formatDebugLine,
  listAgents,
  nodeDebugLogIo,
  openFileStateStore,
  replayJournal,
  validateJournalRecord,
  type JournalRecord,
} from "../handwritten/store/index.js";

function record(seq: number, textBytes: number): JournalRecord {
  return {
    seq,
    event: { name: "agent.message", data: { text: "x".repeat(textBytes) } },
    parent: seq === 0 ? null : seq - 1,
    source: { class: "harness" },
    recorded_at: 1_700_000_000_000_000 + seq,
  };
}

const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(2));
function line(label: string, ours: number, base: number, unit: string): void {
  console.log(`${label.padEnd(30)} cbor ${fmt(ours).padStart(8)} ${unit}   jsonl ${fmt(base).padStart(8)} ${unit}   ratio ${(ours / base).toFixed(2)}x`);
}
function best(trials: number, f: () => void): number {
  let min = Infinity;
  for (let i = 0; i < trials; i++) {
    const t0 = performance.now();
    f();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

export async function run(): Promise<void> {
  const dir = fs.mkdtempSync(os.tmpdir() + "/tau-store-bench-");
  try {
    for (const [size, n] of [[256, 20_000], [4096, 8_000]] as const) {
      // The record envelope (seq, names, source, timestamps) is about 95 bytes in either encoding.
      const recs = Array.from({ length: n }, (_, i) => record(i, size - 95));
      const cborFile = `${dir}/a-${size}.cbor`;
      const jsonlFile = `${dir}/a-${size}.jsonl`;
      const appendCbor = () => {
        fs.rmSync(cborFile, { force: true });
        const j = FileJournal.open<JournalRecord>(cborFile, { validate: validateJournalRecord });
        for (const r of recs) j.append(r);
        j.close();
      };
      const appendJsonl = () => {
        fs.rmSync(jsonlFile, { force: true });
        for (const r of recs) fs.appendFileSync(jsonlFile, JSON.stringify(r) + "\n");
      };
      let cborMs = Infinity;
      let jsonlMs = Infinity;
      for (let t = 0; t < 3; t++) {
        cborMs = Math.min(cborMs, best(1, appendCbor));
        jsonlMs = Math.min(jsonlMs, best(1, appendJsonl));
      }
      line(`append ${size} B records`, n / (cborMs / 1000), n / (jsonlMs / 1000), "rec/s");
      console.log(
        `${"".padEnd(30)} per record: cbor ${((cborMs * 1000) / n).toFixed(1)} us, jsonl ${((jsonlMs * 1000) / n).toFixed(1)} us; ` +
          `sizes: cbor ${(fs.statSync(cborFile).size / 1e6).toFixed(2)} MB, jsonl ${(fs.statSync(jsonlFile).size / 1e6).toFixed(2)} MB`,
      );

      const replayMs = best(5, () => {
        const res = replayJournal<JournalRecord>(cborFile, { validate: validateJournalRecord, collect: false });
        if (res.nextSeq !== n) throw new Error("replay mismatch");
      });
      const parseMs = best(5, () => {
        let count = 0;
        for (const l of fs.readFileSync(jsonlFile, "utf8").split("\n")) if (l) (JSON.parse(l), count++);
        if (count !== n) throw new Error("parse mismatch");
      });
      line(`strict replay ${size} B`, n / (replayMs / 1000), n / (parseMs / 1000), "rec/s");
    }

    // Listing 1,000 agents with about 100 MB of journals: checkpoints vs strictly replaying every journal.
    const stateDir = `${dir}/state`;
    const store = openFileStateStore({ stateDir });
    const text = "y".repeat(4000);
    for (let a = 0; a < 1000; a++) {
      const log = store.openAgent(`agent-${String(a).padStart(4, "0")}`);
      for (let i = 0; i < 25; i++) log.append({ event: { name: "agent.message", data: { text } }, parent: i === 0 ? null : i - 1, source: { class: "harness" } });
      log.close();
    }
    store.close();
    let totalBytes = 0;
    for (const a of fs.readdirSync(`${stateDir}/agents`)) totalBytes += fs.statSync(`${stateDir}/agents/${a}/events.cbor`).size;
    const listMs = best(3, () => {
      const out = listAgents(stateDir);
      if (out.length !== 1000 || out.some((x) => x.status !== "current")) throw new Error("listing mismatch");
    });
    const scanMs = best(1, () => {
      for (const a of fs.readdirSync(`${stateDir}/agents`))
        replayJournal<JournalRecord>(`${stateDir}/agents/${a}/events.cbor`, { validate: validateJournalRecord, collect: false });
    });
    console.log(
      `list 1,000 agents (${(totalBytes / 1e6).toFixed(0)} MB)`.padEnd(30) +
        ` checkpoints ${listMs.toFixed(1)} ms   full strict scan ${scanMs.toFixed(0)} ms   ratio ${(scanMs / listMs).toFixed(1)}x faster`,
    );

    // Debug mirror: what a producer pays per line (redact + serialise + admit) with the writer held
    // off (its open never completes), beside the synchronous JSONL append a peer agent does inline.
    const events = Array.from({ length: 1024 }, (_, i) => ({ name: "agent.message", seq: i, data: { text: "d".repeat(200), api_key: "k" } }));
    const mirrorFile = `${dir}/events.jsonl`;
    const admitMs = best(5, () => {
      const w = new DebugLogWriter({ io: { ...nodeDebugLogIo, open: () => new Promise(() => {}) }, warn: () => {} });
      for (const e of events) if (!w.admit(mirrorFile, formatDebugLine(e))) throw new Error("admit refused");
    });
    const syncMs = best(5, () => {
      fs.rmSync(mirrorFile, { force: true });
      for (const e of events) fs.appendFileSync(mirrorFile, JSON.stringify(e) + "\n");
    });
    console.log(
      `debug line admit (1,024 lines)`.padEnd(30) +
        ` admit ${((admitMs * 1000) / events.length).toFixed(2)} us/line   inline appendFileSync ${((syncMs * 1000) / events.length).toFixed(2)} us/line   ratio ${(syncMs / admitMs).toFixed(1)}x cheaper`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
