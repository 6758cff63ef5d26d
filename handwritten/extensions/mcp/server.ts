// One MCP server, kept running (SPEC-mcp, "Lifecycle"): each start (spawn or connect, initialize,
// the first tool listing) is bounded by the server's start-up timeout; a failed start and a crash
// are retried with a doubling backoff; the state and the last error are reported on every change.
// Sampling is offered when the entry configures it (events.sample), else refused ("method not found");
// elicitation is offered when someone can answer (events.elicit), in form mode. A stdio server starts inside the sandbox when
// given one (SPEC-mcp, "The sandbox"): a sandbox that cannot start fails the server for good.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, ErrorCode, McpError, ToolListChangedNotificationSchema, type ElicitRequestFormParams, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { CreateMessageRequestSchema, type CreateMessageRequest, type CreateMessageResult } from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerConfig } from "../../../generated/index.js";
import {
  MAX_TIMER_MS,
  MCP_MAX_ERROR_CHARS,
  MCP_MAX_FAILURES_IN_A_ROW,
  MCP_MAX_MESSAGE_BYTES,
  MCP_RESTART_FIRST_MS,
  MCP_RESTART_MAX_MS,
  MCP_RESTART_RESET_AFTER_MS,
  MCP_STDERR_TAIL_CHARS,
  MCP_STOP_KILL_AFTER_MS,
} from "./limits.js";
import type { ServerSandbox, ConfinedLaunch } from "../shell/sandbox/index.js";
import { httpTransport } from "./http.js";
import type { CallResult } from "./results.js";
import type { ListedTool } from "./names.js";

/** Most pages of `tools/list` read in one listing. */
const MAX_LIST_PAGES = 64;

export type ServerState = "starting" | "ready" | "failed" | "restarting" | "stopped";

export interface ServerEvents {
  /** The state changed; `detail` says why (the last error for `failed` and `restarting`). */
  state(state: ServerState, detail: string | undefined): void;
  /** A fresh listing of the server's tools (after a start, and on `notifications/tools/list_changed`). */
  tools(tools: readonly ListedTool[]): void;
  /** Something the user should know that is not a change of state (what the sandbox moved). */
  note(level: "info" | "warning", text: string): void;
  /** How a stdio server runs, once its sandbox said (unsandboxed: why). */
  runs(how: "sandboxed" | "unsandboxed", why?: string): void;
  /**
   * Asks the user what the server asks (`elicitation/create`, form mode); `signal` aborts when the
   * server withdraws it. Absent (no UI can answer): the client does not offer elicitation.
   */
  elicit?(params: ElicitRequestFormParams, signal: AbortSignal): Promise<ElicitResult>;
  /**
   * Answers the server's `sampling/createMessage` (its entry configures `sampling`); `signal` aborts
   * when the server withdraws it. Absent: the client does not offer sampling.
   */
  sample?(params: CreateMessageRequest["params"], signal: AbortSignal): Promise<CreateMessageResult>;
}

/** A start that trying again cannot mend (the sandbox cannot start): the server is failed at once. */
class StartRefused extends Error {}

const bounded = (text: string): string => (text.length > MCP_MAX_ERROR_CHARS ? `${text.slice(0, MCP_MAX_ERROR_CHARS - 1)}…` : text);
const timerMs = (ms: number): number => Math.min(ms, MAX_TIMER_MS);

export class McpServer {
  state: ServerState = "starting";
  lastError: string | undefined;
  private client: Client | undefined;
  /** The transport of the current stdio start: its process is ended at once when the session ends. */
  private stdio: StdioClientTransport | undefined;
  private stderrTail = "";
  private failures = 0;
  private readyAt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** The current start inside the sandbox, while its process may run. */
  private confined: ConfinedLaunch | undefined;
  private confinementSaid = false;
  /** Resolves when the first start attempt has settled (ready or failed). */
  readonly firstStart: Promise<void>;
  private settleFirst!: () => void;

  constructor(
    readonly name: string,
    private readonly def: McpServerConfig,
    private readonly projectRoot: string,
    private readonly events: ServerEvents,
    /** The sandbox a stdio server starts in; none: with the user's rights. */
    private readonly sandbox?: ServerSandbox,
  ) {
    this.firstStart = new Promise((resolve) => (this.settleFirst = resolve));
  }

  get startupTimeoutMs(): number {
    return this.def.startup_timeout_ms ?? 30_000;
  }

  get callTimeoutMs(): number {
    return this.def.call_timeout_ms ?? 600_000;
  }

  start(): void {
    void this.attempt();
  }

  /** Calls tool `mcpName`; an abort of `signal` sends `notifications/cancelled` (the SDK does). */
  async call(mcpName: string, args: Record<string, unknown>, signal: AbortSignal, progress: (text: string) => void): Promise<CallResult> {
    const client = this.client;
    if (this.state !== "ready" || client === undefined) {
      throw new Error(`MCP server ${this.name} is not ready (${this.state}${this.lastError ? `; last error: ${this.lastError}` : ""})`);
    }
    try {
      return (await client.callTool({ name: mcpName, arguments: args }, undefined, {
        signal,
        timeout: timerMs(this.callTimeoutMs),
        onprogress: (p) => progress(`${p.progress}${p.total !== undefined ? `/${p.total}` : ""}${p.message ? ` ${p.message}` : ""}`),
      })) as CallResult;
    } catch (err) {
      if (signal.aborted) throw err;
      if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
        throw new Error(`MCP server ${this.name}: ${mcpName} did not answer within its call timeout (${this.callTimeoutMs} ms); the call was cancelled`);
      }
      if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) {
        throw new Error(`MCP server ${this.name} exited during the call to ${mcpName}${this.stderrNote()}; it is being restarted`);
      }
      throw new Error(`MCP server ${this.name}: ${mcpName} failed: ${bounded((err as Error).message)}`);
    }
  }

  /**
   * Ends the server with the session: a stdio server gets SIGTERM at once and SIGKILL after
   * MCP_STOP_KILL_AFTER_MS unless it closed by then — within the grace the harness gives this
   * extension (1 s) — so none outlives the session.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.setState("stopped", undefined);
    const client = this.client;
    this.client = undefined;
    const pid = this.stdio?.pid ?? null;
    if (pid !== null) signal(pid, "SIGTERM");
    let timer: NodeJS.Timeout | undefined;
    const closed = client === undefined ? Promise.resolve("closed") : client.close().then(() => "closed", () => "closed");
    const first = await Promise.race([closed, new Promise((resolve) => (timer = setTimeout(() => resolve("late"), MCP_STOP_KILL_AFTER_MS)))]);
    clearTimeout(timer);
    // A server still starting has no client to close: its process is ended the same way.
    if (pid !== null && (first === "late" || client === undefined)) signal(pid, "SIGKILL");
    this.released();
    await this.sandbox?.stop();
  }

  /** The process of the current start is gone: what the sandbox checks after it is done, and said. */
  private released(): void {
    const confined = this.confined;
    this.confined = undefined;
    for (const note of confined?.ended() ?? []) this.events.note("warning", note);
  }

  private setState(state: ServerState, detail: string | undefined): void {
    this.state = state;
    if (state === "failed" || state === "restarting") this.lastError = detail;
    this.events.state(state, detail);
  }

  private stderrNote(): string {
    const line = this.stderrTail.trim().split("\n").pop()?.trim();
    return line ? ` (its last stderr line: ${bounded(line).slice(0, 200)})` : "";
  }

  private async transport(): Promise<Transport> {
    // Headers and the stored sign-in go to this server's URL only (http.ts).
    if (this.def.url !== undefined) return httpTransport(this.name, this.def);
    const launch = await this.launch([this.def.command ?? "", ...(this.def.args ?? [])]);
    const t = new StdioClientTransport({
      ...launch,
      env: { ...getDefaultEnvironment(), ...(this.def.env ?? {}) },
      cwd: this.def.cwd ?? this.projectRoot,
      stderr: "pipe",
      // One message may be this large; a larger one ends the connection (SPEC-mcp, "Bounds").
      maxBufferSize: MCP_MAX_MESSAGE_BYTES,
    });
    t.stderr?.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-MCP_STDERR_TAIL_CHARS);
    });
    this.stdio = t;
    return t;
  }

  /** How a stdio server's start runs: inside the sandbox when it has one and it is on. */
  private async launch(argv: string[]): Promise<{ command: string; args: string[] }> {
    const [command = "", ...args] = argv;
    if (this.sandbox === undefined) return { command, args };
    const how = await this.sandbox.prepare();
    if (how.kind === "blocked") throw new StartRefused(`${how.reason}; ${how.fix}`);
    if (!this.confinementSaid) this.events.runs(how.kind, how.kind === "unsandboxed" ? how.reason : undefined);
    this.confinementSaid = true;
    if (how.kind === "unsandboxed") return { command, args };
    this.confined = await this.sandbox.launch(argv);
    return { command: this.confined.command, args: this.confined.args };
  }

  /** One start: connect, initialize and list, within the start-up timeout; else failed and retried. */
  private async attempt(): Promise<void> {
    if (this.stopped) return;
    this.stderrTail = "";
    const elicit = this.events.elicit?.bind(this.events);
    const client = new Client({ name: "tau", version: "1" }, { capabilities: elicit !== undefined ? { elicitation: { form: {} } } : {} });
    // Form mode only: the SDK refuses a URL-mode request, which tau does not offer.
    if (elicit !== undefined) client.setRequestHandler(ElicitRequestSchema, (req, extra) => elicit(req.params as ElicitRequestFormParams, extra.signal));
    const sample = this.events.sample?.bind(this.events);
    if (sample !== undefined) {
      client.registerCapabilities({ sampling: {} });
      client.setRequestHandler(CreateMessageRequestSchema, (req, extra) => sample(req.params, extra.signal));
    }
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timedOut = true;
        reject(new Error(`did not become ready within its start-up timeout (${this.startupTimeoutMs} ms)`));
      }, timerMs(this.startupTimeoutMs));
    });
    try {
      const boot = (async () => {
        await client.connect(await this.transport(), { timeout: timerMs(this.startupTimeoutMs) });
        return this.listTools(client);
      })();
      boot.catch(() => {}); // the deadline may win; the boot's own failure is then moot
      const tools = await Promise.race([boot, deadline]);
      clearTimeout(timer);
      if (this.stopped) return void client.close().catch(() => {});
      this.client = client;
      this.readyAt = Date.now();
      client.onclose = () => this.closed(client);
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.relist(client));
      this.setState("ready", undefined);
      this.events.tools(tools);
    } catch (err) {
      clearTimeout(timer);
      await client.close().catch(() => {});
      this.released();
      if (this.stopped) return;
      if (err instanceof StartRefused) return this.setState("failed", `could not start: ${bounded(err.message)}`);
      const why = timedOut ? (err as Error).message : `could not start: ${bounded((err as Error).message)}${this.stderrNote()}`;
      this.setState("failed", why);
      this.retryLater();
    } finally {
      this.settleFirst();
    }
  }

  private async listTools(client: Client): Promise<ListedTool[]> {
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const r = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timerMs(this.startupTimeoutMs) });
      tools.push(...(r.tools as ListedTool[]));
      cursor = r.nextCursor;
      if (cursor === undefined) break;
    }
    return tools;
  }

  private async relist(client: Client): Promise<void> {
    if (client !== this.client) return;
    try {
      const tools = await this.listTools(client);
      if (client === this.client) this.events.tools(tools);
    } catch (err) {
      this.lastError = `could not list its tools again: ${bounded((err as Error).message)}`;
      this.events.state(this.state, this.lastError);
    }
  }

  /** The connection of a ready server ended (its process exited): restart it with backoff. */
  private closed(client: Client): void {
    if (client !== this.client || this.stopped) return;
    this.client = undefined;
    this.released();
    if (Date.now() - this.readyAt >= MCP_RESTART_RESET_AFTER_MS) this.failures = 0;
    this.setState("restarting", `the server exited${this.stderrNote()}`);
    this.retryLater();
  }

  private retryLater(): void {
    if (this.failures + 1 >= MCP_MAX_FAILURES_IN_A_ROW) {
      this.setState("failed", `${this.lastError ?? "it failed"}; given up after ${MCP_MAX_FAILURES_IN_A_ROW} failures in a row (a new session tries again)`);
      return;
    }
    const delay = Math.min(MCP_RESTART_MAX_MS, MCP_RESTART_FIRST_MS * 2 ** this.failures);
    this.failures = Math.min(this.failures + 1, 16);
    this.retryTimer = setTimeout(() => {
      if (this.stopped) return;
      if (this.state === "failed") this.setState("restarting", this.lastError);
      void this.attempt();
    }, delay);
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}
