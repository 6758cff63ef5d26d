// A round's plan, drawn from its seeded generator: the workload that builds a history, the phase
// the round waits for, the prompts typed while it runs, and what is killed how long after it began.
import type { Rng } from "./rng.js";
import { describeScript, type Action, type ModelRound, type Script } from "./script.js";
import type { ModelPacing } from "./model.js";

export const PHASES = ["prompt", "tool", "compaction", "agent_start", "handoff"] as const;
export type Phase = (typeof PHASES)[number];
export const TARGETS = ["daemon", "provider", "shell", "handoff"] as const;
export type Target = (typeof TARGETS)[number];
export type CompactionVia = "ui" | "tool" | "auto";
/** Where a handoff is killed: its request sent; the template retrieved (prompts deferred); the dossier being written, before Finish. */
export type HandoffAt = "requested" | "deferring" | "writing";

export type Trigger =
  /** Killed while the model streams the last answer of `prompt`. */
  | { readonly phase: "prompt"; readonly prompt: string }
  /** Killed while the shell call of `prompt`'s first round runs. */
  | { readonly phase: "tool"; readonly prompt: string }
  /** Killed during a compaction started by `:compact`, the `compact` tool or the threshold. */
  | { readonly phase: "compaction"; readonly via: CompactionVia; readonly prompt?: string }
  /** Killed once `prompt`'s `agent_start` created the child. */
  | { readonly phase: "agent_start"; readonly prompt: string }
  /** Killed when the handoff reached `at`; `deferred` are typed in its deferral window first. */
  | { readonly phase: "handoff"; readonly at: HandoffAt; readonly deferred: readonly string[] };

export interface Extra {
  readonly id: string;
  readonly mode: "queue" | "steer";
}

export interface RoundPlan {
  readonly round: number;
  readonly scripts: readonly Script[];
  /** Prompts run to their end, in order, before the trigger. */
  readonly warmup: readonly string[];
  readonly trigger: Trigger;
  /** Prompts typed as soon as the trigger's phase began, before the kill. */
  readonly extras: readonly Extra[];
  readonly kill: { readonly target: Target; readonly delayMs: number };
  readonly pacing: ModelPacing;
}

export interface PlanOptions {
  readonly handoff: boolean;
  readonly phases?: readonly Phase[];
  readonly targets?: readonly Target[];
}

const PHASE_WEIGHTS: Record<Phase, number> = { prompt: 20, tool: 25, compaction: 25, agent_start: 15, handoff: 15 };
const TARGET_WEIGHTS: Record<Target, number> = { daemon: 55, provider: 15, shell: 15, handoff: 15 };

class Scripts {
  readonly all: Script[] = [];
  private n = 0;
  constructor(private readonly round: number) {}
  add(rounds: ModelRound[], prefix = "p"): string {
    const id = `r${this.round}${prefix}${++this.n}`;
    this.all.push({ id, rounds });
    return id;
  }
}

function only<K extends string>(weights: Record<K, number>, keep: readonly K[] | undefined): Record<K, number> {
  if (!keep) return weights;
  return Object.fromEntries(Object.entries(weights).filter(([k]) => keep.includes(k as K))) as Record<K, number>;
}

/** A random ordinary round of tool calls: shell, read, write, sometimes `compact`. */
function randomCalls(rng: Rng, compact: boolean): Action[] {
  const calls: Action[] = [];
  const n = rng.int(1, 2);
  for (let i = 0; i < n; i++) {
    const t = rng.weighted({ shell: 4, read: 2, write: 2, compact: compact ? 1 : 0 });
    calls.push(t === "shell" ? { t, sleepMs: rng.int(20, 300) } : { t });
  }
  return calls;
}

function randomScript(rng: Rng, compact: boolean): ModelRound[] {
  const rounds: ModelRound[] = [];
  const n = rng.int(0, 2);
  for (let i = 0; i < n; i++) rounds.push({ kind: "calls", calls: randomCalls(rng, compact), hot: rng.chance(0.1) });
  rounds.push({ kind: "text", streamMs: rng.int(0, 200) });
  return rounds;
}

function triggerOf(rng: Rng, phase: Phase, s: Scripts): Trigger {
  switch (phase) {
    case "prompt":
      return { phase, prompt: s.add([...randomScript(rng, false).slice(0, -1), { kind: "text", streamMs: rng.int(400, 1500) }]) };
    case "tool":
      return { phase, prompt: s.add([{ kind: "calls", calls: [{ t: "shell", sleepMs: rng.int(300, 1500) }, ...(rng.chance(0.3) ? [{ t: "write" } as const] : [])] }, { kind: "text", streamMs: 50 }]) };
    case "compaction": {
      const via = rng.pick<CompactionVia>(["ui", "tool", "auto"]);
      if (via === "ui") return { phase, via };
      if (via === "tool") return { phase, via, prompt: s.add([{ kind: "calls", calls: [{ t: "compact" }] }, { kind: "calls", calls: [{ t: "read" }] }, { kind: "text", streamMs: 50 }]) };
      return { phase, via, prompt: s.add([{ kind: "calls", calls: [{ t: "read" }], hot: true }, { kind: "text", streamMs: 50 }]) };
    }
    case "agent_start": {
      const child = s.add([{ kind: "calls", calls: [{ t: "shell", sleepMs: rng.int(100, 600) }] }, { kind: "text", streamMs: rng.int(0, 400) }], "c");
      return { phase, prompt: s.add([{ kind: "calls", calls: [{ t: "start", child }] }, { kind: "calls", calls: [{ t: "wait" }] }, { kind: "text", streamMs: 50 }]) };
    }
    case "handoff": {
      const at = rng.pick<HandoffAt>(["requested", "deferring", "deferring", "writing"]);
      const deferred = at === "requested" ? [] : Array.from({ length: rng.int(1, 2) }, () => s.add([{ kind: "text", streamMs: 50 }], "d"));
      return { phase, at, deferred };
    }
  }
}

/** The plan of round `round`, from its generator. */
export function makePlan(rng: Rng, round: number, o: PlanOptions): RoundPlan {
  const s = new Scripts(round);
  const phases = o.handoff ? o.phases : (o.phases ?? PHASES).filter((p) => p !== "handoff");
  const targets = o.handoff ? o.targets : (o.targets ?? TARGETS).filter((t) => t !== "handoff");
  const phase = rng.weighted(only(PHASE_WEIGHTS, phases));
  const target = rng.weighted(only(TARGET_WEIGHTS, targets));
  // A compaction needs a closed prefix to summarize: at least one finished prompt before it.
  const warmups = rng.int(phase === "compaction" ? 1 : 0, 2);
  const warmup = Array.from({ length: warmups }, () => s.add(randomScript(rng, true)));
  const trigger = triggerOf(rng, phase, s);
  const extras: Extra[] = phase === "handoff" ? [] : Array.from({ length: rng.int(0, 2) }, () => ({ id: s.add(randomScript(rng, false)), mode: rng.pick(["queue", "steer"] as const) }));
  const pacing: ModelPacing = { summaryMs: rng.int(200, 1200), goAnswerMs: rng.int(600, 1500), writerMs: rng.int(200, 1200) };
  const window = phase === "prompt" || phase === "tool" ? 1500 : phase === "compaction" ? pacing.summaryMs + 400 : phase === "handoff" ? 800 : 700;
  return { round, scripts: s.all, warmup, trigger, extras, kill: { target, delayMs: rng.int(0, window) }, pacing };
}

/** One line per part of a plan, for a failure's report. */
export function describePlan(p: RoundPlan): string {
  const t = p.trigger;
  const trig = t.phase === "compaction" ? `compaction via ${t.via}` : t.phase === "handoff" ? `handoff at ${t.at}, ${t.deferred.length} deferred` : `${t.phase} of ${t.prompt}`;
  const lines = [`kill ${p.kill.target} ${p.kill.delayMs} ms into: ${trig}; warmup ${p.warmup.join(", ") || "none"}; extras ${p.extras.map((e) => `${e.id}(${e.mode})`).join(", ") || "none"}`];
  for (const sc of p.scripts) lines.push(`  ${sc.id}: ${describeScript(sc)}`);
  return lines.join("\n");
}
