// The extension SDK: what a tau extension (first-party or a user's) is written with. It speaks the
// protocol over stdio: hello → configure → declarations and subscriptions → ready, then typed
// emits, deliveries and tool calls (SPEC-extension-supervision, SPEC-tool-routing).
import { mark, markStart } from "../startup/timeline.js";
import type { Readable, Writable } from "node:stream";
import {
  EXTENSION_SETTINGS,
  REQUESTS,
  type ConfigureMessage,
  type ExtensionSettings,
  type EventName,
  type EventPayloads,
  type RequestParams,
  type RequestPayloads,
  type RequestResults,
  type WireMessage,
} from "../../generated/index.js";
import {
  ProviderCallAssembler,
  REVISION,
  answerEvent,
  carriedEvent,
  notify,
  request,
  requestKind,
  type AnsweredRequestName,
  type Event,
  type EventRequestName,
  type ProviderCall,
  type RequestChannel,
  type RequestOptions,
} from "../protocol/index.js";
import { Connection, type SendAsyncResult } from "../transport/index.js";

export type Configuration = ConfigureMessage["payload"];

/** A delivered event (narrowing on `name` narrows `data`), with its position and whether it is replayed. */
export type DeliveredEvent<N extends EventName = EventName> = Event<N> & {
  readonly seq: number;
  readonly replay: boolean;
};

export interface ToolContext {
  readonly callId: string;
  readonly agentId: string;
  readonly signal: AbortSignal;
  progress(text: string): void;
}

export interface ToolResult {
  readonly output: string;
  readonly display?: { title?: string; diff?: string; summary?: string };
  /** The tool ran but failed (a non-zero exit): the output still reaches the model; the outcome is `error`. */
  readonly failed?: boolean;
}

export interface ToolDefinition {
  /** The unprefixed name; the harness applies this instance's tool prefix. */
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  /**
   * What a role's policy matches besides the name (SPEC-tool-routing, "Tool policy by role"): the
   * tool's group (`shell`, `read`, `write`, …) and tags (`filesystem`, `writes`, `exec`, `network`, …).
   */
  readonly group?: string;
  readonly tags?: readonly string[];
  run(args: unknown, ctx: ToolContext): Promise<ToolResult>;
}

/**
 * A colon command this extension owns (SPEC-extension-commands): `:NAME ARGS` typed in an attached
 * interface reaches `run` here, and only here, raw; its answer is what the interface shows.
 * `sensitive`: the arguments are secrets, kept out of the echo and prompt history.
 */
export interface CommandDefinition {
  readonly name: string;
  readonly usage: string;
  readonly summary: string;
  readonly sensitive?: boolean;
  run(args: readonly string[]): Promise<CommandAnswer> | CommandAnswer;
}

export interface CommandAnswer {
  readonly level: "info" | "warning" | "error";
  readonly text: string;
}

/** Longest answer text a command may show (the wire's ShortText). */
const COMMAND_ANSWER_MAX_CHARS = 1024;

/** An interceptor's answer (SPEC-event-publication, "Interception"): protected events always pass. */
export type InterceptVerdict = { readonly action: "pass" } | { readonly action: "drop" } | { readonly action: "replace"; readonly data: Record<string, unknown> };

/** What an interceptor is asked about: the event before it commits, and who published it. */
export interface InterceptedEvent {
  readonly name: EventName;
  readonly data: Record<string, unknown>;
  readonly publisher: { readonly class: string; readonly generation?: number; readonly instance?: string };
}

/** What is wrong with a setting, as `config_error` says it: the setting's dotted path and what its schema wants. */
export function settingProblem(err: { instancePath: string; keyword: string; message?: string; params?: Record<string, unknown> } | undefined): string {
  const key = (err?.instancePath ?? "").split("/").filter(Boolean).join(".");
  const allowed = err?.keyword === "enum" && Array.isArray(err.params?.allowedValues) ? ` (${err.params.allowedValues.join(", ")})` : "";
  const what = err === undefined ? "invalid" : err.keyword === "not" || err.keyword === "unevaluatedProperties" ? "is not a setting of this extension" : `${err.message ?? "is invalid"}${allowed}`;
  return key === "" ? `settings: ${what}` : `setting ${key}: ${what}`;
}

/** A tool failure whose message is meant for the model and the user. */
export class ToolFailure extends Error {
  override name = "ToolFailure";
}

/** What `declareDiscoverySnapshot` contributes: AGENTS.md files (with their content) and skills (with their SKILL.md path). */
export interface DiscoverySnapshot {
  readonly agentsMd?: ReadonlyArray<{ readonly path: string; readonly text: string }>;
  readonly skills?: ReadonlyArray<{ readonly name: string; readonly description: string; readonly path: string }>;
}

/** A discovery snapshot as the wire carries it: one item per AGENTS.md file and skill. */
function discoveryItems(snapshot: DiscoverySnapshot): EventPayloads["extension.discovery_snapshot_declared"]["items"] {
  return [
    ...(snapshot.agentsMd ?? []).map((f) => ({ kind: "agents_md" as const, path: f.path, text: f.text })),
    ...(snapshot.skills ?? []).map((s) => ({ kind: "skill" as const, path: s.path, name: s.name, description: s.description })),
  ];
}

/** One agent's initialization, as `onAgentInitializing` hands it over. */
export interface AgentInitialization {
  readonly agentId: string;
  readonly sessionId: string;
  readonly initializationId: string;
  /** Whether this extension holds it (it declared `hold` before the agent began initializing). */
  readonly holding: boolean;
  /** Declares (or, with null, withdraws) keyed context for this agent while its initialization is pending. */
  context(key: string, text: string | null): Promise<SendAsyncResult>;
  /** AGENTS.md files and skills for this agent alone (complete: replaces this extension's earlier ones for it). */
  discovery(snapshot: DiscoverySnapshot): Promise<SendAsyncResult>;
  /** This extension is ready for this agent: releases it once no other holder is left. */
  ready(): Promise<SendAsyncResult>;
}

/** The session's initialization in this process, as `onSessionInitializing` hands it over. */
export interface SessionInitialization {
  readonly sessionId: string;
  readonly initializationId: string;
  /** Whether this extension holds it (it declared `hold` before the session began). */
  readonly holding: boolean;
  /** This extension is ready for the session: releases it once no other holder is left. */
  ready(): Promise<SendAsyncResult>;
}

export interface ExtensionIo {
  readonly input: Readable;
  readonly output: Writable;
}

/**
 * Sends that may wait for room while the harness is busy (beyond the connection's own 1,024 queued
 * frames): a provider streaming a long answer through a slow moment waits rather than loses a
 * report; past this many the extension gives up its connection loudly.
 */
export const SDK_MAX_WAITING_SENDS = 65_536;

/** Longest time the cleanups registered with `onHarnessGone` get before the process leaves. */
export const HARNESS_GONE_CLEANUP_MAX_MS = 2_000;

/** The signals that ask an extension to stop, once it has cleanups to run first (numbers: Linux and macOS). */
const STOP_SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;
type StopSignal = keyof typeof STOP_SIGNALS;

type Cleanup = () => void | Promise<void>;

/**
 * How an extension leaves when its harness goes away: its cleanups run (in order, at most
 * HARNESS_GONE_CLEANUP_MAX_MS in all), then a process on stdio exits 0 — or, when a stop signal was
 * the cause, dies of that signal as it would have without cleanups.
 */
class Departure {
  private readonly cleanups: Cleanup[] = [];
  private leaving: Promise<void> | undefined;
  private watchingSignals = false;

  constructor(private readonly ownsProcess: boolean) {}

  add(cleanup: Cleanup): void {
    this.cleanups.push(cleanup);
    if (!this.ownsProcess || this.watchingSignals) return;
    this.watchingSignals = true;
    // `once`: a second signal of the same kind finds no listener and stops the process at once.
    for (const signal of Object.keys(STOP_SIGNALS) as StopSignal[]) process.once(signal, () => void this.leave(signal));
  }

  leave(signal?: StopSignal): Promise<void> {
    this.leaving ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const cleanups = (async () => {
        for (const cleanup of this.cleanups) await Promise.resolve().then(cleanup).catch(() => {});
      })();
      await Promise.race([cleanups, new Promise<void>((resolve) => (timer = setTimeout(resolve, HARNESS_GONE_CLEANUP_MAX_MS)))]);
      clearTimeout(timer);
      if (!this.ownsProcess) return;
      if (signal !== undefined) process.kill(process.pid, signal); // its listener is gone: the default action
      process.exit(signal === undefined ? 0 : 128 + STOP_SIGNALS[signal]);
    })();
    return this.leaving;
  }
}

export class Extension {
  private readonly tools = new Map<string, ToolDefinition>();
  /** Calls under way, by call id. A call and its cancel both come directed, the call first. */
  private readonly running = new Map<string, AbortController>();
  private readonly handlers = new Map<string, Array<(e: DeliveredEvent) => void>>();
  private readonly commands = new Map<string, CommandDefinition>();
  private readonly directHandlers = new Map<string, (data: Record<string, unknown>) => void>();
  private interceptor: ((e: InterceptedEvent) => InterceptVerdict | Promise<InterceptVerdict>) | undefined;
  private requests: { assembler: ProviderCallAssembler; handler: (call: ProviderCall) => void } | undefined;

  private constructor(
    readonly conn: Connection,
    readonly configuration: Configuration,
    private readonly departure: Departure,
  ) {
    conn.onMessage((m) => this.dispatch(m));
    // The harness never sends an unreadable frame; if it did, say so rather than lose it quietly.
    conn.onInvalid((err) => process.stderr.write(`tau extension ${configuration.instance}: an unreadable message from the harness (${err.message})\n`));
  }

  /** Says hello and waits for `configure`; the process exits when the harness goes away (see onHarnessGone). */
  static async connect(io?: ExtensionIo): Promise<Extension> {
    const stdio = io === undefined;
    markStart(`ext ${process.argv[3] ?? ""}`);
    const { input, output } = io ?? { input: process.stdin, output: process.stdout };
    const conn = new Connection({ readable: input, writable: output }, { side: "peer", maxSendWaiters: SDK_MAX_WAITING_SENDS });
    // An extension on stdio lives exactly as long as its harness: when the pipe ends (the harness
    // exited or was killed, SIGKILL included: the kernel closes its end) or the harness sends
    // `disconnect`, it runs its cleanups and exits.
    const departure = new Departure(stdio);
    void conn.closed.then(() => departure.leave());
    const configure = new Promise<Configuration>((resolve, reject) => {
      const off = conn.onMessage((m) => {
        if (m.message === "configure") {
          off();
          resolve(m.payload);
        } else if (m.message === "error" || m.message === "disconnect") {
          off();
          reject(new Error(`the harness refused this extension: ${m.message === "error" ? m.payload.code : (m.payload.reason ?? "disconnected")}`));
        }
      });
      void conn.closed.then(() => reject(new Error("the harness closed the connection before configure")));
    });
    conn.send({ message: "hello", payload: { revision: { ...REVISION }, role: "extension" } });
    const ext = new Extension(conn, await configure, departure);
    mark("ext configured");
    return ext;
  }

  /**
   * Runs `cleanup` before this process leaves because its harness went away: the connection ended
   * (the harness exited, was killed or sent `disconnect`) or, on stdio, SIGTERM, SIGINT or SIGHUP
   * arrived — those are then handled here, so cleanups run first; the same signal again stops the
   * process at once. Cleanups run in order, at most HARNESS_GONE_CLEANUP_MAX_MS in all.
   */
  onHarnessGone(cleanup: () => void | Promise<void>): void {
    this.departure.add(cleanup);
  }

  get instance(): string {
    return this.configuration.instance;
  }

  get config(): Record<string, unknown> {
    return this.configuration.config;
  }

  /**
   * The settings (`config`) of first-party extension `name`, checked against their schema in spec/
   * (`x-tau-settings`); undefined — after a `config_error` naming the setting — when they do not hold.
   */
  settings<N extends keyof ExtensionSettings>(name: N): ExtensionSettings[N] | undefined {
    const validate = EXTENSION_SETTINGS[name];
    if (validate(this.config)) return this.config as ExtensionSettings[N];
    this.configError(settingProblem(validate.errors?.[0]));
    return undefined;
  }

  /** Declares a tool (before or after ready) and serves its calls. */
  registerTool(tool: ToolDefinition): void {
    this.tools.set(tool.name, tool);
    const labels = { ...(tool.group !== undefined ? { group: tool.group } : {}), ...(tool.tags !== undefined ? { tags: [...tool.tags] } : {}) };
    this.emit("tool.registration_declared", { name: tool.name, description: tool.description, parameters: tool.parameters, ...labels });
  }

  /** Declares a colon command this instance owns (before or after ready) and answers its runs. */
  registerCommand(command: CommandDefinition): void {
    this.commands.set(command.name, command);
    void notify(this.channel, REQUESTS.extension_command_declare, { name: command.name, usage: command.usage, summary: command.summary, ...(command.sensitive === true ? { sensitive: true } : {}) });
  }

  /** Withdraws a tool: agents' next prompts no longer offer it, and a prompt that did fails its calls. */
  unregisterTool(name: string): void {
    if (!this.tools.delete(name)) return;
    this.emit("tool.unregistration_declared", { name });
  }

  /**
   * Declares prompt fragment `key` (before or after ready): `text` is rendered into the system
   * prompt of every agent initialized after the harness took it in (SPEC-extension-declarations);
   * agents already initialized keep what they had. Declaring the key again replaces it. At most 16
   * fragments and 32 KiB of text per instance; the fragments leave when this process does.
   */
  declarePromptFragment(key: string, text: string): Promise<SendAsyncResult> {
    return this.emit("extension.prompt_fragment_declared", { key, text });
  }

  /**
   * Replaces, whole, the AGENTS.md files and skills this extension contributes to the discovery of
   * agents that initialize from now on (SPEC-extension-declarations, "Discovery snapshots"): an
   * AGENTS.md carries its content; a skill names its SKILL.md file, read when the skill is loaded.
   * At most 256 items and 1 MiB of text; an invalid item is reported and left out, the rest taken.
   */
  declareDiscoverySnapshot(snapshot: DiscoverySnapshot): Promise<SendAsyncResult> {
    return this.emit("extension.discovery_snapshot_declared", { items: discoveryItems(snapshot) });
  }

  /** Withdraws prompt fragment `key`: agents initialized from now on no longer get it. */
  withdrawPromptFragment(key: string): Promise<SendAsyncResult> {
    return this.emit("extension.prompt_fragment_declared", { key, text: null });
  }

  /**
   * Called as each agent begins initializing (SPEC-extension-declarations, "Per-agent keyed context
   * and readiness"). With `hold: true` this extension holds every agent that begins initializing
   * from now on: the agent's prompts wait, with no deadline, until `init.ready()` (or until this
   * process exits) — call it once whatever happens. While the initialization is pending,
   * `init.context(key, text)` adds keyed context to that agent's system prompt (16 keys and 32 KiB
   * per agent; `null` withdraws a key); the agent keeps it for as long as it lives in this process.
   */
  onAgentInitializing(handler: (init: AgentInitialization) => void, options: { hold?: boolean } = {}): void {
    this.subscribe([], ["agent.initialization_started"]);
    if (options.hold === true) void this.emit("agent.readiness_wait_declared", { wait: true });
    this.on("agent.initialization_started", (e) => {
      if (e.replay) return;
      const { agent_id: agentId, session_id: sessionId, initialization_id: initializationId } = e.data;
      const ids = { session_id: sessionId, agent_id: agentId, initialization_id: initializationId };
      handler({
        agentId,
        sessionId,
        initializationId,
        holding: e.data.waiting_for.includes(this.instance),
        context: (key, text) => this.emit("agent.context_declared", { ...ids, key, text }),
        discovery: (snapshot) => this.emit("agent.discovery_snapshot_declared", { ...ids, items: discoveryItems(snapshot) }),
        ready: () => this.emit("agent.readiness_declared", ids),
      });
    });
  }

  /**
   * Called once, as the session begins in this process (SPEC-extension-declarations, "Session
   * readiness"): after the daemon's first extensions started. Call it before `ready()`: an
   * extension that starts later (or calls it later) is not told and holds nothing. With
   * `hold: true` this extension holds it: no agent of the session finishes
   * initializing — their prompts wait, with no deadline — until `init.ready()` or until this
   * process exits. Declare what agents should take first (a discovery snapshot, fragments), then
   * call `init.ready()` once whatever happens. Holding agents (`onAgentInitializing`) is separate:
   * neither readiness releases the other.
   */
  onSessionInitializing(handler: (init: SessionInitialization) => void, options: { hold?: boolean } = {}): void {
    this.subscribe([], ["session.initialization_started"]);
    if (options.hold === true) void this.emit("session.readiness_wait_declared", { wait: true });
    let seen: string | undefined;
    this.on("session.initialization_started", (e) => {
      const { session_id: sessionId, initialization_id: initializationId } = e.data;
      if (seen === initializationId) return;
      seen = initializationId;
      const holding = e.data.waiting_for.includes(this.instance);
      handler({ sessionId, initializationId, holding, ready: () => this.emit("session.readiness_declared", { session_id: sessionId, initialization_id: initializationId }) });
    });
  }

  /**
   * Starts an agent in this session (SPEC-extension-declarations, "Start-agent requests"): of a
   * role of harness.yaml, a child of a loaded agent, with a display name. Resolves with its id, or
   * rejects with the harness's reason (a RequestError).
   */
  async startAgent(o: { role?: string; parentId?: string; displayName?: string } = {}): Promise<string> {
    const result = await this.request("agent.start_request", {
      session_id: this.configuration.session_id,
      ...(o.role !== undefined ? { role: o.role } : {}),
      ...(o.parentId !== undefined ? { parent_id: o.parentId } : {}),
      ...(o.displayName !== undefined ? { display_name: o.displayName } : {}),
    });
    return result.agent_id;
  }

  /** Stops holding agents that begin initializing from now on (those held already still wait for `ready`). */
  stopHoldingAgents(): Promise<SendAsyncResult> {
    return this.emit("agent.readiness_wait_declared", { wait: false });
  }

  /**
   * Intercepts events matching `selectors` before they commit: `handler` answers at once or with a
   * promise (the harness passes an event whose answer takes longer than 5 s, and asks this
   * extension nothing more until that late answer came). One interceptor per extension; a handler
   * that throws or rejects passes the event.
   */
  intercept(selectors: string[], priority: number, handler: (e: InterceptedEvent) => InterceptVerdict | Promise<InterceptVerdict>): void {
    this.interceptor = handler;
    void this.post({ message: "intercept", payload: { selectors, priority } });
  }

  subscribe(historical: string[], live: string[]): void {
    void this.post({ message: "subscribe", payload: { historical, live } });
  }

  on<N extends EventName>(name: N, handler: (e: DeliveredEvent<N>) => void): void {
    const list = this.handlers.get(name) ?? [];
    list.push(handler as (e: DeliveredEvent) => void);
    this.handlers.set(name, list);
  }

  /** Handles a directed event (sent to this connection only, never published). */
  onDirect<N extends EventName>(name: N, handler: (data: EventPayloads[N]) => void): void {
    this.directHandlers.set(name, handler as (data: Record<string, unknown>) => void);
  }

  /**
   * Handles whole prompt rounds (a provider): the SDK reassembles each `provider.request` head and
   * its parts, in order, and calls `handler` once with the whole call; a cancelled round still being
   * assembled is dropped.
   */
  onProviderRequest(handler: (call: ProviderCall) => void): void {
    this.requests = { assembler: new ProviderCallAssembler(), handler };
  }

  /**
   * Publishes an event. Sends wait, in order, for room on the connection instead of dropping
   * anything (a busy harness slows the extension down); the result says whether it was queued. An
   * emit that can never be sent (over the frame cap) or that finds too many sends already waiting
   * is reported on stderr; the latter also ends the connection, since the harness is no longer
   * reading, so it sees this extension exit rather than lose a report silently.
   */
  emit<N extends EventName>(name: N, data: EventPayloads[N]): Promise<SendAsyncResult> {
    return this.post({ message: "emit", payload: { event: { name, data } } }, name);
  }

  ready(): void {
    // Tool calls reach their owner as directed `tool.call`s, each before any cancellation of it.
    void this.post({ message: "ready", payload: {} });
    mark("ext ready");
  }

  configError(text: string): void {
    void this.post({ message: "config_error", payload: { text } });
  }

  notice(level: "info" | "warning" | "error", text: string): void {
    void notify(this.channel, REQUESTS.extension_notice_request, { level, text });
  }

  /**
   * Sends request `name` as spec/ declares it (`REQUESTS`, protocol/requests.ts) and resolves with
   * its answer, or rejects with a RequestError (refused, or the harness went away first).
   */
  request<N extends AnsweredRequestName>(name: N, params: RequestParams[N], options?: RequestOptions): Promise<RequestResults[N]> {
    return request(this.channel, requestKind(name), params, options);
  }

  /**
   * Answers event request `name` (one a UI publishes, such as `handoff.command_request`): each live
   * delivery is handed to `handler`, and its result — or, when it throws, the declared refusal with
   * the error's message — is published once, under the request's id.
   */
  serve<N extends EventRequestName>(name: N, handler: (request: RequestPayloads[N]) => RequestResults[N] | Promise<RequestResults[N]>): void {
    this.subscribe([], [name]);
    this.on(name, (e) => {
      if (!e.replay) void answerEvent(name, e.data, handler, (result, data) => void this.emit(result, data));
    });
  }

  /** What requests travel on: every send through the one FIFO. */
  private readonly channel: RequestChannel = {
    send: (m) => this.post(m),
    onMessage: (listener) => this.conn.onMessage(listener),
    onClose: (listener) => this.conn.onClose(listener),
  };

  /** Every message to the harness goes through here: one FIFO with backpressure, never a silent drop. */
  private async post(message: WireMessage, what: string = message.message): Promise<SendAsyncResult> {
    const result = await this.conn.sendAsync(message);
    if (result === "queued" || result === "closed") return result;
    process.stderr.write(`tau extension ${this.instance}: could not send ${what} (${result === "oversize" ? "larger than one frame" : "the harness is not reading"})\n`);
    if (result === "full") this.conn.close("could not keep up with its own messages");
    return result;
  }

  private dispatch(m: WireMessage): void {
    if (m.message === "deliver") {
      const e: DeliveredEvent = { ...carriedEvent(m.payload.event), seq: m.payload.seq, replay: m.payload.replay === true };
      for (const h of this.handlers.get(e.name) ?? []) h(e);
    } else if (m.message === "direct") {
      const e = carriedEvent(m.payload.event);
      if (this.requests && this.takeRequestPiece(e)) return; // a head or part of a prompt round
      if (e.name === "tool.call") this.startTool(e.data);
      else if (e.name === "tool.cancel_request") this.running.get(e.data.call_id)?.abort(); // a call not running has ended
      else this.directHandlers.get(e.name)?.(e.data);
    } else if (m.message === "intercept_request") {
      this.answerIntercept(m.payload);
    } else if (m.message === "extension_command_invoke") {
      void this.runCommand(m.payload.invoke_id, m.payload.name, m.payload.args);
    } else if (m.message === "disconnect") {
      this.conn.close("harness disconnected");
    }
  }

  /** Runs a command the harness routed here and sends its answer (an error's message when it throws). */
  private async runCommand(invokeId: string, name: string, args: readonly string[]): Promise<void> {
    const command = this.commands.get(name);
    let answer: CommandAnswer;
    try {
      answer = command === undefined ? { level: "error", text: `this extension has no command :${name}` } : await command.run(args);
    } catch (err) {
      answer = { level: "error", text: err instanceof Error ? err.message : String(err) };
    }
    const text = answer.text.length > COMMAND_ANSWER_MAX_CHARS ? `${answer.text.slice(0, COMMAND_ANSWER_MAX_CHARS - 1)}…` : answer.text;
    void notify(this.channel, REQUESTS.extension_command_result, { invoke_id: invokeId, level: answer.level, text });
  }

  /** Answers an interceptor's request: pass, drop or replace, at once or when its promise settles. */
  private answerIntercept({ id, event, publisher }: Extract<WireMessage, { message: "intercept_request" }>["payload"]): void {
    const reply = (verdict: InterceptVerdict): void => {
      const payload =
        verdict.action === "replace" ? { id, action: "replace" as const, replacement: { name: event.name, data: verdict.data } } : { id, action: verdict.action };
      void this.post({ message: "intercept_reply", payload });
    };
    let verdict: InterceptVerdict | Promise<InterceptVerdict> = { action: "pass" };
    try {
      if (this.interceptor) verdict = this.interceptor({ name: event.name as EventName, data: event.data, publisher: publisher as InterceptedEvent["publisher"] });
    } catch {
      verdict = { action: "pass" };
    }
    if (verdict instanceof Promise) verdict.then(reply, () => reply({ action: "pass" }));
    else reply(verdict);
  }

  /** Feeds the request assembler; true when the directed event was a head or part of a round. */
  private takeRequestPiece(e: Event): boolean {
    const r = this.requests as NonNullable<Extension["requests"]>;
    if (e.name === "provider.request") {
      r.assembler.head(e.data);
      return true;
    }
    if (e.name === "provider.cancel_request") {
      r.assembler.drop(e.data.prompt_id, e.data.round);
      return false; // the provider's own cancel handler runs too
    }
    if (e.name !== "provider.request_part") return false;
    const part = e.data;
    let call: ProviderCall | undefined;
    try {
      call = r.assembler.part(part);
    } catch (err) {
      void this.emit("provider.response_failed_reported", { prompt_id: part.prompt_id, round: part.round, error_class: "protocol", diagnostic: (err as Error).message.slice(0, 1024) });
      return true;
    }
    if (call) r.handler(call);
    return true;
  }

  private startTool(call: EventPayloads["tool.call"]): void {
    const { tool: fullName, call_id: callId, agent_id: agentId, arguments_json: argsJson } = call;
    if (this.running.has(callId)) return;
    const prefix = this.configuration.tool_prefix;
    const tool = this.tools.get(fullName.startsWith(prefix) ? fullName.slice(prefix.length) : fullName);
    const controller = new AbortController();
    this.running.set(callId, controller);
    const finish = (): void => void this.running.delete(callId);
    if (!tool) {
      this.emit("tool.error_reported", { call_id: callId, error: `this extension has no tool ${fullName}` });
      finish();
      return;
    }
    let args: unknown;
    try {
      args = JSON.parse(argsJson);
    } catch {
      this.emit("tool.error_reported", { call_id: callId, error: "the tool arguments are not valid JSON" });
      finish();
      return;
    }
    const ctx: ToolContext = {
      callId,
      agentId,
      signal: controller.signal,
      progress: (text) => this.emit("tool.progress_reported", { call_id: callId, text }),
    };
    // A cancelled call's output goes with its cancellation; one too large for a frame does not.
    const cancelled = async (output: string | undefined): Promise<void> => {
      const sent = await this.emit("tool.cancelled_reported", { call_id: callId, ...(output !== undefined ? { output } : {}) });
      if (sent === "oversize") void this.emit("tool.cancelled_reported", { call_id: callId });
    };
    tool.run(args, ctx).then(
      async (result) => {
        if (controller.signal.aborted) await cancelled(result.output);
        else {
          const sent = await this.emit("tool.result_reported", { call_id: callId, output: result.output, ...(result.display ? { display: result.display } : {}), ...(result.failed === true ? { failed: true } : {}) });
          // An output too large for one frame still ends the call, with an error the model can act on.
          if (sent === "oversize") void this.emit("tool.error_reported", { call_id: callId, error: "the tool's output is larger than one message can carry (16 MiB); ask for less of it" });
        }
        finish();
      },
      async (err: unknown) => {
        // A tool cut short says what it had done in its error (the shell: the output so far).
        if (controller.signal.aborted) await cancelled(err instanceof Error && err.message !== "" ? err.message : undefined);
        else void this.emit("tool.error_reported", { call_id: callId, error: err instanceof Error ? err.message : String(err) });
        finish();
      },
    );
  }
}
