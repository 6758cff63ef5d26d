// The heavier half of the interactive UI, loaded after the first frame is on the screen: the
// configuration check, session choice (a numbered choice of running sessions, a filtering picker of saved ones), prompt
// history, and launching or attaching to a daemon.
import { createInterface } from "node:readline/promises";
import { ConfigError, loadCliConfig, loadHarnessConfig, type Roots } from "../../config/index.js";
import type { CliConfig } from "../../../generated/index.js";
import { RuntimeDirError, abandonDaemon, listSessions, waitForDaemon, type SessionRow, type StartedDaemon } from "../../transport/index.js";
import { openPromptHistory } from "../../store/index.js";
import { SessionCatalogError, forkSession, listSavedSessions, resolveSavedSession, type SavedSession } from "../../sessions/index.js";
import { TauError } from "../errors.js";
import { escapeLabel } from "../ui/index.js";
import { SessionClient } from "../session-client.js";
import type { HistoryPort } from "./app.js";
import { startOwnedDaemon } from "../owned-daemon.js";
import { pickSession } from "./session-picker.js";
import { resolveBindings } from "./bindings.js";

/** Where the UI goes: a daemon to start (`resume`: a saved session's; `note`: what the UI says first), one to attach to, or one started already. */
export type Target = { kind: "launch"; resume?: string; note?: string } | { kind: "attach"; row: SessionRow } | { kind: "started"; daemon: StartedDaemon };

/**
 * Checks the configuration (harness.yaml and its drop-ins, cli.yaml) and returns cli.yaml's
 * settings; a mistake becomes a TauError naming file, line and key (printed as `tau: MESSAGE`).
 */
export async function checkConfig(roots: Roots, overrides: readonly string[], started?: StartedDaemon): Promise<CliConfig> {
  try {
    await loadHarnessConfig(roots.config, overrides);
    return await loadCliConfig(roots.config, (value) => {
      const b = resolveBindings(value.keys);
      return "path" in b ? b : undefined;
    });
  } catch (err) {
    if (started) await abandonDaemon(started); // leaves nothing of the session behind
    if (err instanceof ConfigError) throw new TauError("TAU-E0201", err.message);
    throw err;
  }
}

/** The saved sessions, newest first (`:sessions`). */
export function savedSessions(roots: Roots): SavedSession[] {
  return listSavedSessions(roots.state);
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

/** A session to attach to: its running daemon, or (none running) a daemon that resumes it. */
export async function targetOf(roots: Roots, sessionId: string): Promise<Target> {
  const row = (await running(roots)).find((r) => r.session_id === sessionId);
  return row !== undefined ? { kind: "attach", row } : { kind: "launch", resume: sessionId };
}

async function running(roots: Roots): Promise<readonly SessionRow[]> {
  try {
    return (await listSessions(roots.runtime)).rows;
  } catch (err) {
    if (err instanceof RuntimeDirError) return [];
    throw err;
  }
}

/**
 * A fork of saved (or running) session `sessionId` — of its agent `agentId`, or the one a prompt
 * would continue — to resume (SPEC-session-lifecycle, "Forks"); a fork refused is TAU-E0310.
 */
export function forkTarget(roots: Roots, sessionId: string, agentId?: string): Target & { kind: "launch" } {
  try {
    const f = forkSession(roots.state, sessionId, agentId !== undefined ? { agentId } : {});
    const left = f.left_out > 0 ? " (its turn in progress is not in the fork)" : "";
    return { kind: "launch", resume: f.session_id, note: `a fork of ${sessionId}${f.title !== undefined ? ` (${f.title})` : ""}${left}; ${sessionId} is left as it was: tau resume ${sessionId}` };
  } catch (err) {
    if (!(err instanceof SessionCatalogError)) throw err;
    throw new TauError("TAU-E0310", `cannot fork ${sessionId}: ${escapeLabel(err.message, { maxColumns: 300 })}`);
  }
}

/** `tau attach [ID]` / `tau resume [--fork] [ID]`: the session to use, or undefined when the user gave up. */
export async function chooseTarget(command: "attach" | "resume", id: string | undefined, roots: Roots, fork = false): Promise<Target | undefined> {
  if (fork) {
    const chosen = await chooseSaved(id, roots, true);
    return chosen === undefined ? undefined : forkTarget(roots, chosen);
  }
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
    const resolved = (await chooseSaved(id, roots, false)) as string;
    const row = live.find((r) => r.session_id === resolved);
    if (row) return { kind: "attach", row };
    return { kind: "launch", resume: resolved };
  }
  const liveIds = new Set(live.map((r) => r.session_id));
  const chosen = await chooseSaved(undefined, roots, false, liveIds);
  return chosen === undefined ? undefined : { kind: "launch", resume: chosen };
}

/**
 * The saved session `id` names (exact or a unique prefix), or with no id the only one or the one
 * picked; running ones are offered only to a fork. Undefined when the user gave up.
 */
async function chooseSaved(id: string | undefined, roots: Roots, runningToo: boolean, liveIds: ReadonlySet<string> = new Set()): Promise<string | undefined> {
  if (id !== undefined) {
    try {
      return resolveSavedSession(roots.state, id);
    } catch (err) {
      if (!(err instanceof SessionCatalogError)) throw err;
      throw new TauError("TAU-E0116", `${escapeLabel(err.message, { maxColumns: 200 })}; tau session list --all shows the saved sessions, tau resume with no id offers them`);
    }
  }
  const saved = listSavedSessions(roots.state).filter((s) => runningToo || (!liveIds.has(s.id) && s.running_pid === undefined));
  if (saved.length === 0) throw new TauError("TAU-E0116", `there is no saved session to ${runningToo ? "fork" : "resume"}; start one with \`tau\``);
  const only = saved.length === 1 ? saved[0] : undefined;
  if (only) return only.id;
  if (!process.stdin.isTTY) throw new TauError("TAU-E0113", "several saved sessions; name one (tau session list --all shows them)");
  const choice = await pickSession(saved.map((s) => ({ id: s.id, lastActive: s.last_active, ...(s.title !== undefined ? { title: s.title } : {}), ...(s.project_root !== undefined ? { project: s.project_root } : {}) })));
  return choice?.id;
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
