// Processes and socket files a round may leave behind, found from /proc (Linux): by the soak's root
// in a process's environment or command line, by the Unix session of a daemon the round started, or
// as one of the processes seen in a daemon's tree while it ran (same pid and start time).
import { lstatSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

export interface ProcInfo {
  readonly pid: number;
  /** Start time in clock ticks since boot: a pid and its start time name one process. */
  readonly start: string;
  readonly ppid: number;
  readonly sid: number;
  readonly state: string;
  readonly cmd: string;
}

export function procInfo(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
    return { pid, state: f[0] ?? "?", ppid: Number(f[1]), sid: Number(f[3]), start: f[19] ?? "", cmd };
  } catch {
    return undefined;
  }
}

function allPids(): number[] {
  return readdirSync("/proc").filter((e) => /^\d+$/.test(e)).map(Number);
}

/** A live process (not a zombie) that is still the one `p` saw. */
export function stillAlive(p: ProcInfo): boolean {
  const now = procInfo(p.pid);
  return now !== undefined && now.start === p.start && now.state !== "Z" && now.state !== "X";
}

/** `root` and its descendants, each with its identity. */
export function treeOf(root: number): ProcInfo[] {
  const infos = allPids().flatMap((pid) => procInfo(pid) ?? []);
  const out = infos.filter((p) => p.pid === root);
  for (let i = 0; i < out.length; i++) for (const p of infos) if (p.ppid === out[i]?.pid) out.push(p);
  return out;
}

/**
 * Live processes other than this one that belong to a round: its root in their environment or
 * command line, or in one of the Unix sessions `sids` (a daemon's, inherited by what it starts).
 */
export function processesOf(root: string, sids: ReadonlySet<number> = new Set()): ProcInfo[] {
  const needle = Buffer.from(root);
  const found: ProcInfo[] = [];
  for (const pid of allPids()) {
    if (pid === process.pid) continue;
    const p = procInfo(pid);
    if (!p || p.state === "Z" || p.state === "X") continue;
    let ours = p.cmd.includes(root) || sids.has(p.sid);
    if (!ours) {
      try {
        ours = readFileSync(`/proc/${pid}/environ`).includes(needle);
      } catch {
        // not ours to read, or gone
      }
    }
    if (ours) found.push(p);
  }
  return found;
}

/** Socket files under `dir` (its whole tree). */
export function socketsUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      try {
        const st = lstatSync(p);
        if (st.isSocket()) out.push(p);
        else if (st.isDirectory() && depth < 8) walk(p, depth + 1);
      } catch {
        // gone meanwhile
      }
    }
  };
  walk(dir, 0);
  return out;
}

export function killQuietly(pid: number, signal: NodeJS.Signals = "SIGKILL"): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}
