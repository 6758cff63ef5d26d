// `tau session stats`: a session's activity from the harness-authored records of its agents'
// journals only (SPEC-compaction, "Session activity stats"). Each journal is read through the same
// read-only snapshot as a trace export (to its end, or to the cut a live daemon's checkpoint binds),
// checked strictly as it streams, and folded record by record: memory is bounded by the number of
// open prompts and models, not by the journal. Nothing is written, repaired or looked up.
import * as fs from "node:fs";
import * as path from "node:path";
import type { Event } from "../protocol/index.js";
import { JournalCorruptError, StoreError, isValidId, nodeIo, scanFrames, validateJournalRecord, type JournalRecord } from "../store/index.js";
import { agentJournalSemantics } from "./export.js";
import { resolveSession, sessionAgents } from "./resolve.js";
import { TraceError, captureAgentJournal, closeSnapshot } from "./snapshot.js";

export interface ModelTokens {
  responses: number;
  input: number;
  output: number;
  cached: number;
  reasoning: number;
}

export interface SessionStats {
  session_id: string;
  agents: number;
  /** False when a response carries no usage, or only some responses carry a cost. */
  complete: boolean;
  prompts: { total: number; by_source: Record<string, number> };
  turns: { completed: number; failed: number; cancelled: number; dispatch_uncertain: number; interrupted: number; unterminated: number };
  responses: { finished: number; failed: number };
  /** Tool calls a model made, by tool name and outcome. */
  tools: Record<string, { ok: number; error: number }>;
  compactions: { committed: number; failed: number };
  /** Response-local usage per model (summaries included). */
  tokens: Record<string, ModelTokens>;
  /** The sum of the costs the harness recorded; null when no response carries one. */
  cost_usd: number | null;
  /** Wall time per phase, from `recorded_at`. */
  wall_ms: { model: number; tools: number; compaction: number };
  /** How each journal was read. */
  journals: Array<{ agent_id: string; mode: "eof" | "checkpoint"; records: number }>;
}

/** The session whose journal changed last, when none is named. */
export function latestSession(stateDir: string): string {
  const dir = path.join(stateDir, "sessions");
  let best: { id: string; mtime: number } | undefined;
  let ids: string[] = [];
  try {
    ids = fs.readdirSync(dir).filter(isValidId);
  } catch {
    // no sessions folder: no session
  }
  for (const id of ids) {
    try {
      const mtime = fs.statSync(path.join(dir, id, "events.cbor")).mtimeMs;
      if (!best || mtime > best.mtime || (mtime === best.mtime && id > best.id)) best = { id, mtime };
    } catch {
      // not a session folder
    }
  }
  if (!best) throw new TraceError("there is no saved session");
  return best.id;
}

function emptyStats(sessionId: string): SessionStats {
  return {
    session_id: sessionId,
    agents: 0,
    complete: true,
    prompts: { total: 0, by_source: {} },
    turns: { completed: 0, failed: 0, cancelled: 0, dispatch_uncertain: 0, interrupted: 0, unterminated: 0 },
    responses: { finished: 0, failed: 0 },
    tools: {},
    compactions: { committed: 0, failed: 0 },
    tokens: {},
    cost_usd: null,
    wall_ms: { model: 0, tools: 0, compaction: 0 },
    journals: [],
  };
}

/** Per journal: what is open while it streams (prompt rounds, tool rounds, compactions). */
class AgentFolder {
  private readonly roundStart = new Map<string, number>();
  /** prompt id → [time its response asked for tools, calls still open]. */
  private readonly toolRound = new Map<string, { at: number; open: Set<string> }>();
  private readonly compaction = new Map<string, { at: number; model: string }>();
  private readonly started = new Set<string>();
  costs = 0;
  responses = 0;

  constructor(private readonly s: SessionStats) {}

  private tokens(model: string, usage: { input_tokens: number; output_tokens: number; cache_read_tokens?: number; reasoning_tokens?: number } | undefined): void {
    const t = (this.s.tokens[model] ??= { responses: 0, input: 0, output: 0, cached: 0, reasoning: 0 });
    t.responses++;
    this.responses++;
    if (!usage) {
      this.s.complete = false; // no accounting authority for this response
      return;
    }
    t.input += usage.input_tokens;
    t.output += usage.output_tokens;
    t.cached += usage.cache_read_tokens ?? 0;
    t.reasoning += usage.reasoning_tokens ?? 0;
  }

  private cost(c: { usd: number } | undefined): void {
    if (c === undefined) return;
    this.costs++;
    this.s.cost_usd = (this.s.cost_usd ?? 0) + c.usd;
  }

  add(e: Event, at: number): void {
    const s = this.s;
    switch (e.name) {
      case "agent.prompt_submitted":
        s.prompts.total++;
        s.prompts.by_source[e.data.source] = (s.prompts.by_source[e.data.source] ?? 0) + 1;
        break;
      case "agent.prompt_started":
        this.roundStart.set(`${e.data.prompt_id}#${e.data.round}`, at);
        if (e.data.round === 0) this.started.add(e.data.prompt_id);
        this.closeToolRound(e.data.prompt_id, at);
        break;
      case "provider.response_finished": {
        s.responses.finished++;
        this.tokens(e.data.model, e.data.usage);
        this.cost(e.data.cost);
        this.modelTime(`${e.data.prompt_id}#${e.data.round}`, at);
        const calls = e.data.tool_calls.map((c) => c.call_id);
        if (calls.length > 0) this.toolRound.set(e.data.prompt_id, { at, open: new Set(calls) });
        break;
      }
      case "provider.response_failed":
        s.responses.failed++;
        this.modelTime(`${e.data.prompt_id}#${e.data.round}`, at);
        break;
      case "provider.tool_result":
      case "provider.tool_error": {
        const t = (s.tools[e.data.tool] ??= { ok: 0, error: 0 });
        if (e.name === "provider.tool_result") t.ok++;
        else t.error++;
        const round = this.toolRound.get(e.data.prompt_id);
        if (round && round.open.delete(e.data.call_id) && round.open.size === 0) {
          s.wall_ms.tools += Math.max(0, at - round.at) / 1000;
          this.toolRound.delete(e.data.prompt_id);
        }
        break;
      }
      case "agent.outer_turn_finished":
        s.turns[e.data.outcome]++;
        this.started.delete(e.data.prompt_id);
        this.toolRound.delete(e.data.prompt_id);
        break;
      case "agent.compaction_started":
        this.compaction.set(e.data.compaction_id, { at, model: e.data.model });
        break;
      case "agent.compaction_summarized": {
        const c = this.compaction.get(e.data.compaction_id);
        this.tokens(c?.model ?? "(unknown)", e.data.usage);
        this.cost(e.data.cost);
        break;
      }
      case "agent.compaction_committed":
      case "agent.compaction_failed": {
        const c = this.compaction.get(e.data.compaction_id);
        if (!c) break; // a duplicate terminal counts once
        this.compaction.delete(e.data.compaction_id);
        if (e.name === "agent.compaction_committed") s.compactions.committed++;
        else s.compactions.failed++;
        s.wall_ms.compaction += Math.max(0, at - c.at) / 1000;
        break;
      }
    }
  }

  private modelTime(key: string, at: number): void {
    const start = this.roundStart.get(key);
    if (start === undefined) return;
    this.roundStart.delete(key);
    this.s.wall_ms.model += Math.max(0, at - start) / 1000;
  }

  private closeToolRound(promptId: string, _at: number): void {
    // A new round started while calls were still open (interrupted ones): the tool phase ends here unmeasured.
    this.toolRound.delete(promptId);
  }

  end(): void {
    this.s.turns.unterminated += this.started.size;
  }
}

/** The stats of session `query` (an id or unique prefix; the most recent session when undefined). */
export function sessionStats(stateDir: string, query: string | undefined): SessionStats {
  try {
    const sessionId = query === undefined ? latestSession(stateDir) : resolveSession(stateDir, query);
    const s = emptyStats(sessionId);
    let costs = 0;
    let responses = 0;
    for (const agentId of sessionAgents(stateDir, sessionId)) {
      if (!fs.existsSync(path.join(stateDir, "agents", agentId))) continue;
      const snap = captureAgentJournal(stateDir, agentId);
      try {
        const folder = new AgentFolder(s);
        let checked: Event | undefined;
        const semantic = agentJournalSemantics(agentId, (e) => (checked = e));
        const onRecord = (r: JournalRecord) => {
          // Only the harness authors canonical facts; anything else in a journal is not counted.
          if (checked && r.source.class === "harness") folder.add(checked, r.recorded_at);
        };
        const scan = scanFrames<JournalRecord>(nodeIo, snap.fd, snap.file, { validate: validateJournalRecord, semantic, onRecord }, { offset: 0, seq: 0 }, { until: snap.cut });
        if (snap.mode === "checkpoint" && (scan.tornTail || scan.end !== snap.cut || scan.nextSeq !== snap.expectedNextSeq))
          throw new JournalCorruptError(snap.file, scan.end, `the checkpoint's boundary ${snap.cut} is not where the frames end (${scan.end})`);
        folder.end();
        costs += folder.costs;
        responses += folder.responses;
        s.agents++;
        s.journals.push({ agent_id: agentId, mode: snap.mode, records: scan.records });
      } finally {
        closeSnapshot(snap);
      }
    }
    if (costs > 0 && costs < responses) s.complete = false;
    return s;
  } catch (err) {
    if (err instanceof StoreError) throw new TraceError(err.message);
    throw err;
  }
}

const num = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/** The human form of the stats. */
export function formatStats(s: SessionStats): string {
  const lines = [`session ${s.session_id}: ${s.agents} agent${s.agents === 1 ? "" : "s"}${s.complete ? "" : " (incomplete accounting)"}`];
  const bySource = Object.entries(s.prompts.by_source).sort().map(([k, v]) => `${k} ${v}`).join(", ");
  lines.push(`prompts: ${s.prompts.total}${bySource ? ` (${bySource})` : ""}`);
  const t = s.turns;
  lines.push(`turns: completed ${t.completed}, failed ${t.failed}, cancelled ${t.cancelled}, dispatch uncertain ${t.dispatch_uncertain}, interrupted ${t.interrupted}, unterminated ${t.unterminated}`);
  lines.push(`responses: ${s.responses.finished} finished, ${s.responses.failed} failed`);
  const tools = Object.entries(s.tools).sort(([a], [b]) => (a < b ? -1 : 1));
  lines.push(`tool calls: ${tools.length === 0 ? "none" : tools.map(([name, o]) => `${name} ${o.ok} ok${o.error ? `, ${o.error} error` : ""}`).join("; ")}`);
  lines.push(`compactions: ${s.compactions.committed} committed, ${s.compactions.failed} failed`);
  for (const [model, m] of Object.entries(s.tokens).sort(([a], [b]) => (a < b ? -1 : 1))) {
    lines.push(`tokens ${model}: in ${num(m.input)}, out ${num(m.output)}, cached ${num(m.cached)}, reasoning ${num(m.reasoning)} (${m.responses} responses)`);
  }
  lines.push(`cost: ${s.cost_usd === null ? "unknown (no rates recorded)" : `$${s.cost_usd.toFixed(4)}`}`);
  const w = s.wall_ms;
  lines.push(`wall time: model ${(w.model / 1000).toFixed(1)}s, tools ${(w.tools / 1000).toFixed(1)}s, compaction ${(w.compaction / 1000).toFixed(1)}s`);
  return lines.join("\n");
}
