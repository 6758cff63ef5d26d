// One measured run for bench/compaction.bench.ts, in a process of its own so its peak RSS is its own:
//   compaction-child.ts <read|stats> <stateDir> <sessionId> <agentId>
// Prints {"ms":…,"maxRssMiB":…}. `read` is the baseline: a strict read of the agent journal (frame,
// CBOR and structural checks); `stats` computes the session's stats through the trace snapshot.
import { join } from "node:path";
import { replayJournal, validateJournalRecord } from "../handwritten/store/index.js";
import { sessionStats } from "../handwritten/trace/index.js";

const [mode, stateDir, sessionId, agentId] = process.argv.slice(2) as [string, string, string, string];
const t0 = performance.now();
if (mode === "read") replayJournal(join(stateDir, "agents", agentId, "events.cbor"), { validate: validateJournalRecord, collect: false });
else sessionStats(stateDir, sessionId);
const ms = performance.now() - t0;
process.stdout.write(JSON.stringify({ ms, maxRssMiB: process.resourceUsage().maxRSS / 1024 }) + "\n");
