// How a tau process exits: one map from the kind of what went wrong to the exit status
// (SPEC-cli-errors). Every tau process takes its status from here: the CLI's commands and fast paths
// (through their errors, cli/errors.ts), the `tau` launcher script (whose lines the build writes from
// it), the extension entry, and a parent reading a child's status (a run's early daemon that stopped
// on a configuration mistake). In startup/ because each of them may import it; plain data, in every
// fast bundle. A test refuses a literal exit status anywhere else (GATE-cli-declared-once).

/** A process that did what it was asked. */
export const EXIT_OK = 0;

/** The exit status of each kind of error. Scripts rely on these: changing one is a breaking change. */
export const EXIT_CODES = {
  /** What was typed cannot be done as asked (a flag, an argument, a colon command, no terminal): change the command. */
  usage: 2,
  /** A configuration file, a provider profile or a secret file is wrong: the message names what to fix. */
  config: 2,
  /** The work was attempted and did not succeed (a failed prompt, a provider's error, nothing to remove). */
  failed: 1,
  /** Something tau needs is missing or unusable (its daemon exited before it started, the runtime folder, the build). */
  unavailable: 1,
  /** The prompt was never sent: no model serves it, no provider declared one in time, the agent or skill was refused. */
  refused: 4,
  /** The provider could not be reached, or the connection to it was lost (a network error or a timeout, after the retries). */
  unreachable: 5,
  /** The answer came but is incomplete: it reached the output limit, or a content filter stopped it. */
  cut_short: 6,
  /** The session's daemon went away (it was killed or exited) before the prompt's outcome was known. */
  daemon_lost: 7,
  /** The user interrupted the run (128 + SIGINT). */
  cancelled: 130,
  /** The launcher script's background child could not set a run's daemon up; the client starts one itself. Never a user's to see. */
  not_started: 3,
} as const satisfies Record<string, number>;

export type ExitKind = keyof typeof EXIT_CODES;
