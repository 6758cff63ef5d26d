// `tau run --json`: every event of the run's agent, one JSON object per line on stdout, in the
// order the daemon committed them, with the fields of a trace's JSONL lines (`seq`, `at_us`,
// `event`, `by`, `data`; spec/run-stream.tsp), a replayed one marked. The events themselves say how
// the run went; the closing line (ends.ts) says how it ended, so nothing else is printed on stdout.
import type { RunEventLine } from "../../../generated/index.js";
import type { Delivery } from "../session-client.js";
import type { RunPrinter } from "./printer.js";

/** Who published an event, as a trace's `by` says it: the peer class, and an extension's instance. */
export function sourceOf(d: Delivery): RunEventLine["by"] {
  return d.publisher.instance !== undefined ? `${d.publisher.class}:${d.publisher.instance}` : d.publisher.class;
}

export class RunJsonPrinter implements RunPrinter {
  readonly live = ["*"] as const;
  readonly reportsCutShort = true;

  constructor(private readonly stdout: (s: string) => void) {}

  agentEvent(d: Delivery): void {
    const line: RunEventLine = { seq: d.seq, at_us: d.recorded_at, event: d.event.name, by: sourceOf(d), data: d.event.data, ...(d.replay ? { replay: true } : {}) };
    this.stdout(`${JSON.stringify(line)}\n`);
  }

  endText(): void {}
}
