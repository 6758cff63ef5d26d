// `tau` (start a session this terminal owns and attach), `tau attach [SESSION]` (a running one) and
// `tau resume [SESSION]` (restart a saved one). The first frame is drawn before the configuration,
// the daemon and the wire codec are even loaded (`connect.ts` comes in afterwards), and the
// terminal is given back exactly as it was found.
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { resolveRoots } from "../../config/paths.js";
import { DAEMON_LOG, SESSIONS_DIR } from "../../startup/launch-facts.js";
import { EXIT_OK, TauError, exitWithError } from "../errors.js";
import { Diagnostics, type DiagnosticRecord } from "../ui/index.js";
import { TuiApp, type Exit } from "./app.js";
import { startOwnedDaemon } from "../owned-daemon.js";
import { UI_USAGE, parseUiArgs } from "./flags.js";

/** How long the UI waits for the terminal to report the cursor row. */
const CURSOR_QUERY_MS = 250;
/** How long `:quit-session` waits for the daemon to close the connection. */
const END_WAIT_MS = 5000;

function fail(err: TauError): void {
  exitWithError(err, "tau: ");
}

/** Asks the terminal where the cursor is (DSR); undefined when it does not answer in time. */
function queryCursorRow(): Promise<number | undefined> {
  return new Promise((resolve) => {
    let buf = "";
    const done = (row: number | undefined) => {
      clearTimeout(timer);
      process.stdin.off("data", onData);
      resolve(row);
    };
    const onData = (chunk: Buffer) => {
      buf += chunk.toString("latin1");
      const m = /\x1b\[(\d+);(\d+)R/.exec(buf);
      if (m) done(Number(m[1]));
      else if (buf.length > 64) done(undefined);
    };
    const timer = setTimeout(() => done(undefined), CURSOR_QUERY_MS);
    process.stdin.on("data", onData);
    process.stdout.write("\x1b[6n");
  });
}

/**
 * Progress diagnostics (ids, names, counts, sizes, durations only) go to `<state>/ui-diagnostics.jsonl`:
 * slow-stage warnings always, trace records with TAU_UI_TRACE=1. Never to the terminal.
 */
function diagnostics(stateDir: string): Diagnostics {
  const file = join(stateDir, "ui-diagnostics.jsonl");
  let failed = false;
  const sink = (r: DiagnosticRecord) => {
    if (failed) return;
    try {
      mkdirSync(stateDir, { recursive: true, mode: 0o700 });
      appendFileSync(file, `${JSON.stringify({ pid: process.pid, ...r })}\n`, { mode: 0o600 });
    } catch {
      failed = true; // diagnostics are best effort and never disturb the UI
    }
  };
  return new Diagnostics({ sink, trace: process.env.TAU_UI_TRACE === "1" });
}

/** What the terminal is told as the UI leaves its session: how to come back (as other coding agents say). */
function leavingMessage(exit: Exit, sessionId: string, stateDir: string): string | undefined {
  switch (exit) {
    case "detach":
      return `session ${sessionId} keeps running; attach again with: tau attach ${sessionId}`;
    case "quit":
      return `left session ${sessionId}; continue it later with: tau resume ${sessionId}`;
    case "quit-session":
      return `session ${sessionId} ended; continue it with: tau resume ${sessionId}`;
    case "lost":
      return `the session daemon closed the connection (its log: ${join(stateDir, SESSIONS_DIR, sessionId, DAEMON_LOG)}); tau resume ${sessionId} starts it again`;
    default:
      return undefined;
  }
}

/** Where the UI goes after leaving a session: the fork `:fork` made, a handoff's successor, a new session (`:new`), or nowhere. */
async function afterLeaving(
  c: typeof import("./connect.js"),
  roots: ReturnType<typeof resolveRoots>,
  exit: Exit,
  app: TuiApp,
  forked: import("./connect.js").Target | undefined,
): Promise<import("./connect.js").Target | undefined> {
  if (exit === "switch" && forked !== undefined) return forked;
  if (exit === "switch" && app.handedOffTo !== undefined) return c.targetOf(roots, app.handedOffTo);
  return exit === "new" ? { kind: "launch" } : undefined;
}

export async function main(argv: readonly string[]): Promise<void> {
  const parsed = parseUiArgs(argv);
  if (parsed.kind === "help") return void process.stdout.write(`${UI_USAGE}\n`);
  if (parsed.kind === "refused") return fail(new TauError("TAU-E0111", parsed.message));
  const { command, overrides, session: id, fork } = parsed;
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    return fail(new TauError("TAU-E0112", "the interactive UI needs a terminal; for scripts use `tau run -p TEXT` (see tau run --help)"));
  }
  const roots = resolveRoots();
  // Attach and resume may need a choice on the plain terminal first; `tau` alone goes straight on.
  let c: typeof import("./connect.js") | undefined;
  let target: import("./connect.js").Target | undefined;
  let cli: import("../../../generated/index.js").CliConfig | undefined;
  if (command !== "start") {
    c = await import("./connect.js");
    try {
      cli = await c.checkConfig(roots, overrides);
      target = await c.chooseTarget(command, id, roots, fork === true);
    } catch (err) {
      if (err instanceof TauError) return fail(err);
      throw err;
    }
    if (!target) return;
  }

  let sessionId = "";
  process.stdin.setRawMode(true);
  process.stdin.resume();
  const startRow = (await queryCursorRow()) ?? process.stdout.rows;
  const app = new TuiApp({ input: process.stdin, output: process.stdout }, roots.config, startRow, diagnostics(roots.state));
  app.start();
  // `tau` alone: the daemon is started right after the first frame (spawning blocks for a fork and
  // an exec) and boots while this process loads the rest; a configuration mistake found meanwhile
  // takes it back.
  let next: import("./connect.js").Target = command === "start" ? { kind: "started", daemon: startOwnedDaemon(roots, { overrides }) } : (target as import("./connect.js").Target);
  let exit: Exit = "lost";
  let message = "";
  let error: TauError | undefined;
  try {
    c ??= await import("./connect.js");
    const connectModule = c;
    app.savedSessions = () => connectModule.savedSessions(roots);
    let forked: import("./connect.js").Target | undefined;
    app.forker = (session, agent) => (forked = connectModule.forkTarget(roots, session, agent === "" ? undefined : agent));
    if (next.kind === "started") cli = await c.checkConfig(roots, overrides, next.daemon);
    if (cli) app.configure(cli);
    const history = c.historyPort(roots, () => sessionId);
    if (history.broken) app.warn("the prompt history file could not be read; this run keeps no history");
    app.setHistory(history);
    for (;;) {
      const session = await c.connect(next, roots, overrides);
      sessionId = session.sessionId;
      const running = app.run(session);
      if (next.kind === "launch" && next.note !== undefined) app.warn(next.note, "info");
      exit = await running;
      if (exit === "quit-session") {
        await Promise.race([session.client.conn.closed, new Promise((r) => setTimeout(r, END_WAIT_MS))]);
        session.client.close();
      }
      const then = await afterLeaving(c, roots, exit, app, forked);
      forked = undefined;
      if (then === undefined) break;
      next = then;
    }
    message = leavingMessage(exit, sessionId, roots.state) ?? "";
  } catch (err) {
    exit = "lost";
    message = (err as Error).message;
    if (err instanceof TauError) error = err;
  } finally {
    app.stop();
    process.stdin.pause();
  }
  // Lost: the daemon went away, or something failed on the way (its own message says what).
  error ??= exit === "lost" ? new TauError("TAU-E0402", message) : undefined;
  if (error) return exitWithError(error, "tau: ");
  if (message) process.stderr.write(`tau: ${message}\n`);
  process.exitCode = EXIT_OK;
}
