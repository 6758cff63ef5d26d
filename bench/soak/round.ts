// One soak round: a fresh session driven to its kill (drive.ts), resumed, settled, checked against
// what its UI had been told and what its journals say, given a new prompt per agent, then stopped
// and searched for leftovers (finish.ts).
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { JournalRecord } from "../../handwritten/store/index.js";
import { checkDeferred, checkPrompts, checkRequests, checkTools, checkTranscript, checkTurnsClosed, type Acked, type Violation } from "./checks.js";
import { driveToKill, turnEnd, type KillReport } from "./drive.js";
import { finish } from "./finish.js";
import type { SoakModel } from "./model.js";
import { makePlan, type Phase, type RoundPlan, type Target } from "./plan.js";
import { Rng } from "./rng.js";
import { promptText } from "./script.js";
import { SoakSession, readJournal } from "./session.js";
import { recoverHandoff, refusedUnclosed, settle } from "./settle.js";
import { traceOf } from "./trace.js";

export interface SoakOptions {
  readonly handoff: boolean;
  readonly sandbox: boolean;
  readonly phases?: readonly Phase[];
  readonly targets?: readonly Target[];
  /** Keep the homes of rounds with violations (for inspection); others are removed. */
  readonly keepFailed: boolean;
  /** Print what each round's UIs were told and what the model was asked. */
  readonly verbose?: boolean;
}

export interface RoundContext {
  readonly root: string;
  readonly seed: number;
  readonly baseUrl: string;
  readonly model: SoakModel;
  readonly o: SoakOptions;
}

export interface RoundResult {
  readonly round: number;
  readonly plan: RoundPlan;
  readonly observed: string;
  readonly killed: boolean;
  readonly violations: readonly Violation[];
  readonly ms: number;
  readonly home: string;
  readonly stalePairs: number;
  /** With `verbose`: the deliveries and requests of the round, one line each. */
  readonly trace: readonly string[];
}

const ROUND_MS = 300_000;

function soakError(e: unknown): Violation {
  const text = e instanceof Error ? (e.stack ?? e.message).split("\n").slice(0, 4).join(" | ") : String(e);
  return { invariant: "soak.error", detail: text };
}

function ackedPrompts(s: SoakSession): Acked[] {
  return s.allDeliveries().flatMap((d) => (d.name === "agent.prompt_submitted" && !d.replay ? [{ agentId: String(d.data.agent_id), promptId: String(d.data.prompt_id), text: String(d.data.text), boot: d.boot }] : []));
}

/** The dossiers of every replacement session a handoff created (their agents' first prompts). */
function dossiers(s: SoakSession): string[] {
  return s.otherSessions().flatMap((id) =>
    s.members(id).flatMap((a) => readJournal(join(s.home, "state", "agents", a, "events.cbor")).filter((r) => r.event.name === "agent.prompt_submitted").map((r) => String(r.event.data.text))),
  );
}

function shellRuns(s: SoakSession): string[] {
  const file = join(s.project, "soak-runs.log");
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => l.startsWith("call_")) : [];
}

/** After a kill of an extension the daemon lives on: the extension comes back and the work ends. */
async function afterExtensionKill(s: SoakSession, plan: RoundPlan, report: KillReport): Promise<Violation[]> {
  const v: Violation[] = [];
  const target = plan.kill.target as Exclude<Target, "daemon">;
  if (report.killed) await s.ready(report.inboxAtKill, target).catch((e: unknown) => v.push(soakError(e)));
  await recoverHandoff(s).catch((e: unknown) => v.push(soakError(e)));
  v.push(...(await settle(s, `after the ${target} extension was killed (the daemon running on)`)));
  v.push(...refusedUnclosed(s));
  return v;
}

/** A new prompt for every agent of the resumed session; each must end `completed`. */
async function newPrompts(s: SoakSession, model: SoakModel, members: readonly string[], round: number): Promise<{ v: Violation[]; marks: Map<string, string> }> {
  const v: Violation[] = [];
  const marks = new Map<string, string>();
  for (const [i, a] of members.entries()) {
    const id = `r${round}f${i + 1}`;
    model.addScript({ id, rounds: [{ kind: "text", streamMs: 0 }] });
    model.keep(id);
    marks.set(a, id);
    s.submit(a, promptText(id, "a new prompt after the resume"));
  }
  for (const [a, id] of marks) {
    try {
      const end = await turnEnd(s, id);
      if (end.data.outcome !== "completed") v.push({ invariant: "resume.new_prompt", detail: `agent ${a}: the new prompt after the resume ended ${String(end.data.outcome)}` });
    } catch {
      v.push({ invariant: "resume.new_prompt", detail: `agent ${a}: the new prompt after the resume did not end within 60 s` });
    }
  }
  return { v, marks };
}

/** Everything after the kill: the resume, the settling, the checks and a new prompt. */
async function afterKill(s: SoakSession, model: SoakModel, plan: RoundPlan, report: KillReport): Promise<Violation[]> {
  const v: Violation[] = [];
  if (plan.kill.target !== "daemon") v.push(...(await afterExtensionKill(s, plan, report)));
  const acked = ackedPrompts(s);
  if (plan.kill.target !== "daemon" && !(await s.stop())) v.push({ invariant: "leftover.processes", detail: `daemon ${s.daemon.pid} did not exit within 15 s of SIGTERM` });
  await s.start(true);
  model.boot = s.boot;
  await recoverHandoff(s);
  v.push(...(await settle(s, "after the resume")), ...refusedUnclosed(s));
  const members = s.members();
  const histories = new Map<string, JournalRecord[]>();
  for (const a of members) histories.set(a, await s.history(a));
  const journals = new Map(members.map((a) => [a, s.agentJournal(a)] as const));
  v.push(...checkPrompts(acked, histories), ...checkTurnsClosed(histories));
  v.push(...checkTools(s.restoreStream(), journals, shellRuns(s)));
  v.push(...checkDeferred(report.deferredAcked, histories, dossiers(s)));
  const finals = await newPrompts(s, model, members, plan.round);
  v.push(...finals.v);
  for (const [a, mark] of finals.marks) {
    const messages = model.messagesOf(mark);
    if (messages) v.push(...checkTranscript(a, messages, histories.get(a) ?? [], mark));
  }
  // Counted after the new prompts, which pay a failed compaction's debt with a successor.
  const successors = s.members().flatMap((a) => s.agentJournal(a)).filter((r) => r.event.name === "agent.compaction_started" && r.event.data.trigger === "successor").length;
  v.push(...checkRequests(model.requests, successors, new Set(finals.marks.values())));
  return v;
}

export async function runRound(ctx: RoundContext, round: number): Promise<RoundResult> {
  const started = Date.now();
  const plan = makePlan(Rng.forRound(ctx.seed, round), round, ctx.o);
  ctx.model.reset(plan.scripts, plan.pacing);
  const home = join(ctx.root, `r${round}`);
  const violations: Violation[] = [];
  let s: SoakSession | undefined;
  let report: KillReport | undefined;
  const work = async () => {
    s = await SoakSession.create(home, { baseUrl: ctx.baseUrl, handoff: ctx.o.handoff, sandbox: ctx.o.sandbox });
    ctx.model.boot = 1;
    report = await driveToKill(s, ctx.model, plan);
    violations.push(...(await afterKill(s, ctx.model, plan, report)));
  };
  let watchdog: NodeJS.Timeout | undefined;
  try {
    // A round that hangs past its deadline is ended: finish() stops what it started.
    await Promise.race([work(), new Promise<never>((_, reject) => (watchdog = setTimeout(() => reject(new Error(`the round did not end within ${ROUND_MS / 1000} s`)), ROUND_MS)))]);
  } catch (e) {
    violations.push(soakError(e));
  } finally {
    clearTimeout(watchdog);
  }
  s?.closeClients();
  const end = await finish(s, home);
  violations.push(...end.violations);
  if (violations.length === 0 || !ctx.o.keepFailed) rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  const trace = ctx.o.verbose ? traceOf(s, ctx.model) : [];
  return { round, plan, observed: report?.observed ?? "none", killed: report?.killed ?? false, violations, ms: Date.now() - started, home, stalePairs: end.stalePairs, trace };
}
