// `tau ext shell`: the first-party shell tools (SPEC-shell-tools) and user shell commands
// (`!cmd`, `!!cmd`; SPEC-shell-commands), served over the extension SDK.
import { builtin } from "../../startup/builtin.js";
import { Extension, ToolFailure } from "../../sdk/index.js";
import { changeWorkdir, endStartedGroups, limits, resolveWorkdir, runShell, shellTools } from "./tools/index.js";

/** User shell commands (`!cmd`) run at most this long. */
export const USER_COMMAND_TIMEOUT_MS = 600_000;

export async function main(): Promise<void> {
  const ext = await Extension.connect();
  // Commands do not outlive the session: when the harness goes away (killed included), every process
  // group this extension started is ended before it exits (SPEC-shell-tools).
  ext.onHarnessGone(() => endStartedGroups(limits.SHELL_HARNESS_GONE_GRACE_MS));
  const projectRoot = process.cwd();
  // Per-agent working directories are agent metadata (`shell.cwd`), owned by this instance.
  const workdirs = new Map<string, string>();
  ext.subscribe(["agent.metadata_set"], ["agent.metadata_set", "shell.command_started"]);
  ext.on("agent.metadata_set", (e) => {
    if (e.data.key !== "shell.cwd") return;
    if (e.data.value === null) workdirs.delete(e.data.agent_id);
    else workdirs.set(e.data.agent_id, e.data.value);
  });
  const cwdFor = (agentId: string) => resolveWorkdir(workdirs.get(agentId), projectRoot);

  for (const tool of shellTools()) {
    ext.registerTool({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters as Record<string, unknown>,
      run: async (args, ctx) => {
        const cwd = await cwdFor(ctx.agentId).catch((err: unknown) => {
          throw new ToolFailure((err as Error).message);
        });
        return tool.run(args, { cwd, signal: ctx.signal, onProgress: (t) => ctx.progress(t) });
      },
    });
  }

  // `cd` changes the agent's working directory for every later tool call and user command. The
  // directory is agent metadata: the harness commits it, so it survives restarts of this process.
  ext.registerTool({
    name: "cd",
    description: "Changes the working directory used by the other tools of this agent. Relative paths resolve against the current one.",
    parameters: {
      type: "object",
      properties: { path: { type: "string", minLength: 1, maxLength: 4096 } },
      required: ["path"],
      additionalProperties: false,
    },
    run: async (args, ctx) => {
      const path = (args as { path?: unknown }).path;
      if (typeof path !== "string" || path === "" || path.length > 4096) throw new ToolFailure("path must be a non-empty string of at most 4096 characters");
      const current = await cwdFor(ctx.agentId).catch((err: unknown) => {
        throw new ToolFailure((err as Error).message);
      });
      const next = await changeWorkdir(current, path).catch((err: unknown) => {
        throw new ToolFailure((err as Error).message);
      });
      workdirs.set(ctx.agentId, next);
      ext.emit("agent.metadata_request", { agent_id: ctx.agentId, key: "shell.cwd", value: next });
      return { output: `working directory: ${next}` };
    },
  });

  ext.on("shell.command_started", (e) => {
    if (e.replay || e.data.owner !== ext.instance) return;
    const { request_id, command, agent_id } = e.data;
    void (async () => {
      try {
        const cwd = await cwdFor(agent_id);
        const outcome = await runShell({
          command,
          cwd,
          timeoutMs: USER_COMMAND_TIMEOUT_MS,
          signal: new AbortController().signal,
          onProgress: (text) => ext.emit("shell.command_progress_reported", { request_id, text }),
        });
        ext.emit("shell.command_finished_reported", {
          request_id,
          output: outcome.output,
          exit_code: outcome.exitCode ?? null,
          ...(outcome.signal ? { signal: outcome.signal } : {}),
        });
      } catch (err) {
        ext.emit("shell.command_finished_reported", { request_id, output: (err as Error).message, exit_code: null });
      }
    })();
  });
  ext.ready();
  // Spawning needs node:child_process, kept out of start-up: loaded while the harness activates.
  setImmediate(() => builtin("child_process"));
}
