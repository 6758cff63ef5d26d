// Small helpers shared by benchmarks: medians, timing loops and figure formatting.
import { spawnSync } from "node:child_process";

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
}

/** Runs `fn` repeatedly for about `ms` milliseconds after a warm-up; returns operations per second. */
export function opsPerSecond(fn: () => void, ms = 1000): number {
  const warm = performance.now();
  while (performance.now() - warm < ms / 5) fn();
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 100; i++) fn();
    n += 100;
    now = performance.now();
  }
  return (n * 1000) / (now - start);
}

/**
 * Median operations per second of each function, measured in `rounds` interleaved rounds of about
 * `ms` milliseconds each after a warm-up, so that load from other processes on a shared machine
 * falls on every function alike. Also returns each function's spread (lowest and highest round).
 */
export function medianOpsPerSecond(
  fns: Record<string, () => void>,
  rounds = 9,
  ms = 150,
): Record<string, { median: number; min: number; max: number }> {
  const entries = Object.entries(fns);
  for (const [, fn] of entries) {
    const warm = performance.now();
    while (performance.now() - warm < ms) fn();
  }
  const samples = new Map<string, number[]>(entries.map(([name]) => [name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [name, fn] of entries) {
      let n = 0;
      const start = performance.now();
      let now = start;
      while (now - start < ms) {
        for (let i = 0; i < 20; i++) fn();
        n += 20;
        now = performance.now();
      }
      samples.get(name)?.push((n * 1000) / (now - start));
    }
  }
  const out: Record<string, { median: number; min: number; max: number }> = {};
  for (const [name, s] of samples) out[name] = { median: median(s), min: Math.min(...s), max: Math.max(...s) };
  return out;
}

/** Wall time of one command in milliseconds. */
export function wallMs(cmd: string, args: string[]): number {
  const start = performance.now();
  const r = spawnSync(cmd, args, { stdio: "ignore" });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}`);
  return performance.now() - start;
}

export function fmt(n: number, digits = 1): string {
  return n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function report(label: string, value: string, baselineLabel: string, baseline: string, ratio: number): void {
  console.log(`${label}: ${value} | ${baselineLabel}: ${baseline} | ratio ${fmt(ratio, 2)}x`);
}
