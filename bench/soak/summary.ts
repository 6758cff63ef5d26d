// The soak's closing summary: rounds, kills by target and by phase, each invariant's violations
// (zeros included, so a clean run says what it checked), and time.
import type { Invariant } from "./checks.js";
import { PHASES, TARGETS } from "./plan.js";
import type { RoundResult } from "./round.js";

export interface SummaryInfo {
  readonly seed: number;
  readonly ms: number;
  readonly invariants: readonly Invariant[];
  readonly command: string;
}

function tally<K extends string>(keys: readonly K[], of: (k: K) => number): string {
  return keys.map((k) => `${k} ${of(k)}`).join(", ");
}

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
}

export function printSummary(results: readonly RoundResult[], info: SummaryInfo): void {
  const failed = results.filter((r) => r.violations.length > 0);
  const killed = results.filter((r) => r.killed);
  console.log("\n== soak summary ==");
  console.log(`command: ${info.command}`);
  console.log(`seed ${info.seed}: ${results.length} rounds in ${(info.ms / 60_000).toFixed(1)} min, ${failed.length} with violations`);
  console.log(`kills by target: ${tally(TARGETS, (t) => killed.filter((r) => r.plan.kill.target === t).length)} (drawn but no process to kill: ${results.length - killed.length})`);
  console.log(`kills by phase: ${tally(PHASES, (p) => killed.filter((r) => r.plan.trigger.phase === p && r.observed !== "missed").length)} (phase never reached, killed anyway: ${killed.filter((r) => r.observed === "missed").length})`);
  const count = (i: Invariant) => results.reduce((n, r) => n + r.violations.filter((v) => v.invariant === i).length, 0);
  const rounds = (i: Invariant) => results.filter((r) => r.violations.some((v) => v.invariant === i)).map((r) => r.round);
  console.log("violations by invariant (count, rounds):");
  for (const i of info.invariants) {
    const rs = rounds(i);
    console.log(`  ${i}: ${count(i)}${rs.length > 0 ? ` (rounds ${rs.slice(0, 20).join(", ")}${rs.length > 20 ? ", …" : ""})` : ""}`);
  }
  const kinds = new Map<string, number>();
  for (const r of results) for (const v of r.violations) kinds.set(`${v.invariant}: ${kindOf(v.detail)}`, (kinds.get(`${v.invariant}: ${kindOf(v.detail)}`) ?? 0) + 1);
  if (kinds.size > 0) {
    console.log("violations by kind (ids, numbers and paths elided):");
    for (const [k, n] of [...kinds].sort((a, b) => b[1] - a[1])) console.log(`  ${n} × ${k}`);
  }
  console.log(`runtime pairs left by SIGKILLed daemons (by design, SPEC-runtime-discovery): ${results.reduce((n, r) => n + r.stalePairs, 0)}`);
  const ms = results.map((r) => r.ms);
  if (ms.length > 0) console.log(`round time: median ${(pct(ms, 50) / 1000).toFixed(1)} s, p95 ${(pct(ms, 95) / 1000).toFixed(1)} s, max ${(Math.max(...ms) / 1000).toFixed(1)} s`);
}

/** A violation's detail with what differs between occurrences elided, so alike ones count together. */
function kindOf(detail: string): string {
  return detail
    .replace(/\b[aps]-[0-9a-z]+-[0-9a-f]{12}\b/g, "ID")
    .replace(/\/\S*\/([^\s/,]+)/g, "…/$1")
    .replace(/[0-9a-f]{8,}/g, "X")
    .replace(/\br\d+[a-z]\d+\b/g, "MARK")
    .replace(/\bcall_\S+/g, "CALL")
    .replace(/(?<!boot )\d+/g, "N")
    .slice(0, 150);
}
