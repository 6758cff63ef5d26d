// Trace export benchmark: export time and peak RSS per format on a large generated agent journal
// (TAU_TRACE_BENCH_MB, default 100 MiB), each in a fresh process, against a baseline measured in the
// same run: a strict read of the same journal in a fresh process. Best of three interleaved trials.
// Prints figures and ratios; asserts nothing.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateSession } from "../test/support/session-generator.js";

const CHILD = fileURLToPath(new URL("./trace-child.ts", import.meta.url));
const MODES = ["baseline", "native", "jsonl", "jsonl-full", "toon", "toon-full", "otlp", "perf"] as const;

interface Sample {
  ms: number;
  maxRssMiB: number;
  bytes: number;
}

function measure(mode: string, stateDir: string, agentId: string): Sample {
  const out = execFileSync(process.execPath, ["--import", "tsx", CHILD, mode, stateDir, agentId], { encoding: "utf8", maxBuffer: 1 << 20 });
  return JSON.parse(out) as Sample;
}

export async function run(): Promise<void> {
  const mb = Number(process.env.TAU_TRACE_BENCH_MB ?? 100);
  const dir = fs.mkdtempSync(join(os.tmpdir(), "tau-trace-bench-"));
  try {
    const state = join(dir, "state");
    const g = generateSession(state, { targetBytes: mb * 1024 * 1024, outputBytes: 16 * 1024 });
    const size = fs.statSync(join(state, "agents", g.agentId, "events.cbor")).size;
    console.log(`trace export: agent journal ${(size / 1048576).toFixed(1)} MiB, ${g.records} records`);
    const best = new Map<string, Sample>();
    for (let trial = 0; trial < 3; trial++) {
      for (const mode of MODES) {
        const s = measure(mode, state, g.agentId);
        const b = best.get(mode);
        best.set(mode, { ms: Math.min(s.ms, b?.ms ?? Infinity), maxRssMiB: Math.min(s.maxRssMiB, b?.maxRssMiB ?? Infinity), bytes: s.bytes });
      }
    }
    const base = best.get("baseline") as Sample;
    for (const mode of MODES) {
      const s = best.get(mode) as Sample;
      console.log(
        `${mode.padEnd(11)} ${s.ms.toFixed(0).padStart(7)} ms (${(s.ms / base.ms).toFixed(2)}x read)  peak RSS ${s.maxRssMiB.toFixed(0).padStart(4)} MiB (${(s.maxRssMiB / base.maxRssMiB).toFixed(2)}x read)  output ${(s.bytes / 1048576).toFixed(1)} MiB`,
      );
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
