// What one `tau ext mcp` instance tells the session of its server (SPEC-mcp, "State"): every change
// of state as a notice (also kept in extensions.log), and the latest state — with its tool count and
// how it runs — as `mcp.server_state_reported`, the current-state event status lines follow.
import type { McpConfinement } from "../../../generated/index.js";
import type { Extension } from "../../sdk/index.js";
import type { ServerState } from "./server.js";

/** Most refused hosts one server's notices name. */
const MAX_REFUSED_HOSTS_NOTED = 32;
/** The state event's detail is one short line. */
const DETAIL_MAX_CHARS = 1000;

export class ServerReport {
  private state: ServerState = "starting";
  private detail: string | undefined;
  private tools = 0;
  private confinement: McpConfinement | undefined;
  private readonly refusedHosts = new Set<string>();

  constructor(
    private readonly ext: Extension,
    private readonly name: string,
  ) {}

  /** A change of state: a notice, and the state event. */
  changed(state: ServerState, detail: string | undefined): void {
    this.state = state;
    this.detail = detail;
    if (state === "stopped") return;
    this.publish();
    if (state === "ready" || state === "starting") return this.say("info", `${state}`);
    this.say(state === "failed" ? "error" : "warning", `${state}${detail ? ` (${detail})` : ""}${state === "restarting" && this.tools > 0 ? `; its ${this.tools} tools fail until it is back` : ""}`);
  }

  /** It offers `count` tools now. */
  offering(count: number): void {
    if (count === this.tools) return;
    this.tools = count;
    this.publish();
  }

  /** How it runs, once its start found out (undefined before). */
  get runsAs(): McpConfinement | undefined {
    return this.confinement;
  }

  /** How it runs is known: unsandboxed is also said, with why. */
  runs(how: McpConfinement, why?: string): void {
    this.confinement = how;
    if (how === "unsandboxed") this.say("warning", `runs unsandboxed, with your full rights (${why ?? "the sandbox is off"})`);
    this.publish();
  }

  /** A connection of its (sandboxed) process was refused: each host once. */
  refusedHost(host: string, port: number | undefined): void {
    if (this.refusedHosts.has(host) || this.refusedHosts.size >= MAX_REFUSED_HOSTS_NOTED) return;
    this.refusedHosts.add(host);
    this.say("warning", `a connection to ${host}${port !== undefined ? `:${port}` : ""} was refused: the host is not on the sandbox's network allowlist; add it to allowed_hosts in the server's entry to allow it`);
  }

  /**
   * A notice about the server. It is live only: the same line goes to stderr, which the session
   * keeps in its extensions.log, so what was said before a UI attached can still be read.
   */
  say(level: "info" | "warning" | "error", text: string): void {
    const line = `mcp server ${this.name}: ${text}`;
    this.ext.notice(level, line);
    process.stderr.write(`${level}: ${line}\n`);
  }

  private publish(): void {
    if (this.state === "stopped") return;
    const detail = this.detail === undefined ? {} : { detail: this.detail.slice(0, DETAIL_MAX_CHARS) };
    void this.ext.emit("mcp.server_state_reported", { state: this.state, tools: this.tools, ...(this.confinement !== undefined ? { confinement: this.confinement } : {}), ...detail });
  }
}
