// Input classification (SPEC-cli-command-mode): a line whose first non-whitespace character is `:`
// is a local command and never reaches the model; `::text` sends the literal `:text` with a literal
// marker; `!cmd` / `!!cmd` run a user shell command; everything else (including `/text`) is prompt
// text. Unknown or malformed commands fail here, locally, with a message a user can act on.

import { DEFAULT_BINDINGS, KEY_ACTIONS, keyLabel, type Bindings } from "./bindings.js";

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
}

export const COMMAND_SPECS: readonly CommandSpec[] = [
  { name: "help", usage: ":help [COMMAND]", summary: "list commands, or explain one", min: 0, max: 1 },
  { name: "quit", usage: ":quit", summary: "leave; a session this terminal started ends when no UI is left", min: 0, max: 0 },
  { name: "detach", usage: ":detach", summary: "leave and keep the session running (re-attach with tau attach)", min: 0, max: 0 },
  { name: "quit-session", usage: ":quit-session", summary: "end the session for every attached UI", min: 0, max: 0 },
  { name: "new", usage: ":new", summary: "leave this session and start a fresh one", min: 0, max: 0 },
  {
    name: "agent",
    usage: ":agent ID|NAME | :agent new [NAME] | :agent switch ID|NAME | :agent name NAME | :agent list | :agent suspend|activate [ID|NAME]",
    summary: "switch to, create, name or list agents; suspend one (agent cycling skips it) or make it active again",
    min: 1,
    max: 2,
    rest: true,
    subcommands: ["new", "switch", "name", "list", "suspend", "activate"],
    freeFirst: true,
  },
  { name: "agents", usage: ":agents [pick]", summary: "the session's agents as a tree with their state and work status; pick: choose one (fzf when on PATH)", min: 0, max: 1, subcommands: ["pick"] },
  { name: "model", usage: ":model [MODEL]", summary: "show the models, or select one for this agent", min: 0, max: 1 },
  { name: "cancel", usage: ":cancel", summary: "cancel this agent's running prompt", min: 0, max: 0 },
  { name: "compact", usage: ":compact [INSTRUCTIONS]", summary: "replace this agent's earlier conversation by a summary (now, or after its turn)", min: 0, max: 1, rest: true },
  { name: "history", usage: ":history", summary: "show this agent's earlier history, a page further back each time", min: 0, max: 0 },
  { name: "skill", usage: ":skill NAME [TEXT]", summary: "load a skill into this agent, with optional text", min: 1, max: 2, rest: true },
  { name: "set", usage: ":set [SETTING [VALUE]]", summary: "show or change a setting of this terminal", min: 0, max: 2 },
  { name: "theme", usage: ":theme [NAME]", summary: "list themes, or switch to one", min: 0, max: 1 },
  { name: "sessions", usage: ":sessions [WORDS]", summary: "list the saved sessions (title, age, project), or those matching every word; tau resume ID continues one", min: 0, max: 1, rest: true },
  {
    name: "handoff",
    usage: ":handoff [start | status | ready | wait | cancel | recover [resume|abandon]]",
    summary: "continue this agent's work in a fresh, linked session from a model-written dossier",
    min: 0,
    max: 2,
    subcommands: ["start", "status", "ready", "wait", "cancel", "recover"],
  },
  {
    name: "sandbox",
    usage:
      ":sandbox show | :sandbox doctor | :sandbox on|off | :sandbox mode interactive|non-interactive | :sandbox network allow|deny add|remove HOST | :sandbox filesystem allow-write|allow-read|deny-read add|remove PATH | :sandbox trust",
    summary: "the sandbox of the model's shell commands: show, diagnose, switch, widen for this session, trust this project",
    min: 1,
    max: 4,
    subcommands: ["show", "doctor", "on", "off", "mode", "network", "filesystem", "trust", "pending"],
  },
];

export type ParsedInput =
  | { readonly kind: "empty" }
  | { readonly kind: "prompt"; readonly text: string; readonly literal: boolean }
  | { readonly kind: "shell"; readonly command: string; readonly includeInContext: boolean }
  | { readonly kind: "command"; readonly spec: CommandSpec; readonly args: readonly string[] }
  | { readonly kind: "error"; readonly message: string };

/** Splits the argument text: words, the last taking the rest of the line when the spec says so. */
function splitArgs(text: string, spec: CommandSpec): string[] {
  const out: string[] = [];
  let rest = text.trim();
  while (rest !== "") {
    if (spec.rest === true && out.length === spec.max - 1) {
      out.push(rest);
      break;
    }
    const m = /^(\S+)\s*/u.exec(rest) as RegExpExecArray;
    out.push(m[1] as string);
    rest = rest.slice(m[0].length);
  }
  return out;
}

export function parseInput(raw: string, specs: readonly CommandSpec[] = COMMAND_SPECS): ParsedInput {
  const lead = raw.length - raw.trimStart().length;
  const body = raw.slice(lead);
  if (body === "") return { kind: "empty" };
  if (body.startsWith("::")) return { kind: "prompt", text: raw.slice(0, lead) + body.slice(1), literal: true };
  if (body.startsWith(":")) {
    const m = /^:(\S*)\s*([\s\S]*)$/u.exec(body) as RegExpExecArray;
    const name = m[1] as string;
    if (name === "") return { kind: "error", message: "an empty command: type a name after ':' (:help lists them), or '::' to send a literal ':'" };
    const spec = specs.find((s) => s.name === name);
    if (!spec) return { kind: "error", message: `unknown command :${name} — :help lists the commands; '::${name}' sends it as text` };
    const args = splitArgs(m[2] as string, spec);
    if (args.length < spec.min || args.length > spec.max) return { kind: "error", message: `usage: ${spec.usage}` };
    if (spec.subcommands && args.length > 0 && !spec.subcommands.includes(args[0] as string) && spec.freeFirst !== true) return { kind: "error", message: `usage: ${spec.usage}` };
    return { kind: "command", spec, args };
  }
  if (body.startsWith("!!")) {
    const command = body.slice(2).trim();
    return command === "" ? { kind: "error", message: "usage: !!COMMAND runs a shell command whose output stays in this terminal" } : { kind: "shell", command, includeInContext: false };
  }
  if (body.startsWith("!")) {
    const command = body.slice(1).trim();
    return command === "" ? { kind: "error", message: "usage: !COMMAND runs a shell command and adds its output to the agent's context" } : { kind: "shell", command, includeInContext: true };
  }
  return { kind: "prompt", text: raw, literal: false };
}

export const REDACTED = "‹redacted›";

/**
 * The form of a typed line that may be echoed and stored in prompt history: what the user typed,
 * except that a sensitive command's arguments are replaced by REDACTED (DECISIONS: history keeps
 * `::text` as typed, so recalling it still sends literal text).
 */
export function historyText(raw: string, parsed: ParsedInput): string {
  if (parsed.kind === "command" && parsed.spec.sensitive === true && parsed.args.length > 0) return `:${parsed.spec.name} ${REDACTED}`;
  return raw;
}

/** What a prompt-draft observation may carry: a colon command's name only, never its arguments. */
export function draftText(raw: string): string {
  const body = raw.trimStart();
  if (body.startsWith(":") && !body.startsWith("::")) return (/^:\S*/u.exec(body) as RegExpExecArray)[0];
  return raw;
}

export function helpText(name?: string, specs: readonly CommandSpec[] = COMMAND_SPECS, bindings: Bindings = DEFAULT_BINDINGS): string {
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
    "Keys: Enter sends, Alt-Enter or Ctrl-J adds a line, Up/Down browse history, Ctrl-R searches it, Tab completes a command or model name, Ctrl-C cancels or clears, Ctrl-D on an empty line quits",
    ...KEY_ACTIONS.filter((a) => bindings.byAction[a.action] !== "none").map((a) => `${keyLabel(bindings.byAction[a.action])} — ${a.summary}`),
    "(cli.yaml keys: binds these; :help lists them as bound)",
  ].join("\n");
}

/** Most candidates a completion lists when it cannot choose one. */
export const MAX_COMPLETIONS_SHOWN = 20;

export interface Completion {
  /** The line completed as far as the candidates agree (unchanged when they agree no further). */
  readonly text: string;
  /** The candidates, when more than one remains. */
  readonly candidates: readonly string[];
}

/**
 * Tab completion of a one-line command: a command's name after `:`, and a model name after
 * `:model ` (a model id, or `provider/id` for one several providers declare or once a `/` is typed).
 * Undefined when the line is not one of those.
 */
export function completeLine(line: string, models: readonly { provider: string; id: string }[], specs: readonly CommandSpec[] = COMMAND_SPECS): Completion | undefined {
  const command = /^(\s*):(\S*)$/u.exec(line);
  if (command) {
    const names = specs.map((s) => s.name).filter((n) => n.startsWith(command[2] as string));
    return complete(`${command[1]}:`, command[2] as string, names, " ");
  }
  const model = /^(\s*:model\s+)(\S*)$/u.exec(line);
  if (model) {
    const typed = model[2] as string;
    const owners = new Map<string, number>();
    for (const m of models) owners.set(m.id, (owners.get(m.id) ?? 0) + 1);
    const names = new Set<string>();
    for (const m of models) {
      const name = owners.get(m.id) === 1 && m.id.startsWith(typed) ? m.id : `${m.provider}/${m.id}`;
      if (name.startsWith(typed)) names.add(name);
    }
    return complete(model[1] as string, typed, [...names].sort(), "");
  }
  return undefined;
}

function complete(head: string, typed: string, names: readonly string[], after: string): Completion {
  if (names.length === 0) return { text: head + typed, candidates: [] };
  if (names.length === 1) return { text: `${head}${names[0]}${after}`, candidates: [] };
  let common = names[0] as string;
  for (const n of names) while (!n.startsWith(common)) common = common.slice(0, -1);
  return { text: head + (common.length > typed.length ? common : typed), candidates: names };
}
