// `tau run`'s text output: the answer's text on stdout as it streams, a line per tool result on
// stderr, and every message about the run on a line of its own after the text.
import type { RunPrinter } from "./printer.js";
import type { Delivery } from "../session-client.js";
import { sanitize } from "../ui/index.js";

export class RunTextPrinter implements RunPrinter {
  readonly live = [
    "agent.prompt_submitted",
    "agent.prompt_failed",
    "agent.outer_turn_finished",
    "provider.response_updated",
    "provider.response_finished",
    "provider.response_failed",
    "tool.result",
  ] as const;
  readonly reportsCutShort = false;
  private printedText = false;

  constructor(
    private readonly stdout: (s: string) => void,
    private readonly stderr: (s: string) => void,
  ) {}

  agentEvent(d: Delivery): void {
    const e = d.event;
    switch (e.name) {
      case "provider.response_updated":
        if (e.data.text_delta) {
          this.stdout(sanitize(e.data.text_delta));
          this.printedText = true;
        }
        break;
      case "tool.result":
        this.stderr(`[${sanitize(e.data.tool)} ${e.data.outcome}]\n`);
        break;
      case "provider.response_finished":
      case "provider.response_failed":
      case "agent.prompt_failed":
        this.endText();
        break;
    }
  }

  endText(): void {
    if (this.printedText) this.stdout("\n");
    this.printedText = false;
  }
}
