// The focused agent's tool output as the expand key (Ctrl-O) shows it: the newest running tool or
// command switches between the tail of its output and all of it; with none running, the newest
// finished one's whole output is written below (its row above is in the terminal's scrollback
// already, where it cannot change), and each further press with no other key between writes the
// next older one's.
import type { UiContext } from "./context.js";
import type { AgentView, Item } from "./transcript.js";

export class ToolOutput {
  /** Where the last expand of a finished tool was: a second one goes to the next older tool. */
  private expandedAt: number | undefined;

  constructor(private readonly ui: UiContext) {}

  /** Any other key: the next expand starts from the newest tool again. */
  reset(): void {
    this.expandedAt = undefined;
  }

  expand(): void {
    const a = this.ui.current();
    if (a === undefined) return;
    const from = this.expandedAt !== undefined ? this.expandedAt - 1 : a.items.length - 1;
    for (let i = Math.min(from, a.items.length - 1); i >= 0; i--) {
      const it = a.items[i] as Item;
      if (it.kind !== "tool" && it.kind !== "shell") continue;
      // Copies written by an earlier press are not tools of their own.
      if ((it.kind === "tool" ? it.callId : it.requestId).endsWith("#shown")) continue;
      if (!it.done) {
        if (this.expandedAt !== undefined) continue;
        it.expanded = it.expanded !== true;
        return;
      }
      this.expandedAt = i;
      // A copy under a key of its own: events for the call keep finding the row they belong to.
      this.ui.local(it.kind === "tool" ? { ...it, callId: `${it.callId}#shown`, expanded: true } : { ...it, requestId: `${it.requestId}#shown`, expanded: true });
      return;
    }
    this.ui.note("info", this.expandedAt !== undefined ? "no older tool output to show" : "no tool output to show");
  }
}

/** Whether an agent has a tool or command running (its timer needs a frame a second). */
export function toolRunning(a: AgentView | undefined): boolean {
  if (a === undefined) return false;
  for (let i = a.items.length - 1; i >= 0 && i >= a.items.length - 64; i--) {
    const it = a.items[i] as Item;
    if ((it.kind === "tool" || it.kind === "shell") && !it.done && it.startedAt !== undefined) return true;
  }
  return false;
}
