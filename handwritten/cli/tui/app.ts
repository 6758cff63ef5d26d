// The interactive terminal UI for one attached session. The app composes components (context.ts)
// that each own their state, rows and keys: the terminal, the prompt editor, the sandbox's approval
// dialog, the handoff's state, the agent switcher, `:history` pages, the `:sessions` list, tool
// output, the themes and the colon-command table. It routes keys to the open dialog, else to the
// bound actions and the editor; delivered events through a bounded render queue to the transcript
// and the components that care; and frames to the inline view. Commands act only through the
// session client (the same wire events a scripted socket client can send: headless parity).
import type { SessionClient, Delivery } from "../session-client.js";
import type { Key } from "./keys.js";
import { commandSpecs, helpText, runCommand, type CommandHost, type Settings } from "./colon-commands.js";
import { Transcript, type AgentView, type Item } from "./transcript.js";
import { Scrollback, type DrawSettings } from "./scrollback.js";
import { DEFAULT_BINDINGS, keyLabel, keyName, resolveBindings, type Bindings, type KeyAction } from "./bindings.js";
import { fitStatus, statusParts, waitingFor } from "./status.js";
import { InlineView } from "./view.js";
import { AgentSwitcher } from "./agent-switcher.js";
import { ModelSelector } from "./model-selector.js";
import { SandboxDialog } from "./sandbox-dialog.js";
import { HandoffState } from "./handoff-dialog.js";
import { McpStatus } from "./mcp-status.js";
import { ElicitationDialog } from "./elicitation-dialog.js";
import { HistoryPages, REPLAY_RECENT_RECORDS } from "./history-pages.js";
import { SessionList } from "./session-picker.js";
import { Themes } from "./themes.js";
import { Terminal, type TerminalIo } from "./terminal.js";
import { PromptInput, type HistoryPort } from "./prompt-input.js";
import { ToolOutput, toolRunning } from "./tool-output.js";
import type { Dialog, Exit, UiContext } from "./context.js";
import { Diagnostics, RenderQueue, columns, diagnosticName, preloadMarkdown } from "../ui/index.js";
import type { Block, CursorPosition, SafeText, StyledLine } from "../ui/index.js";
import type { CliConfig } from "../../../generated/index.js";
import type { SavedSession } from "../../sessions/index.js";

export type { Exit } from "./context.js";
export type { Settings } from "./colon-commands.js";
export { HISTORY_PAGE_RECORDS, REPLAY_RECENT_RECORDS } from "./history-pages.js";
export { themeNames } from "./themes.js";
export type { TerminalIo } from "./terminal.js";
export type { HistoryPort } from "./prompt-input.js";

export interface SessionPort {
  readonly client: SessionClient;
  readonly sessionId: string;
}

/** Streaming output is drawn at most this often; keystrokes are drawn at once. */
const FRAME_INTERVAL_MS = 16;
/** How long after the session is ready the markdown parser is loaded. */
const MARKDOWN_PRELOAD_MS = 300;
/** A running tool's elapsed time is redrawn this often. */
const TICK_MS = 1000;

export class TuiApp {
  private readonly terminal: Terminal;
  private readonly transcript = new Transcript();
  /** Agents of sessions this UI showed before the current one (their usage is not the status line's). */
  private earlierAgents: ReadonlySet<string> = new Set();
  private readonly queue = new RenderQueue<Delivery>();
  readonly diagnostics: Diagnostics;
  private view: InlineView;
  /** cli.yaml `keys:` over the defaults. */
  private bindings: Bindings = DEFAULT_BINDINGS;
  private session: SessionPort | undefined;
  private focus = "";
  private readonly scrollback = new Scrollback();
  /** Between subscribing and `session.replay_complete`: history is folded, not yet written. */
  private replaying = false;
  private frameTimer: NodeJS.Timeout | undefined;
  /** The next frame of a running tool's timer. */
  private tickTimer: NodeJS.Timeout | undefined;
  private lastCtrlC = 0;
  private ended: ((e: Exit) => void) | undefined;
  private noticesSeen = 0;
  private readonly settings: Settings = { mode: "steer", reasoning: false };
  private nextRequest = 1;

  // ── the components, and what the app lends them ──────────────────────────────────────────

  private readonly ui: UiContext = {
    client: () => this.session?.client,
    sessionId: () => this.session?.sessionId,
    focus: () => this.focus,
    transcript: this.transcript,
    current: () => this.current(),
    local: (item) => this.local(item),
    note: (level, text) => this.note(level, text),
    schedule: () => this.schedule(),
    requestId: (kind) => `r-${kind}-${process.pid}-${this.nextRequest++}`,
  };
  private readonly sandbox = new SandboxDialog(this.ui);
  private readonly handoff = new HandoffState(this.ui, (how) => this.leave(how));
  private readonly mcp = new McpStatus();
  private readonly elicitation = new ElicitationDialog(this.ui);
  /** Dialogs in the order they claim the space above the editor and its keys: the first open one has them. */
  private readonly dialogs: readonly Dialog[] = [this.sandbox, this.elicitation];
  private readonly agents = new AgentSwitcher(this.ui, {
    focusOn: (id) => (this.focus = id),
    nextAgentKey: () => keyLabel(this.bindings.byAction.next_agent),
    lendTerminal: (run) => {
      this.draw();
      return this.terminal.lend(this.view.finish(), run);
    },
    terminalLent: () => this.terminal.lent,
  });
  private readonly pages = new HistoryPages(this.ui);
  private readonly toolOutput = new ToolOutput(this.ui);
  private readonly sessions = new SessionList(this.ui);
  private readonly themes: Themes;
  private readonly commands: CommandHost;
  private readonly prompt = new PromptInput(this.ui, {
    settings: this.settings,
    prompted: (id) => this.agents.prompted(id),
    command: (name, args) => void runCommand(this.commands, name, args).catch((err: unknown) => this.note("error", (err as Error).message)),
    answer: (text) => this.elicitation.submit(text),
  });

  constructor(
    io: TerminalIo,
    configRoot: string,
    startRow: number,
    diagnostics?: Diagnostics,
  ) {
    this.diagnostics = diagnostics ?? new Diagnostics({ sink: () => {} });
    this.terminal = new Terminal(io, { key: (k) => this.key(k), draw: () => this.draw(), resized: () => this.resized() });
    this.view = new InlineView(this.terminal.cols, this.terminal.rows, startRow);
    this.themes = new Themes(configRoot, this.ui);
    this.commands = {
      ui: this.ui,
      settings: this.settings,
      help: (name) => helpText(name, commandSpecs(), this.bindings),
      themes: this.themes,
      sessions: this.sessions,
      agents: this.agents,
      models: new ModelSelector(this.ui),
      history: this.pages,
      sandbox: this.sandbox,
      handoff: this.handoff,
      leave: (how) => this.leave(how),
      fork: () => this.fork(),
      cancel: () => this.cancel(),
    };
  }

  /** Makes a fork of a session's agent for `:fork` and notes where the UI goes next (set by the entry; none until then). */
  forker: ((sessionId: string, agentId: string) => void) | undefined;

  /** `:fork`: the focused agent's conversation copied into a new session, which the UI then resumes. */
  private fork(): void {
    const session = this.session;
    if (!session || !this.forker) return this.note("error", "not attached to a session yet");
    try {
      this.forker(session.sessionId, this.focus);
    } catch (err) {
      return this.note("error", (err as Error).message);
    }
    this.leave("switch");
  }

  /** The saved sessions of the state folder, for `:sessions` (set by the entry; none until then). */
  set savedSessions(source: () => SavedSession[]) {
    this.sessions.source = source;
  }

  /** The session a handoff continued this one in: the UI attaches to it when it leaves with `switch`. */
  get handedOffTo(): string | undefined {
    return this.handoff.handedOffTo;
  }

  /** Prompt history arrives after the first frame (it is read from disk). */
  setHistory(history: HistoryPort): void {
    this.prompt.setHistory(history);
  }

  /** Applies cli.yaml (validated, its theme and keys known to be usable): the theme, the keys and the editor's limits. */
  configure(cli: CliConfig): void {
    if (cli.keys !== undefined) {
      const b = resolveBindings(cli.keys);
      if ("path" in b) this.note("error", `cli.yaml: ${b.path.join(".")}: ${b.message}`);
      else this.bindings = b;
    }
    if (cli.editor?.max_lines !== undefined) this.prompt.maxLines = cli.editor.max_lines;
    if (cli.editor?.history_size !== undefined) this.prompt.setHistorySize(cli.editor.history_size);
    if (cli.theme !== undefined) this.themes.configure(cli.theme);
    this.draw();
  }

  /** A warning (or, with `level` info, a remark) shown in the transcript. */
  warn(text: string, level: "warning" | "info" = "warning"): void {
    this.note(level, text);
  }

  /** Takes the terminal: raw input, resize tracking, the first frame. */
  start(): void {
    this.terminal.take();
    this.draw();
  }

  /** Gives the terminal back: cursor below the UI, modes restored. */
  stop(): void {
    clearTimeout(this.frameTimer);
    clearTimeout(this.tickTimer);
    this.terminal.give(this.view.finish());
  }

  // ── the session ───────────────────────────────────────────────────────────────────────────

  /** Attaches the UI to a session; resolves with how the user left it. */
  run(session: SessionPort): Promise<Exit> {
    this.session = session;
    this.focus = "";
    // After :new or a handoff the scrollback keeps the earlier session's agents; its usage is not this one's.
    this.earlierAgents = new Set(this.transcript.agents.keys());
    this.handoff.attach();
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

  private leave(how: Exit): void {
    const client = this.session?.client;
    if (client && how === "detach") client.notify("ui_detach_request", {});
    if (client && how === "quit-session") client.notify("ui_session_end_request", {});
    if (!client) return this.end(how);
    if (how !== "quit-session") client.close();
    this.end(how);
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
    for (let e = this.queue.shift(); e !== undefined; e = this.queue.shift()) if (this.route(e.item)) changed = true;
    this.prompt.flushWaiting();
    const notices = this.transcript.notices;
    while (this.noticesSeen < notices.length) this.local(notices[this.noticesSeen++] as Item);
    if (changed) this.schedule();
  }

  /** One delivered event to the components that care and to the transcript; true when a frame is due. */
  private route(d: Delivery): boolean {
    const ev = d.event;
    if (ev.name === "session.replay_complete") {
      this.replaying = false;
      this.pages.replayed(ev.data.omitted);
      void this.ensureAgent();
      this.sandbox.askPending();
      return false;
    }
    // The sandbox's events are the dialog's alone.
    if (ev.name.startsWith("sandbox.")) {
      this.sandbox.deliver(d);
      return true;
    }
    if (this.mcp.deliver(d) || this.elicitation.deliver(d)) return true;
    const handoff = this.handoff.deliver(d);
    this.pages.track(d);
    // A replay focuses the newest agent a person (or the harness) started, never a child another
    // agent started: a resumed or attached UI's prompts go on with the main conversation.
    if (ev.name === "agent.started" && (this.focus === "" || (d.replay && ev.data.creator !== "agent" && ev.data.parent_id === undefined))) this.focus = ev.data.agent_id;
    return this.transcript.apply(ev) || handoff;
  }

  /** After the replay: the focused agent (a new one when the session has none) has its newest rows written. */
  private async ensureAgent(): Promise<void> {
    if (this.focus === "") {
      try {
        this.focus = (await this.session!.client.request("ui.create_agent", {})).agent_id;
      } catch (err) {
        this.note("error", `could not create an agent: ${(err as Error).message}`);
        return this.draw();
      }
    }
    // Local notes written before the agent existed stay first in its transcript.
    const early = this.transcript.agent("").items.splice(0);
    const a = this.transcript.agent(this.focus);
    a.items.unshift(...early);
    this.scrollback.adopt(a, early, this.terminal.cols, this.drawSettings());
    this.pages.announce();
    this.prompt.flushWaiting();
    this.draw();
    // The markdown parser loads once the session is up and idle, not during the first answer.
    setTimeout(() => preloadMarkdown(), MARKDOWN_PRELOAD_MS).unref?.();
  }

  // ── input ─────────────────────────────────────────────────────────────────────────────────

  private key(key: Key): void {
    const editor = this.prompt.editor;
    if (key.kind === "ctrl" && key.key === "c" && editor.search === undefined) {
      const now = Date.now();
      if (editor.text !== "") editor.clear();
      else if (this.current()?.busy) this.cancel();
      else if (now - this.lastCtrlC < 1500) this.leave("quit");
      else this.note("info", "press Ctrl-C again (or type :quit) to leave");
      this.lastCtrlC = now;
      return;
    }
    if (key.kind === "ctrl" && key.key === "d" && editor.text === "") return this.leave("quit");
    // A bound key runs its action (cli.yaml `keys:`); an open history search takes Esc first, to close.
    const name = keyName(key);
    const bound = name === undefined ? undefined : this.bindings.byKey.get(name);
    if (bound !== "expand_tool_output") this.toolOutput.reset();
    if (bound !== undefined && !(name === "escape" && editor.search !== undefined)) return this.act(bound);
    // An open dialog takes the keys it offers until it is answered; the editor keeps its text.
    const dialog = this.dialogs.find((d) => d.open);
    if (dialog !== undefined && key.kind === "text") {
      // Keys typed ahead may arrive in one chunk: while a dialog takes single keys, each is its own
      // key, as when typed slowly ("r" then "provider/…" is the offer's key, then the editor's text).
      if ([...key.text].length > 1) {
        for (const ch of key.text) this.key({ kind: "text", text: ch });
        return;
      }
      if (dialog.key(key.text, editor)) return;
    }
    // A request's key pressed as it closed on its own is not typed into the editor (sandbox-dialog.ts).
    if (dialog === undefined && key.kind === "text" && [...key.text].length === 1 && this.sandbox.key(key.text, editor)) return;
    // Enter on an empty editor skips an optional field of a server's form (the editor submits no empty text).
    if (key.kind === "enter" && editor.text.trim() === "" && this.elicitation.submit("")) return;
    this.prompt.key(key);
  }

  /** What a bound key does (SPEC-configuration, "Key bindings"). */
  private act(action: KeyAction): void {
    const client = this.session?.client;
    switch (action) {
      case "interrupt":
        // With nothing running, nothing changes.
        if (this.current()?.busy) this.cancel();
        return;
      case "expand_tool_output":
        return this.toolOutput.expand();
      case "redraw":
        // As a resize does: the newest finished rows, then the live region.
        return this.resized();
      case "history_page":
        if (!client || this.focus === "") return this.note("error", "not attached to a session yet");
        return void this.pages.older(client).catch((err: unknown) => this.note("error", (err as Error).message));
      case "next_agent":
        return this.agents.cycle(1);
      case "previous_agent":
        return this.agents.cycle(-1);
      case "pick_agent":
        if (!client) return this.note("error", "not attached to a session yet");
        return void this.agents.pick(client).catch((err: unknown) => this.note("error", (err as Error).message));
    }
  }

  private cancel(): void {
    const a = this.current();
    if (!this.session || !a || !a.busy) return this.note("info", "nothing to cancel");
    this.session.client.emit("agent.cancel_request", { agent_id: a.id });
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
      agents: [...this.transcript.agents.values()].filter((a) => !this.earlierAgents.has(a.id)),
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
                : (waitingFor(this.transcript, this.current()) ?? "ready"),
      mcp: this.mcp.part(),
    });
    const text = fitStatus(parts, width);
    const pad = " ".repeat(Math.max(0, width - columns(text)));
    return [{ text: (text + pad) as SafeText, style: this.themes.current.styles.status }];
  }

  private drawSettings(): DrawSettings {
    return { theme: this.themes.current, reasoning: this.settings.reasoning, screenRows: this.terminal.rows };
  }

  private liveBlock(width: number): { committed: Block; live: Block; cursor: CursorPosition } {
    // While the history replays nothing of it is written: only its newest rows will be.
    const { committed, live } = this.replaying ? { committed: [], live: [] } : this.scrollback.split(this.transcript.agent(this.focus), width, this.drawSettings());
    const theme = this.themes.current;
    const editor = this.prompt.rows(width, theme, this.bindings.byAction.interrupt);
    const dialog = this.dialogs.find((d) => d.open)?.rows(width, theme) ?? [];
    const rows: StyledLine[] = [...live, [], ...dialog, ...editor.rows, this.statusRow(width)];
    return { committed, live: rows, cursor: { row: live.length + 1 + dialog.length + editor.cursor.row, col: editor.cursor.col } };
  }

  /** Draws one frame now. */
  draw(): void {
    if (this.terminal.lent) return;
    const timer = this.diagnostics.begin("renderer", diagnosticName("frame"));
    clearTimeout(this.frameTimer);
    this.frameTimer = undefined;
    clearTimeout(this.tickTimer);
    this.tickTimer = toolRunning(this.current()) ? setTimeout(() => this.draw(), TICK_MS) : undefined;
    const width = this.terminal.cols;
    const { committed, live, cursor } = this.liveBlock(width);
    const out = this.view.frame(committed, live, cursor);
    if (out !== "") this.terminal.write(out);
    timer.end();
  }

  private resized(): void {
    if (this.terminal.lent) return;
    const width = this.terminal.cols;
    const tail = this.scrollback.rewrite(this.transcript.agent(this.focus), width, this.drawSettings());
    const { committed, live, cursor } = this.liveBlock(width);
    tail.push(...committed);
    this.terminal.write(this.view.resize(width, this.terminal.rows, tail, live, cursor));
  }
}
