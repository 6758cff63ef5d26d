// The terminal the interactive UI runs in: raw input decoded into keys (a lone ESC waits briefly for
// the rest of a sequence), resize tracking, the modes the UI sets while it has the terminal and
// restores after, and lending the terminal to another program (the fzf picker) and taking it back.
// What is drawn is the app's: this module writes only the bytes it is given and its fixed modes.
import { KeyDecoder, type Key } from "./keys.js";

export interface TerminalIo {
  readonly input: NodeJS.ReadableStream & { setRawMode?: (raw: boolean) => unknown; isTTY?: boolean };
  readonly output: NodeJS.WritableStream & { columns?: number; rows?: number; on(event: "resize", l: () => void): unknown; off(event: "resize", l: () => void): unknown };
}

/** What the terminal calls back: each key typed, a frame after keys, and a redraw after a resize. */
export interface TerminalHandlers {
  key(key: Key): void;
  draw(): void;
  resized(): void;
}

/** A lone ESC is the Escape key when nothing follows it within this many milliseconds. */
const ESC_WAIT_MS = 30;
/** Modes the UI sets while it has the terminal: bracketed paste on, autowrap off (and back). */
const MODES_ON = "\x1b[?2004h\x1b[?7l";
const MODES_OFF = "\x1b[0m\x1b[?7h\x1b[?2004l";

export class Terminal {
  private readonly keys = new KeyDecoder();
  private escTimer: NodeJS.Timeout | undefined;
  /** Another program has the terminal: the UI draws nothing and reads no keys. */
  lent = false;
  /** The terminal was given back (`give`): a program ending later must not take it again. */
  private given = false;
  private readonly onResize = () => this.handlers.resized();
  private readonly onData = (chunk: Buffer | string) => this.input(typeof chunk === "string" ? chunk : chunk.toString("utf8"));

  constructor(
    private readonly io: TerminalIo,
    private readonly handlers: TerminalHandlers,
  ) {}

  get cols(): number {
    return Math.max(1, this.io.output.columns ?? 80);
  }

  get rows(): number {
    return Math.max(1, this.io.output.rows ?? 24);
  }

  write(bytes: string): void {
    this.io.output.write(bytes);
  }

  /** Takes the terminal: raw input, resize tracking, the UI's modes. */
  take(): void {
    this.io.input.setRawMode?.(true);
    this.io.input.on("data", this.onData);
    this.io.output.on("resize", this.onResize);
    this.io.output.write(MODES_ON);
  }

  /** Gives the terminal back for good: `finish` (the UI's last bytes), then the modes restored. */
  give(finish: string): void {
    this.given = true;
    clearTimeout(this.escTimer);
    this.io.input.off("data", this.onData);
    this.io.output.off("resize", this.onResize);
    this.io.input.setRawMode?.(false);
    this.io.output.write(`${finish}${MODES_OFF}`);
  }

  /**
   * Hands the terminal to `run` (a program that draws on it itself) as the shell would, after
   * `finish` (the UI's bytes that leave the screen to it), and takes it back whatever happens, with
   * a redraw; undefined when the terminal was given back meanwhile.
   */
  async lend<T>(finish: string, run: () => Promise<T>): Promise<T | undefined> {
    this.lent = true;
    this.io.input.off("data", this.onData);
    this.io.input.pause();
    this.io.output.write(`${finish}${MODES_OFF}`);
    this.io.input.setRawMode?.(false);
    let result: T;
    try {
      result = await run();
    } finally {
      this.lent = false;
      if (!this.given) {
        this.io.input.setRawMode?.(true);
        this.io.output.write(MODES_ON);
        this.io.input.on("data", this.onData);
        this.io.input.resume();
        this.handlers.resized();
      }
    }
    return this.given ? undefined : result;
  }

  private input(chunk: string): void {
    clearTimeout(this.escTimer);
    for (const key of this.keys.feed(chunk)) this.handlers.key(key);
    if (this.keys.waiting) {
      this.escTimer = setTimeout(() => {
        for (const key of this.keys.flush()) this.handlers.key(key);
        this.handlers.draw();
      }, ESC_WAIT_MS);
    }
    this.handlers.draw();
  }
}
