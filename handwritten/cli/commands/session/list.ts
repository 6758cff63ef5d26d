// `tau session list [--all] [--json]`: running daemons, each as it described itself over a
// correlated probe; with --all, every saved session from its summary (SPEC-session-lifecycle).
import { Command, Flags } from "@oclif/core";
import { resolveRoots } from "../../../config/index.js";
import { formatAge, formatBytes, listSavedSessions, type SavedSession } from "../../../sessions/index.js";
import { RuntimeDirError, listSessions, type SessionListing, type SessionRow } from "../../../transport/index.js";
import { TauError, printError } from "../../errors.js";
import { escapeForLine, toSafeJson } from "./escape.js";

export const NO_DAEMONS_MESSAGE = "No running tau daemons.";

export function formatRows(rows: readonly SessionRow[]): string {
  const header = ["SESSION", "PID", "PROJECT ROOT"];
  const cells = rows.map((r) => [escapeForLine(r.session_id), String(r.pid), escapeForLine(r.project_root)]);
  const widths = [0, 1].map((i) => Math.max((header[i] ?? "").length, ...cells.map((c) => (c[i] ?? "").length)));
  const line = (c: string[]) => `${(c[0] ?? "").padEnd(widths[0] ?? 0)}  ${(c[1] ?? "").padEnd(widths[1] ?? 0)}  ${c[2] ?? ""}`.trimEnd();
  return [line(header), ...cells.map(line)].join("\n");
}

/** Longest title shown in a table row (the JSON form has it whole). */
const TITLE_COLUMNS = 48;

/** The table of saved sessions: id, state, age, size, lineage, title and project, escaped for one line each. */
export function formatSavedRows(rows: readonly SavedSession[], now: number): string {
  const header = ["SESSION", "STATE", "AGE", "SIZE", "LINEAGE", "TITLE", "PROJECT"];
  const cells = rows.map((r) => {
    const title = escapeForLine(r.title ?? "(untitled)");
    const chars = [...title];
    return [
      escapeForLine(r.id),
      r.running_pid !== undefined ? "running" : "saved",
      formatAge(now - r.last_active),
      formatBytes(r.bytes),
      lineage(r),
      chars.length > TITLE_COLUMNS ? `${chars.slice(0, TITLE_COLUMNS - 1).join("")}…` : title,
      escapeForLine(r.project_root ?? "?"),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => [...(c[i] ?? "")].length)));
  const line = (c: string[]) => c.map((cell, i) => (i === c.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - [...cell].length))).join("  ").trimEnd();
  return [line(header), ...cells.map(line)].join("\n");
}

/** A handoff's links (SPEC-handoff): `from ID`, `to ID`, both, or `-`; a fork's source: `fork of ID`. */
function lineage(r: SavedSession): string {
  const parts = [
    ...(r.forked_from !== undefined ? [`fork of ${escapeForLine(r.forked_from)}`] : []),
    ...(r.parent !== undefined ? [`from ${escapeForLine(r.parent)}`] : []),
    ...(r.successor !== undefined ? [`to ${escapeForLine(r.successor)}`] : []),
  ];
  return parts.length > 0 ? parts.join(", ") : "-";
}

/** The JSON form of a saved session. */
export function savedJson(r: SavedSession): Record<string, unknown> {
  return {
    session_id: r.id,
    title: r.title ?? null,
    project_root: r.project_root ?? null,
    created_at: r.created_at !== undefined ? new Date(r.created_at / 1000).toISOString() : null,
    last_active: new Date(r.last_active).toISOString(),
    bytes: r.bytes,
    running: r.running_pid !== undefined,
    ...(r.running_pid !== undefined ? { pid: r.running_pid } : {}),
    agents: r.agents,
    parent: r.parent ?? null,
    successor: r.successor ?? null,
    forked_from: r.forked_from ?? null,
  };
}

/** A warning when the listing may be incomplete (a scan bound stopped early). */
export function truncationWarning(listing: SessionListing): string | undefined {
  const t = listing.scan.truncated;
  if (!t) return undefined;
  const what = t === "entries" ? "its entry limit" : t === "candidates" ? "its socket candidate limit" : "its time budget";
  return `warning: the runtime directory scan stopped at ${what}; the list may be incomplete`;
}

export default class SessionList extends Command {
  static override summary = "List running tau daemons, or with --all every saved session.";
  static override description =
    "Without --all: probes every daemon socket in the runtime directory with a correlated request under a per-probe deadline; " +
    "nothing is ever removed, and a socket that does not answer is simply not listed. " +
    "With --all: every saved session, the most recently active first, with its title (the first line of its first prompt), " +
    "age, size on disk, project and whether a daemon is running it — read from each session's summary, never from its journals.";
  static override examples = ["<%= config.bin %> session list", "<%= config.bin %> session list --all", "<%= config.bin %> session list --all --json"];
  static override flags = {
    all: Flags.boolean({ description: "List every saved session, running or not." }),
    json: Flags.boolean({ description: "Print a JSON array (running daemons: {session_id, project_root, pid, socket}; --all: {session_id, title, project_root, created_at, last_active, bytes, running, pid?, agents, parent, successor, forked_from})." }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(SessionList);
    if (flags.all) {
      const saved = listSavedSessions(resolveRoots(process.env).state);
      if (flags.json) this.log(toSafeJson(saved.map(savedJson)));
      else this.log(saved.length === 0 ? "No saved tau sessions." : formatSavedRows(saved, Date.now()));
      return;
    }
    const runtime = resolveRoots(process.env).runtime;
    let listing: SessionListing;
    try {
      listing = await listSessions(runtime);
    } catch (err) {
      if (!(err instanceof RuntimeDirError)) throw err;
      return this.exit(printError(new TauError("TAU-E0403", err.message), "tau: "));
    }
    const warning = truncationWarning(listing);
    if (warning) process.stderr.write(warning + "\n");
    if (flags.json) {
      this.log(toSafeJson(listing.rows));
    } else if (listing.rows.length === 0) {
      this.log(NO_DAEMONS_MESSAGE);
    } else {
      this.log(formatRows(listing.rows));
    }
  }
}
