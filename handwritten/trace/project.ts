// The three projections of an agent journal (SPEC-trace-export): native, compact JSONL and perf.
// Every line goes through `jsonLine`, so no C0/C1 control character is ever written raw.
import type { Usage } from "../../generated/index.js";
import type { Event } from "../protocol/index.js";
import type { JournalRecord } from "../store/index.js";
import { PriceTable, roundCost, type PriceOf } from "./cost.js";

/** Bytes each semantic text or terminal output keeps in compact lite mode. */
export const LITE_TEXT_BYTES = 4096;

const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029]/g;

/**
 * One JSON line. JSON.stringify already escapes C0 controls (U+0000–U+001F) and lone surrogates;
 * DEL, the C1 controls (U+0080–U+009F) and the line/paragraph separators are escaped here too
 * (they can only occur inside strings, so the line stays the same JSON value).
 */
export function jsonLine(value: unknown): string {
  return jsonText(JSON.stringify(value)) + "\n";
}

/** JSON text (as JSON.stringify writes it) with DEL, C1 and U+2028/U+2029 escaped as well. */
export function jsonText(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

// ---------------------------------------------------------------------------------------------
// native: every record, lossless. Plain JSON values stay as they are; anything JSON cannot hold is
// an object with a "$tau" tag (documented in SPEC-trace-export):
//   {"$tau":"float","bits":"<16 hex digits>"}       NaN, ±Infinity and -0 (IEEE 754 binary64 bits)
//   {"$tau":"bigint","value":"<decimal>"}           integers outside the safe range
//   {"$tau":"bytes","base64":"…"}                   CBOR byte strings
//   {"$tau":"typed","type":"Float32Array","base64":"…"}  CBOR typed arrays (tags 64–87), raw bytes
//   {"$tau":"tag","tag":<n>,"value":<native>}       any other CBOR tag
//   {"$tau":"date","ms":<number>}                   tags 0/1 (decoded as a date)
//   {"$tau":"map","entries":[[k,v],…]} / {"$tau":"set","values":[…]}
//   {"$tau":"undefined"}
//   {"$tau":"object","entries":{…}}                 a map that itself has a "$tau" key
// Other numbers are written in JavaScript's shortest round-trip form, which names one binary64.

function floatBits(n: number): string {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(n);
  return b.toString("hex");
}

export function nativeValue(v: unknown): unknown {
  if (v === null || typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "number") return Number.isFinite(v) && !Object.is(v, -0) ? v : { $tau: "float", bits: floatBits(v) };
  if (typeof v === "bigint") return { $tau: "bigint", value: v.toString() };
  if (v === undefined) return { $tau: "undefined" };
  if (Array.isArray(v)) return v.map(nativeValue);
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return { $tau: "bytes", base64: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64") };
  if (ArrayBuffer.isView(v)) return { $tau: "typed", type: v.constructor.name, base64: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64") };
  if (v instanceof Date) return { $tau: "date", ms: nativeValue(v.getTime()) };
  if (v instanceof Map) return { $tau: "map", entries: [...v.entries()].map(([k, x]) => [nativeValue(k), nativeValue(x)]) };
  if (v instanceof Set) return { $tau: "set", values: [...v].map(nativeValue) };
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    if (o.constructor?.name === "Tag" && "tag" in o && "value" in o) return { $tau: "tag", tag: nativeValue(o.tag), value: nativeValue(o.value) };
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(o)) out[k] = nativeValue(x);
    return "$tau" in o ? { $tau: "object", entries: out } : out;
  }
  return { $tau: "tag", tag: -1, value: String(v) };
}

/** A record's native line; in a workflow export `agent` follows `seq` (seqs repeat across agents). */
export function nativeLine(record: JournalRecord, agentId?: string): string {
  const v = nativeValue(record) as Record<string, unknown>;
  return jsonLine(agentId === undefined ? v : withAgent(v, agentId));
}

/** `v` with `agent` right after its first key (`seq`), as workflow lines carry it. */
function withAgent(v: Record<string, unknown>, agentId: string): Record<string, unknown> {
  const { seq, ...rest } = v;
  return { seq, agent: agentId, ...rest };
}

// ---------------------------------------------------------------------------------------------
// compact JSONL: one line per event. Lite mode keeps at most LITE_TEXT_BYTES (UTF-8) of every string
// except tool-call arguments (which are kept whole) and names each shortened field with its original
// size in `truncated`; full mode keeps everything.

/** The longest prefix of `s` that is at most `max` UTF-8 bytes and ends on a whole character. */
export function utf8Prefix(s: string, max: number): string {
  if (s.length <= max / 3) return s; // at most 3 bytes per UTF-16 unit
  const buf = Buffer.from(s, "utf8");
  if (buf.length <= max) return s;
  let end = max;
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--; // not inside a multi-byte sequence
  return buf.subarray(0, end).toString("utf8");
}

const KEPT_WHOLE = new Set(["arguments_json"]);

function bound(v: unknown, where: string, full: boolean, truncated: Record<string, number>): unknown {
  if (typeof v === "string") {
    if (full) return v;
    const kept = utf8Prefix(v, LITE_TEXT_BYTES);
    if (kept.length !== v.length) truncated[where] = Buffer.byteLength(v, "utf8");
    return kept;
  }
  if (Array.isArray(v)) return v.map((x, i) => bound(x, `${where}[${i}]`, full, truncated));
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = KEPT_WHOLE.has(k) ? x : bound(x, `${where}.${k}`, full, truncated);
    return out;
  }
  return v;
}

/** The compact form of one record (a JSONL line's value, and a TOON list item's). */
export function compactRecord(record: JournalRecord, full: boolean, agentId?: string): Record<string, unknown> {
  const truncated: Record<string, number> = {};
  const data = bound(nativeValue(record.event.data), "data", full, truncated);
  const line: Record<string, unknown> = { seq: record.seq, at_us: record.recorded_at, event: record.event.name };
  const src = record.source;
  line.by = src.instance !== undefined ? `${src.class}:${src.instance}` : src.class;
  line.data = data;
  if (Object.keys(truncated).length > 0) line.truncated = truncated;
  return agentId === undefined ? line : withAgent(line, agentId);
}

export function compactLine(record: JournalRecord, full: boolean, agentId?: string): string {
  return jsonLine(compactRecord(record, full, agentId));
}

// ---------------------------------------------------------------------------------------------
// perf: per prompt, timing and token counts only — never a body.

interface Tokens {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
  reasoning: number;
}

interface RoundPerf {
  round: number;
  model: string | null;
  started_at_us: number;
  finished_at_us: number | null;
  provider_us: number | null;
  outcome: string | null;
  tool_calls: number;
  /** From this round's response to the last of its tool results (tools may run in parallel). */
  tool_wall_us: number | null;
  tokens: Tokens | null;
  /** Recorded by the harness, or estimated from the model's current prices; null when neither. */
  cost_usd: number | null;
  cost_source: "journal" | "model_info" | null;
}

interface PromptPerf {
  prompt_id: string;
  submitted_at_us: number | null;
  started_at_us: number | null;
  finished_at_us: number | null;
  outcome: string | null;
  rounds: RoundPerf[];
  /** call_id → when its round's response asked for it. */
  pending: Map<string, number>;
  tool_us: number;
  tool_calls: number;
  tool_errors: number;
}

const zeroTokens = (): Tokens => ({ input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 });

/** b − a when the wall clock did not go backwards between them, else null (clock samples are not order). */
const span = (a: number | null, b: number | null): number | null => (a === null || b === null || b < a ? null : b - a);

export class PerfProjection {
  private readonly prompts = new Map<string, PromptPerf>();
  private agentId = "";
  private readonly prices: PriceTable;

  constructor(priceOf?: PriceOf) {
    this.prices = new PriceTable(priceOf);
  }

  private prompt(id: string): PromptPerf {
    let p = this.prompts.get(id);
    if (!p) {
      p = { prompt_id: id, submitted_at_us: null, started_at_us: null, finished_at_us: null, outcome: null, rounds: [], pending: new Map(), tool_us: 0, tool_calls: 0, tool_errors: 0 };
      this.prompts.set(id, p);
    }
    return p;
  }

  /** Folds one validated event, recorded at `at` (microseconds). */
  add(e: Event, at: number): void {
    switch (e.name) {
      case "agent.started":
        this.agentId = e.data.agent_id;
        return;
      case "agent.prompt_submitted":
        this.prompt(e.data.prompt_id).submitted_at_us = at;
        return;
      case "agent.prompt_started": {
        const p = this.prompt(e.data.prompt_id);
        p.started_at_us ??= at;
        p.rounds.push({ round: e.data.round, model: e.data.model ?? null, started_at_us: at, finished_at_us: null, provider_us: null, outcome: null, tool_calls: 0, tool_wall_us: null, tokens: null, cost_usd: null, cost_source: null });
        return;
      }
      case "provider.response_failed":
        this.finishRound(e.data.prompt_id, e.data.round, at, null, `failed:${e.data.error_class}`, undefined, undefined, []);
        return;
      case "provider.response_finished":
        this.finishRound(e.data.prompt_id, e.data.round, at, e.data.model, e.data.finish_reason, e.data.usage, e.data.cost, e.data.tool_calls);
        return;
      case "provider.tool_result":
      case "provider.tool_error": {
        const p = this.prompt(e.data.prompt_id);
        const asked = p.pending.get(e.data.call_id);
        p.tool_calls++;
        if (e.name === "provider.tool_error") p.tool_errors++;
        if (asked === undefined) return;
        p.pending.delete(e.data.call_id);
        p.tool_us += span(asked, at) ?? 0;
        const r = p.rounds.findLast((x) => x.finished_at_us === asked);
        if (r) r.tool_wall_us = Math.max(r.tool_wall_us ?? 0, span(asked, at) ?? 0);
        return;
      }
      case "agent.outer_turn_finished": {
        const p = this.prompt(e.data.prompt_id);
        p.finished_at_us = at;
        p.outcome = e.data.outcome;
        return;
      }
      case "agent.prompt_cancelled":
        this.prompt(e.data.prompt_id).outcome ??= "cancelled";
        return;
    }
  }

  private finishRound(promptId: string, round: number, at: number, model: string | null, outcome: string, usage: Usage | undefined, recorded: { usd: number } | undefined, calls: ReadonlyArray<{ call_id: string }>): void {
    const p = this.prompt(promptId);
    const r = p.rounds.findLast((x) => x.round === round);
    if (!r) return;
    r.finished_at_us = at;
    r.provider_us = span(r.started_at_us, at);
    if (model !== null) r.model = model;
    r.outcome = outcome;
    if (usage) r.tokens = { input: usage.input_tokens, output: usage.output_tokens, cache_read: usage.cache_read_tokens ?? 0, cache_write: usage.cache_write_tokens ?? 0, reasoning: usage.reasoning_tokens ?? 0 };
    const cost = roundCost(this.prices, r.model, usage, recorded);
    r.cost_usd = cost?.usd ?? null;
    r.cost_source = cost?.source ?? null;
    r.tool_calls = calls.length;
    for (const c of calls) p.pending.set(c.call_id, at);
  }

  /** The agent line's counts, set by `lines()` (a workflow's summary adds them up). */
  totals: AgentTotals | null = null;

  /**
   * One line per prompt (journal order of first appearance), then one line for the agent; `parent`
   * (a workflow export) adds where the agent came from: null for the root, else its creator.
   */
  lines(parent?: { agentId: string; callId: string } | null): string[] {
    const out: string[] = [];
    const total = zeroTokens();
    let rounds = 0;
    let totalCost: number | null = null;
    let totalUnpriced = 0;
    for (const p of this.prompts.values()) {
      const tokens = zeroTokens();
      let provider = 0;
      let cost: number | null = null;
      let unpriced = 0;
      for (const r of p.rounds) {
        rounds++;
        provider += r.provider_us ?? 0;
        if (r.cost_usd !== null) cost = (cost ?? 0) + r.cost_usd;
        else if (r.tokens !== null) unpriced++;
        for (const k of Object.keys(tokens) as Array<keyof Tokens>) tokens[k] += r.tokens?.[k] ?? 0;
      }
      for (const k of Object.keys(total) as Array<keyof Tokens>) total[k] += tokens[k];
      if (cost !== null) totalCost = (totalCost ?? 0) + cost;
      totalUnpriced += unpriced;
      out.push(
        jsonLine({
          kind: "prompt",
          agent_id: this.agentId,
          prompt_id: p.prompt_id,
          outcome: p.outcome,
          submitted_at_us: p.submitted_at_us,
          started_at_us: p.started_at_us,
          finished_at_us: p.finished_at_us,
          queued_us: span(p.submitted_at_us, p.started_at_us),
          wall_us: span(p.started_at_us, p.finished_at_us),
          provider_us: provider,
          tool_us: p.tool_us,
          tool_calls: p.tool_calls,
          tool_errors: p.tool_errors,
          tokens,
          rounds: p.rounds,
          estimated_cost_usd: cost,
          unpriced_rounds: unpriced,
        }),
      );
    }
    const origin = parent === undefined ? {} : { parent_id: parent?.agentId ?? null, created_by_call_id: parent?.callId ?? null };
    out.push(jsonLine({ kind: "agent", agent_id: this.agentId, ...origin, prompts: this.prompts.size, rounds, tokens: total, estimated_cost_usd: totalCost, unpriced_rounds: totalUnpriced }));
    this.totals = { prompts: this.prompts.size, rounds, tokens: total, estimated_cost_usd: totalCost, unpriced_rounds: totalUnpriced };
    return out;
  }
}

export interface AgentTotals {
  prompts: number;
  rounds: number;
  tokens: Tokens;
  estimated_cost_usd: number | null;
  unpriced_rounds: number;
}

/** The closing line of a workflow's perf export: the sums over its agents. */
export function workflowLine(rootId: string, agents: readonly AgentTotals[]): string {
  const tokens = zeroTokens();
  let cost: number | null = null;
  for (const a of agents) {
    for (const k of Object.keys(tokens) as Array<keyof Tokens>) tokens[k] += a.tokens[k];
    if (a.estimated_cost_usd !== null) cost = (cost ?? 0) + a.estimated_cost_usd;
  }
  const sum = (k: "prompts" | "rounds" | "unpriced_rounds") => agents.reduce((n, a) => n + a[k], 0);
  return jsonLine({ kind: "workflow", root_id: rootId, agents: agents.length, prompts: sum("prompts"), rounds: sum("rounds"), tokens, estimated_cost_usd: cost, unpriced_rounds: sum("unpriced_rounds") });
}
