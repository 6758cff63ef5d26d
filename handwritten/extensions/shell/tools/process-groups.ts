// The process groups commands run in (SPEC-shell-tools): whether one still has live members, how it
// is signalled, and the set of every group this process started, so that all of them can be ended
// when the extension's harness goes away — and, through the reaper, when this process itself dies.
import { readFileSync, readdirSync } from "node:fs";
import { SHELL_GROUP_PRUNE_INTERVAL_MS } from "./limits.js";
import { reapIfOrphaned } from "./reaper.js";

/**
 * The process groups of every live (not zombie) process, from one /proc scan, or undefined without
 * /proc. Zombies are already dead, only waiting for a reaper.
 */
function liveProcessGroups(): Set<number> | undefined {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const groups = new Set<number>();
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so parse after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] !== "Z" && fields[0] !== "X") groups.add(Number(fields[2]));
  }
  return groups;
}

/** Whether any process is in the group, zombies included (signal-0 probe). */
function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Which of `pgids` still have a live member (on Linux zombies do not count; elsewhere they do). */
function aliveAmong(pgids: readonly number[]): number[] {
  const live = liveProcessGroups();
  return pgids.filter((pgid) => (live ? live.has(pgid) : groupExists(pgid)));
}

/** Whether any member of the process group still runs. */
export function groupAlive(pgid: number): boolean {
  return aliveAmong([pgid]).length > 0;
}

export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is already gone.
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// ---- the groups this process started -----------------------------------------------------------

/**
 * Every group started here that may still have a process: added at spawn, forgotten once no process
 * (not even a zombie) is left in it. A group's number is a pid, free for reuse by an unrelated
 * process once the group is empty, so an empty group is forgotten at its command's end and within
 * SHELL_GROUP_PRUNE_INTERVAL_MS afterwards: a signal meant for it never reaches a stranger.
 */
const startedGroups = new Map<number, () => void>();
let pruneTimer: NodeJS.Timeout | undefined;

/** Tracks a group this process started; the reaper ends it should this process die first. */
export function trackGroup(pgid: number): void {
  if (!startedGroups.has(pgid)) startedGroups.set(pgid, reapIfOrphaned({ kind: "group", pid: pgid }));
  pruneTimer ??= setInterval(forgetEmptyGroups, SHELL_GROUP_PRUNE_INTERVAL_MS).unref();
}

/** Forgets every tracked group with no process left; one signal-0 probe per group. */
export function forgetEmptyGroups(): void {
  for (const [pgid, release] of startedGroups) {
    if (groupExists(pgid)) continue;
    startedGroups.delete(pgid);
    release();
  }
  if (startedGroups.size === 0 && pruneTimer !== undefined) {
    clearInterval(pruneTimer);
    pruneTimer = undefined;
  }
}

/**
 * Ends every group this process started — running commands and what finished ones left in the
 * background: SIGTERM to each now, SIGKILL to those with a live member once `graceMs` has passed
 * (sooner when none has). Resolves when done.
 */
export async function endStartedGroups(graceMs: number): Promise<void> {
  forgetEmptyGroups();
  const groups = [...startedGroups.keys()];
  if (groups.length === 0) return;
  for (const pgid of groups) killGroup(pgid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && aliveAmong(groups).length > 0) await sleep(20);
  for (const pgid of aliveAmong(groups)) killGroup(pgid, "SIGKILL");
}
