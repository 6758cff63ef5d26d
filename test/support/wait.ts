// Tests wait for what they need — a committed event, a directed message, a file, a socket, a
// process state — never for a fixed time. Every wait names what it waits for and fails the test
// with that name when its deadline passes (GATE-honest-tests).
import type { EventEmitter } from "node:events";

export const DEFAULT_WAIT_MS = 10_000;
/** How often a condition is looked at again; a wait never depends on it beyond that. */
export const POLL_MS = 5;

export interface WaitOptions {
  /** The deadline (default DEFAULT_WAIT_MS). */
  readonly timeoutMs?: number;
  /** How often the condition is checked (default POLL_MS). */
  readonly pollMs?: number;
  /** Appended to the failure message: what the test saw instead (a screen, a log). */
  readonly detail?: () => string;
}

export class WaitTimeout extends Error {
  constructor(what: string, timeoutMs: number, detail?: string) {
    super(`timed out after ${timeoutMs} ms waiting for ${what}${detail ? `\n${detail}` : ""}`);
    this.name = "WaitTimeout";
  }
}

/** A number is the deadline in milliseconds. */
function optionsOf(options: WaitOptions | number | undefined): WaitOptions {
  return typeof options === "number" ? { timeoutMs: options } : (options ?? {});
}

/** Resolves once `cond` holds (checked at once, then every `pollMs`); rejects at the deadline naming `what`. */
export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, options?: WaitOptions | number): Promise<void> {
  const { timeoutMs = DEFAULT_WAIT_MS, pollMs = POLL_MS, detail } = optionsOf(options);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() >= deadline) throw new WaitTimeout(what, timeoutMs, detail?.());
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/**
 * Resolves with the arguments of `emitter`'s next `event`; rejects at the deadline naming `what`.
 * Call it before whatever causes the event, so an event that comes at once is not missed.
 */
export function nextEvent(emitter: EventEmitter, event: string, what: string, options?: WaitOptions | number): Promise<unknown[]> {
  const { timeoutMs = DEFAULT_WAIT_MS } = optionsOf(options);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, on);
      reject(new WaitTimeout(what, timeoutMs));
    }, timeoutMs);
    const on = (...args: unknown[]): void => {
      clearTimeout(timer);
      resolve(args);
    };
    emitter.once(event, on);
  });
}

/**
 * One turn of the event loop: whatever was already due (I/O callbacks, an unhandled rejection's
 * report) has run. An ordering barrier, not a wait for time.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
