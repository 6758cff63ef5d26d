// The prompt editor as a component: its keys (editing, Tab completion, Enter), its rows, the prompt
// history it offers, and what a submitted line becomes (SPEC-cli-command-mode): a prompt or a user
// shell command for the focused agent, or a colon command, each held until the session can take it.
import type { Theme } from "../ui/index.js";
import type { Settings } from "./colon-commands.js";
import { MAX_COMPLETIONS_SHOWN, completeLine, historyText, namesUnknownCommand, parseInput, type ParsedInput } from "./command-mode.js";
import type { UiContext } from "./context.js";
import { Editor } from "./editor.js";
import { editorRows, emptyPromptHint } from "./editor-rows.js";
import type { Key } from "./keys.js";

export interface HistoryPort {
  entries(): readonly string[];
  append(text: string): void;
}

/** What the prompt needs of the app: the terminal's settings, and where prompts and commands go. */
export interface PromptHost {
  readonly settings: Settings;
  /** A human prompt was sent to agent `id`. */
  prompted(id: string): void;
  /** Runs a parsed colon command. */
  command(name: string, args: readonly string[]): void;
  /** A dialog waiting for a typed answer takes the submitted text first: true when it did (it is then no prompt, and not kept in the history). */
  answer?(text: string): boolean;
}

export class PromptInput {
  readonly editor = new Editor();
  /** cli.yaml `editor.max_lines`: most rows the prompt editor takes. */
  maxLines = Infinity;
  /** cli.yaml `editor.history_size`: most history entries offered (all when absent). */
  private historySize: number | undefined;
  private history: HistoryPort = { entries: () => [], append: () => {} };
  /**
   * In the order typed: prompts and shell commands typed before the session had an agent (sent once
   * it has one), and lines naming a command no one offered yet, typed before the session's
   * extensions started (`raw`: neither sent nor kept until read again once they have).
   */
  private readonly waiting: Array<{ readonly parsed: ParsedInput } | { readonly raw: string }> = [];

  constructor(
    private readonly ui: UiContext,
    private readonly host: PromptHost,
  ) {}

  /** Prompt history arrives after the first frame (it is read from disk). */
  setHistory(history: HistoryPort): void {
    this.history = history;
    this.editor.setHistory(this.historyEntries());
  }

  setHistorySize(size: number): void {
    this.historySize = size;
    this.editor.setHistory(this.historyEntries());
  }

  /** The newest prompts of the history, as many as cli.yaml's `editor.history_size` keeps. */
  private historyEntries(): readonly string[] {
    const all = this.history.entries();
    return this.historySize === undefined ? all : this.historySize === 0 ? [] : all.slice(-this.historySize);
  }

  /** A key the app and the dialogs left to the editor. */
  key(key: Key): void {
    if (key.kind === "tab" && this.editor.search === undefined) return this.complete();
    const action = this.editor.apply(key);
    if (action.kind === "refused") this.ui.note("warning", "the prompt is at its size limit; the input was not added");
    if (action.kind === "submit") this.submit(action.text);
  }

  rows(width: number, theme: Theme, interruptKey: string): ReturnType<typeof editorRows> {
    return editorRows(this.editor, width, theme, this.maxLines, emptyPromptHint(interruptKey));
  }

  /**
   * Sends what was typed before the session was ready, in order: a prompt once it has an agent and a
   * model; a line that named an unknown command once its extensions have started, read again then.
   */
  flushWaiting(): void {
    const ready = (): boolean => this.ui.focus() !== "" && this.ui.transcript.models.length > 0;
    for (let w = this.waiting[0]; w !== undefined; w = this.waiting[0]) {
      if ("raw" in w) {
        if (!this.ui.transcript.sessionInitialized) return;
        const parsed = parseInput(w.raw);
        const remembered = this.remember(w.raw, parsed);
        // Read as a prompt or shell command that must still wait for an agent: it keeps its place.
        if ((parsed.kind === "prompt" || parsed.kind === "shell") && !ready()) return void (this.waiting[0] = { parsed });
        this.waiting.shift();
        this.handle(parsed, remembered);
      } else {
        if (!ready()) return;
        this.waiting.shift();
        this.handle(w.parsed, "");
      }
    }
  }

  /**
   * Tab: completes a command's name, or a model name after `:model `, on a one-line editor with the
   * cursor at its end; when several candidates remain they are listed below.
   */
  private complete(): void {
    const lines = this.editor.lineTexts;
    const { row, col } = this.editor.cursor;
    if (lines.length !== 1 || row !== 0 || col !== (lines[0] as string).length) return;
    const done = completeLine(lines[0] as string, this.ui.transcript.models);
    if (done === undefined) return;
    if (done.text !== lines[0]) this.editor.setText(done.text);
    else if (done.candidates.length > 1) {
      const shown = done.candidates.slice(0, MAX_COMPLETIONS_SHOWN);
      const more = done.candidates.length - shown.length;
      this.ui.note("info", `${shown.join("  ")}${more > 0 ? `  (and ${more} more)` : ""}`);
    }
  }

  private submit(raw: string): void {
    if (this.host.answer?.(raw) === true) return;
    const parsed = parseInput(raw);
    if (parsed.kind === "empty") return;
    if (!this.ui.transcript.sessionInitialized && namesUnknownCommand(raw, parsed)) {
      this.ui.note("info", "the session's extensions are still starting: this line is read once they have (it may name one of their commands)");
      return void this.waiting.push({ raw });
    }
    this.handle(parsed, this.remember(raw, parsed));
  }

  /** Keeps the line in the prompt history (a sensitive command's words redacted); returns what was kept. */
  private remember(raw: string, parsed: ParsedInput): string {
    const remembered = historyText(raw, parsed);
    try {
      this.history.append(remembered);
    } catch (err) {
      this.ui.note("warning", `prompt history: ${(err as Error).message}`);
    }
    this.editor.setHistory(this.historyEntries());
    return remembered;
  }

  private handle(parsed: ParsedInput, echo: string): void {
    const client = this.ui.client();
    const focus = this.ui.focus();
    const ready = focus !== "" && this.ui.transcript.models.length > 0;
    switch (parsed.kind) {
      case "error":
        this.ui.local({ kind: "notice", level: "error", text: parsed.message, done: true });
        return;
      case "prompt": {
        if (!client || !ready) return void this.waiting.push({ parsed });
        const busy = this.ui.current()?.busy === true;
        client.emit("ui.prompt_submit", { agent_id: focus, mode: busy ? this.host.settings.mode : "queue", text: parsed.text, ...(parsed.literal ? { literal: true } : {}) });
        // The harness makes the agent a human prompt reached active (SPEC-agent-navigation).
        this.host.prompted(focus);
        return;
      }
      case "shell": {
        if (!client || focus === "") return void this.waiting.push({ parsed });
        client.emit("shell.command_request", {
          agent_id: focus,
          request_id: this.ui.requestId("tui"),
          command: parsed.command,
          include_in_context: parsed.includeInContext,
        });
        return;
      }
      case "command":
        if (parsed.spec.name === "skill" && !ready) return void this.waiting.push({ parsed });
        this.ui.local({ kind: "notice", level: "info", text: echo, done: true });
        this.host.command(parsed.spec.name, parsed.args);
        return;
    }
  }
}
