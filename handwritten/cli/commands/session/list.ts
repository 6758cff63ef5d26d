// `tau session list [--json]`: running daemons, each as it described itself over a correlated probe.
import { Command, Flags } from "@oclif/core";
import { resolveRoots } from "../../../config/index.js";
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

/** A warning when the listing may be incomplete (a scan bound stopped early). */
export function truncationWarning(listing: SessionListing): string | undefined {
  const t = listing.scan.truncated;
  if (!t) return undefined;
  const what = t === "entries" ? "its entry limit" : t === "candidates" ? "its socket candidate limit" : "its time budget";
  return `warning: the runtime directory scan stopped at ${what}; the list may be incomplete`;
}

export default class SessionList extends Command {
  static override summary = "List running tau daemons: session id, pid and project root.";
  static override description =
    "Probes every daemon socket in the runtime directory with a correlated request under a per-probe deadline. " +
    "Nothing is ever removed: a socket that does not answer is simply not listed.";
  static override examples = ["<%= config.bin %> session list", "<%= config.bin %> session list --json"];
  static override flags = {
    json: Flags.boolean({ description: "Print a JSON array of {session_id, project_root, pid, socket}." }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(SessionList);
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
