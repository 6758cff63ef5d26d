// The colon commands of the interactive UI (SPEC-cli-command-mode, "Commands"), declared once:
// each command's name, its arguments, its help and its handler. Parsing and Tab completion
// (command-mode.ts), `:help`, the app's dispatch and the documentation site all read this table.
// A handler acts through the components the app lends it (`CommandHost`), and through the session
// client only by wire events a scripted socket client could send too (headless parity). `tau run`
// parses its prompt with this table too, so this file imports only types and the key bindings (for
// `helpText`): what a handler needs at run time comes in through the host.
import type { SessionClient } from "../session-client.js";
import { DEFAULT_BINDINGS, KEY_ACTIONS, keyLabel, type Bindings } from "./bindings.js";
import type { Exit, UiContext } from "./context.js";
import type { AgentSwitcher } from "./agent-switcher.js";
import type { HandoffState } from "./handoff-dialog.js";
import type { HistoryPages } from "./history-pages.js";
import type { ModelSelector } from "./model-selector.js";
import type { SandboxDialog } from "./sandbox-dialog.js";
import type { SessionList } from "./session-picker.js";
import type { Themes } from "./themes.js";

export interface CommandSpec {
  readonly name: string;
  readonly usage: string;
  readonly summary: string;
  /** Fewest and most arguments (words; the last one may take the rest of the line when `rest`). */
  readonly min: number;
  readonly max: number;
  /** The last argument takes the rest of the line verbatim. */
  readonly rest?: boolean;
  /** Allowed first arguments (sub-commands), when the command has them. */
  readonly subcommands?: readonly string[];
  /** A first argument that is no sub-command is a name the command takes (`:agent NAME`). */
  readonly freeFirst?: boolean;
  /** Arguments are secrets: redacted from echo, history and drafts. */
  readonly sensitive?: boolean;
  /** Owned by this extension instance: run there, with the arguments raw (SPEC-extension-commands). */
  readonly extension?: string;
}

export interface Settings {
  /** Prompts sent while the agent works: folded into the running turn (`steer`) or queued after it. */
  mode: "steer" | "queue";
  reasoning: boolean;
}

/** What a handler may use: the app's components, its settings and the ways to leave. */
export interface CommandHost {
  readonly ui: UiContext;
  readonly settings: Settings;
  /** `:help`'s text (helpText below), with the keys as this terminal binds them. */
  help(name: string | undefined): string;
  readonly themes: Themes;
  readonly sessions: SessionList;
  readonly agents: AgentSwitcher;
  readonly models: ModelSelector;
  readonly history: HistoryPages;
  readonly sandbox: SandboxDialog;
  readonly handoff: HandoffState;
  leave(how: Exit): void;
  /** Forks the focused agent into a new session and leaves for it (or says why it cannot). */
  fork(): void;
  /** Cancels the focused agent's running prompt (or says there is none). */
  cancel(): void;
}

type Args = readonly string[];

/** A command the UI runs by itself, attached or not. */
interface LocalCommand extends CommandSpec {
  readonly attached?: false;
  run(host: CommandHost, args: Args): void | Promise<void>;
}

/** A command that needs the session: refused with a notice before the UI is attached. */
interface SessionCommand extends CommandSpec {
  readonly attached: true;
  run(host: CommandHost, args: Args, client: SessionClient): void | Promise<void>;
}

export type ColonCommand = LocalCommand | SessionCommand;

const SETTINGS_HELP = "settings: mode steer|queue (prompts sent while the agent works), reasoning on|off (show model reasoning)";

export const COLON_COMMANDS: readonly ColonCommand[] = [
  {
    name: "help",
    usage: ":help [COMMAND]",
    summary: "list commands, or explain one",
    min: 0,
    max: 1,
    run: (host, [name]) => host.ui.note("info", host.help(name)),
  },
  { name: "quit", usage: ":quit", summary: "leave; a session this terminal started ends when no UI is left", min: 0, max: 0, run: (host) => host.leave("quit") },
  { name: "detach", usage: ":detach", summary: "leave and keep the session running (re-attach with tau attach)", min: 0, max: 0, run: (host) => host.leave("detach") },
  { name: "quit-session", usage: ":quit-session", summary: "end the session for every attached UI", min: 0, max: 0, run: (host) => host.leave("quit-session") },
  {
    name: "new",
    usage: ":new",
    summary: "leave this session and start a fresh one",
    min: 0,
    max: 0,
    // A handoff under way holds the user's prompts for the new session: no switching meanwhile (SPEC-handoff).
    run: (host) => (host.handoff.busy ? host.ui.note("error", ":new is refused while a handoff is under way; :handoff cancel ends it") : host.leave("new")),
  },
  {
    name: "fork",
    usage: ":fork",
    summary: "continue a copy of this agent's conversation (up to its last finished turn) in a new session; this one is left as it was",
    min: 0,
    max: 0,
    attached: true,
    run: (host) => (host.handoff.busy ? host.ui.note("error", ":fork is refused while a handoff is under way; :handoff cancel ends it") : host.fork()),
  },
  {
    name: "agent",
    usage: ":agent N|ID|NAME|main | :agent new [NAME] | :agent switch N|ID|NAME|main | :agent name NAME | :agent list | :agent suspend|activate [ID|NAME]",
    summary: "switch to, create, name or list agents; suspend one (agent cycling skips it) or make it active again",
    min: 1,
    max: 2,
    rest: true,
    subcommands: ["new", "switch", "name", "list", "suspend", "activate"],
    freeFirst: true,
    attached: true,
    run: (host, args, client) => host.agents.command(client, args),
  },
  {
    name: "agents",
    usage: ":agents [pick]",
    summary: "the session's agents as a tree with their state and work status; pick: choose one (fzf when on PATH)",
    min: 0,
    max: 1,
    subcommands: ["pick"],
    attached: true,
    run: (host, args, client) => (args[0] === "pick" ? host.agents.pick(client) : host.agents.list(client)),
  },
  { name: "model", usage: ":model [MODEL]", summary: "show the models, or select one for this agent", min: 0, max: 1, attached: true, run: (host, [model], client) => host.models.command(client, model) },
  { name: "cancel", usage: ":cancel", summary: "cancel this agent's running prompt", min: 0, max: 0, run: (host) => host.cancel() },
  {
    name: "compact",
    usage: ":compact [INSTRUCTIONS]",
    summary: "replace this agent's earlier conversation by a summary (now, or after its turn)",
    min: 0,
    max: 1,
    rest: true,
    attached: true,
    run: (host, [instructions], client) => client.emit("ui.compact_request", { agent_id: host.ui.focus(), ...(instructions !== undefined ? { instructions } : {}) }),
  },
  {
    name: "history",
    usage: ":history",
    summary: "show this agent's earlier history, a page further back each time",
    min: 0,
    max: 0,
    attached: true,
    run: (host, _args, client) => host.history.older(client),
  },
  {
    name: "skill",
    usage: ":skill NAME [TEXT]",
    summary: "load a skill into this agent, with optional text",
    min: 1,
    max: 2,
    rest: true,
    attached: true,
    run: async (host, [name, text], client) => {
      // An unknown skill comes back as a directed refusal naming the known ones; nothing is sent.
      const busy = host.ui.current()?.busy === true;
      await client.request("ui.skill_load", { agent_id: host.ui.focus(), name: name as string, ...(text !== undefined ? { text } : {}), mode: busy ? host.settings.mode : "queue" });
    },
  },
  { name: "set", usage: ":set [SETTING [VALUE]]", summary: "show or change a setting of this terminal", min: 0, max: 2, run: set },
  { name: "theme", usage: ":theme [NAME]", summary: "list themes, or switch to one", min: 0, max: 1, run: (host, [name]) => host.themes.command(name) },
  {
    name: "sessions",
    usage: ":sessions [WORDS]",
    summary: "list the saved sessions (title, age, project), or those matching every word; tau resume ID continues one",
    min: 0,
    max: 1,
    rest: true,
    run: (host, [filter]) => host.sessions.list(filter),
  },
  {
    name: "handoff",
    usage: ":handoff [start | status | cancel | recover [resume|abandon]]",
    summary: "continue this agent's work in a fresh, linked session from a model-written dossier",
    min: 0,
    max: 2,
    subcommands: ["start", "status", "cancel", "recover"],
    attached: true,
    run: (host, args) => host.handoff.command(args),
  },
  {
    name: "mcp",
    usage: ":mcp",
    summary: "the session's MCP servers: each one's state and last error, its restarts and its tools",
    min: 0,
    max: 0,
    attached: true,
    run: async (host, _args, client) => {
      const n = await client.request("ui_mcp_request", {});
      host.ui.note(n.level === "critical" ? "error" : n.level, n.text);
    },
  },
  {
    name: "sandbox",
    usage:
      ":sandbox show | :sandbox doctor | :sandbox on|off | :sandbox mode interactive|non-interactive | :sandbox network allow|deny add|remove HOST | :sandbox filesystem allow-write|allow-read|deny-read add|remove PATH | :sandbox trust | :sandbox classifier provider/model|false|default [--global]",
    summary: "the sandbox of the model's shell commands: show, diagnose, switch, widen for this session, trust this project, choose its automatic reviewer",
    min: 1,
    max: 4,
    subcommands: ["show", "doctor", "on", "off", "mode", "network", "filesystem", "trust", "pending", "classifier"],
    attached: true,
    run: (host, args) => host.sandbox.command(args, false),
  },
];

/** Most arguments an extension's command takes (the wire's bound). */
const EXTENSION_COMMAND_MAX_ARGS = 16;

let extensionCommands: readonly CommandSpec[] = [];

/**
 * The colon commands the session's extensions offer, as the daemon last said
 * (`ui_extension_commands`); a name the table above has stays the table's.
 */
export function setExtensionCommands(specs: ReadonlyArray<{ name: string; usage: string; summary: string; sensitive: boolean; instance: string }>): void {
  extensionCommands = specs
    .filter((s) => !COLON_COMMANDS.some((c) => c.name === s.name))
    .map((s) => ({ name: s.name, usage: s.usage, summary: s.summary, min: 0, max: EXTENSION_COMMAND_MAX_ARGS, sensitive: s.sensitive, extension: s.instance }));
}

/** Every command this interface knows now: its own, then the extensions'. */
export function commandSpecs(): readonly CommandSpec[] {
  return extensionCommands.length === 0 ? COLON_COMMANDS : [...COLON_COMMANDS, ...extensionCommands];
}

/** Runs the handler of the command `name` (parsed and checked against its spec already). */
export async function runCommand(host: CommandHost, name: string, args: Args): Promise<void> {
  const command = COLON_COMMANDS.find((c) => c.name === name);
  if (command === undefined) return runExtensionCommand(host, name, args);
  if (command.attached !== true) return command.run(host, args);
  const client = host.ui.client();
  if (!client) return host.ui.note("error", "not attached to a session yet");
  return command.run(host, args, client);
}

/** An extension's command: its arguments go, raw, to the daemon, which hands them to the owner only. */
async function runExtensionCommand(host: CommandHost, name: string, args: Args): Promise<void> {
  if (!extensionCommands.some((c) => c.name === name)) return;
  const client = host.ui.client();
  if (!client) return host.ui.note("error", "not attached to a session yet");
  const n = await client.request("ui_extension_command_request", { name, args: [...args] });
  host.ui.note(n.level === "critical" ? "error" : n.level, n.text);
}

export function helpText(name?: string, specs: readonly CommandSpec[] = commandSpecs(), bindings: Bindings = DEFAULT_BINDINGS): string {
  if (name !== undefined) {
    const spec = specs.find((s) => s.name === name.replace(/^:/, ""));
    if (!spec) return `unknown command :${name} — :help lists the commands`;
    return `${spec.usage}\n  ${spec.summary}`;
  }
  return [
    ...specs.map((s) => `${s.usage.split(" | ")[0]} — ${s.summary}`),
    "!COMMAND — run a shell command; its output enters the agent's context",
    "!!COMMAND — run a shell command; its output stays in this terminal",
    "::TEXT — send TEXT starting with ':' to the model",
    "/COMMAND — the same as :COMMAND; //TEXT sends TEXT starting with '/'; any other /TEXT is a prompt",
    "Keys: Enter sends, Alt-Enter or Ctrl-J adds a line, Up/Down browse history, Ctrl-R searches it, Tab completes a command or model name, Ctrl-C cancels or clears, Ctrl-D on an empty line quits",
    ...KEY_ACTIONS.filter((a) => bindings.byAction[a.action] !== "none").map((a) => `${keyLabel(bindings.byAction[a.action])} — ${a.summary}`),
    "(cli.yaml keys: binds these; :help lists them as bound)",
  ].join("\n");
}

/** `:set [SETTING [VALUE]]`: this terminal's settings. */
function set(host: CommandHost, [key, value]: Args): void {
  const { settings } = host;
  if (key === undefined) return host.ui.note("info", `mode ${settings.mode}, reasoning ${settings.reasoning ? "on" : "off"}\n${SETTINGS_HELP}`);
  if (key === "mode" && (value === "steer" || value === "queue")) settings.mode = value;
  else if (key === "reasoning" && (value === "on" || value === "off")) settings.reasoning = value === "on";
  else return host.ui.note("error", `cannot set ${key}${value !== undefined ? ` to ${value}` : ""}; ${SETTINGS_HELP}`);
  host.ui.note("info", `${key} ${value}`);
}
