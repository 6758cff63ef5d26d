// The heavier half of the interactive UI, loaded after the first frame is on the screen: the
// configuration check, session choice (running and saved sessions, a numbered picker), prompt
// history, and launching or attaching to a daemon.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline/promises";
import { ConfigError, loadHarnessConfig, type Roots } from "../../config/index.js";
import { RuntimeDirError, abandonDaemon, listSessions, waitForDaemon, type SessionRow, type StartedDaemon } from "../../transport/index.js";
import { openPromptHistory } from "../../store/index.js";
import { SESSIONS_DIR } from "../../startup/launch-facts.js";
import { TauError } from "../errors.js";
import { escapeLabel } from "../ui/index.js";
import { SessionClient } from "../session-client.js";
import type { HistoryPort } from "./app.js";
import { startOwnedDaemon } from "../owned-daemon.js";

export type Target = { kind: "launch"; resume?: string } | { kind: "attach"; row: SessionRow } | { kind: "started"; daemon: StartedDaemon };

/** Checks the configuration; a mistake becomes a TauError naming file, line and key (printed as `tau: MESSAGE`). */
export async function checkConfig(roots: Roots, overrides: readonly string[], started?: StartedDaemon): Promise<void> {
  try {
    await loadHarnessConfig(roots.config, overrides);
  } catch (err) {
    if (started) await abandonDaemon(started); // leaves nothing of the session behind
    if (err instanceof ConfigError) throw new TauError("TAU-E0201", err.message);
    throw err;
  }
}

/** Persisted sessions under the state root, newest first. */
export function persistedSessions(stateDir: string): { id: string; mtimeMs: number }[] {
  const dir = join(stateDir, SESSIONS_DIR);
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
  if (!process.stdin.isTTY) throw new TauError("TAU-E0113", `several ${what}s match; name one (tau session list shows the running ones)`);
  process.stdout.write(`Choose a ${what}:\n`);
  rows.forEach((r, i) => process.stdout.write(`  ${i + 1}) ${label(r)}\n`));
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = (await rl.question(`number (1-${rows.length}, empty to give up): `)).trim();
    if (answer === "") return undefined;
    const n = Number(answer);
    if (!Number.isInteger(n) || n < 1 || n > rows.length) throw new TauError("TAU-E0114", `no choice ${JSON.stringify(answer.slice(0, 20))}; answer with a number from 1 to ${rows.length}, or nothing to give up`);
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

/** `tau attach [ID]` / `tau resume [ID]`: the session to use, or undefined when the user gave up. */
export async function chooseTarget(command: "attach" | "resume", id: string | undefined, roots: Roots): Promise<Target | undefined> {
  const live = await running(roots);
  const rowLabel = (r: SessionRow) => `${escapeLabel(r.session_id)}  pid ${r.pid}  ${escapeLabel(r.project_root, { maxColumns: 80 })}`;
  if (command === "attach") {
    const rows = id === undefined ? live : live.filter((r) => r.session_id === id);
    if (rows.length === 0) {
      throw new TauError(
        "TAU-E0115",
        id === undefined ? "no tau session is running; start one with `tau`" : `no running session ${escapeLabel(id)}; tau session list shows them, tau resume restarts a stopped one`,
      );
    }
    const row = rows.length === 1 ? rows[0] : await pick("session", rows, rowLabel);
    return row ? { kind: "attach", row } : undefined;
  }
  // resume: a session that is still running is attached, not restarted.
  if (id !== undefined) {
    const row = live.find((r) => r.session_id === id);
    if (row) return { kind: "attach", row };
    if (!persistedSessions(roots.state).some((s) => s.id === id)) throw new TauError("TAU-E0116", `no saved session ${escapeLabel(id)}; tau resume with no id offers the saved ones`);
    return { kind: "launch", resume: id };
  }
  const liveIds = new Set(live.map((r) => r.session_id));
  const saved = persistedSessions(roots.state).filter((s) => !liveIds.has(s.id));
  if (saved.length === 0) throw new TauError("TAU-E0116", "there is no saved session to resume; start one with `tau`");
  const choice = saved.length === 1 ? saved[0] : await pick("session", saved.slice(0, 50), (s) => `${escapeLabel(s.id)}  last used ${new Date(s.mtimeMs).toISOString()}`);
  return choice ? { kind: "launch", resume: choice.id } : undefined;
}

/** Prompt history shared by every tau on this machine; a corrupt file is left alone and not used. */
export function historyPort(roots: Roots, session: () => string): HistoryPort & { broken: boolean } {
  const h = openPromptHistory(roots.state);
  let broken = false;
  try {
    h.refresh();
  } catch {
    broken = true;
  }
  return {
    broken,
    entries: () => (broken ? [] : h.entries().map((r) => r.text)),
    append: (text) => {
      if (!broken) h.append({ text, session_id: session(), cwd: process.cwd() });
    },
  };
}

/** Launches (or resumes) a daemon this terminal owns, or attaches to a running one. */
export async function connect(target: Target, roots: Roots, overrides: readonly string[]): Promise<{ client: SessionClient; sessionId: string }> {
  if (target.kind === "attach") return { client: await SessionClient.attach(target.row.socket, target.row.session_id), sessionId: target.row.session_id };
  const started = target.kind === "started" ? target.daemon : startOwnedDaemon(roots, { overrides, ...(target.resume ? { resume: target.resume } : {}) });
  const daemon = await waitForDaemon(started);
  return { client: await SessionClient.attach(daemon.socket, daemon.session_id), sessionId: daemon.session_id };
}
