// Programs the sandbox starts on the host end with this process, whatever ends it (SPEC-sandbox,
// "Nothing outlives the session"). The reaper ends what it was told of, but a `kill -9` of every tau
// process takes the reaper too, and a program started in the moment before the reaper is told of it
// is not listed yet. The kernel's parent-death signal covers both: `setpriv --pdeathsig KILL` sets
// it and then becomes the program, so the program is killed when this process ends.
import { existsSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The absolute path of `name` in one of PATH's folders, or undefined. */
export function onPath(name: string, path = process.env.PATH ?? "/usr/bin:/bin"): string | undefined {
  for (const dir of path.split(":")) {
    if (!dir.startsWith("/")) continue;
    const file = join(dir, name);
    if (existsSync(file)) return file;
  }
  return undefined;
}

/**
 * Run by a shell between setpriv and the program: the signal is set by then, but a parent that died
 * before it was set sends none, and the program would run on for good. The shell's parent, read as
 * it starts, is the one that started it only while that one still runs (a dead parent's children
 * are given to another at once), so otherwise it ends instead of starting the program.
 */
const STILL_ITS_PARENTS = '[ "$PPID" = "$1" ] || exit 1; shift; exec "$@"';

/**
 * `argv` prefixed so that it is killed when this process ends; as it is where setpriv is missing.
 * The moment before the signal is set is the caller's to cover (the namespace holder ends with its
 * input, a pipe from this process): a check like the bridges' would cost every start an exec.
 */
export function diesWithThisProcess(argv: readonly string[]): string[] {
  const setpriv = onPath("setpriv");
  return setpriv === undefined ? [...argv] : [setpriv, "--pdeathsig", "KILL", "--", ...argv];
}

/** Where the socat script finds the pid of the process its bridges must die with (set by socatDyingWithParent). */
export const BRIDGE_PARENT_ENV = "TAU_BRIDGE_PARENT_PID";

/**
 * A socat for the runtime (its `socatPath`): a script in `dir` (tau's runtime folder of this user's,
 * which no command can write) that starts the real socat with the parent-death signal set, so the
 * runtime's bridges end with this process. The signal is SIGTERM, not SIGKILL: socat ends on it
 * and removes the socket it listens on, which a killed socat leaves in the temp folder. Undefined
 * (the runtime then finds socat on PATH) where socat or setpriv is missing.
 */
export function socatDyingWithParent(dir: string): string | undefined {
  const socat = onPath("socat");
  const setpriv = onPath("setpriv");
  if (socat === undefined || setpriv === undefined) return undefined;
  const quote = (s: string): string => `'${s.replace(/'/g, `'"'"'`)}'`;
  const file = join(dir, "socat");
  const temp = `${file}.${process.pid}.tmp`;
  // The parent checked is the one named in the environment (this process, BRIDGE_PARENT_ENV): a
  // parent that died before the script started leaves it `$PPID` of the one it was given to.
  writeFileSync(temp, `#!/bin/sh\nexec ${quote(setpriv)} --pdeathsig TERM -- /bin/sh -c ${quote(STILL_ITS_PARENTS)} sh "\${${BRIDGE_PARENT_ENV}:-$PPID}" ${quote(socat)} "$@"\n`, { mode: 0o700 });
  process.env[BRIDGE_PARENT_ENV] = String(process.pid);
  renameSync(temp, file);
  return file;
}
