// `tau agent list [--session ID] [--json]`: the agents of a saved session — by default this
// folder's most recent one — from their checkpoints (sessions/agents.ts), so `tau agent trace` and
// `tau run --resume` have ids to take. Read-only.
import { Command, Flags } from "@oclif/core";
import { resolveRoots } from "../../../config/index.js";
import { SessionCatalogError, agentRows, describeSession, formatAge, listSavedSessions, resolveSavedSession, type AgentRow } from "../../../sessions/index.js";
import { TauError, printError } from "../../errors.js";
import { escapeForLine, toSafeJson } from "../session/escape.js";

/** The table: id, name, who started it, how its last prompt ended, tokens and age, escaped for one line each. */
export function formatAgentRows(rows: readonly AgentRow[], now: number): string {
  const header = ["AGENT", "NAME", "STARTED BY", "LAST PROMPT", "TOKENS IN/OUT", "ACTIVE"];
  const cells = rows.map((r) => [
    escapeForLine(r.id),
    escapeForLine(r.name ?? "-"),
    r.creator === "agent" && r.parent !== undefined ? `agent ${escapeForLine(r.parent)}` : escapeForLine(r.creator ?? "-"),
    escapeForLine(r.last_outcome ?? "-"),
    `${r.input_tokens}/${r.output_tokens}`,
    formatAge(now - r.last_active),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => [...(c[i] ?? "")].length)));
  const line = (c: string[]) => c.map((cell, i) => (i === c.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - [...cell].length))).join("  ").trimEnd();
  return [line(header), ...cells.map(line)].join("\n");
}

export default class AgentList extends Command {
  static override summary = "List a session's agents (default: this folder's most recent session) with their ids, names and last outcome.";
  static override description =
    "Read from each agent's checkpoint, never its journal, so it works beside a running daemon. The ids it shows are what " +
    "`tau agent trace` takes; `tau session list --all` lists the sessions.";
  static override examples = ["<%= config.bin %> agent list", "<%= config.bin %> agent list --session s-9c --json"];
  static override flags = {
    session: Flags.string({ description: "The session (id or unique prefix) whose agents to list; default: this folder's most recent one." }),
    json: Flags.boolean({ description: "Print the session and its agents as one JSON object." }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(AgentList);
    const stateDir = resolveRoots(process.env).state;
    let sessionId: string;
    try {
      if (flags.session !== undefined) sessionId = resolveSavedSession(stateDir, flags.session);
      else {
        const mine = listSavedSessions(stateDir).filter((s) => s.project_root === process.cwd());
        if (mine[0] === undefined) {
          return this.exit(printError(new TauError("TAU-E0118", `tau agent list: no saved session of this folder (${escapeForLine(process.cwd())}); tau session list --all shows the others, --session ID picks one`)));
        }
        sessionId = mine[0].id;
      }
    } catch (err) {
      if (!(err instanceof SessionCatalogError)) throw err;
      return this.exit(printError(new TauError("TAU-E0118", `tau agent list: --session: ${escapeForLine(err.message)}`)));
    }
    const session = describeSession(stateDir, sessionId);
    const rows = agentRows(stateDir, session.agents);
    if (flags.json) {
      this.log(toSafeJson({ session_id: sessionId, title: session.title ?? null, agents: rows.map((r) => ({ ...r, last_active: new Date(r.last_active).toISOString() })) }));
      return;
    }
    this.log(`session ${escapeForLine(sessionId)}${session.title !== undefined ? ` — ${escapeForLine(session.title)}` : ""}`);
    this.log(rows.length > 0 ? formatAgentRows(rows, Date.now()) : "(no agents)");
  }
}
