// What the harness keeps of an agent journal without its transcript: the agent's identity, model,
// metadata and the prompts still open. Small and content-minimised (no prompt or output text), it
// is stored with the journal's checkpoints, so a resume folds only the records after the last
// checkpoint and reads the transcript only when the agent next needs it (SPEC-journal-storage).
import type { Event } from "../protocol/index.js";

export interface AgentFold {
  /** From `agent.started` (seq 0). */
  created_at: number;
  ephemeral: boolean;
  parent_id?: string;
  /** `agent.started.model`, then each `agent.model_set`. */
  model?: string;
  /** `agent.started.role`: whose tool policy applies. */
  role?: string;
  /** `agent.started.creator`'s kind: `ui`, `extension`, `harness`, or `agent` for a creation record. */
  creator?: string;
  /** The parent named by a valid creation record at seq 0 (SPEC-agent-team): the only parent edge a resume trusts. */
  created_by?: { agent_id: string; call_id: string };
  /** The outcome of the agent's last finished turn. */
  last_outcome?: string;
  /** The agent's own work status (`work_status`): phase, title and epoch. */
  work?: { phase: string; title: string; epoch: number };
  /** The compaction open in the journal (SPEC-compaction): started, and summarized at a seq. */
  compacting?: { id: string; cut_seq: number; summarized_seq?: number; model?: string };
  /** A failed compaction whose watermark a successor still owes. */
  owed?: { id: string; watermark: number };
  /** The cut of the last committed compaction (0: none). */
  cut?: number;
  /**
   * Where loading the transcript may start instead of seq 0, set by each commit: its cut, or the
   * submission of a prompt still waiting then, if earlier (its text enters the transcript later).
   */
  transcript_from?: number;
  /** The seq of each waiting prompt's `agent.prompt_submitted`. */
  submitted_seq?: Record<string, number>;
  /**
   * Prompts taken in by a round since the last cut, oldest first, as [submitted, taken in] seqs
   * (at most TAKEN_IN_KEPT): a later cut that falls between the two keeps the prompt's message in
   * its suffix while its text lies before the cut, so the transcript must be loaded from its
   * submission. Past the bound, `taken_in_floor` is the last seq an entry left had been taken in at:
   * a cut at or before it may straddle a prompt no longer listed, and the load starts at 0.
   */
  taken_in?: Array<[number, number]>;
  taken_in_floor?: number;
  /** `agent.metadata_set` (display names, working directory, …). */
  metadata: Record<string, string>;
  /** Prompts started without a terminal: prompt id → rounds started. */
  open: Record<string, number>;
  /** Prompts submitted and never started nor closed: prompt id → steer. */
  waiting: Record<string, boolean>;
  /** Token usage of the agent's responses, so a resumed agent's stats go on from where they were. */
  usage: AgentUsageTotals;
  /** Records folded: the journal's next seq. */
  next_seq: number;
}

export interface AgentUsageTotals {
  input_tokens: number;
  output_tokens: number;
  /** The last response's input plus output tokens (how full its context was), and its model. */
  context_tokens: number;
  context_model?: string;
  /** Input, output and cached input tokens per model the responses were asked of (cost is priced per model). */
  by_model: Record<string, [number, number, number]>;
}

export function emptyAgentFold(): AgentFold {
  return { created_at: 0, ephemeral: false, metadata: {}, open: {}, waiting: {}, usage: emptyUsageTotals(), next_seq: 0 };
}

export function emptyUsageTotals(): AgentUsageTotals {
  return { input_tokens: 0, output_tokens: 0, context_tokens: 0, by_model: {} };
}

/** Adds one response's usage to the totals. */
export function addUsage(u: AgentUsageTotals, model: string, input: number, output: number, cached: number, context = true): void {
  u.input_tokens += input;
  u.output_tokens += output;
  if (context) {
    u.context_tokens = input + output;
    u.context_model = model;
  }
  const m = (u.by_model[model] ??= [0, 0, 0]);
  m[0] += input;
  m[1] += output;
  m[2] += cached;
}

/** Folds one record, in journal order. */
export function foldAgentRecord(f: AgentFold, e: Event, recordedAt: number): void {
  const seq = f.next_seq;
  f.next_seq++;
  switch (e.name) {
    case "agent.started":
      f.created_at = recordedAt;
      f.ephemeral = e.data.ephemeral;
      if (e.data.parent_id !== undefined) f.parent_id = e.data.parent_id;
      if (e.data.model !== undefined) f.model = e.data.model;
      if (e.data.role !== undefined) f.role = e.data.role;
      f.creator = e.data.creator;
      // Only a record at seq 0 whose parent is the one `agent.started` names is a creation edge.
      if (e.data.creator === "agent" && seq === 0 && e.data.created_by !== undefined && e.data.created_by.agent_id === e.data.parent_id) {
        f.created_by = { agent_id: e.data.created_by.agent_id, call_id: e.data.created_by.call_id };
      }
      break;
    case "agent.work_status_set":
      f.work = { phase: e.data.phase, title: e.data.title, epoch: e.data.epoch };
      break;
    case "agent.compaction_started":
    case "agent.compaction_summarized":
    case "agent.compaction_committed":
    case "agent.compaction_failed":
      foldCompaction(f, e, seq);
      break;
    case "agent.model_set":
      f.model = e.data.model;
      break;
    case "agent.metadata_set":
      if (e.data.value === null) delete f.metadata[e.data.key];
      else f.metadata[e.data.key] = e.data.value;
      break;
    case "agent.prompt_submitted":
      f.waiting[e.data.prompt_id] = e.data.mode === "steer";
      (f.submitted_seq ??= {})[e.data.prompt_id] = seq;
      break;
    case "agent.prompt_started":
      promptStarted(f, e.data.prompt_id, e.data.round, seq);
      break;
    case "agent.outer_turn_finished":
      delete f.open[e.data.prompt_id];
      delete f.waiting[e.data.prompt_id];
      delete f.submitted_seq?.[e.data.prompt_id];
      f.last_outcome = e.data.outcome;
      break;
    case "provider.response_finished":
      if (e.data.usage) addUsage(f.usage, e.data.model, e.data.usage.input_tokens, e.data.usage.output_tokens, e.data.usage.cache_read_tokens ?? 0);
      break;
  }
}

/** A round start takes its own prompt and every steered one waiting into the transcript. */
function promptStarted(f: AgentFold, pid: string, round: number, seq: number): void {
  for (const [id, steer] of Object.entries(f.waiting)) {
    if (!steer && id !== pid) continue;
    delete f.waiting[id];
    const submitted = f.submitted_seq?.[id];
    delete f.submitted_seq?.[id];
    if (submitted !== undefined && submitted < seq) takenIn(f, submitted, seq);
  }
  f.open[pid] = round + 1;
}

type CompactionEvent = Extract<Event, { name: "agent.compaction_started" | "agent.compaction_summarized" | "agent.compaction_committed" | "agent.compaction_failed" }>;

/** A compaction's records: started, summarized, then committed or failed. */
function foldCompaction(f: AgentFold, e: CompactionEvent, seq: number): void {
  switch (e.name) {
    case "agent.compaction_started":
      f.compacting = { id: e.data.compaction_id, cut_seq: e.data.cut_seq, model: e.data.model };
      break;
    case "agent.compaction_summarized":
      if (f.compacting?.id === e.data.compaction_id) {
        f.compacting.summarized_seq = seq;
        // The summary's tokens count, as live, but are not the context's use (a response's are).
        const u = e.data.usage;
        if (u) addUsage(f.usage, f.compacting.model ?? f.model ?? "", u.input_tokens, u.output_tokens, u.cache_read_tokens ?? 0, false);
      }
      break;
    case "agent.compaction_committed":
      // Only the open compaction commits: a duplicate changes nothing.
      if (f.compacting?.id !== e.data.compaction_id || f.compacting.summarized_seq === undefined) break;
      delete f.compacting;
      delete f.owed;
      f.cut = e.data.cut_seq;
      f.transcript_from = transcriptFrom(f, e.data.cut_seq);
      // What was taken in before the cut is in the summary now.
      f.taken_in = (f.taken_in ?? []).filter(([, at]) => at >= e.data.cut_seq);
      // The context is now the summary and the suffix, as the harness estimated it at the commit.
      if (e.data.context_tokens !== undefined) f.usage.context_tokens = e.data.context_tokens;
      break;
    case "agent.compaction_failed":
      if (f.compacting?.id !== e.data.compaction_id) break;
      delete f.compacting;
      // A successor that fails too leaves the first watermark owed: it is never replaced.
      f.owed ??= { id: e.data.compaction_id, watermark: e.data.watermark };
      break;
  }
}

/** How many prompts taken in since the last cut the fold lists (a checkpoint stays small). */
export const TAKEN_IN_KEPT = 256;

function takenIn(f: AgentFold, submitted: number, at: number): void {
  const list = (f.taken_in ??= []);
  list.push([submitted, at]);
  while (list.length > TAKEN_IN_KEPT) f.taken_in_floor = Math.max(f.taken_in_floor ?? 0, (list.shift() as [number, number])[1]);
}

/**
 * Where a resumed agent may start loading its transcript after a commit at `cut`: the cut, or the
 * submission of a prompt whose text enters the suffix later (still waiting) or entered it at the
 * cut or after while submitted before it. A waiting prompt without a known submission, or a cut that
 * may straddle a prompt no longer listed, makes the load start at 0.
 */
function transcriptFrom(f: AgentFold, cut: number): number {
  if (f.taken_in_floor !== undefined && cut <= f.taken_in_floor) return 0;
  const waiting = Object.keys(f.waiting).map((id) => f.submitted_seq?.[id] ?? 0);
  const straddling = (f.taken_in ?? []).filter(([submitted, at]) => submitted < cut && at >= cut).map(([submitted]) => submitted);
  return Math.min(cut, ...waiting, ...straddling);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A fold read back from a checkpoint, checked field by field; undefined when it is not one. */
export function parseAgentFold(v: unknown, nextSeq: number): AgentFold | undefined {
  if (!isRecord(v) || v.next_seq !== nextSeq) return undefined;
  if (typeof v.created_at !== "number" || typeof v.ephemeral !== "boolean") return undefined;
  if (v.parent_id !== undefined && typeof v.parent_id !== "string") return undefined;
  if (v.model !== undefined && typeof v.model !== "string") return undefined;
  if (v.role !== undefined && typeof v.role !== "string") return undefined;
  if (v.creator !== undefined && typeof v.creator !== "string") return undefined;
  if (v.last_outcome !== undefined && typeof v.last_outcome !== "string") return undefined;
  const cb = v.created_by;
  if (cb !== undefined && !(isRecord(cb) && typeof cb.agent_id === "string" && typeof cb.call_id === "string" && cb.agent_id === v.parent_id)) return undefined;
  const w = v.work;
  if (w !== undefined && !(isRecord(w) && typeof w.phase === "string" && typeof w.title === "string" && typeof w.epoch === "number")) return undefined;
  const seqOf = (x: unknown) => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
  const c = v.compacting;
  if (c !== undefined && !(isRecord(c) && typeof c.id === "string" && seqOf(c.cut_seq) && (c.summarized_seq === undefined || seqOf(c.summarized_seq)) && (c.model === undefined || typeof c.model === "string")))
    return undefined;
  const o = v.owed;
  if (o !== undefined && !(isRecord(o) && typeof o.id === "string" && seqOf(o.watermark))) return undefined;
  if (v.cut !== undefined && !seqOf(v.cut)) return undefined;
  if (v.transcript_from !== undefined && !(seqOf(v.transcript_from) && (v.transcript_from as number) <= nextSeq)) return undefined;
  if (v.submitted_seq !== undefined && !(isRecord(v.submitted_seq) && Object.values(v.submitted_seq).every(seqOf))) return undefined;
  const ti = v.taken_in;
  if (ti !== undefined && !(Array.isArray(ti) && ti.length <= TAKEN_IN_KEPT && ti.every((p) => Array.isArray(p) && p.length === 2 && seqOf(p[0]) && seqOf(p[1])))) return undefined;
  if (v.taken_in_floor !== undefined && !seqOf(v.taken_in_floor)) return undefined;
  const strings = (o: unknown) => isRecord(o) && Object.values(o).every((x) => typeof x === "string");
  const numbers = (o: unknown) => isRecord(o) && Object.values(o).every((x) => typeof x === "number" && Number.isSafeInteger(x) && x > 0);
  const flags = (o: unknown) => isRecord(o) && Object.values(o).every((x) => typeof x === "boolean");
  if (!strings(v.metadata) || !numbers(v.open) || !flags(v.waiting)) return undefined;
  // A checkpoint written before usage was folded has none: the journal is folded whole instead.
  const usage = parseUsageTotals(v.usage);
  if (!usage) return undefined;
  return {
    created_at: v.created_at,
    ephemeral: v.ephemeral,
    ...(v.parent_id !== undefined ? { parent_id: v.parent_id as string } : {}),
    ...(v.model !== undefined ? { model: v.model as string } : {}),
    ...(v.role !== undefined ? { role: v.role as string } : {}),
    ...(v.creator !== undefined ? { creator: v.creator as string } : {}),
    ...(isRecord(cb) ? { created_by: { agent_id: cb.agent_id as string, call_id: cb.call_id as string } } : {}),
    ...(v.last_outcome !== undefined ? { last_outcome: v.last_outcome as string } : {}),
    ...(isRecord(w) ? { work: { phase: w.phase as string, title: w.title as string, epoch: w.epoch as number } } : {}),
    ...(isRecord(c)
      ? {
          compacting: {
            id: c.id as string,
            cut_seq: c.cut_seq as number,
            ...(c.summarized_seq !== undefined ? { summarized_seq: c.summarized_seq as number } : {}),
            ...(c.model !== undefined ? { model: c.model as string } : {}),
          },
        }
      : {}),
    ...(isRecord(o) ? { owed: { id: o.id as string, watermark: o.watermark as number } } : {}),
    ...(v.cut !== undefined ? { cut: v.cut as number } : {}),
    ...(v.transcript_from !== undefined ? { transcript_from: v.transcript_from as number } : {}),
    ...(isRecord(v.submitted_seq) ? { submitted_seq: { ...(v.submitted_seq as Record<string, number>) } } : {}),
    ...(Array.isArray(ti) ? { taken_in: (ti as Array<[number, number]>).map(([a, b]) => [a, b] as [number, number]) } : {}),
    ...(v.taken_in_floor !== undefined ? { taken_in_floor: v.taken_in_floor as number } : {}),
    metadata: { ...(v.metadata as Record<string, string>) },
    open: { ...(v.open as Record<string, number>) },
    waiting: { ...(v.waiting as Record<string, boolean>) },
    usage,
    next_seq: nextSeq,
  };
}

function parseUsageTotals(v: unknown): AgentUsageTotals | undefined {
  const count = (x: unknown): x is number => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
  if (!isRecord(v) || !count(v.input_tokens) || !count(v.output_tokens) || !count(v.context_tokens) || !isRecord(v.by_model)) return undefined;
  const byModel: Record<string, [number, number, number]> = {};
  for (const [model, t] of Object.entries(v.by_model)) {
    if (!Array.isArray(t) || t.length !== 3 || !count(t[0]) || !count(t[1]) || !count(t[2])) return undefined;
    byModel[model] = [t[0], t[1], t[2]];
  }
  if (v.context_model !== undefined && typeof v.context_model !== "string") return undefined;
  return {
    input_tokens: v.input_tokens,
    output_tokens: v.output_tokens,
    context_tokens: v.context_tokens,
    ...(v.context_model !== undefined ? { context_model: v.context_model } : {}),
    by_model: byModel,
  };
}
