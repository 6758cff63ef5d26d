// `tau agent trace AGENT [--session ID] --format native|jsonl|toon|otlp|perf [--full]
// [--otlp-endpoint URL]`: an agent's durable journal as a trace on stdout (or posted to an OTLP
// collector), read-only and snapshot-consistent (records/SPEC-trace-export.md).
// Self-contained: errors are written here and end the command as failed (TAU-E0305, errors.ts).
import { Args, Command, Flags } from "@oclif/core";
import { builtinModelInfo, loadHarnessConfig, resolveRoots, type Roots } from "../../../config/index.js";
import type { ModelMetadata } from "../../../../generated/index.js";
import { TauError, exitCodeOf, printError } from "../../errors.js";

const FORMATS = ["native", "jsonl", "toon", "otlp", "perf"] as const;
const controls = (s: string) => s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, "?");

/**
 * What is known of a model's prices now: tau's model table, overridden by the configuration's
 * `model_info` for the id. A configuration that cannot be read leaves the table alone (noted).
 */
async function pricesOf(roots: Roots): Promise<(model: string) => ModelMetadata | undefined> {
  let configured: Readonly<Record<string, ModelMetadata>> = {};
  try {
    configured = (await loadHarnessConfig(roots.config)).model_info ?? {};
  } catch (err) {
    process.stderr.write(`tau: note: model_info not read (${controls((err as Error).message).slice(0, 300)}); costs use tau's model table\n`);
  }
  return (model) => {
    const merged = { ...builtinModelInfo(model), ...configured[model] };
    return Object.keys(merged).length > 0 ? merged : undefined;
  };
}

export default class AgentTrace extends Command {
  static override summary = "Export an agent's journal as a trace on stdout (native, compact JSONL or TOON, OTLP, or a performance projection).";
  static override description =
    "Reads the agent's journal without writing or repairing anything. A journal no daemon is writing is read to its end; " +
    "one a running daemon is writing is read up to the frame boundary its checkpoint names. The whole selected prefix is " +
    "validated before anything is printed or posted, so a corrupt journal prints nothing and exits 1. Traces are as sensitive as " +
    "the state directory: native and --full output hold complete prompts, reasoning, tool arguments and output. " +
    "With --otlp-endpoint the OTLP trace is posted to a collector over OTLP/HTTP (protobuf) instead of printed; " +
    "headers (e.g. authorization) come from OTEL_EXPORTER_OTLP_HEADERS or OTEL_EXPORTER_OTLP_TRACES_HEADERS, the " +
    "per-request timeout from OTEL_EXPORTER_OTLP_TIMEOUT (milliseconds, default 10000).";
  static override examples = [
    "<%= config.bin %> agent trace a-1f2e --format native > trace.jsonl",
    "<%= config.bin %> agent trace a-1f2e --session s-9c --format jsonl",
    "<%= config.bin %> agent trace a-1f2e --format toon",
    "<%= config.bin %> agent trace a-1f2e --format otlp --otlp-endpoint http://127.0.0.1:4318",
    "<%= config.bin %> agent trace a-1f2e --format perf",
  ];
  static override args = {
    agent: Args.string({ description: "Agent id or a unique prefix of one.", required: true }),
  };
  static override flags = {
    session: Flags.string({ description: "Look the agent up among this session's agents (id or unique prefix)." }),
    format: Flags.string({
      description:
        "native: every record, lossless; jsonl: one compact line per event; toon: the same records as one TOON document; " +
        "otlp: OTLP JSON, one line (one trace) per prompt, no bodies; perf: per-prompt timing, tokens and estimated cost, no bodies.",
      options: [...FORMATS],
      required: true,
    }),
    full: Flags.boolean({ description: "jsonl and toon: keep whole text and output (lite mode keeps 4 KiB of each)." }),
    "otlp-endpoint": Flags.string({ description: "With --format otlp: post the trace to this OTLP/HTTP collector (http or https; a URL without a path gets /v1/traces) instead of printing it." }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(AgentTrace);
    const format = flags.format as (typeof FORMATS)[number];
    const endpoint = flags["otlp-endpoint"];
    if (endpoint !== undefined && format !== "otlp") return this.exit(printError(new TauError("TAU-E0305", "tau: agent trace: --otlp-endpoint needs --format otlp")));
    // Loaded here, not at start-up: the exporter is only needed when this command runs.
    const { StoreError, TraceError, exportTrace, loadOtlp, otlpEndpoint, otlpPoster, postTrace, resolveAgent } = await import("../../../trace/index.js");
    const roots = resolveRoots(process.env);
    const stateDir = roots.state;
    process.stdout.on("error", () => {}); // a closed reader surfaces as the write's own EPIPE below
    try {
      const { agentId } = resolveAgent(stateDir, args.agent, flags.session);
      const priceOf = format === "perf" || format === "otlp" ? await pricesOf(roots) : undefined;
      const opts = { stateDir, agentId, full: flags.full, ...(priceOf ? { priceOf } : {}) };
      let report;
      if (endpoint !== undefined) {
        const ep = otlpEndpoint(endpoint, process.env);
        const post = otlpPoster(ep, await loadOtlp());
        report = await postTrace(opts, post);
        process.stderr.write(`tau: posted ${report.spans} span${report.spans === 1 ? "" : "s"} of ${report.traces} trace${report.traces === 1 ? "" : "s"} to ${ep.shown} in ${report.requests} request${report.requests === 1 ? "" : "s"}\n`);
      } else {
        report = await exportTrace({ ...opts, format }, process.stdout);
      }
      if (report.ignoredTail)
        process.stderr.write(`tau: note: an incomplete final frame (${report.ignoredTail.bytes} bytes at offset ${report.ignoredTail.offset}, a crash tail) was not exported\n`);
    } catch (err) {
      // The reader went away (`| head`): stop quietly, like any Unix filter.
      if ((err as NodeJS.ErrnoException).code === "EPIPE") return this.exit(exitCodeOf("TAU-E0306"));
      if (!(err instanceof TraceError) && !(err instanceof StoreError)) throw err;
      return this.exit(printError(new TauError("TAU-E0305", `tau: agent trace: ${controls(err.message)}`)));
    }
  }
}
