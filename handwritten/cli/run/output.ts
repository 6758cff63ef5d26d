// Where a `tau run` writes: its printer's output on stdout, its end on stderr and, with --json, the
// closing line. When the reader of stdout goes away (`tau run --json | head -5`) nothing more is
// written and the run is told, so it cancels its prompt and ends quietly, like any Unix filter.
import { TauError, printError } from "../errors.js";
import type { Delivery } from "../session-client.js";
import { closingLine, endWith, exitCodeOfEnd, type RunEnd, type RunIds } from "./ends.js";
import { RunJsonPrinter } from "./json-printer.js";
import type { RunPrinter } from "./printer.js";
import { RunTextPrinter } from "./text-printer.js";

export class RunOutput {
  private readonly printer: RunPrinter;
  private gone = false;
  private finished = false;
  /** Told once when the reader of stdout goes away before the run has finished. */
  onReaderGone: () => void = () => {};

  constructor(private readonly json: boolean) {
    const write = (s: string) => {
      if (!this.gone) process.stdout.write(s);
    };
    this.printer = json ? new RunJsonPrinter(write) : new RunTextPrinter(write, (s) => process.stderr.write(s));
    process.stdout.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err;
      this.gone = true;
      if (!this.finished) this.onReaderGone();
    });
  }

  /** The live events the printer needs of the run's agent (`*` for all). */
  get live(): readonly string[] {
    return this.printer.live;
  }

  /** One event of the run's agent. */
  agentEvent(d: Delivery): void {
    this.printer.agentEvent(d);
  }

  /** Whether the reader of stdout went away. */
  get readerGone(): boolean {
    return this.gone;
  }

  /**
   * Prints how the run ended and returns its exit status: the error's line on stderr (but for an
   * incomplete answer the printer's output already says so), and with --json the closing line.
   */
  finish(end: RunEnd, ids: RunIds = {}): number {
    this.finished = true;
    if (this.gone) return exitCodeOfEnd(endWith(new TauError("TAU-E0306", "tau: the output's reader went away"), { quiet: true }));
    this.printer.endText();
    if (end.status !== "completed" && !end.quiet && !(end.status === "cut_short" && this.printer.reportsCutShort)) printError(end.error);
    if (this.json && !(end.status !== "completed" && end.quiet)) process.stdout.write(closingLine(end, ids));
    return exitCodeOfEnd(end);
  }
}
