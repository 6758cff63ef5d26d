// `tau session fork ID`: a new saved session continuing a copy of one agent's conversation of a
// saved (or running) session, which is left as it was (SPEC-session-lifecycle, "Forks").
import { Args, Command, Flags } from "@oclif/core";
import { resolveRoots } from "../../../config/index.js";
import { SessionCatalogError, forkSession, resolveSavedSession } from "../../../sessions/index.js";
import { TauError, printError } from "../../errors.js";
import { escapeForLine } from "./escape.js";

export default class SessionFork extends Command {
  static override summary = "Copy a session's conversation into a new session, leaving it as it was.";
  static override description =
    "SESSION is an id or a unique prefix of one (tau session list --all shows them); it may be running. The fork holds the " +
    "agent's conversation up to its last finished turn (the agent a prompt would continue, or --agent ID) under new ids; " +
    "tau resume NEW or tau run --resume NEW continues it. Prints the new session's id.";
  static override examples = ["<%= config.bin %> session fork s-9c2f", "<%= config.bin %> session fork s-9c2f --json"];
  static override args = { session: Args.string({ description: "Session id or unique prefix.", required: true }) };
  static override flags = {
    agent: Flags.string({ description: "The agent of the session to fork (default: the one a prompt would continue)." }),
    json: Flags.boolean({ description: "Print what was made as one JSON object." }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SessionFork);
    const stateDir = resolveRoots(process.env).state;
    let id: string;
    try {
      id = resolveSavedSession(stateDir, args.session);
    } catch (err) {
      if (!(err instanceof SessionCatalogError)) throw err;
      return this.exit(printError(new TauError("TAU-E0118", `tau: session fork: ${escapeForLine(err.message)}; nothing was written`)));
    }
    try {
      const f = forkSession(stateDir, id, flags.agent !== undefined ? { agentId: flags.agent } : {});
      if (flags.json) return this.log(JSON.stringify(f));
      this.log(f.session_id);
      const left = f.left_out > 0 ? `; ${f.left_out} later record(s) of its turn in progress were left out` : "";
      process.stderr.write(`tau: forked ${escapeForLine(id)}${f.title !== undefined ? ` (${escapeForLine(f.title)})` : ""} into ${f.session_id}${left}; continue it with: tau resume ${f.session_id}\n`);
    } catch (err) {
      if (!(err instanceof SessionCatalogError)) throw err;
      this.exit(printError(new TauError("TAU-E0310", `tau: session fork: ${escapeForLine(err.message)}`)));
    }
  }
}
