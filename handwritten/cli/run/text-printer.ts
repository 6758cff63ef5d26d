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
    "tool.result_display",
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
      case "tool.result_display":
        this.stderr(`${toolLine(e.data.tool, e.data.outcome, e.data.display)}\n`);
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

/**
 * A finished call's line: `[tool ok] title`, or for a failed one `[tool failed: summary] title`
 * (`[shell failed: exit code 56] make test`), the title being what the call ran or touched.
 */
export function toolLine(tool: string, outcome: string, display: { title?: string; summary?: string }): string {
  const summary = display.summary !== undefined && display.summary !== outcome ? sanitize(display.summary, { newlines: "escape" }) : "";
  const status = outcome === "error" && summary !== "" ? `failed: ${summary}` : outcome;
  const title = display.title !== undefined && display.title !== "" ? ` ${sanitize(display.title, { newlines: "escape" })}` : "";
  return `[${sanitize(tool)} ${status}]${title}`;
}
