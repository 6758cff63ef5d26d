// The runtime's own processes and sockets on the host (SPEC-sandbox, "Nothing outlives the
// session"): on Linux it starts socat bridges (Unix sockets in the temp folder to its proxy) and
// listens on a Unix socket of its own; it ends them on reset, but not when this process is killed.
// They are listed with the reaper as soon as they appear, so they go with this process whatever ends it.
import { lstatSync, readFileSync, readdirSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { reapIfOrphaned } from "../tools/index.js";
import { BRIDGE_ID_HOOK } from "./runtime-hooks.js";

/** How often the runtime's children are looked for while it sets itself up. */
const SCAN_INTERVAL_MS = 20;
/** How many of the runtime's proxy sockets (`srt-mux-<pid>-<n>.sock`, n counting set-ups from 0) are listed ahead: a session sets up once, again after a reset. */
const PROXY_SOCKETS_LOOKED_FOR = 8;
/** What a bridge's process is called on its way to socat: the parent-death script (named socat), setpriv, the parent check's sh, socat. */
const BRIDGE_STAGES = new Set(["socat", "setpriv", "sh"]);

export class RuntimeLeftovers {
  private readonly listed = new Map<string, () => void>();

  /**
   * Looks for the runtime's bridges and sockets while `setUp` (started by `start`) runs, and once
   * more when it ends. The bundled runtime hands over its bridges' socket id first (build.ts), and
   * both socket files are listed before either bridge starts: a bridge killed before a scan found
   * it would otherwise leave its socket file with no one to remove it.
   */
  async around<T>(start: () => Promise<T>): Promise<T> {
    const hooks = globalThis as Record<symbol, unknown>;
    const hook = Symbol.for(BRIDGE_ID_HOOK);
    hooks[hook] = (id: string) => {
      for (const kind of ["http", "socks"]) this.listSocket(join(tmpdir(), `claude-${kind}-${id}.sock`));
      return id;
    };
    // Its proxy's sockets are named by this process's pid and a count of set-ups: listed ahead too.
    for (let n = 0; n < PROXY_SOCKETS_LOOKED_FOR; n++) this.listSocket(join(tmpdir(), `srt-mux-${process.pid}-${n.toString(36)}.sock`));
    const timer = setInterval(() => this.scan(), SCAN_INTERVAL_MS);
    try {
      return await start();
    } finally {
      clearInterval(timer);
      delete hooks[hook];
      this.scan();
    }
  }

  /** Lists what is new: socat children of this process, and the socket each listens on. */
  scan(): void {
    if (process.platform === "linux") {
      for (const entry of childPids()) {
        if (this.listed.has(`p${entry}`)) continue;
        let stat: string;
        try {
          stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        } catch {
          continue;
        }
        const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        if (ppid !== process.pid || !BRIDGE_STAGES.has(comm)) continue;
        let args: string[] = [];
        try {
          args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
        } catch {
          continue; // gone meanwhile
        }
        // A bridge is socat from the start (the parent-death script, then setpriv, keep socat's arguments).
        if (comm !== "socat" && !args.some((a) => /(^|\/)socat$/.test(a))) continue;
        this.listed.set(`p${entry}`, reapIfOrphaned({ kind: "process", pid: Number(entry) }));
        for (const a of args) {
          const m = /^UNIX-LISTEN:([^,]+)/.exec(a);
          if (m !== null) this.listSocket(m[1] as string);
        }
      }
    }
  }

  private listSocket(path: string): void {
    if (!this.listed.has(`s${path}`)) this.listed.set(`s${path}`, reapIfOrphaned({ kind: "socket", path }));
  }

  /** The runtime ended them itself (reset): nothing left for the reaper. */
  releaseAll(): void {
    for (const release of this.listed.values()) release();
    this.listed.clear();
  }
}

/** This process's children: its main thread's list (the runtime spawns from it), else every process's parent read from /proc. */
function childPids(): string[] {
  try {
    return readFileSync(`/proc/self/task/${process.pid}/children`, "utf8").trim().split(" ").filter((p) => p !== "");
  } catch {
    try {
      return readdirSync("/proc").filter((p) => /^\d+$/.test(p));
    } catch {
      return [];
    }
  }
}

/**
 * Socket files a shell extension that no longer runs left behind (SPEC-sandbox, "Nothing outlives
 * the session"): the runtime's proxy sockets in the temp folder, `srt-mux-<pid>-<n>.sock`, and the
 * shared network namespace's, `<runtime>/sandbox/<pid>.sock`, whose names say which process made
 * them. Left when every tau process was killed at once (the reaper too); removed at the next set-up
 * when that process is gone and the file is this user's socket. A bridge's `claude-http-*.sock`
 * names no owner and is never swept: the reaper lists it before the bridge starts (`around`), and
 * each bridge removes its own (parent-death.ts). Returns what it removed.
 */
export function sweepDeadOwners(folders: { temp: string; runtime: string }): string[] {
  const removed: string[] = [];
  const candidates: Array<{ file: string; pid: number }> = [];
  const list = (dir: string, pattern: RegExp) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const m = pattern.exec(name);
      if (m !== null) candidates.push({ file: join(dir, name), pid: Number(m[1]) });
    }
  };
  list(folders.temp, /^srt-mux-(\d+)-[0-9a-z]+\.sock$/);
  list(folders.runtime, /^(\d+)\.sock$/);
  const uid = process.getuid?.();
  for (const { file, pid } of candidates) {
    if (pid === process.pid || alive(pid)) continue;
    try {
      const st = lstatSync(file);
      if (!st.isSocket() || (uid !== undefined && st.uid !== uid)) continue;
      unlinkSync(file);
      removed.push(file);
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
  return removed;
}

/** Whether a process with this pid exists (one of another user's counts as existing). */
function alive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
}
