// Input classification (SPEC-cli-command-mode): a line whose first non-whitespace character is `:`
// is a local command and never reaches the model; `::text` sends the literal `:text` with a literal
// marker; `!cmd` / `!!cmd` run a user shell command. `/name` for a name in the colon table runs that
// command as `:name` would, `//text` sends the literal `/text`, and any other `/text` is prompt text
// unchanged (DECISION-slash-commands). Everything else is prompt text. Unknown or malformed colon
// commands fail here, locally, with a message a user can act on.

import { commandSpecs, type CommandSpec } from "./colon-commands.js";

// The command table is declared in colon-commands.ts; these names are what the documentation site
// and the tests read.
export { COLON_COMMANDS as COMMAND_SPECS, helpText, type CommandSpec } from "./colon-commands.js";

export type ParsedInput =
  | { readonly kind: "empty" }
  | { readonly kind: "prompt"; readonly text: string; readonly literal: boolean }
  | { readonly kind: "shell"; readonly command: string; readonly includeInContext: boolean }
  | { readonly kind: "command"; readonly spec: CommandSpec; readonly args: readonly string[]; readonly slash?: true }
  /** `sensitive`: the command the line names, sensitive or unknown, typed wrong (its words may hold a secret). */
  | { readonly kind: "error"; readonly message: string; readonly sensitive?: string; readonly unknown?: true };

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

/** The command a `/name` line names, when its name is one of the colon table's (DECISION-slash-commands). */
function slashCommand(body: string, specs: readonly CommandSpec[]): CommandSpec | undefined {
  const m = /^\/(\S+)/u.exec(body);
  return m === null ? undefined : specs.find((s) => s.name === m[1]);
}

/** A known command's arguments, checked against its usage. */
function commandOf(spec: CommandSpec, argText: string, slash: boolean): ParsedInput {
  const args = splitArgs(argText, spec);
  const usage: ParsedInput = { kind: "error", message: `usage: ${spec.usage}`, ...(spec.sensitive === true ? { sensitive: spec.name } : {}) };
  if (args.length < spec.min || args.length > spec.max) return usage;
  if (spec.subcommands && args.length > 0 && !spec.subcommands.includes(args[0] as string) && spec.freeFirst !== true) return usage;
  return slash ? { kind: "command", spec, args, slash: true } : { kind: "command", spec, args };
}

export function parseInput(raw: string, specs: readonly CommandSpec[] = commandSpecs()): ParsedInput {
  const lead = raw.length - raw.trimStart().length;
  const body = raw.slice(lead);
  if (body === "") return { kind: "empty" };
  if (body.startsWith("::")) return { kind: "prompt", text: raw.slice(0, lead) + body.slice(1), literal: true };
  if (body.startsWith(":")) {
    const m = /^:(\S*)\s*([\s\S]*)$/u.exec(body) as RegExpExecArray;
    const name = m[1] as string;
    if (name === "") return { kind: "error", message: "an empty command: type a name after ':' (:help lists them), or '::' to send a literal ':'" };
    const spec = specs.find((s) => s.name === name);
    // An unknown command may be an extension's sensitive one not offered yet (its extension still
    // starting): its words are not kept either.
    if (!spec) return { kind: "error", message: `unknown command :${name} — :help lists the commands; '::${name}' sends it as text`, unknown: true, ...(/\S/u.test(m[2] as string) ? { sensitive: name } : {}) };
    return commandOf(spec, m[2] as string, false);
  }
  // `//text` is the literal `/text`; `/name` of a known command runs it; any other `/text` is a prompt.
  if (body.startsWith("//")) return { kind: "prompt", text: raw.slice(0, lead) + body.slice(1), literal: false };
  const slash = body.startsWith("/") ? slashCommand(body, specs) : undefined;
  if (slash !== undefined) return commandOf(slash, body.slice(1 + slash.name.length), true);
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

/**
 * Whether a line names a command no one offers yet, `:NAME` or `/NAME`, which an extension still
 * starting may offer (a sensitive one, say): the interactive UI reads such a line again once the
 * session's extensions have started, rather than send it to the model or refuse it now.
 */
export function namesUnknownCommand(raw: string, parsed: ParsedInput): boolean {
  if (parsed.kind === "error") return parsed.unknown === true;
  return parsed.kind === "prompt" && !parsed.literal && /^\/[^\s/]/u.test(raw.trimStart());
}

export const REDACTED = "‹redacted›";

/**
 * The form of a typed line that may be echoed and stored in prompt history: what the user typed,
 * except that a sensitive command's arguments are replaced by REDACTED (DECISIONS: history keeps
 * `::text` as typed, so recalling it still sends literal text).
 */
export function historyText(raw: string, parsed: ParsedInput): string {
  if (parsed.kind === "command" && parsed.spec.sensitive === true && parsed.args.length > 0) return `:${parsed.spec.name} ${REDACTED}`;
  // A sensitive command typed wrong (too many words, say) may still hold the secret.
  if (parsed.kind === "error" && parsed.sensitive !== undefined) return `:${parsed.sensitive} ${REDACTED}`;
  return raw;
}

/** What a prompt-draft observation may carry: a colon command's name only, never its arguments. */
export function draftText(raw: string): string {
  const body = raw.trimStart();
  if (body.startsWith(":") && !body.startsWith("::")) return (/^:\S*/u.exec(body) as RegExpExecArray)[0];
  const slash = body.startsWith("/") ? slashCommand(body, commandSpecs()) : undefined;
  if (slash !== undefined) return `/${slash.name}`;
  return raw;
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
export function completeLine(line: string, models: readonly { provider: string; id: string }[], specs: readonly CommandSpec[] = commandSpecs()): Completion | undefined {
  const command = /^(\s*):(\S*)$/u.exec(line);
  if (command) {
    const names = specs.map((s) => s.name).filter((n) => n.startsWith(command[2] as string));
    return complete(`${command[1]}:`, command[2] as string, names, " ");
  }
  // A reviewer is always named `provider/model` (SPEC-sandbox-reviewer).
  const reviewer = /^(\s*:sandbox\s+classifier\s+)(\S*)$/u.exec(line);
  if (reviewer) {
    const typed = reviewer[2] as string;
    const names = [...new Set(models.map((m) => `${m.provider}/${m.id}`)), "false"].filter((n) => n.startsWith(typed));
    return complete(reviewer[1] as string, typed, names.sort(), "");
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
