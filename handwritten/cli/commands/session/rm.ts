// `tau session rm ID…`: deletes saved sessions that no daemon is running (SPEC-session-lifecycle,
// "Saved sessions"). Every id is resolved before anything is removed; a running one is refused.
import { Args, Command } from "@oclif/core";
import { resolveRoots } from "../../../config/index.js";
import { SessionCatalogError, formatBytes, removeSavedSession, resolveSavedSession } from "../../../sessions/index.js";
import { TauError, printError } from "../../errors.js";
import { escapeForLine } from "./escape.js";

export default class SessionRm extends Command {
  static override summary = "Delete saved sessions (their journals and their agents') that are not running.";
  static override description =
    "Each SESSION is an id or a unique prefix of one (tau session list --all shows them). Every one is resolved first: an unknown " +
    "or ambiguous one removes nothing. A session a daemon is running is refused — end it first. A session's agents are removed " +
    "with it unless another saved session also lists them.";
  static override examples = ["<%= config.bin %> session rm s-9c2f", "<%= config.bin %> session rm s-9c2f s-41aa"];
  static override strict = false;
  static override args = { session: Args.string({ description: "Session id or unique prefix (one or more).", required: true }) };

  async run(): Promise<void> {
    const { argv } = await this.parse(SessionRm);
    const stateDir = resolveRoots(process.env).state;
    let ids: string[];
    try {
      ids = [...new Set((argv as string[]).map((q) => resolveSavedSession(stateDir, q)))];
    } catch (err) {
      if (!(err instanceof SessionCatalogError)) throw err;
      return this.exit(printError(new TauError("TAU-E0118", `tau: session rm: ${escapeForLine(err.message)}; nothing was removed`)));
    }
    let failed: TauError | undefined;
    for (const id of ids) {
      try {
        const s = removeSavedSession(stateDir, id);
        this.log(`removed ${escapeForLine(id)}${s.title !== undefined ? ` (${escapeForLine(s.title)})` : ""}, ${formatBytes(s.bytes)}`);
      } catch (err) {
        const message = err instanceof SessionCatalogError ? err.message : `${id}: ${(err as Error).message}`;
        failed = new TauError("TAU-E0308", `tau: session rm: ${escapeForLine(message)}`);
        printError(failed);
      }
    }
    if (failed) this.exit(failed.exitCode);
  }
}
