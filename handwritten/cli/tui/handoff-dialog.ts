// The handoff in the interactive UI (SPEC-handoff): `:handoff` requests and their answers, whether a
// handoff holds the user's prompts (`:new` and `:fork` wait), and the move to the session the work
// continues in. The handoff asks the user nothing: the model writes the dossier and finishes.
import type { Delivery } from "../session-client.js";
import { RequestError } from "../../protocol/index.js";
import type { UiContext, Exit } from "./context.js";

/** How long `:handoff` waits for the extension's answer before it says how to enable it. */
const HANDOFF_SILENCE_MS = 3000;
export const NOT_ENABLED =
  "no answer from the handoff extension: if it is not enabled, add `- {name: handoff, kind: tool, command: [tau, ext, handoff]}` under `extensions:` in harness.yaml and start a new session (docs: Handoff)";

export class HandoffState {
  /** A handoff holds prompts or is cutting over (`handoff.state_reported`): `:new` is refused meanwhile. */
  busy = false;
  /** The session a handoff continued this one in: the UI attaches to it when it leaves with `switch`. */
  handedOffTo: string | undefined;

  constructor(
    private readonly ui: UiContext,
    private readonly leave: (how: Exit) => void,
  ) {}

  /** A new session is attached: what a handoff of the last one reported does not hold for it. */
  attach(): void {
    this.busy = false;
  }

  /** `:handoff ARGS` for the focused agent. */
  command(args: readonly string[]): void {
    const client = this.ui.client();
    if (!client) return;
    // The handoff extension answers with `handoff.command_result` (SPEC-handoff). Nothing answers
    // when it is not enabled, so a request left unanswered for a while says how to enable it.
    const silence = setTimeout(() => this.ui.note("warning", NOT_ENABLED), HANDOFF_SILENCE_MS);
    client.request("handoff.command_request", { agent_id: this.ui.focus(), args: args.length > 0 ? [...args] : ["start"] }).then(
      (answer) => {
        clearTimeout(silence);
        this.ui.note("info", answer.text);
      },
      (err: unknown) => {
        clearTimeout(silence);
        if (err instanceof RequestError && err.failure === "refused") this.ui.note("error", err.message);
      },
    );
  }

  /** A handoff event or `session.handed_off`; true when what the UI shows changed. */
  deliver(d: Delivery): boolean {
    const ev = d.event;
    if (ev.name === "handoff.state_reported") {
      this.busy = ev.data.phase === "writing" || ev.data.phase === "cutover";
      return true;
    }
    if (ev.name === "session.handed_off" && !d.replay) {
      // The work goes on in the replacement: this UI attaches to it (main.ts, Exit `switch`).
      this.ui.note("info", `handoff: the work continues in session ${ev.data.successor_session_id}`);
      this.handedOffTo = ev.data.successor_session_id;
      setImmediate(() => this.leave("switch"));
    }
    return false;
  }
}
