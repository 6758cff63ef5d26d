// The real `tau` in a pseudo-terminal, its output interpreted by a real terminal emulator
// (@xterm/headless). The emulator's answers (cursor reports) go back into the pty, as a terminal's do.
import { fileURLToPath } from "node:url";
import pty from "@lydell/node-pty";
import xterm from "@xterm/headless";
import type { Terminal as TerminalType } from "@xterm/headless";
import { openaiEnv, type Cleanups, type Workspace } from "./e2e.js";
import type { FakeOpenAI } from "./fake-openai.js";
import { waitFor } from "./wait.js";

const { Terminal } = xterm;
export const TAU_BIN = fileURLToPath(new URL("../../bin/tau.cjs", import.meta.url));

export interface PtyTau {
  readonly term: TerminalType;
  readonly proc: pty.IPty;
  /** OSC / DCS handlers that ran, titles set, bells rung: must stay empty for hostile output. */
  readonly fired: string[];
  /** Everything the process wrote, raw. */
  output(): string;
  /** The visible screen, rows right-trimmed. */
  screen(): string[];
  /** Scrollback plus screen, rows right-trimmed. */
  all(): string[];
  type(text: string): void;
  resize(cols: number, rows: number): void;
  /** Resolves when `pred(screen, all)` holds; rejects after `timeoutMs` with the screen in the message. */
  waitFor(pred: (screen: string[], all: string[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /**
   * Resolves when everything received so far has been fed to the emulator. After `exited` that is
   * everything the process wrote: node-pty reports the exit only once the pty's output has closed.
   */
  settled(): Promise<void>;
  exited: Promise<{ exitCode: number; signal?: number }>;
  kill(): void;
}

/** A fresh emulator of `cols` × `rows` that has interpreted `bytes`. */
export async function emulate(bytes: string, cols: number, rows: number): Promise<TerminalType> {
  const term = new Terminal({ cols, rows, allowProposedApi: true, scrollback: 1000 });
  await new Promise<void>((resolve) => term.write(bytes, resolve));
  return term;
}

/**
 * A round trip through tau's input: types a marker into the empty editor and erases it, waiting for
 * the screen to show each. Everything tau wrote before it read them is then on the emulator.
 */
export async function roundTrip(t: PtyTau): Promise<void> {
  t.type("zq");
  await t.waitFor((s) => s.some((l) => l === "› zq"), "the editor to echo a typed marker");
  t.type("\x15"); // Ctrl-U: the editor is empty again
  await t.waitFor((s) => !s.some((l) => l.startsWith("› zq")), "the editor to erase the marker");
}

/** `scrollback`: rows the emulator keeps above the screen (1,000 unless a test reads more back). */
export function spawnTau(args: string[], opts: { cols?: number; rows?: number; scrollback?: number; env: NodeJS.ProcessEnv; cwd: string }): PtyTau {
  const cols = opts.cols ?? 80;
  const rows = opts.rows ?? 24;
  const term = new Terminal({ cols, rows, allowProposedApi: true, scrollback: opts.scrollback ?? 1000 });
  const proc = pty.spawn(process.execPath, [TAU_BIN, ...args], { name: "xterm-256color", cols, rows, cwd: opts.cwd, env: opts.env as Record<string, string> });
  let raw = "";
  let pending = Promise.resolve();
  proc.onData((d) => {
    raw += d;
    pending = pending.then(() => new Promise<void>((r) => term.write(d, r)));
  });
  term.onData((d) => proc.write(d));
  const fired: string[] = [];
  for (const id of [0, 1, 2, 4, 7, 8, 10, 11, 12, 52, 104, 133, 1337]) {
    term.parser.registerOscHandler(id, () => {
      fired.push(`osc${id}`);
      return true;
    });
  }
  for (const f of [{ final: "q" }, { final: "p" }, { final: "|" }, { intermediates: "$", final: "q" }, { intermediates: "+", final: "q" }]) {
    term.parser.registerDcsHandler(f, () => {
      fired.push(`dcs${f.final}`);
      return true;
    });
  }
  term.onTitleChange(() => fired.push("title"));
  term.onBell(() => fired.push("bell"));
  const exited = new Promise<{ exitCode: number; signal?: number }>((resolve) => proc.onExit((e) => resolve(e)));
  const lines = (from: number, to: number) => {
    const b = term.buffer.active;
    const out: string[] = [];
    // Trimmed of written blanks too (a cell erased by a diff holds a space), not only of empty cells.
    for (let y = from; y < to; y++) out.push((b.getLine(y)?.translateToString(true) ?? "").trimEnd());
    return out;
  };
  const screen = () => lines(term.buffer.active.viewportY, term.buffer.active.viewportY + term.rows);
  const all = () => lines(0, term.buffer.active.length);
  return {
    term,
    proc,
    fired,
    output: () => raw,
    screen,
    all,
    settled: async () => {
      await pending;
    },
    type: (text) => proc.write(text),
    resize: (c, r) => {
      proc.resize(c, r);
      term.resize(c, r);
    },
    waitFor: (pred, what, timeoutMs = 20_000) =>
      waitFor(
        async () => {
          await pending;
          return pred(screen(), all());
        },
        what,
        { timeoutMs, pollMs: 20, detail: () => `screen:\n${screen().join("\n")}` },
      ),
    exited,
    kill: () => {
      try {
        proc.kill();
      } catch {
        // already gone
      }
    },
  };
}

/** Screen predicates for PtyTau.waitFor: `text` on the visible screen. */
export const has = (text: string) => (screen: string[]) => screen.some((l) => l.includes(text));
/** `text` anywhere in scrollback or on the screen. */
export const seen = (text: string) => (_screen: string[], all: string[]) => all.some((l) => l.includes(text));
/** The status line says the session is ready. */
export const ready = has(" · ready");

/**
 * `w` set up for the interactive UI: this process's environment with the workspace's TAU_HOME, a
 * 256-colour terminal and the OPENAI_* variables pointing at `fake`.
 */
export function tuiWorkspace(w: Workspace, fake: FakeOpenAI): Workspace {
  return { ...w, env: { ...process.env, ...w.env, TERM: "xterm-256color", ...openaiEnv(fake) } };
}

/** `tau args` in a pty in the workspace's project folder, killed by `cleanups`. */
export function startTau(cleanups: Cleanups, w: Workspace, args: string[] = [], size: { cols?: number; rows?: number; scrollback?: number } = {}): PtyTau {
  const t = spawnTau(args, { env: w.env, cwd: w.project, ...size });
  cleanups.push(() => t.kill());
  return t;
}

/** Quits tau with `:quit`; once it exited, lets the emulator interpret everything it wrote before. Its exit code. */
export async function quitTau(t: PtyTau): Promise<number> {
  t.type(":quit\r");
  const { exitCode } = await t.exited;
  await t.settled();
  return exitCode;
}
