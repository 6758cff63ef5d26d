// `tau` (start a session this terminal owns and attach), `tau attach [SESSION]` (a running one) and
// `tau resume [SESSION]` (restart a persisted one): choose the session, take the terminal, run the
// UI, and give the terminal back exactly as it was found.
import { randomBytes } from "node:crypto";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline/promises";
import { ConfigError, loadHarnessConfig, resolveRoots, type Roots } from "../../config/index.js";
import { RuntimeDirError, launchDaemon, listSessions, type SessionRow } from "../../transport/index.js";
import { openPromptHistory } from "../../store/index.js";
import { escapeLabel } from "../ui/index.js";
import { SessionClient } from "../session-client.js";
import { TuiApp, type Exit, type HistoryPort } from "./app.js";

const USAGE = "usage: tau [--harness-config KEY=VALUE]… | tau attach [SESSION] | tau resume [SESSION]";
/** How long the UI waits for the terminal to report the cursor row. */
const CURSOR_QUERY_MS = 250;
/** How long `:quit-session` waits for the daemon to close the connection. */
const END_WAIT_MS = 5000;

type Target = { kind: "launch"; resume?: string } | { kind: "attach"; row: SessionRow };

class UsageError extends Error {}

function fail(message: string, code = 2): void {
  process.stderr.write(`tau: ${message}\n`);
  process.exitCode = code;
}

/** Persisted sessions under the state root, newest first. */
export function persistedSessions(stateDir: string): { id: string; mtimeMs: number }[] {
  const dir = join(stateDir, "sessions");
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: { id: string; mtimeMs: number }[] = [];
  for (const id of names) {
    try {
      const st = statSync(join(dir, id, "events.cbor"));
      if (st.isFile()) out.push({ id, mtimeMs: st.mtimeMs });
    } catch {
      // not a session journal folder
    }
  }
  return out.sort((a, b) => b.mtimeMs - a.mtimeMs);
}

/** Asks the user to choose one of several rows (before the UI takes the terminal). */
async function pick<T>(what: string, rows: readonly T[], label: (row: T) => string): Promise<T | undefined> {
  if (!process.stdin.isTTY) throw new UsageError(`several ${what}s match; name one (tau session list shows the running ones)`);
  process.stdout.write(`Choose a ${what}:\n`);
  rows.forEach((r, i) => process.stdout.write(`  ${i + 1}) ${label(r)}\n`));
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = (await rl.question(`number (1-${rows.length}, empty to give up): `)).trim();
    if (answer === "") return undefined;
    const n = Number(answer);
    if (!Number.isInteger(n) || n < 1 || n > rows.length) throw new UsageError(`no choice ${JSON.stringify(answer.slice(0, 20))}`);
    return rows[n - 1];
  } finally {
    rl.close();
  }
}

async function running(roots: Roots): Promise<readonly SessionRow[]> {
  try {
    return (await listSessions(roots.runtime)).rows;
  } catch (err) {
    if (err instanceof RuntimeDirError) return [];
    throw err;
  }
}

async function chooseTarget(command: string, id: string | undefined, roots: Roots): Promise<Target | undefined> {
  const live = await running(roots);
  const rowLabel = (r: SessionRow) => `${escapeLabel(r.session_id)}  pid ${r.pid}  ${escapeLabel(r.project_root, { maxColumns: 80 })}`;
  if (command === "attach") {
    const rows = id === undefined ? live : live.filter((r) => r.session_id === id);
    if (rows.length === 0) throw new UsageError(id === undefined ? "no tau session is running; start one with `tau`" : `no running session ${escapeLabel(id)}; tau session list shows them, tau resume restarts a stopped one`);
    const row = rows.length === 1 ? rows[0] : await pick("session", rows, rowLabel);
    return row ? { kind: "attach", row } : undefined;
  }
  // resume: a session that is still running is attached, not restarted.
  if (id !== undefined) {
    const row = live.find((r) => r.session_id === id);
    if (row) return { kind: "attach", row };
    if (!persistedSessions(roots.state).some((s) => s.id === id)) throw new UsageError(`no saved session ${escapeLabel(id)}`);
    return { kind: "launch", resume: id };
  }
  const liveIds = new Set(live.map((r) => r.session_id));
  const saved = persistedSessions(roots.state).filter((s) => !liveIds.has(s.id));
  if (saved.length === 0) throw new UsageError("there is no saved session to resume; start one with `tau`");
  const choice = saved.length === 1 ? saved[0] : await pick("session", saved.slice(0, 50), (s) => `${escapeLabel(s.id)}  last used ${new Date(s.mtimeMs).toISOString()}`);
  return choice ? { kind: "launch", resume: choice.id } : undefined;
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

function historyPort(roots: Roots, session: () => string): HistoryPort {
  const h = openPromptHistory(roots.state);
  let broken = false;
  try {
    h.refresh();
  } catch {
    broken = true; // a corrupt history is left untouched; this run keeps none
  }
  return {
    entries: () => (broken ? [] : h.entries().map((r) => r.text)),
    append: (text) => {
      if (broken) return;
      h.append({ text, session_id: session(), cwd: process.cwd() });
    },
  };
}

async function connect(target: Target, roots: Roots, overrides: readonly string[]): Promise<{ client: SessionClient; sessionId: string }> {
  if (target.kind === "attach") return { client: await SessionClient.attach(target.row.socket, target.row.session_id), sessionId: target.row.session_id };
  const sessionId = target.resume ?? `s-${Date.now().toString(36)}-${randomBytes(6).toString("hex")}`;
  const daemon = await launchDaemon({
    tauCommand: [process.execPath, process.argv[1] as string],
    runtimeDir: roots.runtime,
    stateDir: roots.state,
    sessionId,
    args: [
      ...(target.resume ? ["--resume", target.resume] : ["--session-id", sessionId]),
      "--exit-when-uis-leave",
      "--project-root",
      process.cwd(),
      ...overrides.flatMap((kv) => ["--harness-config", kv]),
    ],
    ephemeral: false,
  });
  return { client: await SessionClient.attach(daemon.socket, sessionId), sessionId };
}

export async function main(argv: readonly string[]): Promise<void> {
  const args = [...argv];
  const command = args[0] === "attach" || args[0] === "resume" ? (args.shift() as string) : "start";
  const overrides: string[] = [];
  let id: string | undefined;
  while (args.length > 0) {
    const a = args.shift() as string;
    if (a === "--help" || a === "-h") {
      process.stdout.write(`${USAGE}\n`);
      return;
    }
    if (a === "--harness-config" && command === "start" && args[0] !== undefined) overrides.push(args.shift() as string);
    else if (!a.startsWith("-") && command !== "start" && id === undefined) id = a;
    else return fail(`unexpected argument ${JSON.stringify(a.slice(0, 64))}\n${USAGE}`);
  }
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    return fail("the interactive UI needs a terminal; for scripts use `tau run -p TEXT` (see tau run --help)");
  }
  const roots = resolveRoots();
  let target: Target | undefined;
  try {
    await loadHarnessConfig(roots.config, overrides);
    target = command === "start" ? { kind: "launch" } : await chooseTarget(command, id, roots);
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) return fail(err.message);
    throw err;
  }
  if (!target) return;

  let sessionId = "";
  process.stdin.setRawMode(true);
  process.stdin.resume();
  const startRow = (await queryCursorRow()) ?? process.stdout.rows;
  const app = new TuiApp({ input: process.stdin, output: process.stdout }, historyPort(roots, () => sessionId), roots.config, startRow);
  app.start();
  let exit: Exit = "lost";
  let message = "";
  try {
    for (;;) {
      const session = await connect(target, roots, overrides);
      sessionId = session.sessionId;
      exit = await app.run(session);
      if (exit === "quit-session") {
        await Promise.race([session.client.conn.closed, new Promise((r) => setTimeout(r, END_WAIT_MS))]);
        session.client.close();
      }
      if (exit !== "new") break;
      target = { kind: "launch" };
    }
    if (exit === "detach") message = `session ${sessionId} keeps running; attach again with: tau attach ${sessionId}`;
    if (exit === "lost") message = `the session daemon closed the connection (its log: ${join(roots.state, "sessions", sessionId, "daemon.log")})`;
  } catch (err) {
    exit = "lost";
    message = (err as Error).message;
  } finally {
    app.stop();
    process.stdin.pause();
  }
  if (message) process.stderr.write(`tau: ${message}\n`);
  process.exitCode = exit === "lost" ? 1 : 0;
}
