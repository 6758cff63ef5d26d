// The sandbox in the interactive UI (SPEC-sandbox): its approval prompts as a dialog above the
// editor, answered with the keys they name; the automatic reviewer's setup offer on a prompt
// (SPEC-sandbox-reviewer, "Selection"); `:sandbox` requests and their answers; the sandbox's state.
import type { Delivery } from "../session-client.js";
import { RequestError } from "../../protocol/index.js";
import type { SandboxApprovalRequested, SandboxDecision } from "../../../generated/index.js";
import type { StyledLine, Theme } from "../ui/index.js";
import type { Editor } from "./editor.js";
import { dialogRows, type Dialog, type UiContext } from "./context.js";

/** What the UI says when the sandbox offers the automatic reviewer's setup with a prompt. */
const CLASSIFIER_SETUP: Record<"first" | "unavailable", string> = {
  first:
    "sandbox: an automatic reviewer can answer requests like this one before you are asked: choose one with :sandbox classifier provider/model (add --global to remember it), or keep manual approvals with :sandbox classifier false. Answer this request below.",
  unavailable:
    "sandbox: the selected automatic reviewer is unavailable (removed, or its credentials are missing), so you are asked instead: choose another with :sandbox classifier provider/model, or keep manual approvals with :sandbox classifier false. Answer this request below.",
};

/** The choices of a prompt, by the key that picks each. */
const CHOICE_KEYS: Record<SandboxDecision, { key: string; label: string }> = {
  allow: { key: "a", label: "[a] allow this connection" },
  allow_retry: { key: "a", label: "[a] allow and retry" },
  allow_adapt: { key: "m", label: "[m] allow, let the model adapt" },
  deny: { key: "d", label: "[d] deny" },
};

export class SandboxDialog implements Dialog {
  /** The sandbox's prompts waiting for an answer, oldest first: the first one is the dialog shown. */
  private readonly approvals: SandboxApprovalRequested[] = [];
  constructor(private readonly ui: UiContext) {}

  get open(): boolean {
    return this.approvals.length > 0;
  }

  /**
   * `:sandbox ARGS`: the shell extension answers with `sandbox.command_result`, shown unless the
   * request is `silent` (the `pending` asked on attach) and succeeded.
   */
  command(args: readonly string[], silent: boolean): void {
    const client = this.ui.client();
    if (!client) return;
    client.request("sandbox.command_request", { args: [...args] }).then(
      (answer) => {
        if (!silent) this.ui.note("info", answer.text);
      },
      (err: unknown) => {
        if (err instanceof RequestError && err.failure === "refused") this.ui.note("error", err.message);
      },
    );
  }

  /** Once the replay is in: prompts the sandbox published before this UI attached are published again (SPEC-sandbox). */
  askPending(): void {
    this.command(["pending"], true);
  }

  /** A `sandbox.*` event. */
  deliver(d: Delivery): void {
    const ev = d.event;
    switch (ev.name) {
      case "sandbox.approval_requested":
        if (d.replay || this.approvals.some((a) => a.approval_id === ev.data.approval_id)) return;
        this.approvals.push(ev.data);
        // The automatic reviewer's setup offer (SPEC-sandbox-reviewer, "Selection"): answer this prompt by hand, set one up, or keep manual.
        if (ev.data.classifier_setup !== undefined) this.ui.note("info", CLASSIFIER_SETUP[ev.data.classifier_setup]);
        return;
      case "sandbox.approval_resolved": {
        const i = this.approvals.findIndex((a) => a.approval_id === ev.data.approval_id);
        if (i < 0) return;
        const [a] = this.approvals.splice(i, 1);
        this.ui.note("info", `sandbox: ${a?.kind === "network" ? "connection to" : "access to"} ${a?.target ?? ""} ${ev.data.outcome.replace("_", " ")}`);
        return;
      }
      case "sandbox.state_reported": {
        const s = ev.data;
        if (s.state === "pending" || (s.state === "active" && s.reason === undefined)) return;
        const text = `sandbox ${s.state}${s.reason !== undefined ? `: ${s.reason}` : ""}${s.fix !== undefined ? `\nfix: ${s.fix}` : ""}`;
        this.ui.note(s.state === "blocked" ? "error" : "warning", text);
        return;
      }
    }
  }

  /**
   * Answers the shown prompt when `text` is one of its keys. The editor keeps its text, and while a
   * colon command is being typed the keys are the editor's: `:sandbox classifier …` answers the
   * reviewer offer.
   */
  key(text: string, editor: Editor): boolean {
    const a = this.approvals[0];
    if (a === undefined || editor.text.trimStart().startsWith(":")) return false;
    // The reviewer setup offer's own keys: they set the reviewer up and leave the request to answer.
    if (a.classifier_setup !== undefined && (text.toLowerCase() === "r" || text.toLowerCase() === "k")) {
      this.approvals[0] = { ...a, classifier_setup: undefined };
      if (text.toLowerCase() === "k") this.command(["classifier", "false"], false);
      else editor.setText(":sandbox classifier ");
      this.ui.schedule();
      return true;
    }
    const choice = a.choices.find((c) => CHOICE_KEYS[c].key === text.toLowerCase());
    if (choice === undefined) return false;
    this.ui.client()?.emit("sandbox.approval_answer", { approval_id: a.approval_id, decision: choice });
    return true;
  }

  rows(width: number, theme: Theme): StyledLine[] {
    const a = this.approvals[0];
    if (a === undefined) return [];
    const what =
      a.kind === "network" ? `connect to ${a.target}` : a.kind === "filesystem_write" ? `write to ${a.target}` : `read ${a.target}`;
    const lines = [
      `sandbox: the model's command wants to ${what}${this.approvals.length > 1 ? ` (1 of ${this.approvals.length})` : ""}`,
      `  command: ${a.command}`,
      `  asked by call ${a.call_id} of agent ${a.agent_id}${a.other_calls?.length ? `, or by one of the other commands running: ${a.other_calls.map((c) => `call ${c.call_id} of agent ${c.agent_id} (${c.command})`).join(", ")}` : ""}`,
      `  ${a.choices.map((c) => CHOICE_KEYS[c].label).join("   ")}`,
      ...(a.classifier_setup !== undefined ? ["  automatic reviewer: [r] choose a model (Tab lists them)   [k] keep manual approvals"] : []),
    ];
    return dialogRows(lines, width, theme);
  }
}
