// Runs one prompt headless against an owned daemon; shared by the `tau run` command and its
// fast path in bin/tau.cjs (which must not load the command framework). What it prints is the
// printer's (text-printer.ts, json-printer.ts, behind output.ts); how the run ended, and so its
// exit status, is decided here (SPEC-cli-manners, "How a run ends").
import { mark, timelineOn } from "../../startup/timeline.js";
import { resolveRoots } from "../../config/paths.js";
import type { StartedDaemon } from "../../transport/launch.js";
import { TauError } from "../errors.js";
import { startRunDaemon, type RunOptions } from "./daemon.js";
import type { RunPrompt } from "./args.js";
import { CUT_SHORT, extensionNoticeText, sanitize } from "../ui/index.js";
import { SessionClient, type Delivery } from "../session-client.js";
import { COMPLETED, endWith, type RunEnd } from "./ends.js";
import { RunFollower, startedFromJournal, type Outcome } from "./follow.js";
import { RunOutput } from "./output.js";
import { daemonLost, reachDaemon } from "./reach.js";
export { resumeTarget } from "./resume.js";

/** How long `tau run` waits for a provider to declare models. */
export const PROVIDER_WAIT_MS = 60_000;

export type { RunOptions } from "./daemon.js";

/**
 * `prompt` is what to submit (its text, and whether the user escaped a leading colon); with
 * `o.skill`, the skill's body is submitted with that text (which may then be empty) as the user's
 * own words (SPEC-skills). Returns the exit status (errors.ts), having printed how the run ended.
 */
export async function runPrompt(input: RunPrompt, o: RunOptions, started?: StartedDaemon): Promise<number> {
  const roots = resolveRoots();
  const starting = started ?? startRunDaemon(o, roots);
  const output = new RunOutput(o.json);
  const daemon = await reachDaemon(starting, o, roots);
  if (daemon instanceof TauError) return output.finish(endWith(daemon));
  let client: SessionClient;
  try {
    client = await SessionClient.attach(daemon.socket, daemon.session_id);
  } catch {
    return output.finish(endWith(await daemonLost(starting, undefined)));
  }
  mark("run attached");
  const follower = new RunFollower(output);
  const outcome = await follow(client, follower, output, input, o);
  const end = await endOf(outcome, follower, o, starting);
  return output.finish(end, { agentId: follower.agentId, promptId: follower.promptId });
}

/** Submits the prompt and follows it to its outcome; the connection is closed when it returns. */
async function follow(client: SessionClient, follower: RunFollower, output: RunOutput, input: RunPrompt, o: RunOptions): Promise<Outcome> {
  let lostReason: string | undefined;
  client.conn.onMessage((m) => {
    if (m.message === "disconnect") lostReason = m.payload.reason;
  });
  void client.conn.closed.then(() => follower.end({ kind: "daemon_lost", ...(lostReason !== undefined ? { reason: lostReason } : {}) }));
  // A refusal of something the run sent (the prompt, most likely) before the daemon took its prompt;
  // an answer to a request (it names the request) goes to the request's own caller.
  client.onReply((m) => {
    if (m.message === "error" && m.payload.request_id === undefined && follower.promptId === undefined) follower.end({ kind: "refused", diagnostic: `the daemon refused a request (${m.payload.code})` });
  });
  // The reader of the output went away (`tau run --json | head -5`): the prompt is cancelled and the
  // run ends quietly, like any Unix filter, instead of failing on a write to a closed pipe.
  output.onReaderGone = () => {
    if (follower.agentId) client.emit("agent.cancel_request", { agent_id: follower.agentId });
    follower.end({ kind: "reader_gone" });
  };
  let submitted = false;
  const onSigint = () => {
    if (submitted && follower.agentId) client.emit("agent.cancel_request", { agent_id: follower.agentId });
    else follower.end({ kind: "cancelled" }); // nothing was sent to a model yet
  };
  process.on("SIGINT", onSigint);
  try {
    const models = watchSession(client, follower, output);
    // The agent is made while the providers start (reading AGENTS.md and skills is off the critical
    // path); the prompt is submitted once a model is available. A continued session's agent goes
    // on (a --model switches it first); otherwise a new agent.
    const agentCreated = o.agentId !== undefined ? continued(client, o.agentId, o.model) : newAgent(client, { ...(o.model ? { model: o.model } : {}), ...(o.ephemeral ? { ephemeral: true } : {}) });
    agentCreated.catch(() => {}); // awaited below
    const timer = setTimeout(() => follower.end({ kind: "no_provider" }), PROVIDER_WAIT_MS);
    await Promise.race([models, follower.outcome]);
    clearTimeout(timer);
    if (!follower.ended) {
      try {
        const agentId = await agentCreated;
        await follower.follow(agentId, o.agentId !== undefined, () => startedFromJournal(client, agentId));
        if (!follower.ended) await submit(client, follower, input, o);
        submitted = true;
        mark("run submitted");
      } catch (err) {
        // A request the connection's end cut short is the daemon's loss (reported as it closed), not a refusal.
        if (client.conn.closeReason === undefined) follower.end({ kind: "refused", diagnostic: (err as Error).message });
      }
    }
    const outcome = await follower.outcome;
    mark("run outcome");
    return outcome;
  } finally {
    process.off("SIGINT", onSigint);
    client.close();
    mark("run closed");
  }
}

/** Subscribes the run to what it needs; resolves once a model is available. */
function watchSession(client: SessionClient, follower: RunFollower, output: RunOutput): Promise<void> {
  let modelsReady!: () => void;
  const models = new Promise<void>((r) => (modelsReady = r));
  client.onDeliver((d: Delivery) => {
    const e = d.event;
    if (timelineOn) mark(`recv ${e.name}`);
    if (e.name === "harness.models_available" && e.data.models.length > 0) modelsReady();
    // Warnings too (a disabled extension, a skipped skill, a provider waiting for its quota, an MCP
    // server that failed): a script's user should see them. An extension's names the extension.
    if (e.name === "harness.notice" || e.name === "extension.notice") {
      const text = e.name === "extension.notice" ? extensionNoticeText(e.data.instance, e.data.text) : e.data.text;
      if (e.data.level === "error" || e.data.level === "critical") process.stderr.write(`tau: ${sanitize(text)}\n`);
      else if (e.data.level === "warning") process.stderr.write(`tau: warning: ${sanitize(text)}\n`);
    }
    follower.deliver(d);
  });
  // The run needs the models, the notices and its agent's start (its events are held until then:
  // follow.ts); the printer says which of the agent's events it shows.
  const live = output.live.includes("*") ? ["*"] : ["harness.models_available", "harness.notice", "extension.notice", "agent.started", ...output.live];
  client.subscribe(["harness.models_available", "harness.notice"], live);
  return models;
}

/** Submits the run's prompt (or loads its skill, which submits it) to the run's agent. */
async function submit(client: SessionClient, follower: RunFollower, input: RunPrompt, o: RunOptions): Promise<void> {
  const agentId = follower.agentId as string;
  if (o.skill !== undefined) {
    // An unknown skill is refused with the harness's reason, which names the known ones; nothing is submitted.
    const loaded = await client.request("ui.skill_load", { agent_id: agentId, name: o.skill, ...(input.text.trim() === "" ? {} : { text: input.text }) });
    follower.promptId = loaded.prompt_id;
  } else {
    client.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: input.text, ...(input.literal ? { literal: true } : {}) });
  }
}

/** A new agent for the run. */
async function newAgent(client: SessionClient, fields: { model?: string; ephemeral?: true }): Promise<string> {
  const created = await client.request("ui.create_agent", fields).catch((err: unknown) => {
    throw new Error(`could not create an agent: ${(err as Error).message}`);
  });
  return created.agent_id;
}

/** The agent of a continued session, its model switched first when the run names one. */
async function continued(client: SessionClient, agentId: string, model: string | undefined): Promise<string> {
  if (model !== undefined) client.emit("ui.model_select", { agent_id: agentId, model });
  return agentId;
}

/** The provider failures that mean it was not reached, or the connection to it was lost. */
const UNREACHABLE = new Set(["network", "timeout"]);

/** How the run ended, from what it saw of its prompt (SPEC-cli-manners, "How a run ends"). */
async function endOf(outcome: Outcome, f: RunFollower, o: RunOptions, daemon: StartedDaemon): Promise<RunEnd> {
  switch (outcome.kind) {
    case "reader_gone":
      return endWith(new TauError("TAU-E0306", "tau: the output's reader went away"), { quiet: true });
    case "daemon_lost":
      return endWith(await daemonLost(daemon, outcome.reason));
    case "cancelled":
      return endWith(new TauError("TAU-E0501", "tau: the prompt was cancelled"));
    case "no_provider": {
      const log = daemon.options.ephemeral ? "" : ` and the daemon's log, ${daemon.logPath}`;
      return endWith(new TauError("TAU-E0302", `tau: no provider declared a model within ${PROVIDER_WAIT_MS / 1000} s, so the prompt was not sent; check the provider settings (tau provider list, harness.yaml)${log}`));
    }
    case "refused":
      return endWith(new TauError("TAU-E0309", `tau: the prompt was refused: ${sanitize(outcome.diagnostic)}`));
    case "prompt_failed":
      // --model named a model no provider lists: refused by the harness before anything was sent.
      if (outcome.code === "unknown_model" && o.model !== undefined) return endWith(new TauError("TAU-E0117", `tau run: --model: ${sanitize(outcome.diagnostic)}`));
      if (outcome.code === "unknown_model" || outcome.code === "no_provider") return endWith(new TauError("TAU-E0309", `tau: the prompt was refused: ${sanitize(outcome.diagnostic)}`));
      return endWith(new TauError("TAU-E0301", `tau: the prompt failed: ${sanitize(outcome.diagnostic)}`));
    case "turn":
      return turnEnd(outcome.outcome, f);
  }
}

/** How a finished turn ended the run. */
function turnEnd(outcome: Extract<Outcome, { kind: "turn" }>["outcome"], f: RunFollower): RunEnd {
  if (outcome === "completed") {
    // The answer came, but not whole: the run is not a success.
    return f.cutShort === undefined ? COMPLETED : endWith(new TauError("TAU-E0304", `tau: ${CUT_SHORT[f.cutShort]}`));
  }
  if (outcome === "cancelled") return endWith(new TauError("TAU-E0501", "tau: the prompt was cancelled"));
  const failure = f.failure;
  if (failure !== undefined && UNREACHABLE.has(failure.errorClass)) {
    return endWith(new TauError("TAU-E0408", `tau: the provider could not be reached: ${failure.errorClass}: ${sanitize(failure.diagnostic)}`));
  }
  const why = failure !== undefined ? `: ${sanitize(`${failure.errorClass}: ${failure.diagnostic}`)}` : outcome === "failed" ? "" : ` (${outcome})`;
  return endWith(new TauError("TAU-E0301", `tau: the prompt failed${why}`));
}
