// `tau session stats [ID] [--json]`: a session's activity from its journals' harness-authored facts
// (records/SPEC-compaction.md, "Session activity stats"). Read-only: works beside a running daemon,
// never writes, locks past one open, or repairs.
import { Args, Command, Flags } from "@oclif/core";
import { resolveRoots } from "../../../config/index.js";
import { TauError, printError } from "../../errors.js";
import { escapeForLine, toSafeJson } from "./escape.js";

export default class SessionStats extends Command {
  static override summary = "Show a session's activity: prompts, responses, tool calls, tokens per model, cost and wall time.";
  static override description =
    "Computed from the harness-authored records of the session's agent journals only, read the way `tau agent trace` reads " +
    "them: a journal no daemon is writing to its end, one a running daemon is writing up to the boundary its checkpoint " +
    "names. Nothing is written or repaired; a journal that fails validation fails the command.";
  static override examples = ["<%= config.bin %> session stats", "<%= config.bin %> session stats s-9c --json"];
  static override args = {
    session: Args.string({ description: "Session id or a unique prefix of one (default: the most recent session)." }),
  };
  static override flags = {
    json: Flags.boolean({ description: "Print the stats as one JSON object." }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SessionStats);
    const { TraceError, formatStats, sessionStats } = await import("../../../trace/index.js");
    const stateDir = resolveRoots(process.env).state;
    try {
      const stats = sessionStats(stateDir, args.session);
      this.log(flags.json ? toSafeJson(stats) : formatStats(stats).split("\n").map(escapeForLine).join("\n"));
    } catch (err) {
      if (!(err instanceof TraceError)) throw err;
      return this.exit(printError(new TauError("TAU-E0307", `tau: session stats: ${escapeForLine(err.message)}`)));
    }
  }
}
