// `tau agent trace`: validate the captured prefix of an agent journal strictly while projecting it
// into a private, already-unlinked staging file; only once the whole prefix validated and the
// projection finished is anything copied to the output. A failure leaves the output untouched.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PERSISTENCE, isEventName } from "../../generated/index.js";
import { agentIdOf, checkedEvent, type Event } from "../protocol/index.js";
import { randomHex } from "../startup/random.js";
import { JournalCorruptError, nodeIo, scanFrames, validateJournalRecord, type JournalRecord, type ValidationResult } from "../store/index.js";
import type { PriceOf } from "./cost.js";
import { creationOf, type WorkflowAgent } from "./descendants.js";
import { OtlpProjection, loadOtlp, type OtlpSerializers } from "./otlp.js";
import { PerfProjection, compactLine, compactRecord, jsonText, nativeLine, workflowLine, type AgentTotals } from "./project.js";
import { TraceError, captureAgentJournal, closeSnapshot, type JournalSnapshot } from "./snapshot.js";
import { loadToon, toonHeader, toonItem, type ToonLib } from "./toon.js";

export const TRACE_FORMATS = ["native", "jsonl", "toon", "otlp", "perf"] as const;
export type TraceFormat = (typeof TRACE_FORMATS)[number];

export interface TraceOptions {
  stateDir: string;
  agentId: string;
  format: TraceFormat;
  /** Compact JSONL and TOON without the 4 KiB bound on text and output. */
  full?: boolean;
  /** Where staging lives (default os.tmpdir()). */
  tmpDir?: string;
  /** Prices of models the journal did not record a cost for (perf and otlp estimate from them). */
  priceOf?: PriceOf;
  /**
   * otlp: stage protobuf export requests (`[u32 LE length][ExportTraceServiceRequest]`…) to post to
   * a collector instead of OTLP JSON lines.
   */
  otlpRequests?: boolean;
  /**
   * A workflow export (`--descendants`): these agents, the root first, each child after its parent.
   * Every line names its agent; each child's creation record is rechecked on its captured journal.
   */
  workflow?: readonly WorkflowAgent[];
}

/** The format libraries a trace needs, loaded before staging (only the one its format uses). */
export interface FormatLibraries {
  otlp?: OtlpSerializers;
  toon?: ToonLib;
}

export async function loadFormatLibraries(format: TraceFormat): Promise<FormatLibraries> {
  if (format === "otlp") return { otlp: await loadOtlp() };
  if (format === "toon") return { toon: await loadToon() };
  return {};
}

/** Spans per staged protobuf request: well under a collector's default request size limits. */
export const OTLP_SPANS_PER_REQUEST = 512;

export interface TraceReport {
  mode: JournalSnapshot["mode"];
  records: number;
  /** Bytes of journal read (the selected prefixes). */
  cut: number;
  /** Agents exported (1 unless a workflow). */
  agents: number;
  /** Bytes written to the output. */
  bytes: number;
  /** Incomplete final frames of inactive journals (crash tails): left in place, not exported. */
  ignoredTails: Array<{ agentId: string; offset: number; bytes: number }>;
  /** Written before the staged bytes (TOON's list header, known only once every record is in). */
  head: string;
  /** otlp: traces (prompts) and spans projected. */
  traces: number;
  spans: number;
}

/** Buffered appends to the staging descriptor. */
class Staging {
  private chunks: string[] = [];
  private pending = 0;
  size = 0;
  constructor(readonly fd: number) {}
  write(s: string): void {
    this.chunks.push(s);
    this.pending += s.length;
    if (this.pending >= 1 << 20) this.flush();
  }
  writeBytes(b: Uint8Array): void {
    this.flush();
    this.put(b);
  }
  flush(): void {
    if (this.chunks.length === 0) return;
    const buf = Buffer.from(this.chunks.join(""), "utf8");
    this.chunks = [];
    this.pending = 0;
    this.put(buf);
  }
  private put(buf: Uint8Array): void {
    let done = 0;
    while (done < buf.length) done += fs.writeSync(this.fd, buf, done, buf.length - done, this.size + done);
    this.size += buf.length;
  }
}

/** One format's fold of the validated records into the staging file, agent after agent. */
interface Projection {
  /** The next agent's records follow. */
  begin(member: WorkflowAgent): void;
  add(r: JournalRecord, e: Event): void;
  /** That agent's records ended. */
  endAgent(): void;
  end(): void;
  /** Text that precedes the staged bytes. */
  head(): string;
  readonly traces: number;
  readonly spans: number;
}

function projection(opts: TraceOptions, out: Staging, libs: FormatLibraries): Projection {
  const full = opts.full === true;
  const multi = opts.workflow !== undefined;
  let agent: string | undefined; // named on each line of a workflow export
  const base = { begin: (m: WorkflowAgent) => void (agent = multi ? m.agentId : undefined), endAgent() {}, end() {}, head: () => "", traces: 0, spans: 0 };
  switch (opts.format) {
    case "native":
      return { ...base, add: (r) => out.write(nativeLine(r, agent)) };
    case "jsonl":
      return { ...base, add: (r) => out.write(compactLine(r, full, agent)) };
    case "toon": {
      const toon = libs.toon;
      if (!toon) throw new Error("the TOON encoder is not loaded");
      let n = 0;
      return { ...base, add: (r) => (n++, out.write(toonItem(toon, compactRecord(r, full, agent)))), head: () => toonHeader(n) };
    }
    case "perf":
      return perfProjection(opts, out, base);
    case "otlp": {
      const otlp = libs.otlp;
      if (!otlp) throw new Error("the OTLP serializers are not loaded");
      return otlpProjection(opts, out, otlp);
    }
  }
}

/** The perf projection: one agent's lines at its end; a workflow's summary line last. */
function perfProjection(opts: TraceOptions, out: Staging, base: Omit<Projection, "add">): Projection {
  const multi = opts.workflow !== undefined;
  let perf = new PerfProjection(opts.priceOf);
  let member: WorkflowAgent | undefined;
  const totals: AgentTotals[] = [];
  return {
    ...base,
    begin: (m) => ((perf = new PerfProjection(opts.priceOf)), (member = m)),
    add: (r, e) => perf.add(e, r.recorded_at),
    endAgent: () => {
      perf.lines(multi ? (member?.parent ?? null) : undefined).forEach((l) => out.write(l));
      if (perf.totals) totals.push(perf.totals);
    },
    end: () => {
      if (multi && opts.workflow?.[0]) out.write(workflowLine(opts.workflow[0].agentId, totals));
    },
  };
}

/** The OTLP projection: one JSON line per trace, or length-prefixed protobuf requests of at most OTLP_SPANS_PER_REQUEST spans. */
function otlpProjection(opts: TraceOptions, out: Staging, otlp: NonNullable<FormatLibraries["otlp"]>): Projection {
  let agent: string | undefined;
  const counts = { traces: 0, spans: 0 };
  let batch: unknown[] = [];
  const request = () => {
    const bytes = otlp.protobuf.serializeRequest(batch);
    if (!bytes) throw new TraceError("the OTLP serializer produced no request");
    const len = Buffer.alloc(4);
    len.writeUInt32LE(bytes.length);
    out.writeBytes(len);
    out.writeBytes(bytes);
    batch = [];
  };
  const emit = (spans: unknown[]) => {
    counts.traces++;
    counts.spans += spans.length;
    if (!opts.otlpRequests) {
      const bytes = otlp.json.serializeRequest(spans);
      if (!bytes) throw new TraceError("the OTLP serializer produced no output");
      out.write(jsonText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")) + "\n");
      return;
    }
    batch.push(...spans);
    if (batch.length >= OTLP_SPANS_PER_REQUEST) request();
  };
  // A workflow's children link to their creating calls: each parent watches those calls' spans.
  const creations = new Set((opts.workflow ?? []).flatMap((m) => (m.parent ? [m.parent.callId] : [])));
  const callSpans = new Map<string, { traceId: string; spanId: string }>();
  let p = new OtlpProjection(emit, opts.priceOf);
  return {
    begin: (m) => {
      const origin = m.parent ? { ...m.parent, span: callSpans.get(`${m.parent.agentId}\u0000${m.parent.callId}`) ?? null } : undefined;
      p = new OtlpProjection(emit, opts.priceOf, { watchCalls: creations, ...(origin ? { origin } : {}) });
      agent = m.agentId;
    },
    add: (r, e) => p.add(e, r.recorded_at),
    endAgent: () => {
      p.end();
      for (const [call, span] of p.callSpans) callSpans.set(`${agent}\u0000${call}`, span);
    },
    end: () => {
      if (batch.length > 0) request();
    },
    head: () => "",
    get traces() {
      return counts.traces;
    },
    get spans() {
      return counts.spans;
    },
  };
}

/**
 * An anonymous staging file: created 0600 with O_EXCL|O_NOFOLLOW under `dir` and unlinked at once,
 * so it has no name left to survive this process (Node cannot reach O_TMPFILE).
 */
export function openStaging(dir: string = os.tmpdir()): number {
  const file = path.join(dir, `tau-trace-${process.pid}-${randomHex(8)}`);
  const { O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  const fd = fs.openSync(file, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  fs.unlinkSync(file);
  return fd;
}

/**
 * The strict semantic check of an agent journal: known agent events, each about this agent, starting
 * with its agent.started. `onChecked` receives each accepted record's typed event.
 */
export function agentJournalSemantics(agentId: string, onChecked?: (e: Event) => void): (r: JournalRecord) => ValidationResult {
  return (r) => {
    const { name, data } = r.event;
    if (!isEventName(name)) return { ok: false, reason: `unknown event ${name}` };
    if (PERSISTENCE[name] !== "agent") return { ok: false, reason: `${name} does not belong in an agent journal` };
    if (r.seq === 0 && name !== "agent.started") return { ok: false, reason: "an agent journal starts with agent.started" };
    if (r.seq > 0 && name === "agent.started") return { ok: false, reason: "agent.started after the first record" };
    const checked = checkedEvent(name, data);
    if (checked instanceof Error) return { ok: false, reason: checked.message };
    const about = agentIdOf(checked);
    if (about !== undefined && about !== agentId) return { ok: false, reason: `record about agent ${about} in the journal of ${agentId}` };
    onChecked?.(checked);
    return { ok: true };
  };
}

/**
 * Captures, validates and projects one agent's journal, or a workflow's, into `staging` (a
 * descriptor from openStaging). Every journal is captured before any is read, and each descriptor is
 * kept until staging finishes. Throws before writing anything anywhere else; the caller copies
 * staging out.
 */
export function stageTrace(opts: TraceOptions, stagingFd: number, libs: FormatLibraries = {}): TraceReport {
  const members = opts.workflow ?? [{ agentId: opts.agentId, parent: null }];
  const snaps: JournalSnapshot[] = [];
  try {
    for (const m of members) snaps.push(captureAgentJournal(opts.stateDir, m.agentId));
    const out = new Staging(stagingFd);
    const project = projection(opts, out, libs);
    let records = 0;
    let cut = 0;
    const ignoredTails: TraceReport["ignoredTails"] = [];
    members.forEach((m, i) => {
      const snap = snaps[i] as JournalSnapshot;
      project.begin(m);
      // The semantic check runs just before onRecord for the same record: it hands over the typed event.
      let checked: Event | undefined;
      const semantic = agentJournalSemantics(snap.agentId, (e) => (checked = e));
      const onRecord = (r: JournalRecord) => {
        // The edge that put a child in the workflow must still be its captured journal's first record.
        if (r.seq === 0 && m.parent && creationOf(r, m.agentId)?.createdBy?.agentId !== m.parent.agentId)
          throw new TraceError(`the creation record of agent ${m.agentId} no longer names ${m.parent.agentId}; nothing was exported`);
        if (checked) project.add(r, checked);
      };
      const scan = scanFrames<JournalRecord>(nodeIo, snap.fd, snap.file, { validate: validateJournalRecord, semantic, onRecord }, { offset: 0, seq: 0 }, { until: snap.cut });
      if (snap.mode === "checkpoint") {
        // The checkpoint's boundary is a frame boundary with next_seq before it, or the checkpoint lies.
        if (scan.tornTail || scan.end !== snap.cut || scan.nextSeq !== snap.expectedNextSeq)
          throw new JournalCorruptError(snap.file, scan.end, `the checkpoint's boundary ${snap.cut} (next seq ${snap.expectedNextSeq}) is not where the frames end (${scan.end}, next seq ${scan.nextSeq})`);
      } else if (scan.tornTail) {
        ignoredTails.push({ agentId: m.agentId, ...scan.tornTail });
      }
      if (scan.records === 0) throw new TraceError(`agent ${snap.agentId} has no complete record`);
      project.endAgent();
      records += scan.records;
      cut += scan.end;
    });
    project.end();
    out.flush();
    const mode = snaps.some((s) => s.mode === "checkpoint") ? "checkpoint" : "eof";
    return { mode, records, cut, agents: members.length, bytes: out.size, ignoredTails, head: project.head(), traces: project.traces, spans: project.spans };
  } finally {
    for (const s of snaps) closeSnapshot(s);
  }
}

/** Copies `size` bytes of the staging file to `sink` (e.g. process.stdout), honouring back-pressure. */
export async function copyStaging(stagingFd: number, size: number, sink: NodeJS.WritableStream): Promise<void> {
  const chunk = 1 << 20;
  for (let at = 0; at < size; ) {
    const buf = Buffer.allocUnsafe(Math.min(chunk, size - at));
    const n = fs.readSync(stagingFd, buf, 0, buf.length, at);
    if (n === 0) throw new TraceError("the staging file shrank");
    at += n;
    await new Promise<void>((resolve, reject) => sink.write(buf.subarray(0, n), (err) => (err ? reject(err) : resolve())));
  }
}

const write = (sink: NodeJS.WritableStream, chunk: string | Uint8Array) => new Promise<void>((resolve, reject) => sink.write(chunk, (err) => (err ? reject(err) : resolve())));

/** Stages the trace, then writes it to `sink`: nothing reaches `sink` unless every step succeeded. */
export async function exportTrace(opts: TraceOptions, sink: NodeJS.WritableStream): Promise<TraceReport> {
  const libs = await loadFormatLibraries(opts.format);
  const fd = openStaging(opts.tmpDir);
  try {
    const report = stageTrace({ ...opts, otlpRequests: false }, fd, libs);
    if (report.head) await write(sink, report.head);
    await copyStaging(fd, report.bytes, sink);
    return report;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Stages the OTLP trace as protobuf export requests, then hands each to `post` in order: nothing is
 * posted unless the whole prefix validated. Returns the report and how many requests were posted.
 */
export async function postTrace(opts: Omit<TraceOptions, "format" | "otlpRequests">, post: (request: Uint8Array) => Promise<void>): Promise<TraceReport & { requests: number }> {
  const libs = await loadFormatLibraries("otlp");
  const fd = openStaging(opts.tmpDir);
  try {
    const report = stageTrace({ ...opts, format: "otlp", otlpRequests: true }, fd, libs);
    let requests = 0;
    for (let at = 0; at < report.bytes; ) {
      const len = Buffer.alloc(4);
      if (fs.readSync(fd, len, 0, 4, at) !== 4) throw new TraceError("the staging file shrank");
      const body = Buffer.alloc(len.readUInt32LE(0));
      if (fs.readSync(fd, body, 0, body.length, at + 4) !== body.length) throw new TraceError("the staging file shrank");
      at += 4 + body.length;
      await post(body);
      requests++;
    }
    return { ...report, requests };
  } finally {
    fs.closeSync(fd);
  }
}
