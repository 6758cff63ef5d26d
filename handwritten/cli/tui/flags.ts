// The interactive UI's commands — `tau` (a new session this terminal owns), `tau attach [SESSION]`
// and `tau resume [SESSION]` — with their flags and arguments, declared once
// (GATE-cli-declared-once): the UI's own parser (main.ts), the command framework's `attach` and
// `resume` commands (their `--help` and the docs site) and the `tau` launcher's choice of the UI
// (bin/tau.cjs, through the launch constants) are made from this table. Plain data: the UI's first
// chunk holds it.
import { flagProblemText, parseFlags, usageWords, type ArgSpec, type FlagTable } from "../../startup/flags.js";
import { HELP_FLAGS } from "../../startup/launch-facts.js";

export interface UiCommand {
  readonly flags: FlagTable;
  readonly args: readonly ArgSpec[];
  /** One line for `tau --help` and the docs site. */
  readonly summary: string;
  readonly description?: string;
}

export const UI_COMMANDS = {
  start: {
    summary: "Start a session in this folder and attach the interactive UI.",
    flags: {
      "harness-config": { type: "string", multiple: true, value: "KEY=VALUE", description: "Override one harness.yaml key for this session (KEY=VALUE, dotted keys; repeatable)." },
    },
    args: [],
  },
  attach: {
    summary: "Attach the interactive UI to a running session.",
    description:
      "With no SESSION: the one running session, or a choice when several run. Leaving with :detach keeps the session running; :quit leaves it to the other UIs (a session this terminal started ends when its last UI leaves).",
    flags: {},
    args: [{ name: "session", description: "The session id (tau session list shows them)." }],
  },
  resume: {
    summary: "Restart a saved session and attach the interactive UI.",
    description:
      "With no SESSION: the saved session, or a choice among the newest ones when there are several. A session that is still running is attached instead of restarted. With --fork, a copy of the session (its agent's conversation up to its last finished turn, under new ids) is made and resumed, and the session itself is left as it was; it may be running.",
    flags: {
      fork: { type: "boolean", description: "Resume a new copy of the session instead of the session itself." },
    },
    args: [{ name: "session", description: "The session id." }],
  },
} as const satisfies Record<string, UiCommand>;

export type UiCommandName = keyof typeof UI_COMMANDS;

/** The usage line of the three, from the table: `tau [--harness-config KEY=VALUE]… | tau attach [SESSION] | …`. */
export const UI_USAGE = `usage: ${(Object.entries(UI_COMMANDS) as Array<[UiCommandName, UiCommand]>)
  .map(([name, c]) => ["tau", name === "start" ? "" : name, usageWords(c.flags, c.args)].filter((w) => w !== "").join(" "))
  .join(" | ")}`;

export type UiArgs =
  | { readonly kind: "help" }
  | { readonly kind: "run"; readonly command: UiCommandName; readonly overrides: readonly string[]; readonly session?: string; readonly fork?: boolean }
  | { readonly kind: "refused"; readonly message: string };

/** The UI's command line, read against its command's row of the table. */
export function parseUiArgs(argv: readonly string[]): UiArgs {
  const command: UiCommandName = argv[0] === "attach" || argv[0] === "resume" ? argv[0] : "start";
  const rest = command === "start" ? argv : argv.slice(1);
  if (rest.some((a) => HELP_FLAGS.includes(a))) return { kind: "help" };
  const row: UiCommand = UI_COMMANDS[command];
  const parsed = parseFlags(row.flags, rest, row.args.length);
  if (!parsed.ok) return { kind: "refused", message: `${flagProblemText(parsed.problem)}\n${UI_USAGE}` };
  const values = parsed.values as { "harness-config"?: readonly string[]; fork?: boolean };
  const overrides = values["harness-config"] ?? [];
  const [session] = parsed.positionals;
  return { kind: "run", command, overrides, ...(session !== undefined ? { session } : {}), ...(values.fork === true ? { fork: true } : {}) };
}
