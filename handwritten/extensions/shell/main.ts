// `tau ext shell`: the first-party shell tools (SPEC-shell-tools) and user shell commands
// (`!cmd`, `!!cmd`; SPEC-shell-commands), served over the extension SDK. Its parts: the tools'
// registrations (registrations.ts), the user commands (user-commands.ts) and the sandbox's events
// (sandbox-events.ts); the tools themselves are in tools/, the sandbox in sandbox/.
import { builtin } from "../../startup/builtin.js";
import { Extension } from "../../sdk/index.js";
import { resolveRoots } from "../../config/index.js";
import { EditorBridge } from "./editor-files.js";
import { registerShellTools } from "./registrations.js";
import { Sandbox } from "./sandbox/index.js";
import { followSandboxEvents } from "./sandbox-events.js";
import { endStartedGroups, limits, resolveWorkdir } from "./tools/index.js";
import { serveUserCommands } from "./user-commands.js";

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
    host: { emit: (name, data) => ext.emit(name, data) },
    projectRoot,
    roots: resolveRoots(),
    ...(settings.sandbox !== undefined ? { launch: settings.sandbox } : {}),
  });
  ext.onHarnessGone(() => sandbox.stop());
  ext.subscribe(
    ["agent.metadata_set", "sandbox.diagnostic_recorded", "sandbox.classifier_selected"],
    ["agent.metadata_set", "shell.command_started", "sandbox.approval_answer", "agent.prompt_submitted"],
  );
  followSandboxEvents(ext, sandbox);
  ext.on("agent.metadata_set", (e) => {
    if (e.data.key !== "shell.cwd") return;
    if (e.data.value === null) workdirs.delete(e.data.agent_id);
    else workdirs.set(e.data.agent_id, e.data.value);
  });
  const cwdFor = (agentId: string) => resolveWorkdir(workdirs.get(agentId), projectRoot);

  // An attached editor's text of a file, unsaved changes included, for `read` (SPEC-acp, "The editor's files").
  registerShellTools(ext, sandbox, workdirs, cwdFor, new EditorBridge(ext));
  serveUserCommands(ext, cwdFor);
  ext.ready();
  // The sandbox is set up from here, beside the session's first model request, so that the first
  // `shell` call finds it ready (or waits only for what is left). node:child_process, kept out of
  // start-up, is loaded with it.
  builtin("child_process");
  if (settings.sandbox?.set_up !== "on_first_use") void sandbox.start();
}

