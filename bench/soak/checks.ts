// The invariants a round checks after its resume, each from evidence a user or a model could see:
// the histories a UI pages back, the journals, the marker file the shell commands append to, and
// what the scripted model was asked.
import type { JournalRecord } from "../../handwritten/store/index.js";
import type { SeenRequest } from "./model.js";
import { marksIn, seenIn } from "./script.js";

export const INVARIANTS = [
  "prompts.lost",
  "prompts.duplicated",
  "transcript.lost",
  "transcript.unstarted",
  "tools.rerun",
  "requests.resent",
  "calls.unclosed",
  "turns.unclosed",
  "resume.new_prompt",
  "leftover.processes",
  "leftover.sockets",
  "soak.error",
] as const;
export type Invariant = (typeof INVARIANTS)[number];

export interface Violation {
  readonly invariant: Invariant;
  readonly detail: string;
}

/** A prompt the UI was told of (`agent.prompt_submitted` delivered live). */
export interface Acked {
  readonly agentId: string;
  readonly promptId: string;
  readonly text: string;
  readonly boot: number;
}

export interface PromptState {
  readonly id: string;
  readonly text: string;
  readonly steer: boolean;
  submitted: number;
  /** A round start took it into the transcript. */
  taken: boolean;
  outcome?: string;
}

/** An agent's prompts, folded from its records as the harness folds them (SPEC-agent-lifecycle). */
export function foldPrompts(records: readonly JournalRecord[]): Map<string, PromptState> {
  const prompts = new Map<string, PromptState>();
  const waiting = new Set<string>();
  for (const r of records) {
    const d = r.event.data;
    const id = String(d.prompt_id ?? "");
    switch (r.event.name) {
      case "agent.prompt_submitted": {
        const p = prompts.get(id);
        if (p) p.submitted++;
        else prompts.set(id, { id, text: String(d.text), steer: d.mode === "steer", submitted: 1, taken: false });
        waiting.add(id);
        break;
      }
      case "agent.prompt_started":
        for (const w of [...waiting]) {
          const p = prompts.get(w);
          if (w !== id && !p?.steer) continue;
          if (p) p.taken = true;
          waiting.delete(w);
        }
        break;
      case "agent.outer_turn_finished": {
        const p = prompts.get(id);
        if (p) p.outcome = String(d.outcome);
        waiting.delete(id);
        break;
      }
    }
  }
  return prompts;
}

/** Every acknowledged prompt is in its agent's resumed history once, started or closed; no mark is submitted twice. */
export function checkPrompts(acked: readonly Acked[], histories: ReadonlyMap<string, readonly JournalRecord[]>): Violation[] {
  const out: Violation[] = [];
  const folds = new Map([...histories].map(([a, recs]) => [a, foldPrompts(recs)]));
  for (const a of acked) {
    const p = folds.get(a.agentId)?.get(a.promptId);
    const what = `prompt ${a.promptId} (${marksIn(a.text).join(",") || "unmarked"}) of agent ${a.agentId}, acknowledged in boot ${a.boot}`;
    if (!p) out.push({ invariant: "prompts.lost", detail: `${what} is not in the resumed history` });
    else if (p.submitted > 1) out.push({ invariant: "prompts.duplicated", detail: `${what} is submitted ${p.submitted} times in the history` });
    else if (!p.taken && p.outcome === undefined) out.push({ invariant: "prompts.lost", detail: `${what} was neither started nor closed with an outcome` });
  }
  // A prompt the harness refused or closed unstarted may be sent again (a handoff's release does);
  // a mark that started twice ran twice.
  for (const [agent, fold] of folds) {
    const byMark = new Map<string, string[]>();
    for (const p of fold.values()) if (p.taken) for (const m of marksIn(p.text)) byMark.set(m, [...(byMark.get(m) ?? []), p.id]);
    for (const [m, ids] of byMark) if (ids.length > 1) out.push({ invariant: "prompts.duplicated", detail: `mark ${m} started as ${ids.length} prompts of agent ${agent} (${ids.join(", ")})` });
  }
  return out;
}

/** After the workload settled: every prompt of the history closed (a taken steer rides on its turn's). */
export function checkTurnsClosed(histories: ReadonlyMap<string, readonly JournalRecord[]>): Violation[] {
  const out: Violation[] = [];
  for (const [agent, recs] of histories) {
    const started = new Set(recs.filter((r) => r.event.name === "agent.prompt_started").map((r) => String(r.event.data.prompt_id)));
    for (const p of foldPrompts(recs).values()) {
      if (p.outcome !== undefined) continue;
      if (p.taken && !started.has(p.id)) continue; // a steer taken into another prompt's turn
      out.push({ invariant: "turns.unclosed", detail: `prompt ${p.id} (${marksIn(p.text).join(",") || "unmarked"}) of agent ${agent} is ${p.taken ? "started" : "waiting"} with no outcome after the session settled` });
    }
  }
  return out;
}

/** Each call ran at most once (marker file, `tool.started`) and got exactly one outcome. */
export function checkTools(restore: readonly JournalRecord[], journals: ReadonlyMap<string, readonly JournalRecord[]>, runs: readonly string[]): Violation[] {
  const out: Violation[] = [];
  const count = (xs: Iterable<string>) => {
    const m = new Map<string, number>();
    for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
    return m;
  };
  for (const [id, n] of count(runs)) if (n > 1) out.push({ invariant: "tools.rerun", detail: `shell call ${id} ran ${n} times (soak-runs.log)` });
  const started = restore.filter((r) => r.event.name === "tool.started").map((r) => String(r.event.data.call_id));
  for (const [id, n] of count(started)) if (n > 1) out.push({ invariant: "tools.rerun", detail: `call ${id} has ${n} tool.started records` });
  const outcomes = new Map<string, number>();
  const closedTurns = new Map<string, string>();
  for (const recs of journals.values()) {
    for (const r of recs) {
      if (r.event.name === "provider.tool_result" || r.event.name === "provider.tool_error") outcomes.set(String(r.event.data.call_id), (outcomes.get(String(r.event.data.call_id)) ?? 0) + 1);
      if (r.event.name === "agent.outer_turn_finished") closedTurns.set(String(r.event.data.prompt_id), String(r.event.data.outcome));
    }
  }
  for (const [id, n] of outcomes) if (n > 1) out.push({ invariant: "tools.rerun", detail: `call ${id} has ${n} outcomes (provider.tool_result/tool_error)` });
  const seen = new Set<string>();
  for (const r of restore) {
    if (r.event.name !== "tool.request" && r.event.name !== "tool.started") continue;
    const id = String(r.event.data.call_id);
    if (seen.has(id) || outcomes.has(id)) continue;
    seen.add(id);
    const prompt = r.event.data.prompt_id === undefined ? undefined : String(r.event.data.prompt_id);
    // Every call has one, its turn cut or not: a resume closes a call a crash cut (harness/restore-calls.ts).
    const turn = prompt === undefined ? undefined : closedTurns.get(prompt);
    out.push({ invariant: "calls.unclosed", detail: `call ${id} (${String(r.event.data.tool)}) of prompt ${prompt ?? "-"} has no outcome; its turn ${turn === undefined ? "is not closed" : `closed ${turn}`}` });
  }
  return out;
}

/**
 * Nothing was asked of the model twice: no request identity and no (prompt, round) seen twice, and
 * no round of a prompt from an earlier boot asked in the last one. A successor compaction's summary
 * may repeat its failed predecessor's request (one excuse per successor started).
 */
export function checkRequests(requests: readonly SeenRequest[], successors: number, newScripts: ReadonlySet<string>): Violation[] {
  const out: Violation[] = [];
  const byKey = new Map<string, SeenRequest[]>();
  for (const r of requests) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
  let excused = successors;
  for (const [key, rs] of byKey) {
    if (rs.length < 2) continue;
    if (rs[0]?.kind === "summary" && excused >= rs.length - 1) {
      excused -= rs.length - 1;
      continue;
    }
    out.push({ invariant: "requests.resent", detail: `${rs[0]?.kind} request sent ${rs.length} times (boots ${rs.map((r) => r.boot).join(",")}): ${key.slice(0, 160)}` });
  }
  const byRound = new Map<string, SeenRequest[]>();
  for (const r of requests) if (r.script !== undefined) byRound.set(`${r.script}#${r.round}`, [...(byRound.get(`${r.script}#${r.round}`) ?? []), r]);
  for (const [k, rs] of byRound) if (rs.length > 1 && new Set(rs.map((r) => r.key)).size > 1) out.push({ invariant: "requests.resent", detail: `round ${k} was asked ${rs.length} times (boots ${rs.map((r) => r.boot).join(",")})` });
  const last = Math.max(0, ...requests.map((r) => r.boot));
  const firstBoot = new Map<string, number>();
  for (const r of requests) if (r.script !== undefined && !firstBoot.has(r.script)) firstBoot.set(r.script, r.boot);
  for (const r of requests) {
    if (r.boot !== last || r.script === undefined || newScripts.has(r.script)) continue;
    if ((firstBoot.get(r.script) ?? last) < last) out.push({ invariant: "requests.resent", detail: `round ${r.round} of ${r.script}, a prompt of boot ${firstBoot.get(r.script)}, was asked after the resume (boot ${last})` });
  }
  return out;
}

type Msg = { role: string; content?: unknown };
const textOf = (m: Msg): string => (typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? ""));

/**
 * The model's view after the resume: the request for an agent's new prompt holds every prompt the
 * history says entered the transcript (verbatim, or named by the summary that replaced it), once,
 * and none that never started.
 */
export function checkTranscript(agentId: string, messages: readonly Msg[], history: readonly JournalRecord[], finalMark: string): Violation[] {
  const out: Violation[] = [];
  const shape = messages.map((m) => `${m.role}${[...marksIn(textOf(m)), ...seenIn(textOf(m)).map((x) => `~${x}`)].map((x) => `:${x}`).join("")}`).join(" ");
  const users = messages.filter((m) => m.role === "user").map(textOf);
  const verbatim = users.flatMap(marksIn);
  const present = new Set([...verbatim, ...users.flatMap(seenIn)]);
  const counts = new Map<string, number>();
  for (const m of verbatim) counts.set(m, (counts.get(m) ?? 0) + 1);
  for (const [m, n] of counts) if (n > 1) out.push({ invariant: "prompts.duplicated", detail: `agent ${agentId}: prompt ${m} is ${n} times in the transcript sent after the resume` });
  const prompts = [...foldPrompts(history).values()];
  const takenMarks = new Set(prompts.filter((p) => p.taken).flatMap((p) => marksIn(p.text)));
  for (const p of prompts) {
    for (const m of marksIn(p.text)) {
      if (m === finalMark) continue;
      if (p.taken && !present.has(m)) out.push({ invariant: "transcript.lost", detail: `agent ${agentId}: prompt ${p.id} (${m}) started (outcome ${p.outcome ?? "none"}) but is not in the transcript sent after the resume (${shape})` });
      if (!takenMarks.has(m) && verbatim.includes(m)) out.push({ invariant: "transcript.unstarted", detail: `agent ${agentId}: prompt ${p.id} (${m}) never started (outcome ${p.outcome ?? "none"}) but is in the transcript sent after the resume (${shape})` });
    }
  }
  return out;
}

/**
 * Each acknowledged deferred prompt of a handoff reached exactly one place: a turn of the agent (a
 * release's prompt refused before it started is sent again by the next release), or the
 * replacement's dossier.
 */
export function checkDeferred(acked: readonly string[], histories: ReadonlyMap<string, readonly JournalRecord[]>, dossiers: readonly string[]): Violation[] {
  const out: Violation[] = [];
  const started = [...histories.values()].flatMap((h) => [...foldPrompts(h).values()].filter((p) => p.taken).map((p) => p.text));
  for (const m of acked) {
    const n = [...started, ...dossiers].filter((t) => marksIn(t).includes(m)).length;
    if (n === 0) out.push({ invariant: "prompts.lost", detail: `deferred handoff prompt ${m}, acknowledged in the window, reached neither a turn of the agent nor a dossier` });
    if (n > 1) out.push({ invariant: "prompts.duplicated", detail: `deferred handoff prompt ${m} reached ${n} places` });
  }
  return out;
}
