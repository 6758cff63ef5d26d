// The reaper (SPEC-shell-tools, "Nothing outlives the session"): a small bash process, in a session
// of its own, that this extension tells what it starts — process groups of commands, single
// processes (the sandbox's bridges), socket files and mount points it leaves on the host — over a
// pipe. When the pipe ends (the extension exited, or was killed: SIGKILL included, the kernel closes
// its end) the reaper kills what is still listed, removes the files while they are still what was
// made, and exits. Node has no parent-death signal; this is the process that notices the death.
import { readFileSync } from "node:fs";
import { builtin } from "../../../startup/builtin.js";

/** What the reaper is told to end: a process group (its leader's start time), one process, a socket file, a mount point. */
export type Guarded = { kind: "group" | "process"; pid: number } | { kind: "socket" | "mount"; path: string };

/**
 * The reaper's script. Lines on standard input: `+ KEY WHAT` lists something, `- KEY` takes it off.
 * WHAT is `group PGID START`, `process PID START` (START: the process's start time from
 * /proc/PID/stat, `-` where unknown), `socket PATH` or `mount PATH`. At the end of input: a listed
 * socket file is removed while it is a socket — first, so a reaper killed while it works (every tau
 * process killed at once) leaves none of a bridge it had killed already; then every listed group and
 * process whose start time still matches (so a reused number is never killed) gets SIGKILL; once
 * they are gone (at most 1 s), the sockets are looked at again and a mount point is removed while it
 * is an empty file or folder.
 */
export const REAPER_SCRIPT = `set -f
while IFS= read -r l; do
  case $l in
    "+ "*) r=\${l#+ }; k=\${r%% *}; case $k in ""|*[!A-Za-z0-9_]*) continue;; esac; printf -v "e_$k" '%s' "\${r#* }";;
    "- "*) k=\${l#- }; case $k in ""|*[!A-Za-z0-9_]*) continue;; esac; unset "e_$k";;
  esac
done
start_of() { local s; { read -r s < "/proc/$1/stat"; } 2>/dev/null || return 0; s=\${s##*) }; set -- $s; printf '%s' "\${20}"; }
for v in $(compgen -v e_); do
  e=\${!v}; p=\${e#* }
  case \${e%% *} in socket) [ -S "$p" ] && rm -f -- "$p";; esac
done
killed=
for v in $(compgen -v e_); do
  set -- \${!v}
  case $1 in
    group) s=$(start_of "$2"); if [ -z "$s" ] || [ "$3" = - ] || [ "$s" = "$3" ]; then kill -KILL -- "-$2" 2>/dev/null && killed="$killed -$2"; fi;;
    process) s=$(start_of "$2"); if [ -n "$s" ] && [ "$s" = "$3" ]; then kill -KILL "$2" 2>/dev/null && killed="$killed $2"; fi;;
  esac
done
for i in 1 2 3 4 5 6 7 8 9 10; do
  alive=; for p in $killed; do kill -0 -- "$p" 2>/dev/null && alive=1; done
  [ -z "$alive" ] && break; sleep 0.1
done
for pass in 1 2; do
  for v in $(compgen -v e_); do
    e=\${!v}; p=\${e#* }
    case \${e%% *} in
      socket) [ -S "$p" ] && rm -f -- "$p";;
      mount) if [ -d "$p" ] && [ ! -L "$p" ]; then rmdir -- "$p" 2>/dev/null; elif [ -f "$p" ] && [ ! -L "$p" ] && [ ! -s "$p" ]; then rm -f -- "$p"; fi;;
    esac
  done
done
`;

/** The start time of a process (field 22 of /proc/PID/stat), or "-" where it cannot be read. */
export function processStart(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "-";
  } catch {
    return "-";
  }
}

type Child = import("node:child_process").ChildProcess;

class Reaper {
  private child: Child | undefined;
  private readonly entries = new Map<string, string>();
  private next = 0;
  private respawns = 0;

  /** Lists `what`; the returned function takes it off again (once it has ended or been removed here). */
  guard(what: Guarded): () => void {
    // A path with a line break cannot be said on one line: it is not listed (the callers' paths never have one).
    if ((what.kind === "socket" || what.kind === "mount") && /[\n\r]/.test(what.path)) return () => {};
    const key = (this.next++).toString(36);
    const line = "pid" in what ? `${what.kind} ${what.pid} ${processStart(what.pid)}` : `${what.kind} ${what.path}`;
    this.entries.set(key, line);
    this.send(`+ ${key} ${line}\n`);
    return () => {
      if (this.entries.delete(key)) this.send(`- ${key}\n`);
    };
  }

  private send(text: string): void {
    const child = this.child ?? this.spawn();
    try {
      child?.stdin?.write(text);
    } catch {
      // The reaper is gone: its exit handler starts another, told everything again.
    }
  }

  private spawn(): Child | undefined {
    let child: Child;
    try {
      // --norc: bash takes a socket on its input for a remote shell's and would read ~/.bashrc (and
      // whatever that starts in the background would hold the pipe open).
      child = builtin<typeof import("node:child_process")>("child_process").spawn("bash", ["--norc", "--noprofile", "-c", REAPER_SCRIPT], {
        argv0: "tau-shell-reaper",
        // A session of its own: a signal to this extension's group (a terminal's ^C, a group kill) does not reach it.
        detached: true,
        stdio: ["pipe", "ignore", "ignore"],
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      });
    } catch {
      return undefined;
    }
    child.on("error", () => {});
    child.stdin?.on("error", () => {});
    child.once("exit", () => {
      if (this.child === child) this.child = undefined;
      // Killed by someone else while this extension lives: another takes over (a few times at most).
      if (this.entries.size > 0 && this.respawns++ < 5) this.replay();
    });
    // Neither the reaper nor its pipe keeps this process alive.
    child.unref();
    unrefPipe(child.stdin);
    this.child = child;
    return child;
  }

  private replay(): void {
    const child = this.spawn();
    for (const [key, line] of this.entries) child?.stdin?.write(`+ ${key} ${line}\n`);
  }
}

let reaper: Reaper | undefined;

/**
 * Has the reaper end `what` should this process go away before the returned function is called
 * (the reaper starts on first use). Linux and macOS; a start time is checked where /proc has one.
 */
export function reapIfOrphaned(what: Guarded): () => void {
  reaper ??= new Reaper();
  return reaper.guard(what);
}

/** Lets a child's pipe (a socket underneath) stop keeping this process alive, where it can. */
export function unrefPipe(stream: unknown): void {
  const unref = (stream as { unref?: unknown } | null)?.unref;
  if (typeof unref === "function") unref.call(stream);
}
