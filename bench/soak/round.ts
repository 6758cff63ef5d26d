// One soak round: a fresh session driven to its kill (drive.ts), resumed, settled, checked against
// what its UI had been told and what its journals say, given a new prompt per agent, then stopped
// and searched for leftovers (finish.ts).
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../../test/support/wait.js";
import type { JournalRecord } from "../../handwritten/store/index.js";
import { checkDeferred, checkPrompts, checkRequests, checkTools, checkTranscript, checkTurnsClosed, foldPrompts, type Acked, type Violation } from "./checks.js";
import { driveToKill, turnEnd, type KillReport } from "./drive.js";
import { finish } from "./finish.js";
import type { SoakModel } from "./model.js";
import { makePlan, type Phase, type RoundPlan, type Target } from "./plan.js";
import { Rng } from "./rng.js";
import { marksIn, promptText } from "./script.js";
import { SoakSession, readJournal } from "./session.js";

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

const TRACED = /^(agent\.(prompt_|outer_|compaction_|started)|tool\.(started|request)|provider\.tool_|handoff\.(state|command_result)|session\.handed_off|extension\.(exited|ready))/;

function traceOf(s: SoakSession | undefined, model: SoakModel): string[] {
  const out: string[] = [];
  for (const d of s?.allDeliveries() ?? []) {
    if (d.replay || !TRACED.test(d.name)) continue;
    const x = d.data;
    const brief = [x.agent_id, x.prompt_id, x.call_id, x.tool, x.round, x.mode, x.outcome, x.phase, x.deferred, x.trigger, x.ok, x.text === undefined ? undefined : String(x.text).slice(0, 60)].filter((v) => v !== undefined).join(" ");
    out.push(`boot ${d.boot} ${d.name} ${brief}`);
  }
  for (const r of model.requests) out.push(`request boot ${r.boot} ${r.kind} ${r.script ?? ""}#${r.round ?? ""} ${r.key.slice(0, 100)}`);
  return out;
}

const SETTLE_MS = 30_000;
const ROUND_MS = 300_000;

function soakError(e: unknown): Violation {
  const text = e instanceof Error ? (e.stack ?? e.message).split("\n").slice(0, 4).join(" | ") : String(e);
  return { invariant: "soak.error", detail: text };
}

/** Prompts the UIs were told were refused (`agent.prompt_failed`, transient), with the code. */
function refused(s: SoakSession): Map<string, string> {
  return new Map(s.allDeliveries().flatMap((d) => (d.name === "agent.prompt_failed" && d.data.prompt_id !== undefined ? [[String(d.data.prompt_id), String(d.data.code)] as const] : [])));
}

/**
 * Work the session still has: prompts open or waiting, an open compaction, a handoff under way. A
 * prompt the UI was told was refused is not waited for (refusedUnclosed reports it).
 */
function openWork(s: SoakSession): string[] {
  const out: string[] = [];
  const failed = refused(s);
  for (const a of s.members()) {
    const recs = s.agentJournal(a);
    const started = new Set(recs.filter((r) => r.event.name === "agent.prompt_started").map((r) => String(r.event.data.prompt_id)));
    for (const p of foldPrompts(recs).values()) {
      if (p.outcome !== undefined || (p.taken && !started.has(p.id)) || (!p.taken && failed.has(p.id))) continue;
      out.push(`agent ${a}: prompt ${p.id} (${marksIn(p.text).join(",") || "unmarked"}) ${p.taken ? "running" : "waiting"}`);
    }
    const open = new Set<string>();
    for (const r of recs) {
      if (r.event.name === "agent.compaction_started") open.add(String(r.event.data.compaction_id));
      if (r.event.name === "agent.compaction_committed" || r.event.name === "agent.compaction_failed") open.delete(String(r.event.data.compaction_id));
    }
    for (const c of open) out.push(`agent ${a}: compaction ${c} open`);
  }
  if (s.o.handoff && existsSync(s.recoveryFile())) out.push("a handoff recovery file");
  // The handoff's latest state from its live process (one that exited took its handoff with it).
  const log = s.deliveries();
  for (let i = log.length - 1; i >= 0; i--) {
    const d = log[i] as (typeof log)[number];
    if (d.name === "extension.exited" && d.data.instance === "handoff") break;
    if (d.name !== "handoff.state_reported") continue;
    if (d.data.phase !== "idle") out.push(`handoff ${String(d.data.phase)}`);
    break;
  }
  return out;
}

/** `:handoff recover resume` when a recovery file is there and no handoff runs (as a user does after a crash). */
async function recoverHandoff(s: SoakSession): Promise<void> {
  if (!s.o.handoff || !existsSync(s.recoveryFile())) return;
  const id = s.handoffCommand(s.leadId, "recover", "resume");
  await s.delivered((d) => d.name === "handoff.command_result" && d.data.request_id === id, "the handoff's recovery", 30_000);
}

/** Waits until the session has no work left; a handoff that hangs is cancelled once, as a user would. */
async function settle(s: SoakSession, when: string): Promise<Violation[]> {
  const quiet = () => openWork(s).length === 0;
  try {
    await waitFor(quiet, "the session to settle", { timeoutMs: SETTLE_MS, pollMs: 100 });
    return [];
  } catch {
    if (openWork(s).some((w) => w.startsWith("handoff"))) {
      s.handoffCommand(s.leadId, "cancel");
      await recoverHandoff(s).catch(() => undefined);
      if (await waitFor(quiet, "the session to settle after a cancel", { timeoutMs: SETTLE_MS, pollMs: 100 }).then(() => true, () => false)) return [];
    }
    return openWork(s).map((w) => ({ invariant: "turns.unclosed", detail: `still open ${SETTLE_MS / 1000} s ${when}: ${w}` }));
  }
}

/** Prompts refused live (`agent.prompt_failed`) whose journal still has no outcome for them. */
function refusedUnclosed(s: SoakSession): Violation[] {
  const failed = refused(s);
  return s.members().flatMap((a) =>
    [...foldPrompts(s.agentJournal(a)).values()]
      .filter((p) => p.outcome === undefined && !p.taken && failed.has(p.id))
      .map((p) => ({ invariant: "turns.unclosed" as const, detail: `agent ${a}: prompt ${p.id} (${marksIn(p.text).join(",") || "unmarked"}) was refused live (agent.prompt_failed, ${failed.get(p.id)}) but its journal records no outcome (no agent.outer_turn_finished)` })),
  );
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
