// One measured run for bench/trace.bench.ts, in a process of its own so its peak RSS is its own:
//   trace-child.ts <baseline|native|jsonl|jsonl-full|toon|toon-full|otlp|perf> <stateDir> <agentId>
// Prints {"ms":…,"maxRssMiB":…,"bytes":…}. The baseline is a strict read of the same journal
// (frame, CBOR and structural checks, nothing projected or written).
import * as fs from "node:fs";
import { join } from "node:path";
import { replayJournal, validateJournalRecord } from "../handwritten/store/index.js";
import { exportTrace } from "../handwritten/trace/index.js";

const [mode, stateDir, agentId] = process.argv.slice(2) as [string, string, string];
const t0 = performance.now();
let bytes = 0;
if (mode === "baseline") {
  const r = replayJournal(join(stateDir, "agents", agentId, "events.cbor"), { validate: validateJournalRecord, collect: false });
  bytes = r.end;
} else {
  const sink = fs.createWriteStream("/dev/null");
  const full = mode.endsWith("-full");
  const format = mode.replace(/-full$/, "") as "native" | "jsonl" | "toon" | "otlp" | "perf";
  const report = await exportTrace({ stateDir, agentId, format, full }, sink);
  bytes = report.bytes;
  await new Promise<void>((r) => sink.end(r));
}
const ms = performance.now() - t0;
process.stdout.write(JSON.stringify({ ms, maxRssMiB: process.resourceUsage().maxRSS / 1024, bytes }) + "\n");
