// One ACP session (SPEC-acp, "Sessions"): a tau session this `tau acp` process owns — its daemon,
// started in the client's folder, exits when the connection to it closes — the agent prompts go
// to, and the turn under way.
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { McpServer, SessionConfigOption, SessionModeState, SessionUpdate } from "@agentclientprotocol/sdk";
import type { AvailableModel, EditorReadRequest, SandboxMode, McpElicitationRequested, McpServerConfig, SandboxApprovalRequested, SandboxDecision } from "../../../generated/index.js";
import { importedName } from "../../config/mcp-import.js";
import { randomHex } from "../../startup/random.js";
import type { Roots } from "../../config/index.js";
import { waitForDaemon } from "../../transport/index.js";
import { agentToContinue, describeSession, resolveSavedSession } from "../../sessions/index.js";
import { SessionClient, type Delivery } from "../session-client.js";
import { startOwnedDaemon } from "../owned-daemon.js";
import { AcpTurn, replayedUpdates, type TurnEnd } from "./updates.js";

/** Records of the session's journals `session/load` replays at most (the newest). */
const LOAD_REPLAY_RECORDS = 5_000;

/** How long `session/load` waits for a session found running to stop (its last connection's daemon closing). */
const LOAD_RUNNING_WAIT_MS = 3_000;

/** How long `session/new` and `session/load` wait for the sandbox's mode before answering without it. */
const MODE_WAIT_MS = 1_500;

/** How long a session waits for a provider to declare a model before its first prompt is refused. */
const MODELS_WAIT_MS = 60_000;

/** The longest editor text of a file passed on (the event's own bound). */
const EDITOR_CONTENT_MAX_CHARS = 4 * 1024 * 1024;

/** What a client asked that tau refuses, with a message for the user (a JSON-RPC invalid-params error). */
export class AcpRefusal extends Error {
  override name = "AcpRefusal";
}

/** Asks the client about a sandbox request of the running turn; resolves with the choice, or undefined (no answer). */
export type AskPermission = (request: SandboxApprovalRequested, signal: AbortSignal) => Promise<SandboxDecision | undefined>;

interface Turn {
  readonly acp: AcpTurn;
  readonly send: (u: SessionUpdate) => void;
  readonly ask: AskPermission;
  readonly done: (e: TurnEnd) => void;
}

export class AcpSession {
  private turn: Turn | undefined;
  /** Sandbox requests asked of the client and not answered yet: withdrawn when resolved otherwise. */
  private readonly asking = new Map<string, AbortController>();
  /** The models the providers declared, the default one, and the agent's own when it chose one. */
  private available: readonly AvailableModel[] = [];
  private defaultModel: string | undefined;
  private agentModel: string | undefined;
  /** The sandbox's mode (SPEC-acp, "Modes"), once the shell extension said it; undefined: no modes offered. */
  private mode: SandboxMode | undefined;
  private modeSaid!: () => void;
  /** Resolves once the shell extension's state report said the mode. */
  private readonly modeKnown = new Promise<void>((resolve) => (this.modeSaid = resolve));
  /** Whether `session/new` or `session/load` answered: a mode said later is told as updates. */
  private answered = false;
  /** Asks the client about a sandbox request raised while none of this connection's prompts runs. */
  askPermission: AskPermission | undefined;
  /** Asks the client whether an MCP tool call may run; undefined: no answer. */
  askCallPermission: ((callId: string, title: string, signal: AbortSignal) => Promise<boolean | undefined>) | undefined;
  /** Told when the sandbox's mode became known after the session was opened. */
  onModeChanged: ((mode: string) => void) | undefined;
  /** Told when the session's configuration options change (the models arrived, the model changed). */
  onConfigChanged: ((options: SessionConfigOption[]) => void) | undefined;
  private readonly models: Promise<void>;
  /** Asks the client for its text of a file, when it offers that. */
  private readFile: ((path: string, line: number, limit: number) => Promise<{ content: string }>) | undefined;
  /** What the history replayed of the agent (`session/load`), until the replay completes. */
  private replayed: SessionUpdate[] | undefined = [];
  private replayDone!: () => void;
  /** Resolves once the subscription's replay of the history completed. */
  readonly history: Promise<readonly SessionUpdate[]>;

  private constructor(
    readonly id: string,
    readonly projectRoot: string,
    private readonly client: SessionClient,
    readonly agentId: string,
  ) {
    let ready!: () => void;
    this.models = new Promise<void>((resolve) => (ready = resolve));
    const replayDone = new Promise<void>((resolve) => (this.replayDone = resolve));
    this.history = replayDone.then(() => this.replayed ?? []);
    client.onDeliver((d) => {
      if (d.event.name === "harness.models_available" && d.event.data.models.length > 0) ready();
      this.noteModels(d);
      this.noteMode(d);
      this.deliver(d);
    });
    client.subscribe(["*"], ["*"], LOAD_REPLAY_RECORDS);
    void client.conn.closed.then(() => this.turn?.done({ failed: "the session's daemon went away" }));
  }

  /**
   * A new tau session in `cwd` (`session/new`), or saved session `resume` continued
   * (`session/load`), and its agent: the one a prompt would continue, else a new one.
   */
  static async open(roots: Roots, cwd: string, overrides: readonly string[], resume?: string, mcpServers: readonly McpServer[] = []): Promise<AcpSession> {
    if (!isAbsolute(cwd) || !isDirectory(cwd)) throw new AcpRefusal(`cwd must be an absolute path of a folder: ${JSON.stringify(cwd.slice(0, 200))}`);
    let sessionId: string | undefined;
    let agentId: string | undefined;
    if (resume !== undefined) {
      try {
        sessionId = resolveSavedSession(roots.state, resume);
      } catch (err) {
        throw new AcpRefusal((err as Error).message);
      }
      // The daemon of a connection that just closed may still be closing its journals: a session
      // found running is given a moment to stop (as `tau run --continue` gives it) before it is refused.
      let saved = describeSession(roots.state, sessionId);
      for (const until = Date.now() + LOAD_RUNNING_WAIT_MS; saved.running_pid !== undefined && Date.now() < until; ) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        saved = describeSession(roots.state, sessionId);
      }
      if (saved.running_pid !== undefined) throw new AcpRefusal(`session ${sessionId} is running (pid ${saved.running_pid}); end it first`);
      agentId = agentToContinue(roots.state, saved.agents);
    }
    const servers = clientServers(mcpServers);
    // The client's servers reach the daemon in a file only the user may read, never in its command
    // line (their env values and headers can be secrets); the daemon reads it once and removes it.
    let file: string | undefined;
    if (Object.keys(servers).length > 0) {
      mkdirSync(roots.runtime, { recursive: true, mode: 0o700 });
      file = join(roots.runtime, `acp-mcp-${process.pid}-${randomHex(6)}.json`);
      writeFileSync(file, JSON.stringify({ mcp_servers: servers }), { mode: 0o600, flag: "wx" });
    }
    let daemon;
    try {
      const started = startOwnedDaemon(roots, { overrides, projectRoot: cwd, ...(sessionId !== undefined ? { resume: sessionId } : {}), ...(file !== undefined ? { mcpServersFile: file } : {}) });
      daemon = await waitForDaemon(started);
    } finally {
      if (file !== undefined) rmSync(file, { force: true });
    }
    const client = await SessionClient.attach(daemon.socket, daemon.session_id);
    agentId ??= (await client.request("ui.create_agent", {})).agent_id;
    const s = new AcpSession(daemon.session_id, cwd, client, agentId);
    // The answer holds the modes when the shell extension says its mode soon (with its policy,
    // before its runtime is up); else they follow in updates.
    await Promise.race([s.modeKnown, new Promise((resolve) => setTimeout(resolve, MODE_WAIT_MS).unref())]);
    s.answered = true;
    return s;
  }

  /**
   * The sandbox's mode, as the shell extension's state reports say it (a snapshot: the replay
   * brings the current one). After the answer, a change — another UI's `:sandbox mode` — is told as
   * updates.
   */
  private noteMode(d: Delivery): void {
    if (d.event.name !== "sandbox.state_reported" || d.event.data.mode === undefined) return;
    const changed = this.mode !== d.event.data.mode;
    this.mode = d.event.data.mode;
    this.modeSaid();
    if (!changed || !this.answered) return;
    this.onConfigChanged?.(this.configOptions());
    this.onModeChanged?.(this.mode);
  }

  /** The session's modes (SPEC-acp, "Modes"): the sandbox's, when it said which is in force. */
  modes(): SessionModeState | undefined {
    if (this.mode === undefined) return undefined;
    return { currentModeId: this.mode, availableModes: MODES.map((m) => ({ ...m })) };
  }

  /** `session/set_mode` (or the `mode` option): the sandbox's mode for the rest of the session. */
  async setMode(value: string): Promise<void> {
    const mode = MODES.find((m) => m.id === value)?.id;
    if (mode === undefined || this.mode === undefined) throw new AcpRefusal(`tau's modes are ${MODES.map((m) => m.id).join(" and ")}${this.mode === undefined ? ", and this session's sandbox did not say its mode" : ""}`);
    try {
      await this.client.request("sandbox.command_request", { args: ["mode", mode] });
    } catch (err) {
      throw new AcpRefusal(`the sandbox did not change its mode: ${(err as Error).message}`);
    }
    this.mode = mode;
  }

  /**
   * Runs one prompt to its end, sending its updates as they come and asking the client about each
   * sandbox request of this agent meanwhile; one turn at a time.
   */
  async prompt(text: string, send: (u: SessionUpdate) => void, ask: AskPermission): Promise<TurnEnd> {
    if (this.turn !== undefined) throw new AcpRefusal("a prompt of this session is still running; cancel it first (session/cancel)");
    const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), MODELS_WAIT_MS).unref());
    if ((await Promise.race([this.models, timer])) === "timeout") return { failed: "no provider declared a model in time, so the prompt was not sent" };
    const ended = new Promise<TurnEnd>((resolve) => {
      this.turn = { acp: new AcpTurn(this.agentId, text, this.projectRoot), send, ask, done: resolve };
    });
    this.client.emit("ui.prompt_submit", { agent_id: this.agentId, mode: "queue", text });
    try {
      return await ended;
    } finally {
      this.turn = undefined;
    }
  }

  /**
   * The session's configuration options (SPEC-acp, "Models"): `model`, a choice among the models
   * the providers declared (`PROVIDER/MODEL`), once they declared any.
   */
  configOptions(): SessionConfigOption[] {
    if (this.available.length === 0) return [];
    // The mode option goes with the model's: an editor shows the options it was given last.
    const options = this.available.map((m) => ({ value: `${m.provider}/${m.id}`, name: m.id, description: `from ${m.provider}` }));
    const wanted = this.agentModel ?? this.defaultModel;
    const current = options.find((o) => o.value === wanted || o.name === wanted) ?? options[0];
    const mode: SessionConfigOption[] =
      this.mode === undefined ? [] : [{ id: "mode", name: "Mode", category: "mode", type: "select", currentValue: this.mode, options: MODES.map((m) => ({ value: m.id, name: m.name, description: m.description })) }];
    return [{ id: "model", name: "Model", category: "model", type: "select", currentValue: (current as { value: string }).value, options }, ...mode];
  }

  /** `session/set_config_option` for `model`: the agent's model from now on; refused for a model no provider declared. */
  setModel(value: string): SessionConfigOption[] {
    if (!this.available.some((m) => `${m.provider}/${m.id}` === value)) throw new AcpRefusal(`no provider declared the model ${JSON.stringify(value.slice(0, 200))}; the model option lists them`);
    this.client.emit("ui.model_select", { agent_id: this.agentId, model: value });
    this.agentModel = value;
    return this.configOptions();
  }

  /** Follows the models on offer and the agent's own choice. */
  private noteModels(d: Delivery): void {
    const e = d.event;
    let changed = false;
    if (e.name === "harness.models_available") {
      this.available = e.data.models.slice(0, 256);
      this.defaultModel = e.data.default_model;
      changed = true;
    } else if ((e.name === "agent.model_set" || (e.name === "agent.started" && e.data.model !== undefined)) && e.data.agent_id === this.agentId) {
      changed = this.agentModel !== e.data.model;
      this.agentModel = e.data.model;
    }
    if (changed && d.replay !== true) this.onConfigChanged?.(this.configOptions());
  }

  /** `session/cancel`: the running prompt is cancelled; it ends with stop reason `cancelled`. */
  cancel(): void {
    if (this.turn !== undefined) this.client.emit("agent.cancel_request", { agent_id: this.agentId });
  }

  /**
   * The client reads files for tau (SPEC-acp, "The editor's files"): the daemon is told, and each
   * `editor.read_request` is asked of the client; an answer over EDITOR_CONTENT_MAX_CHARS, or an
   * error, is answered as none (the tool then reads the disk).
   */
  offerEditorFiles(read: (path: string, line: number, limit: number) => Promise<{ content: string }>): void {
    this.readFile = read;
    this.client.emit("editor.files_offered", { read: true });
  }

  private answerRead(request: EditorReadRequest): void {
    const read = this.readFile;
    if (read === undefined) return;
    void read(request.path, request.line, request.limit).then(
      ({ content }) =>
        this.client.emit("editor.read_result", content.length > EDITOR_CONTENT_MAX_CHARS ? { request_id: request.request_id, error: "the editor's text is over 4 MiB" } : { request_id: request.request_id, content }),
      (err: unknown) => this.client.emit("editor.read_result", { request_id: request.request_id, error: String((err as Error).message ?? err).slice(0, 1000) }),
    );
  }

  /** Leaves the session: its daemon ends once no other UI is attached. */
  close(): void {
    this.client.close();
  }

  private deliver(d: Delivery): void {
    if (d.event.name === "session.replay_complete") {
      this.replayDone();
      return;
    }
    if (d.replay === true) {
      this.replayed?.push(...replayedUpdates(d, this.agentId, this.projectRoot));
      return;
    }
    const e = d.event;
    if (e.name === "editor.read_request") return this.answerRead(e.data);
    // tau's question before an MCP server's tool runs (its entry's `ask`) is a permission like the sandbox's.
    if (e.name === "mcp.elicitation_requested" && e.data.purpose === "approval") return this.askCall(e.data, d.publisher.instance ?? "");
    if (e.name === "mcp.elicitation_resolved") return this.asking.get(e.data.elicitation_id)?.abort();
    if (e.name === "sandbox.approval_resolved") return this.asking.get(e.data.approval_id)?.abort();
    // Asked whenever the session's agent is named, as every attached UI is: a turn another UI (or
    // another agent) started needs an answer too.
    if (e.name === "sandbox.approval_requested" && (e.data.agent_id === this.agentId || (e.data.other_calls ?? []).some((c) => c.agent_id === this.agentId))) {
      const ask = this.turn?.ask ?? this.askPermission;
      if (ask !== undefined) this.askClient(ask, e.data);
      return;
    }
    const turn = this.turn;
    if (turn === undefined) return;
    for (const u of turn.acp.updates(d)) turn.send(u);
    const end = turn.acp.end(d);
    if (end !== undefined) turn.done(end);
  }

  /** An MCP call's question to the client (SPEC-acp, "Approvals"): allow once, or refuse. */
  private askCall(request: McpElicitationRequested, instance: string): void {
    const ask = this.askCallPermission;
    if (ask === undefined) return;
    this.relay(
      request.elicitation_id,
      (signal) => ask(request.call_id ?? request.elicitation_id, `${instance.replace(/^mcp-/, "mcp server ")}: ${request.message}`, signal),
      (allowed) => this.client.emit("mcp.elicitation_answer", { elicitation_id: request.elicitation_id, action: allowed ? "accept" : "decline" }),
    );
  }

  /** One sandbox request to the client; its choice answers it, unless it was resolved meanwhile. */
  private askClient(ask: AskPermission, request: SandboxApprovalRequested): void {
    this.relay(
      request.approval_id,
      (signal) => ask(request, signal),
      (decision) => this.client.emit("sandbox.approval_answer", { approval_id: request.approval_id, decision }),
    );
  }

  /**
   * A question of the session (`id`) asked of the client: withdrawn (its signal aborted) when it
   * is resolved elsewhere first; the client's answer, if any, is passed on unless it was withdrawn.
   */
  private relay<A>(id: string, ask: (signal: AbortSignal) => Promise<A | undefined>, answer: (a: A) => void): void {
    const withdrawn = new AbortController();
    this.asking.set(id, withdrawn);
    void ask(withdrawn.signal)
      .catch(() => undefined)
      .then((a) => {
        this.asking.delete(id);
        if (a !== undefined && !withdrawn.signal.aborted) answer(a);
      });
  }
}

/** tau's modes for an editor: whether the sandbox asks about what its policy does not allow (SPEC-acp, "Modes"). */
const MODES: ReadonlyArray<{ id: SandboxMode; name: string; description: string }> = [
  { id: "interactive", name: "Ask", description: "the sandbox asks you about a connection or a write its policy does not allow" },
  { id: "non-interactive", name: "Never ask", description: "the sandbox refuses what its policy does not allow at once, and tells the model why" },
];

/**
 * The client's MCP servers as tau's entries (SPEC-acp, "MCP servers"): stdio and Streamable HTTP,
 * names rewritten to tau's rule; one over SSE, or with a name that cannot be rewritten, is refused.
 */
export function clientServers(servers: readonly McpServer[]): Record<string, McpServerConfig> {
  const out: Record<string, McpServerConfig> = {};
  for (const s of servers) {
    const name = importedName(s.name);
    if (name === undefined) throw new AcpRefusal(`the MCP server name ${JSON.stringify(s.name.slice(0, 64))} cannot be made a tau server name (lowercase letters, digits and _)`);
    if (out[name] !== undefined) throw new AcpRefusal(`two MCP servers are named ${name}`);
    if ("type" in s && s.type === "sse") throw new AcpRefusal(`the MCP server ${s.name} uses SSE, which tau does not speak; give its Streamable HTTP endpoint`);
    if ("url" in s) out[name] = { url: s.url, ...(s.headers.length > 0 ? { headers: Object.fromEntries(s.headers.map((h) => [h.name, h.value])) } : {}) };
    else out[name] = { command: s.command, ...(s.args.length > 0 ? { args: [...s.args] } : {}), ...(s.env.length > 0 ? { env: Object.fromEntries(s.env.map((e) => [e.name, e.value])) } : {}) };
  }
  return out;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
