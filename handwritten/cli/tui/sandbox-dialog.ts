// The sandbox in the interactive UI (SPEC-sandbox): its approval prompts as a dialog above the
// editor, answered with the keys they name; the automatic reviewer's setup offer on a prompt
// (SPEC-sandbox-reviewer, "Selection"); `:sandbox` requests and their answers; the sandbox's state.
import type { Delivery } from "../session-client.js";
import { RequestError } from "../../protocol/index.js";
import type { SandboxApprovalRequested, SandboxDecision } from "../../../generated/index.js";
import type { StyledLine, Theme } from "../ui/index.js";
import type { Editor } from "./editor.js";
import { dialogRows, type Dialog, type UiContext } from "./context.js";

/** What the UI says when the sandbox offers the automatic reviewer's setup with a prompt: one line, the dialog has the keys. */
const CLASSIFIER_SETUP: Record<"first" | "unavailable", string> = {
  first: "sandbox: an automatic reviewer can answer requests like this one before you are asked ([r] in the request below chooses one)",
  unavailable: "sandbox: the chosen automatic reviewer is unavailable (removed, or its credentials are missing), so you are asked ([r] below chooses another)",
};

/** The key that picks each choice. */
const CHOICE_KEY: Record<SandboxDecision, string> = { allow: "a", allow_retry: "a", allow_adapt: "m", deny: "d" };

/** How long after a request closed without this UI's answer its keys are not typed into the editor (the user was reading it). */
const CLOSED_KEY_GRACE_MS = 1500;

/** The file tools whose writes ask (SPEC-sandbox, "Writes"): their request's command is `TOOL PATH`. */
const FILE_TOOL_WRITE = /^(write|edit) \//;

/**
 * Each choice of a request, saying what it grants and for how long (SPEC-sandbox, "Approvals"). The
 * request's first line names its target, so a label refers to it and stays short enough not to be cut.
 */
export function choiceLabel(a: Pick<SandboxApprovalRequested, "kind" | "target" | "command">, c: SandboxDecision, home = process.env.HOME ?? ""): string {
  const key = `[${CHOICE_KEY[c]}]`;
  if (a.kind === "network") {
    if (c === "deny") return `${key} deny, and refuse this host for the rest of this session`;
    return `${key} allow this connection (later ones ask again)`;
  }
  const fileTool = a.kind === "filesystem_write" && FILE_TOOL_WRITE.test(a.command);
  switch (c) {
    case "allow_retry":
    case "allow":
      return fileTool ? `${key} allow this write once` : `${key} allow once: run the whole command again (what its first run did stays done)`;
    case "allow_adapt": {
      const wide = home !== "" && (a.target === home || home.startsWith(`${a.target.replace(/\/$/, "")}/`)) ? " (all of your home folder)" : "";
      return a.kind === "filesystem_write"
        ? `${key} allow writing in that folder${wide} for the rest of this session (the model tries again itself)`
        : `${key} allow reading it${wide} for the rest of this session (the model tries again itself)`;
    }
    case "deny":
      return `${key} deny`;
  }
}

/** What a resolved request's outcome says, in words. */
function resolvedText(a: SandboxApprovalRequested | undefined, outcome: string): string {
  const what = `${a?.kind === "network" ? "connection to" : "access to"} ${a?.target ?? ""}`;
  switch (outcome) {
    case "denied":
      return a?.kind === "network" ? `sandbox: ${what} denied, and refused for the rest of this session` : `sandbox: ${what} denied`;
    case "allowed_adapt":
      return `sandbox: ${what} allowed for the rest of this session`;
    case "revoked":
      return `sandbox: the request for ${what} was withdrawn (its command ended or was cancelled, a new prompt came, or the policy changed)`;
    default:
      return `sandbox: ${what} allowed once`;
  }
}

export class SandboxDialog implements Dialog {
  /** The sandbox's prompts waiting for an answer, oldest first: the first one is the dialog shown. */
  private readonly approvals: SandboxApprovalRequested[] = [];
  /** The request this UI answered last (its resolution is the answer, not a surprise). */
  private answered: string | undefined;
  /** When the last request closed without this UI's answer, and its keys. */
  private closedUnanswered: { at: number; keys: Set<string> } | undefined;
  constructor(
    private readonly ui: UiContext,
    private readonly now: () => number = Date.now,
  ) {}

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
        if (i === 0 && a !== undefined && this.answered !== a.approval_id) this.closedUnanswered = { at: this.now(), keys: new Set(a.choices.map((c) => CHOICE_KEY[c])) };
        this.ui.note(ev.data.outcome === "revoked" ? "warning" : "info", resolvedText(a, ev.data.outcome));
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
    if (editor.text.trimStart().startsWith(":")) return false;
    if (a === undefined) return this.lateKey(text, editor);
    // The reviewer setup offer's own keys: they set the reviewer up and leave the request to answer.
    if (a.classifier_setup !== undefined && (text.toLowerCase() === "r" || text.toLowerCase() === "k")) {
      this.approvals[0] = { ...a, classifier_setup: undefined };
      if (text.toLowerCase() === "k") this.command(["classifier", "false"], false);
      else editor.setText(":sandbox classifier ");
      this.ui.schedule();
      return true;
    }
    const choice = a.choices.find((c) => CHOICE_KEY[c] === text.toLowerCase());
    if (choice === undefined) return false;
    this.answered = a.approval_id;
    this.ui.client()?.emit("sandbox.approval_answer", { approval_id: a.approval_id, decision: choice });
    return true;
  }

  /**
   * A request's key pressed just after it closed without this UI's answer (its command timed out,
   * another UI answered): the user meant the request, so the key is not typed into an empty editor.
   */
  private lateKey(text: string, editor: Editor): boolean {
    const closed = this.closedUnanswered;
    if (closed === undefined || editor.text !== "" || !closed.keys.has(text.toLowerCase())) return false;
    if (this.now() - closed.at > CLOSED_KEY_GRACE_MS) return false;
    this.closedUnanswered = undefined;
    this.ui.note("info", `sandbox: the request had already closed, so "${text}" answered nothing and was not typed`);
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
      ...a.choices.map((c) => `  ${choiceLabel(a, c)}`),
      ...(a.classifier_setup !== undefined ? ["  automatic reviewer: [r] choose a model (Tab lists them)   [k] keep manual approvals"] : []),
    ];
    return dialogRows(lines, width, theme);
  }
}
