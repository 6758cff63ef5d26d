// Questions an extension publishes and whose answer arrives later as an event naming the
// question's id (an MCP server's form, a read asked of the editor): one place that waits for the
// first answer, a timeout or the caller's abort, and forgets the question whichever comes first.
import { randomHex } from "../startup/random.js";

export interface AwaitOptions<T> {
  readonly timeoutMs: number;
  /** What the question resolves to when nobody answers in time. */
  readonly onTimeout: T;
  /** Aborted: the question resolves to `onAbort` (the asker withdrew it). */
  readonly signal: AbortSignal;
  readonly onAbort: T;
}

export class AwaitedAnswers<T> {
  private readonly waiting = new Map<string, (answer: T) => void>();

  /** Publishes the question (`publish` gets its fresh random id) and resolves with the first of its answer, the timeout or the abort. */
  async ask(publish: (id: string) => void, o: AwaitOptions<T>): Promise<{ id: string; answer: T }> {
    const id = randomHex(12);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      const answer = await new Promise<T>((resolve) => {
        this.waiting.set(id, resolve);
        timer = setTimeout(() => resolve(o.onTimeout), o.timeoutMs);
        onAbort = () => resolve(o.onAbort);
        if (o.signal.aborted) return resolve(o.onAbort);
        o.signal.addEventListener("abort", onAbort, { once: true });
        publish(id);
      });
      return { id, answer };
    } finally {
      this.waiting.delete(id);
      clearTimeout(timer);
      if (onAbort !== undefined) o.signal.removeEventListener("abort", onAbort);
    }
  }

  /** An answer to question `id`: counts only while it waits, and only the first. */
  answer(id: string, answer: T): void {
    this.waiting.get(id)?.(answer);
  }
}
