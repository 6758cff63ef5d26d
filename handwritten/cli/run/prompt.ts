// Runs one prompt headless against an owned daemon; shared by the `tau run` command and its
// fast path in bin/tau.cjs (which must not load the command framework). What it prints is the
// printer's (text-printer.ts, json-printer.ts); the exit status is decided here.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { mark, timelineOn } from "../../startup/timeline.js";
import { agentIdOf } from "../../protocol/index.js";
import { resolveRoots } from "../../config/paths.js";
import { RuntimeDirError } from "../../transport/errors.js";
import { DaemonExitedError, abandonDaemon, loadFastBundle, waitForDaemon, type StartedDaemon } from "../../transport/launch.js";
import { checkRuntimeDir } from "../../transport/runtime-dir.js";
import { EXIT_OK, TauError, printError } from "../errors.js";
import { startRunDaemon, type RunOptions } from "./daemon.js";
import type { RunPrompt } from "./args.js";
import { CUT_SHORT, sanitize } from "../ui/index.js";
import { SessionClient, type Delivery } from "../session-client.js";
export { resumeTarget } from "./resume.js";
import type { RunPrinter } from "./printer.js";
import { RunJsonPrinter } from "./json-printer.js";
import { RunTextPrinter } from "./text-printer.js";

/** How long `tau run` waits for a provider to declare models. */
export const PROVIDER_WAIT_MS = 60_000;

export type { RunOptions } from "./daemon.js";

type RunConfig = typeof import("./config.js");

/** What makes the runtime folder unusable, if anything (nothing is created or changed). */
function runtimeDirProblem(dir: string): string | undefined {
  try {
    checkRuntimeDir(dir);
    return undefined;
  } catch (err) {
    return err instanceof RuntimeDirError ? err.message : undefined;
  }
}


/** How much of the end of a daemon's log is read for its last word. */
const LOG_TAIL_BYTES = 8_192;

/** The last line the daemon wrote about itself (`tau daemon: …`) near the end of its log, sanitized. */
function lastDaemonMessage(logPath: string): string | undefined {
  try {
    const fd = openSync(logPath, "r");
    try {
      const size = fstatSync(fd).size;
      const buf = Buffer.alloc(Math.min(size, LOG_TAIL_BYTES));
      readSync(fd, buf, 0, buf.length, size - buf.length);
      const line = buf.toString("utf8").split("\n").reverse().find((l) => l.startsWith("tau daemon: "));
      return line === undefined ? undefined : sanitize(line.slice("tau daemon: ".length).slice(0, 500));
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/**
 * `prompt` is what to submit (its text, and whether the user escaped a leading colon); with
 * `o.skill`, the skill's body is submitted with that text (which may then be empty) as the user's
 * own words (SPEC-skills). Returns the exit status (errors.ts), having printed what went wrong.
 */
export async function runPrompt(input: RunPrompt, o: RunOptions, started?: StartedDaemon): Promise<number> {
  const prompt = input.text;
  const roots = resolveRoots();
  const starting = started ?? startRunDaemon(o, roots);
  let daemon;
  try {
    daemon = await waitForDaemon(starting);
  } catch (err) {
    if (!(err instanceof DaemonExitedError)) throw err;
    // The daemon checks the configuration before anything else and exits on a mistake, writing it
    // to its log: check it here too, so the mistake is reported to this terminal, and take back the
    // session the daemon was started for, leaving nothing of it behind. Any other early exit keeps
    // the session's log, which the message points to.
    const check = loadFastBundle<RunConfig>("run-config");
    const mistake = await check.exports.configMistake(roots, o.harnessConfig ?? []);
    check.settled();
    if (mistake === undefined) {
      // An --ephemeral daemon logs nowhere: the likeliest reason, an unusable runtime folder, is
      // checked here instead (read-only).
      const reason = (starting.options.ephemeral ? undefined : lastDaemonMessage(starting.logPath)) ?? runtimeDirProblem(roots.runtime);
      return printError(new TauError("TAU-E0401", `tau: ${reason ? `${reason} (${err.message})` : err.message}`));
    }
    // A saved session the run continued is the user's, not the run's: it is never taken back.
    if (o.resume === undefined) await abandonDaemon(starting);
    return printError(new TauError("TAU-E0201", `tau: ${mistake}`));
  }
  const sessionId = daemon.session_id;
  const client = await SessionClient.attach(daemon.socket, sessionId);
  mark("run attached");
  // The reader of the output went away (`tau run --json | head -5`): the prompt is cancelled and the
  // run ends quietly, like any Unix filter, instead of failing on a write to a closed pipe.
  let readerGone = false;
  const write = (s: string) => {
    if (!readerGone) process.stdout.write(s);
  };
  const onStdoutError = (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    readerGone = true;
    if (agentId) client.emit("agent.cancel_request", { agent_id: agentId });
    resolveOutcome("reader_gone");
  };
  process.stdout.on("error", onStdoutError);
  const printer: RunPrinter = o.json ? new RunJsonPrinter(write) : new RunTextPrinter(write, (s) => process.stderr.write(s));
  let agentId: string | undefined;
  let promptId: string | undefined;
  let failure = "";
  /** The `code` of the prompt's failure, when it failed before reaching a provider. */
  let failedCode = "";
  // Why the prompt's last response ended short, if it did (SPEC-provider-chat-completions).
  let cutShort: "length" | "content_filter" | undefined;
  let resolveOutcome!: (outcome: string) => void;
  const outcome = new Promise<string>((r) => (resolveOutcome = r));
  let modelsReady!: () => void;
  const models = new Promise<void>((r) => (modelsReady = r));

  client.onDeliver((d: Delivery) => {
    const e = d.event;
    if (timelineOn) mark(`recv ${e.name}`);
    if (e.name === "harness.models_available" && e.data.models.length > 0) modelsReady();
    // Warnings too (a disabled extension, a skipped skill): a script's user should see them.
    if (e.name === "harness.notice" && (e.data.level === "error" || e.data.level === "critical")) {
      process.stderr.write(`tau: ${sanitize(e.data.text)}\n`);
    } else if (e.name === "harness.notice" && e.data.level === "warning") {
      process.stderr.write(`tau: warning: ${sanitize(e.data.text)}\n`);
    }
    if (agentId === undefined || agentIdOf(e) !== agentId) return;
    printer.agentEvent(d);
    switch (e.name) {
      case "agent.prompt_submitted":
        // The run's own prompt, not one another agent or session sent this agent meanwhile.
        if (promptId === undefined && e.data.source === "human_ui") promptId = e.data.prompt_id;
        break;
      case "provider.response_finished":
        cutShort = e.data.finish_reason === "length" || e.data.finish_reason === "content_filter" ? e.data.finish_reason : undefined;
        break;
      case "provider.response_failed":
        failure = `${e.data.error_class}: ${e.data.diagnostic}`;
        break;
      case "agent.prompt_failed":
        if (e.data.prompt_id !== promptId) break;
        failure = e.data.diagnostic;
        failedCode = e.data.code;
        resolveOutcome("failed");
        break;
      case "agent.outer_turn_finished":
        if (e.data.prompt_id === promptId) resolveOutcome(e.data.outcome);
        break;
    }
  });
  // The run needs the models and notices; the printer says which of the agent's events it shows.
  const live = printer.live.includes("*") ? ["*"] : ["harness.models_available", "harness.notice", ...printer.live];
  client.subscribe(["harness.models_available", "harness.notice"], live);
  // The agent is made while the providers start (reading AGENTS.md and skills is off the critical
  // path); the prompt is submitted once a model is available.
  // A continued session's agent goes on (a --model switches it first); otherwise a new agent.
  const agentCreated = o.agentId !== undefined ? continued(client, o.agentId, o.model) : client.createAgent({ ...(o.model ? { model: o.model } : {}), ...(o.ephemeral ? { ephemeral: true } : {}) });
  agentCreated.catch(() => {}); // awaited below
  const timer = setTimeout(() => resolveOutcome("no_provider"), PROVIDER_WAIT_MS);
  await Promise.race([models, outcome]);
  clearTimeout(timer);
  let result = "failed";
  const onSigint = () => {
    if (agentId) client.emit("agent.cancel_request", { agent_id: agentId });
  };
  process.on("SIGINT", onSigint);
  try {
    agentId = await agentCreated;
    if (o.skill !== undefined) {
      promptId = await client.loadSkill(agentId, o.skill, prompt.trim() === "" ? {} : { text: prompt });
    } else {
      client.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: prompt, ...(input.literal ? { literal: true } : {}) });
    }
    mark("run submitted");
    result = await outcome;
    mark("run outcome");
  } catch (err) {
    failure = (err as Error).message;
  } finally {
    process.off("SIGINT", onSigint);
    client.close();
    mark("run closed");
  }
  if (readerGone || result === "reader_gone") return new TauError("TAU-E0306", "tau: the output's reader went away").exitCode;
  printer.endText();
  if (result === "completed" && cutShort !== undefined) {
    // The answer came, but not whole: said on one line (unless the printer's output says it), and
    // the run is not a success.
    const incomplete = new TauError("TAU-E0304", `tau: ${CUT_SHORT[cutShort]}`);
    return printer.reportsCutShort ? incomplete.exitCode : printError(incomplete);
  }
  if (result === "completed") return EXIT_OK;
  // --model named a model no provider lists: refused by the harness before anything was sent.
  if (failedCode === "unknown_model" && o.model !== undefined) return printError(new TauError("TAU-E0117", `tau run: --model: ${sanitize(failure)}`));
  if (result === "no_provider") {
    const log = starting.options.ephemeral ? "" : ` and the daemon's log, ${starting.logPath}`;
    failure = `no provider declared a model within ${PROVIDER_WAIT_MS / 1000} s; check the provider settings (tau provider list, harness.yaml)${log}`;
  }
  const code = result === "cancelled" ? "TAU-E0501" : result === "no_provider" ? "TAU-E0302" : "TAU-E0301";
  return printError(new TauError(code, `tau: the prompt ${result === "cancelled" ? "was cancelled" : "failed"}${failure ? `: ${sanitize(failure)}` : ""}`));
}

/** The agent of a continued session, its model switched first when the run names one. */
async function continued(client: SessionClient, agentId: string, model: string | undefined): Promise<string> {
  if (model !== undefined) client.emit("ui.model_select", { agent_id: agentId, model });
  return agentId;
}
