// User shell commands (SPEC-shell-commands): `!cmd` / `!!cmd` requests from attached UIs are routed
// to the extension that owns the `shell` tool; only that owner's current generation can report.
import type { Committed } from "../bus/index.js";
import type { EventName, EventPayloads } from "../../generated/index.js";
import type { RegisteredTool } from "./tools.js";

interface PendingCommand {
  readonly agentId: string;
  readonly command: string;
  readonly includeInContext: boolean;
  readonly owner: string;
  readonly generation: number;
}

export interface ShellCommandPort {
  publish<N extends EventName>(name: N, data: EventPayloads[N]): void;
  shellTool(): RegisteredTool | undefined;
  hasAgent(agentId: string): boolean;
  isLive(instance: string, generation: number): boolean;
}

export class ShellCommandRouter {
  private readonly pending = new Map<string, PendingCommand>();
  /**
   * Request ids of ephemeral routes (`!!cmd`, or any command of an ephemeral agent), as committed:
   * their reports and results stay out of the debug log. It grows with accepted ephemeral commands
   * only, for the life of the process.
   */
  private readonly ephemeralRoutes = new Set<string>();

  constructor(private readonly port: ShellCommandPort) {}

  isEphemeralRoute(requestId: string): boolean {
    return this.ephemeralRoutes.has(requestId);
  }

  onRequest(c: Committed<"shell.command_request">): void {
    if (c.publisher.class !== "ui_attached") return;
    const { request_id: requestId, agent_id: agentId } = c.data;
    const tool = this.port.shellTool();
    if (!tool || !this.port.isLive(tool.owner, tool.generation) || !this.port.hasAgent(agentId) || this.pending.has(requestId)) return;
    const cmd: PendingCommand = {
      agentId,
      command: c.data.command,
      includeInContext: c.data.include_in_context === true,
      owner: tool.owner,
      generation: tool.generation,
    };
    this.pending.set(requestId, cmd);
    // Classified from the request as published (an interceptor's replacement cannot undo it).
    if (c.ephemeral) this.ephemeralRoutes.add(requestId);
    this.port.publish("shell.command_started", {
      agent_id: agentId,
      request_id: requestId,
      owner: cmd.owner,
      command: cmd.command,
      include_in_context: cmd.includeInContext,
    });
  }

  private owned(c: Committed<"shell.command_progress_reported" | "shell.command_finished_reported">): [string, PendingCommand] | undefined {
    const id = c.data.request_id;
    const cmd = this.pending.get(id);
    if (!cmd || c.publisher.instance !== cmd.owner || c.publisher.generation !== cmd.generation) return undefined;
    return [id, cmd];
  }

  onProgressReported(c: Committed<"shell.command_progress_reported">): void {
    const o = this.owned(c);
    if (o) this.port.publish("shell.command_progress", { agent_id: o[1].agentId, request_id: o[0], text: c.data.text });
  }

  onFinishedReported(c: Committed<"shell.command_finished_reported">): void {
    const o = this.owned(c);
    if (!o) return;
    const [id, cmd] = o;
    this.pending.delete(id);
    this.port.publish("shell.command_finished", {
      agent_id: cmd.agentId,
      request_id: id,
      command: cmd.command,
      output: c.data.output,
      exit_code: c.data.exit_code,
      ...(c.data.signal !== undefined ? { signal: c.data.signal } : {}),
      include_in_context: cmd.includeInContext,
    });
  }

  /** The owner went away: its commands end with one result each. */
  onOwnerGone(instance: string, generation: number): void {
    for (const [id, cmd] of [...this.pending]) {
      if (cmd.owner !== instance || cmd.generation !== generation) continue;
      this.pending.delete(id);
      this.port.publish("shell.command_finished", {
        agent_id: cmd.agentId,
        request_id: id,
        command: cmd.command,
        output: `the ${instance} extension exited while the command ran`,
        exit_code: null,
        include_in_context: cmd.includeInContext,
      });
    }
  }
}
