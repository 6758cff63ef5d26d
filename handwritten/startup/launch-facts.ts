// What every tau process and the `tau` launcher script must agree on when one tau process starts
// another: where the roots are (DECISION-storage-roots), what an id looks like, which arguments and
// variables hand a run's early daemon over to its client, and how secrets and a deferred
// NODE_EXTRA_CA_CERTS travel. Declared once, here: the TypeScript that resolves, mints and parses
// them imports these values, and the build writes the launcher script (the `#!` lines of
// bin/tau.cjs, see cli/launcher-script.ts) from them, so the two cannot drift apart
// (GATE-cli-declared-once).
//
// In startup/ because every process that takes part imports it: the launcher's client (cli/), the
// daemon it starts (harness/, and the early daemon's entry wherever it lives), config/ (the roots)
// and transport/. Plain data and small pure functions only: it is in every fast bundle.

// ---- Roots ---------------------------------------------------------------------------------------

/** One folder for everything when set (tests always set it): `config/`, `state/` and `runtime/` below it. */
export const TAU_HOME_ENV = "TAU_HOME";

export type RootName = "config" | "state" | "runtime";

/** A way to find a root: the value of `env`, when set and not empty, joined with `path`. */
export interface RootRule {
  readonly env: string;
  readonly path: readonly string[];
}

/**
 * Where each root is, rule by rule, the first that applies winning. When none applies, config and
 * state are found from the user's home folder as node reports it (`os.homedir()`) and runtime files
 * go to `RUNTIME_FALLBACK` (see config/paths.ts); the launcher script, which cannot ask, then starts
 * no early daemon.
 */
export const ROOT_RULES: Readonly<Record<RootName, readonly RootRule[]>> = {
  config: [
    { env: TAU_HOME_ENV, path: ["config"] },
    { env: "XDG_CONFIG_HOME", path: ["tau"] },
    { env: "HOME", path: [".config", "tau"] },
  ],
  state: [
    { env: TAU_HOME_ENV, path: ["state"] },
    { env: "XDG_STATE_HOME", path: ["tau"] },
    { env: "HOME", path: [".local", "state", "tau"] },
  ],
  runtime: [
    { env: TAU_HOME_ENV, path: ["runtime"] },
    { env: "XDG_RUNTIME_DIR", path: ["tau"] },
  ],
};

/** The path, below the user's home folder, of config and state when no rule applies. */
export const HOME_FALLBACK: Readonly<Record<"config" | "state", readonly string[]>> = {
  config: [".config", "tau"],
  state: [".local", "state", "tau"],
};

/** The runtime folder when no rule applies (mode 0700, checked): per user, in /tmp. */
export function runtimeFallback(uid: number): string {
  return `/tmp/tau-${uid}`;
}

/** Below the state root: one folder per session (mode 0700), holding its journal and its daemon's log. */
export const SESSIONS_DIR = "sessions";
export const SESSION_DIR_MODE = 0o700;
/** The daemon's output, in its session's folder (mode 0600). */
export const DAEMON_LOG = "daemon.log";

// ---- Ids -----------------------------------------------------------------------------------------

/** The kinds of id tau mints: session, agent, prompt, request, call. */
export type IdKind = "s" | "a" | "p" | "r" | "c";

/** Random bytes in an id (hex, so twice as many digits). */
export const ID_RANDOM_BYTES = 6;

/** An id: `<kind>-<milliseconds since the epoch, base 36>-<random hex>`; the time part only orders ids. */
export function formatId(kind: IdKind, epochMs: number, randomHex: string): string {
  return `${kind}-${Math.trunc(epochMs).toString(36)}-${randomHex}`;
}

/** An id of `kind` as tau mints it (the time part fits 11 base-36 digits until the year 5188). */
export function idPattern(kind: IdKind): RegExp {
  return new RegExp(`^${kind}-[0-9a-z]{1,11}-[0-9a-f]{${ID_RANDOM_BYTES * 2}}$`);
}

export const SESSION_ID_PATTERN = idPattern("s");

/** Random bytes of a daemon's runtime instance (hex), which names its socket (SPEC-runtime-discovery). */
export const INSTANCE_BYTES = 8;
/** An instance as a regular expression's source, for patterns it is part of (a runtime stem). */
export const INSTANCE_SOURCE = `[0-9a-f]{${INSTANCE_BYTES * 2}}`;
export const INSTANCE_PATTERN = new RegExp(`^${INSTANCE_SOURCE}$`);

// ---- The early daemon of a `tau run` ------------------------------------------------------------

/** The command whose daemon the launcher script starts beside the client. */
export const RUN_COMMAND = "run";
/** The hidden daemon entry and how the launcher script's child becomes a run's daemon: `daemon --for-run SESSION INSTANCE RUN-ARGS…`. */
export const DAEMON_COMMAND = "daemon";
export const FOR_RUN_FLAG = "--for-run";
/** Asking for help: the command framework answers, nothing is started. */
export const HELP_FLAGS: readonly string[] = ["-h", "--help"];
/** Asking for the version: answered before anything else is loaded. */
export const VERSION_FLAGS: readonly string[] = ["--version", "-v"];
/** The hidden entry of tau's own extensions: `ext NAME`. */
export const EXT_COMMAND = "ext";

/**
 * Where the launcher script tells the run's client (and only it) the pid of the child it started to
 * become the run's daemon. The script clears an inherited value first; the client removes it once read.
 */
export const RUN_DAEMON_ENV = "TAU_RUN_DAEMON";

/** The arguments of the early daemon's command line: `daemon --for-run SESSION INSTANCE` then the run's own. */
export function earlyDaemonArgs(sessionId: string, instance: string, runArgs: readonly string[]): string[] {
  return [DAEMON_COMMAND, FOR_RUN_FLAG, sessionId, instance, ...runArgs];
}

// ---- Secrets and a deferred NODE_EXTRA_CA_CERTS --------------------------------------------------

/** The variables that are secrets, never in a tau process's environment block: these names and every `SECRET_PREFIX` one. */
export const SECRET_NAMES: readonly string[] = ["OPENAI_API_KEY"];
export const SECRET_PREFIX = "TAU_SECRET_";
/** The fd a tau process reads its secrets from (`NAME=value` lines), and the variable that says it should. */
export const SECRETS_FD = 3;
export const SECRETS_FD_ENV = "TAU_SECRETS_FD";

/** The variable node reads its extra CA certificates from at start-up, and the name it travels under to a tau process. */
export const EXTRA_CA_CERTS_ENV = "NODE_EXTRA_CA_CERTS";
export const DEFERRED_CA_CERTS_ENV = "TAU_NODE_EXTRA_CA_CERTS";
/** The global symbol under which bin/tau.cjs records, on `process`, the certificate file it deferred. */
export const DEFERRED_CA_CERTS_SYMBOL = "tau.deferred-extra-ca-certs";
/** With this NODE_OPTIONS flag, only node itself can add the extra certificates: they are not deferred. */
export const OPENSSL_CA_OPTION = "--use-openssl-ca";
