// `tau ext shell`: the first-party shell tools (SPEC-shell-tools) and user shell commands
// (`!cmd`, `!!cmd`; SPEC-shell-commands), served over the extension SDK.
import { builtin } from "../../startup/builtin.js";
import { Extension, RequestRefusal, ToolFailure } from "../../sdk/index.js";
import { resolveRoots } from "../../config/index.js";
import { Sandbox } from "./sandbox/index.js";
import { changeWorkdir, endStartedGroups, limits, resolveWorkdir, runShell, shellTools } from "./tools/index.js";

/**
 * Each tool's group and tags, which a role's `deny_tools`/`allow_tools` match (SPEC-tool-routing,
 * "Tool policy by role"): `read` looks at files, `write` changes them, `shell` runs anything.
 */
const TOOL_LABELS: Readonly<Record<string, { group: string; tags: string[] }>> = {
  shell: { group: "shell", tags: ["exec", "filesystem", "writes", "network"] },
  read: { group: "read", tags: ["filesystem"] },
  grep: { group: "read", tags: ["filesystem"] },
  find: { group: "read", tags: ["filesystem"] },
  ls: { group: "read", tags: ["filesystem"] },
  cd: { group: "read", tags: ["filesystem"] },
  write: { group: "write", tags: ["filesystem", "writes"] },
  edit: { group: "write", tags: ["filesystem", "writes"] },
};

/** User shell commands (`!cmd`) run at most this long. */
export const USER_COMMAND_TIMEOUT_MS = 600_000;

export async function main(): Promise<void> {
  const ext = await Extension.connect();
  const settings = ext.settings("shell");
  if (settings === undefined) return;
  // Commands do not outlive the session: when the harness goes away (killed included), every process
  // group this extension started is ended before it exits (SPEC-shell-tools).
  ext.onHarnessGone(() => endStartedGroups(limits.SHELL_HARNESS_GONE_GRACE_MS));
  const projectRoot = process.cwd();
  // Per-agent working directories are agent metadata (`shell.cwd`), owned by this instance.
  const workdirs = new Map<string, string>();
  // The model's `shell` commands run in the sandbox (SPEC-sandbox); `!cmd` user commands do not.
  const sandbox = new Sandbox({
    host: { emit: (name, data) => ext.emit(name as never, data as never) },
    projectRoot,
    roots: resolveRoots(),
    ...(settings.sandbox !== undefined ? { launch: settings.sandbox } : {}),
  });
  ext.onHarnessGone(() => sandbox.stop());
  ext.subscribe(
    ["agent.metadata_set", "sandbox.diagnostic_recorded", "sandbox.classifier_selected"],
    ["agent.metadata_set", "shell.command_started", "sandbox.approval_answer", "agent.prompt_submitted"],
  );
  ext.on("sandbox.diagnostic_recorded", (e) => {
    if (e.replay) sandbox.restoreDiagnostic(e.data);
  });
  ext.on("sandbox.classifier_selected", (e) => {
    if (e.replay) sandbox.restoreSelection(e.data);
  });
  ext.onDirect("sandbox.review_result", (data) => sandbox.reviewAnswered(data));
  ext.on("sandbox.approval_answer", (e) => {
    if (!e.replay) sandbox.answer(e.data.approval_id, e.data.decision);
  });
  // Only the user's own prompt (steered or queued) withdraws their pending decisions: another
  // agent's message, a peer's, an extension's or the harness's (a watch update) is no answer of theirs.
  ext.on("agent.prompt_submitted", (e) => {
    if (!e.replay && e.data.source === "human_ui") sandbox.userPrompted(e.data.agent_id);
  });
  // `:sandbox ARGS` from a UI: the command's text, or its failure as the refusal.
  ext.serve("sandbox.command_request", async ({ args }) => {
    const r = await sandbox.command(args);
    if (!r.ok) throw new RequestRefusal<"sandbox.command_request">(r.text);
    return { text: r.text };
  });
  ext.on("agent.metadata_set", (e) => {
    if (e.data.key !== "shell.cwd") return;
    if (e.data.value === null) workdirs.delete(e.data.agent_id);
    else workdirs.set(e.data.agent_id, e.data.value);
  });
  const cwdFor = (agentId: string) => resolveWorkdir(workdirs.get(agentId), projectRoot);

  for (const tool of shellTools()) {
    const sandboxed = tool.name === "shell";
    ext.registerTool({
      name: tool.name,
      description: sandboxed ? `${tool.description} ${SANDBOX_NOTE}` : tool.description,
      parameters: tool.parameters as Record<string, unknown>,
      ...TOOL_LABELS[tool.name],
      run: async (args, ctx) => {
        const cwd = await cwdFor(ctx.agentId).catch((err: unknown) => {
          throw new ToolFailure((err as Error).message);
        });
        if (sandboxed) return sandbox.runShellTool(args, { callId: ctx.callId, agentId: ctx.agentId, cwd, signal: ctx.signal, onProgress: (t) => ctx.progress(t) });
        // The file tools obey the sandbox's filesystem policy (SPEC-sandbox, "Scope"): they wait for
        // its configuration to load, never for the runtime.
        await sandbox.policyReady();
        const access = sandbox.fileAccess({ agentId: ctx.agentId, callId: ctx.callId, tool: tool.name });
        return tool.run(args, { cwd, signal: ctx.signal, onProgress: (t) => ctx.progress(t), access });
      },
    });
  }

  // `cd` changes the agent's working directory for every later tool call and user command. The
  // directory is agent metadata: the harness commits it, so it survives restarts of this process.
  ext.registerTool({
    name: "cd",
    description: "Changes the working directory used by the other tools of this agent. Relative paths resolve against the current one.",
    ...TOOL_LABELS.cd,
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
  // The sandbox is set up from here, beside the session's first model request, so that the first
  // `shell` call finds it ready (or waits only for what is left). node:child_process, kept out of
  // start-up, is loaded with it.
  builtin("child_process");
  if (settings.sandbox?.set_up !== "on_first_use") void sandbox.start();
}

/** What the model reads about the sandbox in the `shell` tool's description. */
const SANDBOX_NOTE =
  "Commands run in a sandbox: writes outside the project, reads of credentials and connections to hosts off an allowlist fail " +
  "unless the user approves them; a result says when access was approved, refused or the command was run again.";
