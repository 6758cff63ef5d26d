// The end of a round: its daemons stopped in order (SIGTERM: the session's own, then any replacement
// a handoff started), then nothing of the round may be left — no process, no socket file — beyond
// the runtime pair a SIGKILLed daemon leaves by design (SPEC-runtime-discovery).
import { basename, join } from "node:path";
import { waitFor } from "../../test/support/wait.js";
import type { Violation } from "./checks.js";
import { killQuietly, processesOf, socketsUnder, stillAlive, type ProcInfo } from "./procs.js";
import type { SoakSession } from "./session.js";

export interface FinishReport {
  readonly violations: Violation[];
  /** Runtime pairs of SIGKILLed daemons (left by design). */
  readonly stalePairs: number;
}

const LEFTOVER_WAIT_MS = 8_000;

/** Every daemon of the round's home other than the session's own ones (a handoff's replacement). */
function otherDaemons(home: string, own: ReadonlySet<number>): ProcInfo[] {
  return processesOf(home).filter((p) => / daemon( |$)/.test(p.cmd) && p.cmd.includes("tau") && !own.has(p.pid));
}

async function stopDaemons(s: SoakSession | undefined, home: string, v: Violation[]): Promise<void> {
  if (s && !(await s.stop())) v.push({ invariant: "leftover.processes", detail: `daemon ${s.daemon.pid} (boot ${s.boot}) did not exit within 15 s of SIGTERM` });
  const own = new Set(s?.daemons.map((d) => d.pid) ?? []);
  const others = otherDaemons(home, own);
  for (const p of others) killQuietly(p.pid, "SIGTERM");
  try {
    await waitFor(() => others.every((p) => !stillAlive(p)), "the replacement daemons to exit", 15_000);
  } catch {
    for (const p of others.filter(stillAlive)) v.push({ invariant: "leftover.processes", detail: `replacement daemon ${p.pid} did not exit within 15 s of SIGTERM: ${p.cmd.slice(0, 160)}` });
  }
}

/** Stops what runs and reports (then kills) whatever of the round outlived it. */
export async function finish(s: SoakSession | undefined, home: string): Promise<FinishReport> {
  const v: Violation[] = [];
  await stopDaemons(s, home, v);
  const sids = s?.sids ?? new Set<number>();
  const left = () => {
    const found = new Map(processesOf(home, sids).map((p) => [p.pid, p]));
    for (const p of s?.seen ?? []) if (!found.has(p.pid) && stillAlive(p)) found.set(p.pid, p);
    return [...found.values()];
  };
  try {
    await waitFor(() => left().length === 0, "the round's processes to end", { timeoutMs: LEFTOVER_WAIT_MS, pollMs: 50 });
  } catch {
    const rest = left();
    const whose = (p: ProcInfo) => {
      const d = s?.daemons.find((x) => x.sid === p.sid);
      return d ? `the session of boot ${d.boot}'s daemon (${d.end})` : `session ${p.sid}`;
    };
    for (const p of rest) v.push({ invariant: "leftover.processes", detail: `pid ${p.pid} (parent ${p.ppid}, ${whose(p)}) alive ${LEFTOVER_WAIT_MS / 1000} s after the round's end: ${p.cmd.slice(0, 200)}` });
    for (const p of rest) killQuietly(p.pid);
    await waitFor(() => rest.every((p) => !stillAlive(p)), "the round's leftovers to die of SIGKILL", 5_000).catch(() => undefined);
  }
  const killed = new Set(s?.daemons.filter((d) => d.end === "killed").map((d) => d.pid) ?? []);
  let stalePairs = 0;
  for (const sock of socketsUnder(home)) {
    const pid = Number(/^(\d+)-[0-9a-f]{16}\.sock$/.exec(basename(sock))?.[1] ?? NaN);
    if (sock.startsWith(join(home, "runtime")) && killed.has(pid)) stalePairs++;
    else v.push({ invariant: "leftover.sockets", detail: `socket file left: ${sock.slice(home.length + 1)}` });
  }
  return { violations: v, stalePairs };
}
