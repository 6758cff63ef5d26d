// Extension supervision (SPEC-extension-host): spawn each configured extension, take it through
// hello → configure → staged declarations → ready, run one collision preflight once every initial
// extension is ready or terminal, activate the survivors together, and respawn with a bounded
// budget. Every process gets a new connection generation.
import type { ChildProcess } from "node:child_process";
import { REQUESTS, type ExtensionConfig, type ExtensionKind, type ExtensionNotice, type ExtensionNoticeRequestMessage, type ExtensionCommandDeclareMessage, type ExtensionCommandResultMessage, type WireMessage } from "../../generated/index.js";
import { REVISION, RequestServer, compareRevision, type Event, type WireError } from "../protocol/index.js";
import { Connection, codeForWireError, refuseContentFree, type CloseReason } from "../transport/index.js";
import { judge, type Bus, type PublisherEnvelope, type UnjudgedEvent } from "../bus/index.js";
import { DEFAULT_STARTUP_TIMEOUT_SECONDS, MAX_STAGED_BYTES, MAX_STAGED_EMITS, RESPAWN_BUDGET, RESPAWN_WINDOW_MS, STOP_GRACE_MS, respawnDelay } from "./limits.js";
import { extensionArgv, spawnDiagnostic, spawnExtension, type EarlyExtension } from "./spawn.js";
import { addPeerInterceptor, connectionSink, replyFromPeer } from "./peer-bus.js";

export interface SupervisorHost {
  readonly bus: Bus;
  readonly sessionId: string;
  readonly projectRoot: string;
  /** The private state folder of an instance. */
  stateDirFor(instance: string): string;
  /** A live extension connection, so directed events (tool.cancel_request, provider requests) can reach it. */
  attach(generation: number, publisher: PublisherEnvelope, conn: Connection): void;
  /** The connection of this generation ended: its calls end and its tools go. */
  detach(instance: string, generation: number): void;
  notice(level: "info" | "warning" | "error", text: string, mandatory: boolean, instance?: string): void;
  /** Resolves a configured secret by name; undefined when it is not set. */
  resolveSecret(name: string): string | undefined;
  /** Extension stderr, for the per-session extension log. */
  stderr(instance: string, chunk: Buffer): void;
  /** Tool names claimed by staged declarations are checked against these (the harness's own). */
  readonly reservedToolNames: ReadonlySet<string>;
  /** The colon commands extensions own (SPEC-extension-commands). */
  readonly commands?: {
    declare(instance: string, generation: number, request: ExtensionCommandDeclareMessage["payload"]): void;
    answered(generation: number, request: ExtensionCommandResultMessage["payload"]): void;
  };
}

export interface SupervisorOptions {
  /** How to run `tau` itself (first-party extensions): `[node, bin/tau.cjs]`. */
  readonly tauCommand: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  /** Initial processes already started (see `startEarly`): each is adopted by its first launch. */
  readonly early?: Map<string, EarlyExtension>;
}

/** Notices of an instance kept for `:mcp` (each at most a short text). */
const LAST_NOTICES_KEPT = 16;

type Phase = "starting" | "configuring" | "ready" | "active" | "failed" | "disabled" | "stopped";

/** A pre-ready emit, or a pre-ready notice request (published under the harness's own envelope). */
/** An emit held until activation: the extension's own (unchecked yet), or a notice it asked for. */
type Staged = (Event & { readonly notice?: undefined }) | { readonly notice: true; readonly name: "extension.notice"; readonly data: ExtensionNotice };

/** Protocol counters of one configured extension, for `ui_debug_event_stats_request`. */
export interface ExtensionCounters {
  readonly instance: string;
  readonly kind: ExtensionKind;
  readonly phase: string;
  readonly generation: number;
  readonly restarts: number;
  readonly messages: number;
  readonly invalid: number;
  readonly published: number;
  readonly refused: number;
  readonly staged: number;
  readonly notices: number;
  /** Why it last stopped or failed to start, when it did. */
  readonly reason: string;
  /** The last notices it asked for, oldest first (an MCP server's states, SPEC-mcp "State"). */
  readonly lastNotices: ReadonlyArray<{ readonly level: string; readonly text: string }>;
}

class Instance {
  phase: Phase = "starting";
  generation = 0;
  child: ChildProcess | undefined;
  conn: Connection | undefined;
  staged: Staged[] = [];
  stagedBytes = 0;
  subscriptions: number[] = [];
  restarts: number[] = [];
  settle: (() => void) | undefined;
  reason = "";
  /** The last notices it asked for, oldest first (at most LAST_NOTICES_KEPT). */
  lastNotices: Array<{ level: string; text: string }> = [];
  /** The generation whose connection has ended (it is no longer live, even before its process exits). */
  goneGeneration = 0;
  /** Whether this instance was told about a protocol minor revision other than ours. */
  warnedRevision = false;
  readonly counters = { messages: 0, invalid: 0, published: 0, refused: 0, staged: 0, notices: 0 };

  constructor(readonly config: ExtensionConfig) {}

  get name(): string {
    return this.config.name;
  }
  get kind(): ExtensionKind {
    return this.config.kind ?? "tool";
  }
  get required(): boolean {
    return this.config.require === true;
  }
  envelope(): PublisherEnvelope {
    return Object.freeze({ class: "extension", kind: this.kind, instance: this.name, generation: this.generation });
  }
}

/** Thrown when a required extension cannot start or loses the collision preflight. */
export class StartupError extends Error {
  override name = "StartupError";
}

const DECLARATIONS = new Set(["tool.registration_declared"]);

export class Supervisor {
  private readonly instances = new Map<string, Instance>();
  private nextGeneration = 1_000_000; // distinct from socket peers' generations
  private stopping = false;
  /** The answers to the requests spec/ declares for extensions (an extension is never told it may not). */
  private readonly requests = new RequestServer<{ readonly i: Instance; readonly conn: Connection }>({ refuseUnauthorized: false })
    .serve(REQUESTS.extension_notice_request, (request, { i, conn }) => this.noticeRequested(i, conn, request))
    // Colon commands it owns, and its answers to them (SPEC-extension-commands).
    .serve(REQUESTS.extension_command_declare, (request, { i }) => this.host.commands?.declare(i.name, i.generation, request))
    .serve(REQUESTS.extension_command_result, (request, { i }) => this.host.commands?.answered(i.generation, request));

  constructor(
    private readonly host: SupervisorHost,
    private readonly options: SupervisorOptions,
  ) {}

  /** Starts every enabled extension and activates the survivors together. */
  async start(configs: readonly ExtensionConfig[]): Promise<string[]> {
    const enabled = configs.filter((c) => c.enable !== false);
    for (const c of enabled) this.instances.set(c.name, new Instance(c));
    await Promise.all([...this.instances.values()].map((i) => this.launch(i, 1)));
    this.preflight();
    const active: string[] = [];
    for (const i of this.instances.values()) {
      if (i.phase === "ready") {
        this.activate(i);
        active.push(i.name);
      } else if (i.required && i.phase !== "active") {
        throw new StartupError(`required extension "${i.name}" did not start: ${i.reason || i.phase}`);
      }
    }
    await this.host.bus.publish({ name: "extension.ready", data: { instances: active } }, { class: "harness" });
    return active;
  }

  /** One deterministic collision check over staged tool declarations (in instance-name order). */
  private preflight(): void {
    const claims = new Map<string, Instance[]>();
    const ready = [...this.instances.values()].filter((i) => i.phase === "ready").sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const i of ready) {
      const prefix = i.config.tool_prefix ?? "";
      for (const s of i.staged) {
        if (s.name !== "tool.registration_declared") continue;
        const tool = `${prefix}${s.data.name}`;
        if (this.host.reservedToolNames.has(tool)) {
          this.reject(i, `tool name ${tool} is reserved by the harness`);
          continue;
        }
        const list = claims.get(tool) ?? [];
        if (!list.includes(i)) list.push(i);
        claims.set(tool, list);
      }
    }
    for (const [tool, claimants] of [...claims.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (claimants.length < 2) continue;
      const required = claimants.filter((c) => c.required);
      if (required.length > 1) {
        throw new StartupError(`required extensions ${required.map((r) => `"${r.name}"`).join(" and ")} both declare tool ${tool}`);
      }
      const losers = required.length === 1 ? claimants.filter((c) => !c.required) : claimants;
      for (const l of losers) this.reject(l, `tool ${tool} is also declared by ${claimants.filter((c) => c !== l).map((c) => `"${c.name}"`).join(", ")}`);
    }
  }

  private reject(i: Instance, why: string): void {
    if (i.phase === "disabled") return;
    if (i.required) throw new StartupError(`required extension "${i.name}" is disabled: ${why}`);
    i.phase = "disabled";
    i.reason = why;
    this.host.notice("warning", `extension "${i.name}" disabled: ${why}`, true, i.name);
    this.kill(i);
  }

  /** Spawns one process and resolves when it is ready or terminal. */
  private launch(i: Instance, attempt: number): Promise<void> {
    i.phase = "starting";
    i.generation = this.nextGeneration++;
    i.staged = [];
    i.stagedBytes = 0;
    const generation = i.generation;
    void this.host.bus.publish({ name: "extension.starting", data: { instance: i.name, kind: i.kind, attempt } }, { class: "harness" });
    const argv = extensionArgv(i.config, this.options.tauCommand);
    const cwd = i.config.cwd ?? this.host.projectRoot;
    const early = attempt === 1 ? this.options.early?.get(i.name) : undefined;
    this.options.early?.delete(i.name);
    return new Promise<void>((resolve) => {
      i.settle = resolve;
      let child: ChildProcess;
      try {
        if (early?.error) throw early.error;
        child = early?.child ?? spawnExtension(i.config, argv, cwd, this.options.env ?? process.env);
      } catch (err) {
        this.fail(i, spawnDiagnostic(i.config, argv[0] ?? "", err as NodeJS.ErrnoException));
        return;
      }
      i.child = child;
      child.once("error", (err) => this.fail(i, spawnDiagnostic(i.config, argv[0] ?? "", err as NodeJS.ErrnoException)));
      child.stderr?.on("data", (chunk: Buffer) => this.host.stderr(i.name, chunk));
      const conn = new Connection({ readable: child.stdout!, writable: child.stdin! }, { side: "harness" });
      i.conn = conn;
      conn.onMessage((m) => this.onMessage(i, generation, conn, m));
      conn.onInvalid((err) => this.onInvalid(i, generation, conn, err));
      conn.onClose((reason) => this.onConnectionClosed(i, generation, reason));
      child.once("exit", (code, signal) => this.onExit(i, generation, code, signal));
      // An early process may have ended before it was adopted: its exit event is gone.
      if (child.exitCode !== null || child.signalCode !== null) {
        const { exitCode, signalCode } = child;
        child.removeAllListeners("exit");
        setImmediate(() => this.onExit(i, generation, exitCode, signalCode));
      }
      const timeout = (i.config.startup_timeout_seconds ?? DEFAULT_STARTUP_TIMEOUT_SECONDS) * 1000;
      setTimeout(() => {
        if (i.generation === generation && (i.phase === "starting" || i.phase === "configuring")) {
          this.fail(i, `did not become ready within ${timeout / 1000} s`);
          this.kill(i);
        }
      }, timeout).unref();
    });
  }

  private settle(i: Instance): void {
    const s = i.settle;
    i.settle = undefined;
    s?.();
  }

  private fail(i: Instance, why: string): void {
    if (i.phase === "failed" || i.phase === "disabled" || i.phase === "stopped") return;
    i.phase = "failed";
    i.reason = why;
    this.host.notice("error", why.startsWith("extension ") ? why : `extension "${i.name}": ${why}`, true, i.name);
    this.settle(i);
  }

  /** A frame that could not be read is answered with its code; the stream goes on (SPEC-wire-protocol). */
  private onInvalid(i: Instance, generation: number, conn: Connection, err: WireError): void {
    if (i.generation !== generation) return;
    i.counters.invalid++;
    refuseContentFree(conn, undefined, codeForWireError(err));
  }

  /**
   * A connection that ends for any reason (an oversize frame, a protocol error, end of input, a
   * broken pipe) ends its generation at once: the process is stopped, its calls end and its tools
   * go now, not when (or if) it exits. Respawning waits for the exit.
   */
  private onConnectionClosed(i: Instance, generation: number, reason: CloseReason): void {
    if (i.generation !== generation || this.stopping) return;
    if (i.phase === "active" || i.phase === "ready" || i.phase === "configuring") {
      this.host.notice("warning", `extension "${i.name}" ${closeDiagnostic(reason)}; stopping it`, false, i.name);
    }
    this.gone(i, generation);
    this.kill(i);
  }

  /** Ends a generation's presence in the harness, once: subscriptions, interceptors, calls, tools. */
  private gone(i: Instance, generation: number): void {
    if (i.goneGeneration === generation) return;
    i.goneGeneration = generation;
    for (const id of i.subscriptions) this.host.bus.unsubscribe(id);
    i.subscriptions = [];
    this.host.bus.removeOwner(generation);
    this.host.detach(i.name, generation);
  }

  private onMessage(i: Instance, generation: number, conn: Connection, m: WireMessage): void {
    if (i.generation !== generation || i.goneGeneration === generation) return;
    i.counters.messages++;
    if (i.phase === "starting") return this.greeted(i, generation, conn, m);
    // The requests spec/ declares for extensions; UI-only ones from an extension are silently denied.
    if (this.requests.handle(conn, "extension", m, { i, conn })) return;
    switch (m.message) {
      case "subscribe":
        i.subscriptions.push(this.host.bus.subscribe(m.payload, connectionSink(conn), m.payload.recent));
        return;
      case "intercept":
        addPeerInterceptor(this.host.bus, generation, conn, m.payload);
        return;
      case "intercept_reply":
        replyFromPeer(this.host.bus, generation, m.payload);
        return;
      case "emit":
        if (i.phase === "active") {
          void this.host.bus.publishFromPeer(m.payload.event, i.envelope()).then((o) => {
            if (o.status === "refused") {
              i.counters.refused++;
              refuseContentFree(conn, undefined, o.reason === "invalid" ? "invalid" : o.reason === "overloaded" ? "overloaded" : "unauthorized");
            } else {
              i.counters.published++;
            }
          });
          return;
        }
        return this.stageEmit(i, conn, m.payload.event);
      case "ready":
        if (i.phase !== "configuring") return;
        i.phase = "ready";
        if (this.restarting(i)) this.activate(i);
        this.settle(i);
        return;
      case "config_error":
        this.fail(i, `configuration error: ${m.payload.text}`);
        return;
      case "disconnect":
        conn.close("extension disconnected");
        return;
      default:
        // UI-only requests from an extension are silently denied.
        return;
    }
  }

  /**
   * An extension's first message: `hello` with a revision tau speaks, then its secrets resolved and
   * its configuration sent; anything else fails and ends it.
   */
  private greeted(i: Instance, generation: number, conn: Connection, m: WireMessage): void {
    if (m.message !== "hello" || m.payload.role !== "extension") {
      this.fail(i, "did not start with hello");
      return this.kill(i);
    }
    const verdict = compareRevision(m.payload.revision);
    if (verdict === "incompatible") {
      refuseContentFree(conn, undefined, "revision_mismatch");
      this.fail(i, `speaks protocol ${m.payload.revision.major}.${m.payload.revision.minor}, not ${REVISION.major}.x`);
      return this.kill(i);
    }
    if (verdict === "compatible" && !i.warnedRevision) {
      i.warnedRevision = true; // once per instance, not once per respawn
      this.host.notice("warning", `extension "${i.name}" speaks protocol ${m.payload.revision.major}.${m.payload.revision.minor}; tau speaks ${REVISION.major}.${REVISION.minor}, continuing`, true, i.name);
    }
    const secrets: Record<string, string> = {};
    for (const name of i.config.secrets ?? []) {
      const value = this.host.resolveSecret(name);
      if (value === undefined) {
        this.fail(i, `secret "${name}" is not set`);
        return this.kill(i);
      }
      secrets[name] = value;
    }
    i.phase = "configuring";
    this.host.attach(generation, i.envelope(), conn);
    conn.send({
      message: "configure",
      payload: {
        revision: { ...REVISION },
        instance: i.name,
        kind: i.kind,
        tool_prefix: i.config.tool_prefix ?? "",
        state_dir: this.host.stateDirFor(i.name),
        session_id: this.host.sessionId,
        config: i.config.config ?? {},
        secrets,
      },
    });
  }

  /** `extension_notice_request`: a live-only `extension.notice`, `critical` capped to `warning`. */
  private noticeRequested(i: Instance, conn: Connection, request: ExtensionNoticeRequestMessage["payload"]): void {
    const level = request.level === "critical" ? "warning" : request.level;
    const notice: Staged = { notice: true, name: "extension.notice", data: { instance: i.name, level, text: request.text } };
    i.lastNotices = [...i.lastNotices.slice(1 - LAST_NOTICES_KEPT), { level, text: request.text }];
    // Before activation a notice request waits (and counts) like any other staged emit.
    if (i.phase !== "active") return this.stage(i, conn, notice);
    i.counters.notices++;
    void this.host.bus.publish(notice, { class: "harness" });
  }

  /**
   * An emit before activation is judged as it would be once live — authority, then schema — and
   * staged only when it passes, so what is staged is a typed event and a refusal says no more than
   * a live one would.
   */
  private stageEmit(i: Instance, conn: Connection, event: UnjudgedEvent): void {
    const verdict = judge(event, i.envelope());
    if (verdict.ok) return this.stage(i, conn, verdict.event);
    i.counters.refused++;
    refuseContentFree(conn, undefined, verdict.reason === "invalid" ? "invalid" : "unauthorized");
    if (DECLARATIONS.has(event.name)) this.host.notice("warning", `extension "${i.name}": ${event.name} refused (${verdict.reason})`, false, i.name);
  }

  /** Before activation, emits and notice requests are staged under count and byte bounds, in order. */
  private stage(i: Instance, conn: Connection, staged: Staged): void {
    const bytes = Buffer.byteLength(JSON.stringify(staged.data));
    if (i.staged.length + 1 > MAX_STAGED_EMITS || i.stagedBytes + bytes > MAX_STAGED_BYTES) {
      i.counters.refused++;
      refuseContentFree(conn, undefined, "overloaded");
      return;
    }
    i.counters.staged++;
    i.staged.push(staged);
    i.stagedBytes += bytes;
  }

  private restarting(i: Instance): boolean {
    return i.restarts.length > 0;
  }

  /** Publishes the staged emits in order under the instance's envelope; it is live from now on. */
  private activate(i: Instance): void {
    i.phase = "active";
    const staged = i.staged;
    i.staged = [];
    i.stagedBytes = 0;
    for (const s of staged) {
      if (s.notice) {
        i.counters.notices++;
        void this.host.bus.publish(s, { class: "harness" });
        continue;
      }
      void this.host.bus.publishFromPeer(s, i.envelope()).then((o) => {
        if (o.status !== "refused") return void i.counters.published++;
        i.counters.refused++;
        if (DECLARATIONS.has(s.name)) this.host.notice("warning", `extension "${i.name}": ${s.name} refused (${o.reason})`, false, i.name);
      });
    }
  }

  private onExit(i: Instance, generation: number, code: number | null, signal: NodeJS.Signals | null): void {
    if (i.generation !== generation) return;
    this.gone(i, generation);
    const wasActive = i.phase === "active";
    const reason = i.phase === "disabled" ? i.reason : this.stopping ? "stopped" : wasActive ? "exited" : i.reason || "exited during startup";
    void this.host.bus.publish(
      { name: "extension.exited", data: { instance: i.name, code, ...(signal ? { signal } : {}), reason: reason.slice(0, 1024) } },
      { class: "harness" },
    );
    if (!wasActive) {
      this.fail(i, `exited during startup (${signal ?? `code ${code}`})`);
      return;
    }
    if (this.stopping) return;
    const now = Date.now();
    i.restarts = i.restarts.filter((t) => now - t < RESPAWN_WINDOW_MS);
    if (i.restarts.length >= RESPAWN_BUDGET) {
      i.phase = "failed";
      this.host.notice("error", `extension "${i.name}" keeps exiting; not restarting it again`, true, i.name);
      return;
    }
    i.restarts.push(now);
    const attempt = i.restarts.length + 1;
    const delay = respawnDelay(i.restarts.length);
    void this.host.bus.publish({ name: "extension.restarting", data: { instance: i.name, attempt, delay_ms: delay } }, { class: "harness" });
    i.phase = "starting";
    setTimeout(() => {
      if (!this.stopping) void this.launch(i, attempt);
    }, delay).unref();
  }

  private kill(i: Instance): void {
    const child = i.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }, STOP_GRACE_MS).unref();
  }

  /** Live instance generation check used by routing consumers. */
  isLive(instance: string, generation: number): boolean {
    const i = this.instances.get(instance);
    return (
      i !== undefined &&
      i.generation === generation &&
      i.goneGeneration !== generation &&
      (i.phase === "active" || i.phase === "ready" || i.phase === "configuring")
    );
  }

  generationOf(instance: string): number | undefined {
    const i = this.instances.get(instance);
    return i && i.phase === "active" && i.goneGeneration !== i.generation ? i.generation : undefined;
  }

  /**
   * Whether an instance may still come back: running, starting, or waiting to respawn. Its tool
   * names stay its own meanwhile; an instance given up (failed, disabled, stopped) holds none.
   */
  mayReturn(instance: string): boolean {
    const i = this.instances.get(instance);
    return i !== undefined && !this.stopping && i.phase !== "failed" && i.phase !== "disabled" && i.phase !== "stopped";
  }

  /** Per-extension protocol counters, in instance-name order. */
  counters(): ExtensionCounters[] {
    return [...this.instances.values()]
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .map((i) => ({ instance: i.name, kind: i.kind, phase: i.phase, generation: i.generation, restarts: i.restarts.length, ...i.counters, reason: i.reason, lastNotices: i.lastNotices }));
  }

  /** The configuration an instance runs with. */
  configOf(instance: string): ExtensionConfig | undefined {
    return this.instances.get(instance)?.config;
  }

  toolPrefix(instance: string): string {
    return this.instances.get(instance)?.config.tool_prefix ?? "";
  }

  /** `call_tools` of an instance's configuration: exact tool names, or `*` for any. */
  mayCall(instance: string, tool: string): boolean {
    const allowed = this.instances.get(instance)?.config.call_tools ?? [];
    return allowed.includes("*") || allowed.includes(tool);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const exits: Array<Promise<unknown>> = [];
    for (const i of this.instances.values()) {
      const child = i.child;
      if (!child || child.exitCode !== null || child.signalCode !== null) continue;
      exits.push(new Promise((r) => child.once("exit", r)));
      i.conn?.send({ message: "disconnect", payload: { reason: "session ending" } });
      this.kill(i);
    }
    await Promise.all(exits);
  }
}

/** Why a connection ended, for the notice that says the extension is being stopped. */
function closeDiagnostic(reason: CloseReason): string {
  switch (reason.kind) {
    case "protocol":
      return reason.code === "oversize" ? "sent a frame over the 16 MiB limit" : `broke the protocol (${reason.code})`;
    case "peer_end":
      return "closed its end of the connection";
    case "peer_closed":
      return "lost its connection";
    case "io_error":
      return `lost its connection (${reason.errno})`;
    case "local":
      return `was disconnected${reason.detail ? ` (${reason.detail})` : ""}`;
  }
}
