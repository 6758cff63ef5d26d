// `tau run`'s flags, declared once (GATE-cli-declared-once). The fast path's parser (args.ts),
// the command framework's `run` command (commands/run.ts, which answers `tau run --help` and gives
// the docs site its CLI page) and the `tau` launcher script (which looks for --ephemeral before the
// client has even started: cli/launcher-script.ts) are all made from this table. Plain data: it is
// part of the fast path's first bundle.

export interface RunFlag {
  readonly type: "string" | "boolean";
  /** A one-letter alias (`-p`). */
  readonly char?: string;
  /** May be given more than once; the values are kept in order. */
  readonly multiple?: boolean;
  /** One line for `tau run --help` and the docs site. */
  readonly description: string;
}

export const RUN_FLAGS = {
  prompt: { type: "string", char: "p", description: "The prompt text." },
  "prompt-stdin": { type: "boolean", description: "Read the prompt from standard input." },
  json: { type: "boolean", description: "Stream the run's events as JSON lines instead of printing the answer: its agent's agent.started first, a run.ended line saying how the run ended last." },
  ephemeral: { type: "boolean", description: "Keep no session files." },
  continue: { type: "boolean", description: "Continue this project's most recently active saved session: the prompt goes to its agent, with the conversation so far." },
  resume: { type: "string", description: "Continue the saved session with this id (or a unique prefix of one), as --continue does." },
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

type Flag<K extends RunFlagName> = (typeof RUN_FLAGS)[K];

/** The flags' values, by name, as either parser gives them. */
export type RunFlagValues = {
  readonly [K in RunFlagName]?: (Flag<K> extends { type: "boolean" } ? boolean : Flag<K> extends { multiple: true } ? readonly string[] : string) | undefined;
};

/** node:util's parseArgs option for each flag, typed so that parseArgs types each value. */
export type ParseArgsOptions = {
  [K in RunFlagName]: { type: Flag<K>["type"]; short?: string } & (Flag<K> extends { multiple: true } ? { multiple: true } : { multiple?: false });
};

/** The table as node:util's parseArgs options (the fast path's parser). */
export function parseArgsOptions(): ParseArgsOptions {
  const out: Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }> = {};
  for (const [name, f] of Object.entries(RUN_FLAGS) as Array<[RunFlagName, RunFlag]>) {
    out[name] = { type: f.type, ...(f.char ? { short: f.char } : {}), ...(f.multiple ? { multiple: true } : {}) };
  }
  return out as ParseArgsOptions;
}
