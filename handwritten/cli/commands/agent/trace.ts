// `tau agent trace AGENT [--session ID] --format native|jsonl|perf [--full]`: an agent's durable
// journal as a trace on stdout, read-only and snapshot-consistent (records/SPEC-trace-export.md).
// Self-contained: errors are written here and end the command as failed (TAU-E0305, errors.ts).
import { Args, Command, Flags } from "@oclif/core";
import { resolveRoots } from "../../../config/index.js";
import { TauError, exitCodeOf, printError } from "../../errors.js";

export default class AgentTrace extends Command {
  static override summary = "Export an agent's journal as a trace on stdout (native, compact JSONL, or a performance projection).";
  static override description =
    "Reads the agent's journal without writing or repairing anything. A journal no daemon is writing is read to its end; " +
    "one a running daemon is writing is read up to the frame boundary its checkpoint names. The whole selected prefix is " +
    "validated before anything is printed, so a corrupt journal prints nothing and exits 1. Traces are as sensitive as " +
    "the state directory: native and --full output hold complete prompts, reasoning, tool arguments and output.";
  static override examples = [
    "<%= config.bin %> agent trace a-1f2e --format native > trace.jsonl",
    "<%= config.bin %> agent trace a-1f2e --session s-9c --format jsonl",
    "<%= config.bin %> agent trace a-1f2e --format perf",
  ];
  static override args = {
    agent: Args.string({ description: "Agent id or a unique prefix of one.", required: true }),
  };
  static override flags = {
    session: Flags.string({ description: "Look the agent up among this session's agents (id or unique prefix)." }),
    format: Flags.string({ description: "native: every record, lossless; jsonl: one compact line per event; perf: per-prompt timing and tokens, no bodies.", options: ["native", "jsonl", "perf"], required: true }),
    full: Flags.boolean({ description: "jsonl: keep whole text and output (lite mode keeps 4 KiB of each)." }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(AgentTrace);
    // Loaded here, not at start-up: the exporter is only needed when this command runs.
    const { StoreError, TraceError, exportTrace, resolveAgent } = await import("../../../trace/index.js");
    const stateDir = resolveRoots(process.env).state;
    process.stdout.on("error", () => {}); // a closed reader surfaces as the write's own EPIPE below
    try {
      const { agentId } = resolveAgent(stateDir, args.agent, flags.session);
      const report = await exportTrace({ stateDir, agentId, format: flags.format as "native" | "jsonl" | "perf", full: flags.full }, process.stdout);
      if (report.ignoredTail)
        process.stderr.write(`tau: note: an incomplete final frame (${report.ignoredTail.bytes} bytes at offset ${report.ignoredTail.offset}, a crash tail) was not exported\n`);
    } catch (err) {
      // The reader went away (`| head`): stop quietly, like any Unix filter.
      if ((err as NodeJS.ErrnoException).code === "EPIPE") return this.exit(exitCodeOf("TAU-E0306"));
      if (!(err instanceof TraceError) && !(err instanceof StoreError)) throw err;
      return this.exit(printError(new TauError("TAU-E0305", `tau: agent trace: ${err.message.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?")}`)));
    }
  }
}
