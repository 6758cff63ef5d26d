// The shell extension's tools as the model calls them (SPEC-shell-tools): each run in the agent's
// working directory, `shell` in the sandbox (SPEC-sandbox) and the file tools under its filesystem
// policy, and `cd`, which moves that directory.
import { ToolFailure, type Extension } from "../../sdk/index.js";
import type { Sandbox } from "./sandbox/index.js";
import { changeWorkdir, shellTools, type EditorFiles } from "./tools/index.js";

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

/** What the model reads about the sandbox in the `shell` tool's description. */
const SANDBOX_NOTE =
  "Commands run in a sandbox: writes outside the project, reads of credentials and connections to hosts off an allowlist fail " +
  "unless the user approves them; a result says when access was approved, refused or the command was run again.";

/** Registers the shell tools and `cd`; `workdirs` holds each agent's directory, `cwdFor` resolves it. */
export function registerShellTools(ext: Extension, sandbox: Sandbox, workdirs: Map<string, string>, cwdFor: (agentId: string) => Promise<string>, editor?: EditorFiles): void {
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
        return tool.run(args, { cwd, signal: ctx.signal, onProgress: (t) => ctx.progress(t), access, ...(editor !== undefined ? { editor } : {}) });
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
}
