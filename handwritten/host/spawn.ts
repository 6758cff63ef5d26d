// Spawning a configured extension: argv from prefix + command + suffix, an environment without
// TAU_SECRET_* variables, and diagnostics that never carry arguments, environment or secrets.
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
import type { ExtensionConfig } from "../../generated/index.js";
import { withoutSecrets } from "../config/index.js";
import { forTauProcess } from "../startup/extra-ca-certs.js";
import { MAX_DIAGNOSTIC_FIELD } from "./limits.js";


/** prefix + command + suffix, with a leading `tau` resolved to this very installation. */
export function extensionArgv(config: ExtensionConfig, tauCommand: readonly string[]): string[] {
  const command = config.command[0] === "tau" ? [...tauCommand, ...config.command.slice(1)] : [...config.command];
  return [...(config.prefix ?? []), ...command, ...(config.suffix ?? [])];
}

/** Escapes controls and bounds a diagnostic field so it is safe on one terminal line. */
export function diagnosticField(text: string): string {
  let out = "";
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) {
      out += `\\u${cp.toString(16).padStart(4, "0")}`;
    } else if (ch === "\\" || ch === '"') {
      out += `\\${ch}`;
    } else {
      out += ch;
    }
  }
  return out.length > MAX_DIAGNOSTIC_FIELD ? `${out.slice(0, MAX_DIAGNOSTIC_FIELD - 1)}…` : out;
}

/** A spawn failure: names the instance, the executable and an explicitly configured cwd only. */
export function spawnDiagnostic(config: ExtensionConfig, executable: string, err: NodeJS.ErrnoException): string {
  const where = config.cwd !== undefined ? ` in "${diagnosticField(config.cwd)}"` : "";
  const code = err.code ?? "error";
  return `extension "${diagnosticField(config.name)}" could not start "${diagnosticField(executable)}"${where}: ${code}`;
}

/**
 * Spawns an extension; one that runs tau itself (`tau ext …`) starts with its NODE_EXTRA_CA_CERTS
 * deferred. On Linux it starts with the kernel's parent-death signal (`setpriv --pdeathsig KILL`,
 * which then becomes the extension): an extension that ignores its input's end and SIGTERM still
 * ends with a daemon killed before it could escalate. Only an executable found and executable is
 * started so, so that a missing one still fails the spawn with its own error.
 */
export function spawnExtension(config: ExtensionConfig, argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv): ChildProcess {
  const [executable, ...args] = argv as [string, ...string[]];
  const own = withoutSecrets(env);
  const options = { cwd, env: config.command[0] === "tau" ? forTauProcess(own) : own, stdio: ["pipe", "pipe", "pipe"] as ["pipe", "pipe", "pipe"] };
  const setpriv = process.platform === "linux" ? executableOnPath("setpriv", process.env.PATH) : undefined;
  const resolved = setpriv === undefined ? undefined : executableOnPath(executable, own.PATH, cwd);
  if (setpriv === undefined || resolved === undefined) return spawn(executable, args, options);
  return spawn(setpriv, ["--pdeathsig", "KILL", "--", resolved, ...args], options);
}

/** `name` as spawn would find it (a path against `cwd`, else PATH's folders), when it is an executable file. */
function executableOnPath(name: string, path: string | undefined, cwd = process.cwd()): string | undefined {
  const runnable = (file: string): boolean => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  };
  if (name.includes("/")) {
    const file = resolvePath(cwd, name);
    return runnable(file) ? file : undefined;
  }
  for (const dir of (path ?? "/usr/bin:/bin").split(":")) {
    if (dir === "") continue;
    const file = resolvePath(cwd, dir, name);
    if (runnable(file)) return file;
  }
  return undefined;
}

/**
 * An initial extension process started before its supervisor exists: the daemon starts them before
 * it loads the rest of itself, so their start-up overlaps its own. The supervisor adopts it as the
 * first launch of that instance; a spawn error that happened meanwhile is kept for it to report.
 */
export interface EarlyExtension {
  readonly child?: ChildProcess;
  error?: NodeJS.ErrnoException;
}

/** Starts the initial process of every enabled extension, exactly as the supervisor's first launch would. */
export function startEarly(
  configs: readonly ExtensionConfig[],
  tauCommand: readonly string[],
  projectRoot: string,
  env: NodeJS.ProcessEnv,
): Map<string, EarlyExtension> {
  const early = new Map<string, EarlyExtension>();
  for (const config of configs) {
    if (config.enable === false) continue;
    try {
      const child = spawnExtension(config, extensionArgv(config, tauCommand), config.cwd ?? projectRoot, env);
      const e: EarlyExtension = { child };
      child.once("error", (err) => (e.error ??= err));
      early.set(config.name, e);
    } catch (err) {
      early.set(config.name, { error: err as NodeJS.ErrnoException });
    }
  }
  return early;
}
