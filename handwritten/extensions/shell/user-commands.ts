// User shell commands (`!cmd`, `!!cmd`; SPEC-shell-commands): a `shell.command_started` this
// instance owns is run outside the sandbox in the agent's working directory, its progress and its
// end reported.
import type { Extension } from "../../sdk/index.js";
import { runShell } from "./tools/index.js";

/** User shell commands (`!cmd`) run at most this long. */
export const USER_COMMAND_TIMEOUT_MS = 600_000;

export function serveUserCommands(ext: Extension, cwdFor: (agentId: string) => Promise<string>): void {
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
}
