// `tau run --json`: every event of the run's agent, one JSON object per line on stdout, in the
// order the daemon committed them (`seq`), replayed ones marked. The events themselves say how the
// run went, so nothing else is printed on stdout.
import type { RunPrinter } from "./printer.js";
import type { Delivery } from "../session-client.js";

export class RunJsonPrinter implements RunPrinter {
  readonly live = ["*"] as const;
  readonly reportsCutShort = true;

  constructor(private readonly stdout: (s: string) => void) {}

  agentEvent(d: Delivery): void {
    const e = d.event;
    this.stdout(`${JSON.stringify({ seq: d.seq, name: e.name, data: e.data, ...(d.replay ? { replay: true } : {}) })}\n`);
  }

  endText(): void {}
}
