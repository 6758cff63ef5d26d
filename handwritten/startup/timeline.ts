// Start-up and job milestones for finding where latency goes: with TAU_TIMELINE=FILE every tau
// process appends "epoch-ms pid label" lines to FILE (bench/run.bench.ts reads them). Off by default;
// a mark then costs one comparison.
import { appendFileSync } from "node:fs";

const file = process.env.TAU_TIMELINE;

/** Whether milestones are written: hot paths check it before building a label. */
export const timelineOn = file !== undefined && file !== "";

/**
 * Appends one milestone when TAU_TIMELINE is set. Best effort: marks sit inside commits and sends,
 * so a line that cannot be written (no descriptor left, a full disk) is skipped, never thrown.
 */
export function mark(label: string): void {
  if (timelineOn) write(`${(performance.timeOrigin + performance.now()).toFixed(1)} ${process.pid} ${label}\n`);
}

/** Appends the moment this process started (its exec), once, as `<role> exec`. */
export function markStart(role: string): void {
  if (timelineOn) write(`${performance.timeOrigin.toFixed(1)} ${process.pid} ${role} exec\n${(performance.timeOrigin + performance.now()).toFixed(1)} ${process.pid} ${role} main\n`);
}

function write(lines: string): void {
  try {
    appendFileSync(file as string, lines);
  } catch {
    // skipped: the timeline is a measuring aid, never a reason for tau to fail
  }
}
