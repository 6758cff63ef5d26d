// `tau run`'s flags, declared once (GATE-cli-declared-once). The fast path's parser (args.ts),
// the command framework's `run` command (commands/run.ts, which answers `tau run --help` and gives
// the docs site its CLI page) and the `tau` launcher script (which looks for --ephemeral before the
// client has even started: cli/launcher-script.ts) are all made from this table. Plain data: it is
// part of the fast path's first bundle.
import { parseArgsOptions as tableOptions, type FlagSpec, type FlagValues, type ParseArgsOptions as TableOptions } from "../../startup/flags.js";

/** A row of the table: the shape every declared flag table has (startup/flags.ts). */
export type RunFlag = FlagSpec;

export const RUN_FLAGS = {
  prompt: { type: "string", char: "p", description: "The prompt text." },
  "prompt-stdin": { type: "boolean", description: "Read the prompt from standard input." },
  json: { type: "boolean", description: "Stream the run's events as JSON lines instead of printing the answer: its agent's agent.started first, a run.ended line saying how the run ended last." },
  ephemeral: { type: "boolean", description: "Keep no session files." },
  continue: { type: "boolean", description: "Continue this project's most recently active saved session: the prompt goes to its agent, with the conversation so far." },
  resume: { type: "string", description: "Continue the saved session with this id (or a unique prefix of one), as --continue does." },
  fork: { type: "boolean", description: "With --continue or --resume: continue a copy of that session (a new session with its agent's conversation up to its last finished turn), leaving it as it was; it may be running." },
  model: { type: "string", description: "The model to use (provider/model or a model id)." },
  skill: { type: "string", description: "Load this skill (SKILL.md) as the prompt; -p TEXT, if given, follows it as your own words." },
  "harness-config": { type: "string", multiple: true, description: "Override one harness.yaml key for this run (KEY=VALUE, dotted keys; repeatable)." },
  "no-sandbox": { type: "boolean", description: "Run the model's shell commands without the sandbox, with your full rights." },
  "sandbox-config": { type: "string", description: "Use this sandbox.yaml instead of the global and the project one." },
  approval: { type: "string", description: "What a sandbox denial does: never (refuse at once with the suggested command; the only policy without a UI)." },
} as const satisfies Record<string, RunFlag>;

export type RunFlagName = keyof typeof RUN_FLAGS;

/** The flag a run keeps no session files with: the launcher script makes no session folder for it. */
export const EPHEMERAL_FLAG: RunFlagName = "ephemeral";

/** The flags' values, by name, as either parser gives them. */
export type RunFlagValues = FlagValues<typeof RUN_FLAGS>;

/** node:util's parseArgs option for each flag, typed so that parseArgs types each value. */
export type ParseArgsOptions = TableOptions<typeof RUN_FLAGS>;

/** The table as node:util's parseArgs options (the fast path's parser). */
export function parseArgsOptions(): ParseArgsOptions {
  return tableOptions(RUN_FLAGS);
}
