// What `tau run` prints of its agent's events: the answer as text (text-printer.ts) or every
// event as a JSON line (json-printer.ts). The run itself (prompt.ts) starts the daemon,
// submits the prompt and decides how the run ended (ends.ts); a printer only writes.
import type { Delivery } from "../session-client.js";

export interface RunPrinter {
  /** The live events the printer needs of the run's agent (`*` for all). */
  readonly live: readonly string[];
  /** One event of the run's agent, as delivered. */
  agentEvent(d: Delivery): void;
  /** Before a message about the run: streamed text, if any, ends its line. */
  endText(): void;
  /** Whether the printer already says an answer ended short (so no stderr line is needed). */
  readonly reportsCutShort: boolean;
}
