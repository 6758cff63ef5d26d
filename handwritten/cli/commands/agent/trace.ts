// `tau agent trace [AGENT] [--session ID] [--descendants] --format native|jsonl|toon|otlp|perf
// [--full] [--otlp-endpoint URL]` (`--perf` is `--format perf`): an agent's durable journal as a trace on stdout (or posted to an OTLP
// collector), read-only and snapshot-consistent (records/SPEC-trace-export.md).
// Self-contained: errors are written here and end the command as failed (TAU-E0305, errors.ts).
import { Args, Command, Flags } from "@oclif/core";
import { builtinModelInfo, loadHarnessConfig, resolveRoots, type Roots } from "../../../config/index.js";
import type { ModelMetadata } from "../../../../generated/index.js";
import { TauError, exitCodeOf, printError } from "../../errors.js";
import { agentToContinue, listSavedSessions } from "../../../sessions/index.js";

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

/** The agent a prompt would continue in this folder's most recent saved session (`tau run --continue`'s). */
function defaultAgent(stateDir: string): string | undefined {
  const latest = listSavedSessions(stateDir).find((s) => s.project_root === process.cwd());
  return latest === undefined ? undefined : agentToContinue(stateDir, latest.agents);
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
    "<%= config.bin %> agent trace --perf",
    "<%= config.bin %> agent trace a-1f2e --format native > trace.jsonl",
    "<%= config.bin %> agent trace a-1f2e --session s-9c --format jsonl",
    "<%= config.bin %> agent trace a-1f2e --format toon",
    "<%= config.bin %> agent trace a-1f2e --format otlp --otlp-endpoint http://127.0.0.1:4318",
    "<%= config.bin %> agent trace a-1f2e --perf",
    "<%= config.bin %> agent trace a-1f2e --descendants --format jsonl",
  ];
  static override args = {
    agent: Args.string({ description: "Agent id or a unique prefix of one (default: the agent a prompt would continue in this folder's most recent session; tau agent list shows the others)." }),
  };
  static override flags = {
    session: Flags.string({ description: "Look the agent up among this session's agents (id or unique prefix)." }),
    format: Flags.string({
      description:
        "native: every record, lossless; jsonl: one compact line per event; toon: the same records as one TOON document; " +
        "otlp: OTLP JSON, one line (one trace) per prompt, no bodies; perf: per-prompt timing, tokens and estimated cost, no bodies.",
      options: [...FORMATS],
    }),
    perf: Flags.boolean({ description: "The same as --format perf." }),
    descendants: Flags.boolean({
      description:
        "Also export every agent this one started, and theirs, found through their creation records; each line then names its agent " +
        "(perf adds a closing workflow line, otlp links each child's spans to the call that started it).",
    }),
    full: Flags.boolean({ description: "jsonl and toon: keep whole text and output (lite mode keeps 4 KiB of each). Native is always whole; otlp and perf carry no bodies." }),
    "otlp-endpoint": Flags.string({ description: "With --format otlp: post the trace to this OTLP/HTTP collector (http or https; a URL without a path gets /v1/traces) instead of printing it." }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(AgentTrace);
    const fail = (message: string) => this.exit(printError(new TauError("TAU-E0305", `tau: agent trace: ${message}`)));
    if (flags.perf && flags.format !== undefined && flags.format !== "perf") return fail(`--perf and --format ${flags.format} ask for two formats; give one`);
    const format = (flags.perf ? "perf" : flags.format) as (typeof FORMATS)[number] | undefined;
    if (format === undefined) return fail(`which format? give --format ${FORMATS.join("|")} (or --perf)`);
    const endpoint = flags["otlp-endpoint"];
    if (endpoint !== undefined && format !== "otlp") return fail("--otlp-endpoint needs --format otlp");
    if (flags.full && format !== "jsonl" && format !== "toon") return fail(`--full applies to --format jsonl and toon; ${format} ${format === "native" ? "is always whole" : "carries no bodies"}`);
    // Loaded here, not at start-up: the exporter is only needed when this command runs.
    const { StoreError, TraceError, allAgents, discoverWorkflow, exportTrace, loadOtlp, otlpEndpoint, otlpPoster, postTrace, resolveAgent, sessionAgents } = await import("../../../trace/index.js");
    const roots = resolveRoots(process.env);
    const stateDir = roots.state;
    process.stdout.on("error", () => {}); // a closed reader surfaces as the write's own EPIPE below
    try {
      const query = args.agent ?? defaultAgent(stateDir);
      if (query === undefined) return fail(`which agent? this folder (${controls(process.cwd())}) has no saved session with one; give an id (tau agent list --session ID shows them)`);
      const { agentId, sessionId } = resolveAgent(stateDir, query, flags.session);
      // Descendants are looked for among the session's members when --session names it, else among every agent.
      const workflow = flags.descendants ? discoverWorkflow(stateDir, agentId, sessionId !== null ? sessionAgents(stateDir, sessionId) : allAgents(stateDir)) : undefined;
      const priceOf = format === "perf" || format === "otlp" ? await pricesOf(roots) : undefined;
      const opts = { stateDir, agentId, full: flags.full, ...(priceOf ? { priceOf } : {}), ...(workflow ? { workflow } : {}) };
      let report;
      if (endpoint !== undefined) {
        const ep = otlpEndpoint(endpoint, process.env);
        const post = otlpPoster(ep, await loadOtlp());
        report = await postTrace(opts, post);
        process.stderr.write(`tau: posted ${report.spans} span${report.spans === 1 ? "" : "s"} of ${report.traces} trace${report.traces === 1 ? "" : "s"} to ${ep.shown} in ${report.requests} request${report.requests === 1 ? "" : "s"}\n`);
      } else {
        report = await exportTrace({ ...opts, format }, process.stdout);
      }
      for (const t of report.ignoredTails)
        process.stderr.write(`tau: note: an incomplete final frame (${t.bytes} bytes at offset ${t.offset}${report.agents > 1 ? ` of agent ${t.agentId}` : ""}, a crash tail) was not exported\n`);
    } catch (err) {
      // The reader went away (`| head`): stop quietly, like any Unix filter.
      if ((err as NodeJS.ErrnoException).code === "EPIPE") return this.exit(exitCodeOf("TAU-E0306"));
      if (!(err instanceof TraceError) && !(err instanceof StoreError)) throw err;
      return this.exit(printError(new TauError("TAU-E0305", `tau: agent trace: ${controls(err.message)}`)));
    }
  }
}
