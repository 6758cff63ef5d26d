// The interactive terminal UI for one attached session: keys → editor/commands, delivered events →
// bounded render queue → transcript, and frames → the inline view. Commands act only through the
// session client (the same wire events a scripted socket client can send: headless parity).
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { SessionClient, Delivery } from "../session-client.js";
import { KeyDecoder, type Key } from "./keys.js";
import { Editor } from "./editor.js";
import { MAX_COMPLETIONS_SHOWN, completeLine, helpText, historyText, parseInput, type ParsedInput } from "./command-mode.js";
import { Transcript, type AgentView, type Item } from "./transcript.js";
import { Scrollback, type DrawSettings } from "./scrollback.js";
import { editorRows, emptyPromptHint } from "./editor-rows.js";
import { DEFAULT_BINDINGS, keyLabel, keyName, resolveBindings, type Bindings, type KeyAction } from "./bindings.js";
import { fitStatus, statusParts } from "./status.js";
import { InlineView } from "./view.js";
import { agentTree, cycleAgent, findOnPath, pickerInput, runFzf } from "./agent-switcher.js";
import {
  DEFAULT_THEME,
  Diagnostics,
  RenderQueue,
  ThemeError,
  agentLabel,
  columns,
  diagnosticName,
  loadThemeFile,
  preloadMarkdown,
  sanitize,
  truncateMiddle,
} from "../ui/index.js";
import type { Block, CursorPosition, SafeText, StyledLine, Theme } from "../ui/index.js";
import { PERSISTENCE, type CliConfig, type NavigationMode, type RosterRow, type SandboxApprovalRequested, type SandboxDecision } from "../../../generated/index.js";
import { checkModelChoice } from "../../config/models.js";
import type { SavedSession } from "../../sessions/index.js";
import { ageLabel } from "../../sessions/format.js";
import { agentIdOf, checkedEvent } from "../../protocol/index.js";

/** How the UI left its session. */
/** `switch`: the session was handed off; the UI attaches to `handedOffTo` (SPEC-handoff). */
export type Exit = "quit" | "detach" | "quit-session" | "new" | "switch" | "lost";

export interface TerminalIo {
  readonly input: NodeJS.ReadableStream & { setRawMode?: (raw: boolean) => unknown; isTTY?: boolean };
  readonly output: NodeJS.WritableStream & { columns?: number; rows?: number; on(event: "resize", l: () => void): unknown; off(event: "resize", l: () => void): unknown };
}

export interface HistoryPort {
  entries(): readonly string[];
  append(text: string): void;
}

export interface SessionPort {
  readonly client: SessionClient;
  readonly sessionId: string;
}

export interface Settings {
  /** Prompts sent while the agent works: folded into the running turn (`steer`) or queued after it. */
  mode: "steer" | "queue";
  reasoning: boolean;
}

const SETTINGS_HELP = "settings: mode steer|queue (prompts sent while the agent works), reasoning on|off (show model reasoning)";

/** A lone ESC is the Escape key when nothing follows it within this many milliseconds. */
const ESC_WAIT_MS = 30;
/** Streaming output is drawn at most this often; keystrokes are drawn at once. */
const FRAME_INTERVAL_MS = 16;
/** How long after the session is ready the markdown parser is loaded. */
const MARKDOWN_PRELOAD_MS = 300;
/** A running tool's elapsed time is redrawn this often. */
const TICK_MS = 1000;

/**
 * Records of each journal an attach replays: the UI keeps TRANSCRIPT_MAX_ITEMS items per agent and
 * writes a few screens of them, so older records stay in the journals until `:history` asks.
 */
export const REPLAY_RECENT_RECORDS = 2000;

/** Records one `:history` page asks for. */
export const HISTORY_PAGE_RECORDS = 200;



/** What the UI says when the sandbox offers the automatic reviewer's setup with a prompt. */
const CLASSIFIER_SETUP: Record<"first" | "unavailable", string> = {
  first:
    "sandbox: an automatic reviewer can answer requests like this one before you are asked: choose one with :sandbox classifier provider/model (add --global to remember it), or keep manual approvals with :sandbox classifier false. Answer this request below.",
  unavailable:
    "sandbox: the selected automatic reviewer is unavailable (removed, or its credentials are missing), so you are asked instead: choose another with :sandbox classifier provider/model, or keep manual approvals with :sandbox classifier false. Answer this request below.",
};

export class TuiApp {
  private readonly keys = new KeyDecoder();
  private readonly editor = new Editor();
  private readonly transcript = new Transcript();
  private readonly queue = new RenderQueue<Delivery>();
  readonly diagnostics: Diagnostics;
  private view: InlineView;
  private theme: Theme = DEFAULT_THEME;
  /** cli.yaml `keys:` over the defaults. */
  private bindings: Bindings = DEFAULT_BINDINGS;
  /** Where the last expand (Ctrl-O) of a finished tool was: a second one goes to the next older tool. */
  private expandedAt: number | undefined;
  /** The saved sessions of the state folder (set by the entry; none until then). */
  savedSessions: () => SavedSession[] = () => [];
  /** cli.yaml `editor.max_lines`: most rows the prompt editor takes. */
  private editorMaxLines = Infinity;
  /** cli.yaml `editor.history_size`: most history entries offered (all when absent). */
  private historySize: number | undefined;
  private session: SessionPort | undefined;
  private focus = "";
  private readonly scrollback = new Scrollback();
  /** Between subscribing and `session.replay_complete`: history is folded, not yet written. */
  private replaying = false;
  /** Per agent, the journal position of the oldest record this UI has (where `:history` goes on). */
  private readonly oldestSeq = new Map<string, number>();
  /** The attach left older records in the journals (`session.replay_complete.omitted`). */
  private olderInJournals = false;
  private frameTimer: NodeJS.Timeout | undefined;
  private escTimer: NodeJS.Timeout | undefined;
  /** The next frame of a running tool's timer. */
  private tickTimer: NodeJS.Timeout | undefined;
  private lastCtrlC = 0;
  private ended: ((e: Exit) => void) | undefined;
  private noticesSeen = 0;
  private readonly settings: Settings = { mode: "steer", reasoning: false };
  private readonly onResize = () => this.resized();
  private readonly onData = (chunk: Buffer | string) => this.input(typeof chunk === "string" ? chunk : chunk.toString("utf8"));
  private nextRequest = 1;
  /** Prompts and shell commands typed before the session had an agent: sent once it has one. */
  private readonly waiting: ParsedInput[] = [];
  /** The sandbox's prompts waiting for an answer, oldest first: the first one is the dialog shown. */
  private readonly approvals: SandboxApprovalRequested[] = [];
  /** `:handoff` requests this UI sent, and whether a handoff is under way (`handoff.state_reported`). */
  private readonly handoffRequests = new Set<string>();
  private handoffBusy = false;
  /** The agent whose handoff waits for the Ready / Wait / Cancel choice, unless this UI chose Wait. */
  private handoffConfirm: string | undefined;
  private handoffWaited = false;
  /** The session a handoff continued this one in: the UI attaches to it when it leaves with `switch`. */
  handedOffTo: string | undefined;
  /** `:sandbox` requests this UI sent, by request id (a silent one is the `pending` asked on attach). */
  private readonly sandboxRequests = new Map<string, { silent: boolean }>();

  /** The agents' navigation modes as this UI last learned them (the roster, its own requests). */
  private readonly navigation = new Map<string, NavigationMode>();
  /** While the picker (fzf) has the terminal, this UI draws nothing and reads no keys. */
  private pickerOpen = false;
  /** The terminal was given back (`stop`): a picker ending later must not take it again. */
  private stopped = false;
  /** The environment the picker is looked up in (PATH). */
  pickerEnv: NodeJS.ProcessEnv = process.env;

  private history: HistoryPort = { entries: () => [], append: () => {} };

  constructor(
    private readonly io: TerminalIo,
    private readonly configRoot: string,
    startRow: number,
    diagnostics?: Diagnostics,
  ) {
    this.diagnostics = diagnostics ?? new Diagnostics({ sink: () => {} });
    this.view = new InlineView(this.cols, this.rows, startRow);
  }

  /** Prompt history arrives after the first frame (it is read from disk). */
  setHistory(history: HistoryPort): void {
    this.history = history;
    this.editor.setHistory(this.historyEntries());
  }

  /** The newest prompts of the history, as many as cli.yaml's `editor.history_size` keeps. */
  private historyEntries(): readonly string[] {
    const all = this.history.entries();
    return this.historySize === undefined ? all : this.historySize === 0 ? [] : all.slice(-this.historySize);
  }

  /** Applies cli.yaml (validated, its theme and keys known to be usable): the theme, the keys and the editor's limits. */
  configure(cli: CliConfig): void {
    if (cli.keys !== undefined) {
      const b = resolveBindings(cli.keys);
      if ("path" in b) this.note("error", `cli.yaml: ${b.path.join(".")}: ${b.message}`);
      else this.bindings = b;
    }
    if (cli.editor?.max_lines !== undefined) this.editorMaxLines = cli.editor.max_lines;
    if (cli.editor?.history_size !== undefined) {
      this.historySize = cli.editor.history_size;
      this.editor.setHistory(this.historyEntries());
    }
    if (cli.theme !== undefined) {
      const theme = this.themeNamed(cli.theme);
      if (typeof theme === "string") this.note("error", `cli.yaml: ${theme}`);
      else this.theme = theme;
    }
    this.draw();
  }

  /** A warning shown in the transcript. */
  warn(text: string): void {
    this.note("warning", text);
  }

  private get cols(): number {
    return Math.max(1, this.io.output.columns ?? 80);
  }

  private get rows(): number {
    return Math.max(1, this.io.output.rows ?? 24);
  }

  /** Takes the terminal: raw input, resize tracking, the first frame. */
  start(): void {
    this.io.input.setRawMode?.(true);
    this.io.input.on("data", this.onData);
    this.io.output.on("resize", this.onResize);
    this.io.output.write("\x1b[?2004h\x1b[?7l"); // bracketed paste on, autowrap off
    this.draw();
  }

  /** Gives the terminal back: cursor below the UI, modes restored. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.frameTimer);
    clearTimeout(this.escTimer);
    clearTimeout(this.tickTimer);
    this.io.input.off("data", this.onData);
    this.io.output.off("resize", this.onResize);
    this.io.input.setRawMode?.(false);
    this.io.output.write(`${this.view.finish()}\x1b[0m\x1b[?7h\x1b[?2004l`);
  }

  /** Attaches the UI to a session; resolves with how the user left it. */
  run(session: SessionPort): Promise<Exit> {
    this.session = session;
    this.focus = "";
    // What a handoff of the last session reported does not hold for this one.
    this.handoffBusy = false;
    this.handoffConfirm = undefined;
    this.handoffWaited = false;
    const client = session.client;
    const exit = new Promise<Exit>((resolve) => (this.ended = resolve));
    client.onDeliver((d) => this.deliver(d));
    client.onReply((m) => {
      if (m.message === "error") this.note("error", `the session refused a request (${m.payload.code})`);
      else this.note(m.payload.level, m.payload.text);
    });
    void client.conn.closed.then(() => this.end("lost"));
    this.note("info", `session ${session.sessionId}`);
    this.draw();
    // Only the newest rows of the history are written, once it is all here (`ensureAgent`); only
    // the newest records of each journal are replayed, the rest come a page at a time (`:history`).
    this.replaying = true;
    client.subscribe(["*"], ["*"], REPLAY_RECENT_RECORDS);
    return exit;
  }

  private end(e: Exit): void {
    const done = this.ended;
    this.ended = undefined;
    done?.(e);
  }

  // ── events ────────────────────────────────────────────────────────────────────────────────

  private deliver(d: Delivery): void {
    // The queue is drained synchronously here, so it holds one delivery at a time; its bounds
    // matter when a frame is slow, and the stage timer below reports that.
    const offered = this.queue.offer(d, 0);
    if (!offered.accepted) return;
    const timer = this.diagnostics.begin("transcript", diagnosticName("fold"));
    this.drain();
    timer.end();
  }

  private drain(): void {
    let changed = false;
    for (let e = this.queue.shift(); e !== undefined; e = this.queue.shift()) {
      const d = e.item;
      const ev = d.event;
      if (ev.name === "session.replay_complete") {
        this.replaying = false;
        if (ev.data.omitted > 0) this.olderInJournals = true;
        void this.ensureAgent();
        // Prompts the sandbox published before this UI attached are published again (SPEC-sandbox).
        this.sandboxCommand(["pending"], true);
        continue;
      }
      if (ev.name === "handoff.command_result" && this.handoffRequests.delete(ev.data.request_id)) this.note(ev.data.ok ? "info" : "error", ev.data.text);
      if (ev.name === "handoff.state_reported") {
        this.handoffBusy = ev.data.phase === "deferring" || ev.data.phase === "writing" || ev.data.phase === "cutover";
        const confirm = ev.data.phase === "confirming" ? ev.data.agent_id : undefined;
        if (confirm !== this.handoffConfirm) this.handoffWaited = false;
        this.handoffConfirm = confirm;
        changed = true;
      }
      if (ev.name === "session.handed_off" && !d.replay) {
        // The work goes on in the replacement: this UI attaches to it (main.ts, Exit `switch`).
        this.note("info", `handoff: the work continues in session ${ev.data.successor_session_id}`);
        this.handedOffTo = ev.data.successor_session_id;
        setImmediate(() => this.leave("switch"));
      }
      if (ev.name.startsWith("sandbox.")) {
        this.sandboxEvent(d);
        changed = true;
        continue;
      }
      // A replayed record of an agent's journal carries its position there: where `:history` resumes
      // (its first record, `agent.started`, comes with every windowed replay and does not count).
      const agentId = agentIdOf(ev);
      if (d.replay && d.seq > 0 && PERSISTENCE[ev.name] === "agent" && agentId !== undefined) {
        const at = this.oldestSeq.get(agentId);
        if (at === undefined || d.seq < at) this.oldestSeq.set(agentId, d.seq);
      }
      if (ev.name === "agent.started" && (d.replay || this.focus === "")) this.focus = ev.data.agent_id;
      if (this.transcript.apply(ev)) changed = true;
    }
    if (this.waiting.length > 0) this.flushWaiting();
    const notices = this.transcript.notices;
    while (this.noticesSeen < notices.length) this.local(notices[this.noticesSeen++] as Item);
    if (changed) this.schedule();
  }

  /** Focuses an agent after the replay: the newest one, or a new one when the session has none. */
  /** Sends what was typed before the session was ready, once it has an agent and a model. */
  private flushWaiting(): void {
    if (this.focus === "" || this.transcript.models.length === 0) return;
    for (const p of this.waiting.splice(0)) this.handle(p, "");
  }

  private async ensureAgent(): Promise<void> {
    if (this.focus === "") {
      try {
        this.focus = await this.session!.client.createAgent();
      } catch (err) {
        this.note("error", (err as Error).message);
        return this.draw();
      }
    }
    // Local notes written before the agent existed stay first in its transcript.
    const early = this.transcript.agent("").items.splice(0);
    const a = this.transcript.agent(this.focus);
    a.items.unshift(...early);
    this.scrollback.adopt(a, early, this.cols, this.drawSettings());
    if (this.olderInJournals) {
      this.olderInJournals = false;
      this.note("info", "earlier history stays in the session's journals: :history shows it, a page at a time");
    }
    this.flushWaiting();
    this.draw();
    // The markdown parser loads once the session is up and idle, not during the first answer.
    setTimeout(() => preloadMarkdown(), MARKDOWN_PRELOAD_MS).unref?.();
  }

  // ── input ─────────────────────────────────────────────────────────────────────────────────

  private input(chunk: string): void {
    clearTimeout(this.escTimer);
    for (const key of this.keys.feed(chunk)) this.key(key);
    if (this.keys.waiting) {
      this.escTimer = setTimeout(() => {
        for (const key of this.keys.flush()) this.key(key);
        this.draw();
      }, ESC_WAIT_MS);
    }
    this.draw();
  }

  private key(key: Key): void {
    if (key.kind === "ctrl" && key.key === "c" && this.editor.search === undefined) {
      const now = Date.now();
      if (this.editor.text !== "") this.editor.clear();
      else if (this.current()?.busy) this.cancel();
      else if (now - this.lastCtrlC < 1500) this.leave("quit");
      else this.note("info", "press Ctrl-C again (or type :quit) to leave");
      this.lastCtrlC = now;
      return;
    }
    if (key.kind === "ctrl" && key.key === "d" && this.editor.text === "") return this.leave("quit");
    // A bound key runs its action (cli.yaml `keys:`); an open history search takes Esc first, to close.
    const name = keyName(key);
    const bound = name === undefined ? undefined : this.bindings.byKey.get(name);
    if (bound !== "expand_tool_output") this.expandedAt = undefined;
    if (bound !== undefined && !(name === "escape" && this.editor.search !== undefined)) return this.act(bound);
    // Keys typed ahead may arrive in one chunk: while a dialog takes single keys, each is its own
    // key, as when typed slowly ("r" then "provider/…" is the offer's key, then the editor's text).
    if (key.kind === "text" && [...key.text].length > 1 && (this.approvals.length > 0 || this.handoffRows(80).length > 0)) {
      for (const ch of key.text) this.key({ kind: "text", text: ch });
      return;
    }
    // A sandbox prompt takes the keys it offers until it is answered (the editor keeps its text),
    // except while a colon command is being typed: `:sandbox classifier …` answers the reviewer offer.
    if (this.approvals.length > 0 && key.kind === "text" && !this.editor.text.trimStart().startsWith(":") && this.answerApproval(key.text)) return;
    // So does the handoff's Ready / Wait / Cancel choice, while it is shown over an empty editor.
    if (this.editor.text === "" && this.handoffRows(80).length > 0 && key.kind === "text" && this.answerHandoff(key.text)) return;
    if (key.kind === "tab" && this.editor.search === undefined) return this.complete();
    const action = this.editor.apply(key);
    if (action.kind === "refused") this.note("warning", "the prompt is at its size limit; the input was not added");
    if (action.kind === "submit") this.submit(action.text);
  }

  /** What a bound key does (SPEC-configuration, "Key bindings"). */
  private act(action: KeyAction): void {
    switch (action) {
      case "interrupt":
        // With nothing running, nothing changes.
        if (this.current()?.busy) this.cancel();
        return;
      case "expand_tool_output":
        return this.toggleToolOutput();
      case "redraw":
        // As a resize does: the newest finished rows, then the live region.
        return this.resized();
      case "history_page": {
        const client = this.session?.client;
        if (!client || this.focus === "") return this.note("error", "not attached to a session yet");
        void this.olderHistory(client).catch((err: unknown) => this.note("error", (err as Error).message));
        return;
      }
      case "next_agent":
      case "previous_agent": {
        const ids = [...this.transcript.agents.keys()].filter((id) => id !== "");
        if (ids.length < 2) return this.note("info", "this session has one agent (:agent new starts another)");
        const next = cycleAgent(ids, this.focus, action === "next_agent" ? 1 : -1, (id) => this.navigation.get(id));
        if (next === undefined) return this.note("info", "every other agent is suspended (:agent activate NAME brings one back)");
        return this.switchTo(next);
      }
      case "pick_agent": {
        const client = this.session?.client;
        if (!client) return this.note("error", "not attached to a session yet");
        void this.pickAgent(client).catch((err: unknown) => this.note("error", (err as Error).message));
        return;
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
    const done = completeLine(lines[0] as string, this.transcript.models);
    if (done === undefined) return;
    if (done.text !== lines[0]) this.editor.setText(done.text);
    else if (done.candidates.length > 1) {
      const shown = done.candidates.slice(0, MAX_COMPLETIONS_SHOWN);
      const more = done.candidates.length - shown.length;
      this.note("info", `${shown.join("  ")}${more > 0 ? `  (and ${more} more)` : ""}`);
    }
  }

  private submit(raw: string): void {
    const parsed = parseInput(raw);
    if (parsed.kind === "empty") return;
    const remembered = historyText(raw, parsed);
    try {
      this.history.append(remembered);
    } catch (err) {
      this.note("warning", `prompt history: ${(err as Error).message}`);
    }
    this.editor.setHistory(this.historyEntries());
    this.handle(parsed, remembered);
  }

  private handle(parsed: ParsedInput, echo: string): void {
    const client = this.session?.client;
    switch (parsed.kind) {
      case "error":
        this.local({ kind: "notice", level: "error", text: parsed.message, done: true });
        return;
      case "prompt": {
        if (!client || this.focus === "" || this.transcript.models.length === 0) return void this.waiting.push(parsed);
        const busy = this.current()?.busy === true;
        client.emit("ui.prompt_submit", { agent_id: this.focus, mode: busy ? this.settings.mode : "queue", text: parsed.text, ...(parsed.literal ? { literal: true } : {}) });
        // The harness makes the agent a human prompt reached active (SPEC-agent-navigation).
        this.navigation.set(this.focus, "active");
        return;
      }
      case "shell": {
        if (!client || this.focus === "") return void this.waiting.push(parsed);
        client.emit("shell.command_request", {
          agent_id: this.focus,
          request_id: `r-tui-${process.pid}-${this.nextRequest++}`,
          command: parsed.command,
          include_in_context: parsed.includeInContext,
        });
        return;
      }
      case "command":
        if (parsed.spec.name === "skill" && (this.focus === "" || this.transcript.models.length === 0)) return void this.waiting.push(parsed);
        this.local({ kind: "notice", level: "info", text: echo, done: true });
        void this.command(parsed.spec.name, parsed.args).catch((err: unknown) => this.note("error", (err as Error).message));
        return;
    }
  }

  private async command(name: string, args: readonly string[]): Promise<void> {
    const client = this.session?.client;
    switch (name) {
      case "help":
        return this.note("info", helpText(args[0], undefined, this.bindings));
      case "quit":
      case "detach":
      case "quit-session":
      case "new":
        // A handoff under way holds the user's prompts for the new session: no switching meanwhile (SPEC-handoff).
        if (name === "new" && this.handoffBusy) return this.note("error", ":new is refused while a handoff is under way; :handoff cancel ends it");
        return this.leave(name);
      case "cancel":
        return this.cancel();
      case "set":
        return this.set(args);
      case "theme":
        return this.setTheme(args[0]);
      case "sessions":
        return this.listSessions(args[0]);
    }
    if (!client) return this.note("error", "not attached to a session yet");
    switch (name) {
      case "model": {
        if (args[0] === undefined) {
          const models = this.transcript.models.map((m) => `${m.provider}/${m.id}`);
          return this.note("info", models.length > 0 ? `models: ${models.join(", ")} — current: ${this.current()?.model ?? "default"}` : "no model is available yet");
        }
        // Checked against what the providers list; refused here, with close matches, before anything is sent.
        const choice = checkModelChoice(args[0], { models: this.transcript.models, listed_providers: this.transcript.listedProviders });
        if (!choice.ok) return this.note("error", `${choice.message} — :model lists the models`);
        client.emit("ui.model_select", { agent_id: this.focus, model: args[0] });
        return;
      }
      case "agent":
        return this.agentCommand(client, args);
      case "agents":
        return args[0] === "pick" ? this.pickAgent(client) : this.listAgents(client);
      case "history":
        return this.olderHistory(client);
      case "sandbox":
        return this.sandboxCommand(args, false);
      case "handoff":
        return this.handoffCommand(args);
      case "compact":
        client.emit("ui.compact_request", { agent_id: this.focus, ...(args[0] !== undefined ? { instructions: args[0] } : {}) });
        return;
      case "skill": {
        // An unknown skill comes back as a directed refusal naming the known ones; nothing is sent.
        const busy = this.current()?.busy === true;
        await client.loadSkill(this.focus, args[0] as string, { ...(args[1] !== undefined ? { text: args[1] } : {}), mode: busy ? this.settings.mode : "queue" });
        return;
      }
    }
  }

  /**
   * `:history`: the page of the focused agent's journal just before what this UI has of it, written
   * below as a block between two marker lines; each use goes a page further back, to the first turn.
   */
  private async olderHistory(client: SessionClient): Promise<void> {
    const agentId = this.focus;
    const before = this.oldestSeq.get(agentId);
    if (before === 0) return this.note("info", "── this is the start of this agent's history ──");
    let page;
    try {
      page = await client.historyPage(agentId, before, HISTORY_PAGE_RECORDS);
    } catch (err) {
      return this.note("error", (err as Error).message);
    }
    const end = page.first + page.records.length;
    this.oldestSeq.set(agentId, page.first);
    if (page.records.length === 0) return this.note("info", "── this is the start of this agent's history ──");
    const scratch = new Transcript();
    // Records of a page are checked here, one by one: one that does not match its schema is skipped.
    for (const r of page.records) {
      const e = checkedEvent(r.event.name, r.event.data);
      if (!(e instanceof Error)) scratch.apply(e);
    }
    const fmt = (n: number) => String(n).replace(/\B(?=(\d{3})+$)/g, ",");
    this.note("info", `── earlier history: records ${fmt(page.first + 1)}–${fmt(end)} of ${fmt(page.total)} ──`);
    // A call whose outcome lies past the page's end (in the newer history already shown) has its row
    // there: here it would stay open, and hold back every row after it.
    for (const item of scratch.agent(agentId).items) if (item.done) this.local(item);
    this.note("info", page.first === 0 ? "── the start of this agent's history ──" : "── end of that page; :history goes further back ──");
  }

  private async agentCommand(client: SessionClient, args: readonly string[]): Promise<void> {
    const [sub, arg] = args;
    if (!["new", "switch", "name", "list", "suspend", "activate"].includes(sub as string)) return this.agentCommand(client, ["switch", args.join(" ")]);
    if (sub === "suspend" || sub === "activate") {
      const id = arg === undefined ? this.focus : this.agentNamed(arg);
      if (id === undefined || id === "") return;
      const mode = await client.setNavigation(id, sub === "suspend" ? "suspended" : "active");
      this.navigation.set(id, mode);
      return this.note("info", `agent ${agentLabel(id, this.transcript.agent(id).name)} is ${mode}${mode === "suspended" ? " (it still runs; agent cycling skips it)" : ""}`);
    }
    if (sub === "new") {
      const id = await client.createAgent(arg !== undefined ? { display_name: arg } : {});
      this.switchTo(id);
    } else if (sub === "switch") {
      if (arg === undefined) return this.note("error", "usage: :agent switch ID|NAME");
      const id = this.agentNamed(arg);
      if (id !== undefined) this.switchTo(id);
    } else if (sub === "name") {
      if (arg === undefined) return this.note("error", "usage: :agent name NAME");
      client.emit("agent.metadata_request", { agent_id: this.focus, key: "display_name", value: arg });
    } else {
      const rows = [...this.transcript.agents.values()].filter((a) => a.id !== "").map((a) => `${a.id === this.focus ? "*" : " "} ${agentLabel(a.id, a.name)}${a.busy ? " (working)" : ""}`);
      this.note("info", rows.length > 0 ? rows.join("\n") : "(no agents)");
    }
  }

  /** The agent with this id or name, or undefined (and a note saying why) when not exactly one. */
  private agentNamed(arg: string): string | undefined {
    const match = [...this.transcript.agents.values()].filter((a) => a.id !== "" && (a.id === arg || a.name === arg));
    if (match.length === 1) return (match[0] as AgentView).id;
    this.note("error", match.length === 0 ? `no agent is called ${arg}; :agents shows them` : `several agents are called ${arg}; use the id`);
    return undefined;
  }

  /** The session's loaded agents from the roster; their navigation modes are kept. */
  private async rosterRows(client: SessionClient): Promise<{ rows: RosterRow[]; total: number }> {
    const page = await client.roster();
    for (const r of page.rows) if (r.navigation !== undefined) this.navigation.set(r.agent_id, r.navigation);
    return page;
  }

  /** `:agents`: the session's agents as a tree, each with its state and work status. */
  private async listAgents(client: SessionClient): Promise<void> {
    const { rows, total } = await this.rosterRows(client);
    if (rows.length === 0) return this.note("info", "(no agents)");
    const more = total > rows.length ? `\n… ${total - rows.length} more not listed` : "";
    this.note("info", `agents (:agent NAME|ID switches; ${keyLabel(this.bindings.byAction.next_agent)} cycles):\n${agentTree(rows, this.focus).join("\n")}${more}`);
  }

  /**
   * `:agents pick` / the pick key: fzf from PATH chooses an agent, or without fzf the tree is
   * listed. The chosen id is checked against a fresh roster before it is shown; a cancel, an error
   * or a stale choice changes nothing (SPEC-agent-navigation).
   */
  private async pickAgent(client: SessionClient): Promise<void> {
    const fzf = findOnPath("fzf", this.pickerEnv.PATH);
    if (fzf === undefined) return this.listAgents(client);
    if (this.pickerOpen) return;
    const { rows } = await this.rosterRows(client);
    const loaded = rows.filter((r) => r.loaded);
    if (loaded.length === 0) return this.note("info", "(no agents)");
    const input = pickerInput(loaded, this.focus);
    this.draw();
    this.pickerOpen = true;
    // The terminal goes to fzf as the shell would hand it over, and comes back whatever happens.
    this.io.input.off("data", this.onData);
    this.io.input.pause();
    this.io.output.write(`${this.view.finish()}\x1b[0m\x1b[?7h\x1b[?2004l`);
    this.io.input.setRawMode?.(false);
    // runFzf never rejects: every outcome, an error included, comes back here.
    const outcome = await runFzf(fzf, input);
    this.pickerOpen = false;
    if (this.stopped) return;
    this.io.input.setRawMode?.(true);
    this.io.output.write("\x1b[?2004h\x1b[?7l");
    this.io.input.on("data", this.onData);
    this.io.input.resume();
    this.resized();
    if (outcome.kind === "cancelled") return this.note("info", "no agent chosen");
    if (outcome.kind === "error") return this.note("error", outcome.message);
    const fresh = await client.roster();
    const still = fresh.rows.find((r) => r.agent_id === outcome.agentId && r.loaded);
    if (still === undefined) return this.note("error", `the chosen agent ${agentLabel(outcome.agentId, undefined)} is not in this session (any more); nothing changed`);
    this.switchTo(still.agent_id);
  }

  private switchTo(id: string): void {
    this.focus = id;
    this.transcript.agent(id);
    this.note("info", `agent ${agentLabel(id, this.transcript.agent(id).name)}`);
  }

  private set(args: readonly string[]): void {
    const [key, value] = args;
    if (key === undefined) return this.note("info", `mode ${this.settings.mode}, reasoning ${this.settings.reasoning ? "on" : "off"}\n${SETTINGS_HELP}`);
    if (key === "mode" && (value === "steer" || value === "queue")) this.settings.mode = value;
    else if (key === "reasoning" && (value === "on" || value === "off")) this.settings.reasoning = value === "on";
    else return this.note("error", `cannot set ${key}${value !== undefined ? ` to ${value}` : ""}; ${SETTINGS_HELP}`);
    this.note("info", `${key} ${value}`);
  }

  private setTheme(name: string | undefined): void {
    if (name === undefined) {
      return this.note("info", `themes: ${themeNames(this.configRoot).join(", ")} (current: ${this.theme.name}); theme files live in ${join(this.configRoot, "themes")}`);
    }
    const theme = this.themeNamed(name);
    if (typeof theme === "string") return this.note("error", theme);
    this.theme = theme;
    this.note("info", `theme ${this.theme.name}`);
  }

  /** `:sessions [WORDS]`: the saved sessions, newest first, or those whose title, project or id hold every word. */
  private listSessions(filter: string | undefined): void {
    let rows: SavedSession[];
    try {
      rows = this.savedSessions();
    } catch (err) {
      return this.note("error", `the saved sessions could not be listed: ${(err as Error).message}`);
    }
    const words = (filter ?? "").toLowerCase().split(/\s+/).filter(Boolean);
    const shown = rows.filter((r) => words.every((w) => `${r.title ?? ""}\n${r.project_root ?? ""}\n${r.id}`.toLowerCase().includes(w)));
    if (shown.length === 0) return this.note("info", rows.length === 0 ? "no saved sessions" : `no saved session matches ${filter ?? ""}`);
    const now = Date.now();
    const lines = shown.slice(0, SESSIONS_SHOWN).map((r) => {
      const here = r.id === this.session?.sessionId ? " (this one)" : r.running_pid !== undefined ? " (running)" : "";
      return `${r.title ?? "(untitled)"}  ·  ${ageLabel(now - r.last_active)}  ·  ${r.project_root ?? "?"}  ·  ${r.id}${here}`;
    });
    const more = shown.length > SESSIONS_SHOWN ? `\n… ${shown.length - SESSIONS_SHOWN} more (tau session list --all shows every one)` : "";
    this.note("info", `saved sessions (tau resume ID continues one):\n${lines.join("\n")}${more}`);
  }

  /** The theme `name` (a file in the config root's themes/ folder, or `default`), or why it cannot be used. */
  private themeNamed(name: string): Theme | string {
    if (name === "default") return DEFAULT_THEME;
    const dir = join(this.configRoot, "themes");
    const file = themeFiles(dir).find((f) => f.replace(/\.(ya?ml|json)$/, "") === name);
    if (!file) return `no theme ${name}; themes: ${themeNames(this.configRoot).join(", ")}`;
    try {
      return loadThemeFile(join(dir, file));
    } catch (err) {
      return err instanceof ThemeError ? err.message : `the theme could not be read: ${(err as Error).message}`;
    }
  }

  /**
   * Ctrl-O: the newest running tool or command switches between the tail of its output and all of
   * it; with none running, the newest finished one's whole output is written below (its row above
   * is in the terminal's scrollback already, where it cannot change), and each further press with no
   * other key between writes the next older one's.
   */
  private toggleToolOutput(): void {
    const a = this.current();
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
      this.local(it.kind === "tool" ? { ...it, callId: `${it.callId}#shown`, expanded: true } : { ...it, requestId: `${it.requestId}#shown`, expanded: true });
      return;
    }
    this.note("info", this.expandedAt !== undefined ? "no older tool output to show" : "no tool output to show");
  }

  private cancel(): void {
    const a = this.current();
    if (!this.session || !a || !a.busy) return this.note("info", "nothing to cancel");
    this.session.client.emit("agent.cancel_request", { agent_id: a.id });
  }

  private leave(how: Exit): void {
    const client = this.session?.client;
    if (client && how === "detach") client.conn.send({ message: "ui_detach_request", payload: {} });
    if (client && how === "quit-session") client.conn.send({ message: "ui_session_end_request", payload: {} });
    if (!client) return this.end(how);
    if (how !== "quit-session") client.close();
    this.end(how);
  }

  // ── the sandbox ───────────────────────────────────────────────────────────────────────────

  /** `:sandbox ARGS`: the shell extension answers with `sandbox.command_result`. */
  private sandboxCommand(args: readonly string[], silent: boolean): void {
    const client = this.session?.client;
    if (!client) return;
    const request_id = `r-sbx-${process.pid}-${this.nextRequest++}`;
    this.sandboxRequests.set(request_id, { silent });
    client.emit("sandbox.command_request", { request_id, args: [...args] });
  }

  private sandboxEvent(d: Delivery): void {
    const ev = d.event;
    switch (ev.name) {
      case "sandbox.approval_requested":
        if (d.replay || this.approvals.some((a) => a.approval_id === ev.data.approval_id)) return;
        this.approvals.push(ev.data);
        // The automatic reviewer's setup offer (SPEC-sandbox-reviewer, "Selection"): answer this prompt by hand, set one up, or keep manual.
        if (ev.data.classifier_setup !== undefined) this.note("info", CLASSIFIER_SETUP[ev.data.classifier_setup]);
        return;
      case "sandbox.approval_resolved": {
        const i = this.approvals.findIndex((a) => a.approval_id === ev.data.approval_id);
        if (i < 0) return;
        const [a] = this.approvals.splice(i, 1);
        this.note("info", `sandbox: ${a?.kind === "network" ? "connection to" : "access to"} ${a?.target ?? ""} ${ev.data.outcome.replace("_", " ")}`);
        return;
      }
      case "sandbox.command_result": {
        const request = this.sandboxRequests.get(ev.data.request_id);
        if (request === undefined) return;
        this.sandboxRequests.delete(ev.data.request_id);
        if (!request.silent || !ev.data.ok) this.note(ev.data.ok ? "info" : "error", ev.data.text);
        return;
      }
      case "sandbox.state_reported": {
        const s = ev.data;
        if (s.state === "pending" || (s.state === "active" && s.reason === undefined)) return;
        const text = `sandbox ${s.state}${s.reason !== undefined ? `: ${s.reason}` : ""}${s.fix !== undefined ? `\nfix: ${s.fix}` : ""}`;
        this.note(s.state === "blocked" ? "error" : "warning", text);
        return;
      }
    }
  }

  /** The choices of a prompt, by the key that picks each. */
  private static readonly CHOICE_KEYS: Record<SandboxDecision, { key: string; label: string }> = {
    allow: { key: "a", label: "[a] allow this connection" },
    allow_retry: { key: "a", label: "[a] allow and retry" },
    allow_adapt: { key: "m", label: "[m] allow, let the model adapt" },
    deny: { key: "d", label: "[d] deny" },
  };

  /** Answers the shown prompt when `text` is one of its keys; true when it did. */
  private answerApproval(text: string): boolean {
    const a = this.approvals[0];
    if (a === undefined) return false;
    // The reviewer setup offer's own keys: they set the reviewer up and leave the request to answer.
    if (a.classifier_setup !== undefined && (text.toLowerCase() === "r" || text.toLowerCase() === "k")) {
      this.approvals[0] = { ...a, classifier_setup: undefined };
      if (text.toLowerCase() === "k") this.sandboxCommand(["classifier", "false"], false);
      else this.editor.setText(":sandbox classifier ");
      this.schedule();
      return true;
    }
    const choice = a.choices.find((c) => TuiApp.CHOICE_KEYS[c].key === text.toLowerCase());
    if (choice === undefined) return false;
    this.session?.client.emit("sandbox.approval_answer", { approval_id: a.approval_id, decision: choice });
    return true;
  }

  /** The handoff's choice (SPEC-handoff "Readiness"), shown for the focused agent once no sandbox prompt is. */
  private handoffRows(width: number): StyledLine[] {
    if (this.approvals.length > 0 || this.handoffWaited || this.handoffConfirm === undefined || this.handoffConfirm !== this.focus) return [];
    const lines = ["handoff: the agent is ready to write its handoff dossier", "  [r] ready: go ahead   [w] wait: keep working   [c] cancel the handoff"];
    return lines.map((l) => [{ text: truncateMiddle(sanitize(l, { newlines: "escape" }), width), style: this.theme.styles.status }]);
  }

  private answerHandoff(text: string): boolean {
    const verb = ({ r: "ready", w: "wait", c: "cancel" } as Record<string, string>)[text.toLowerCase()];
    if (verb === undefined) return false;
    if (verb === "wait") this.handoffWaited = true;
    this.handoffCommand([verb]);
    this.schedule();
    return true;
  }

  private handoffCommand(args: readonly string[]): void {
    const client = this.session?.client;
    if (!client) return;
    // The handoff extension answers with `handoff.command_result` (SPEC-handoff).
    const request_id = `r-hof-${process.pid}-${this.nextRequest++}`;
    this.handoffRequests.add(request_id);
    client.emit("handoff.command_request", { request_id, agent_id: this.focus, args: args.length > 0 ? [...args] : ["start"] });
  }

  private approvalRows(width: number): StyledLine[] {
    const a = this.approvals[0];
    if (a === undefined) return [];
    const what =
      a.kind === "network" ? `connect to ${a.target}` : a.kind === "filesystem_write" ? `write to ${a.target}` : `read ${a.target}`;
    const lines = [
      `sandbox: the model's command wants to ${what}${this.approvals.length > 1 ? ` (1 of ${this.approvals.length})` : ""}`,
      `  command: ${a.command}`,
      `  asked by call ${a.call_id} of agent ${a.agent_id}${a.other_calls?.length ? `, or by one of the other commands running: ${a.other_calls.map((c) => `call ${c.call_id} of agent ${c.agent_id} (${c.command})`).join(", ")}` : ""}`,
      `  ${a.choices.map((c) => TuiApp.CHOICE_KEYS[c].label).join("   ")}`,
      ...(a.classifier_setup !== undefined ? ["  automatic reviewer: [r] choose a model (Tab lists them)   [k] keep manual approvals"] : []),
    ];
    return lines.map((l) => [{ text: truncateMiddle(sanitize(l, { newlines: "escape" }), width), style: this.theme.styles.status }]);
  }

  // ── drawing ───────────────────────────────────────────────────────────────────────────────

  private current(): AgentView | undefined {
    return this.focus === "" ? undefined : this.transcript.agent(this.focus);
  }

  /** A local message (never sent anywhere): goes into the focused agent's transcript. */
  private local(item: Item): void {
    this.transcript.append(this.focus, item);
    this.schedule();
  }

  private note(level: string, text: string): void {
    this.local({ kind: "notice", level, text, done: true });
  }

  private schedule(): void {
    if (this.frameTimer) return;
    this.frameTimer = setTimeout(() => {
      this.frameTimer = undefined;
      this.draw();
    }, FRAME_INTERVAL_MS);
  }





  private statusRow(width: number): StyledLine {
    const parts = statusParts({
      agent: this.current(),
      agents: [...this.transcript.agents.values()],
      defaultModel: this.transcript.defaultModel,
      state:
        this.session === undefined || this.current() === undefined
          ? "starting…"
          : this.replaying
            ? "loading history…"
            : this.transcript.models.length === 0
              ? "waiting for a model…"
              : this.current()?.busy
                ? "working…"
                : "ready",
    });
    const text = fitStatus(parts, width);
    const pad = " ".repeat(Math.max(0, width - columns(text)));
    return [{ text: (text + pad) as SafeText, style: this.theme.styles.status }];
  }

  private drawSettings(): DrawSettings {
    return { theme: this.theme, reasoning: this.settings.reasoning, screenRows: this.rows };
  }

  private liveBlock(width: number): { committed: Block; live: Block; cursor: CursorPosition } {
    // While the history replays nothing of it is written: only its newest rows will be.
    const { committed, live } = this.replaying ? { committed: [], live: [] } : this.scrollback.split(this.transcript.agent(this.focus), width, this.drawSettings());
    const editor = editorRows(this.editor, width, this.theme, this.editorMaxLines, emptyPromptHint(this.bindings.byAction.interrupt));
    const dialog = [...this.approvalRows(width), ...this.handoffRows(width)];
    const rows: StyledLine[] = [...live, [], ...dialog, ...editor.rows, this.statusRow(width)];
    return { committed, live: rows, cursor: { row: live.length + 1 + dialog.length + editor.cursor.row, col: editor.cursor.col } };
  }

  /** Whether the focused agent has a tool or command running (its timer needs a frame a second). */
  private running(): boolean {
    const a = this.current();
    if (a === undefined) return false;
    for (let i = a.items.length - 1; i >= 0 && i >= a.items.length - 64; i--) {
      const it = a.items[i] as Item;
      if ((it.kind === "tool" || it.kind === "shell") && !it.done && it.startedAt !== undefined) return true;
    }
    return false;
  }

  /** Draws one frame now. */
  draw(): void {
    if (this.pickerOpen) return;
    const timer = this.diagnostics.begin("renderer", diagnosticName("frame"));
    clearTimeout(this.frameTimer);
    this.frameTimer = undefined;
    clearTimeout(this.tickTimer);
    this.tickTimer = this.running() ? setTimeout(() => this.draw(), TICK_MS) : undefined;
    const width = this.cols;
    const { committed, live, cursor } = this.liveBlock(width);
    const out = this.view.frame(committed, live, cursor);
    if (out !== "") this.io.output.write(out);
    timer.end();
  }

  private resized(): void {
    if (this.pickerOpen) return;
    const width = this.cols;
    const tail = this.scrollback.rewrite(this.transcript.agent(this.focus), width, this.drawSettings());
    const { committed, live, cursor } = this.liveBlock(width);
    tail.push(...committed);
    this.io.output.write(this.view.resize(width, this.rows, tail, live, cursor));
  }
}

/** Theme files in `dir` (none when it does not exist). */
function themeFiles(dir: string): string[] {
  try {
    return readdirSync(dir).filter((f) => /\.(ya?ml|json)$/.test(f));
  } catch {
    return [];
  }
}

/** Every theme name the config root offers, `default` first. */
export function themeNames(configRoot: string): string[] {
  return ["default", ...themeFiles(join(configRoot, "themes")).map((f) => f.replace(/\.(ya?ml|json)$/, ""))];
}

/** Most sessions `:sessions` lists. */
const SESSIONS_SHOWN = 20;
