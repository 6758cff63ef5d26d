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
import { PerfProjection, compactLine, nativeLine } from "./project.js";
import { TraceError, captureAgentJournal, closeSnapshot, type JournalSnapshot } from "./snapshot.js";

export const TRACE_FORMATS = ["native", "jsonl", "perf"] as const;
export type TraceFormat = (typeof TRACE_FORMATS)[number];

export interface TraceOptions {
  stateDir: string;
  agentId: string;
  format: TraceFormat;
  /** Compact JSONL without the 4 KiB bound on text and output. */
  full?: boolean;
  /** Where staging lives (default os.tmpdir()). */
  tmpDir?: string;
}

export interface TraceReport {
  mode: JournalSnapshot["mode"];
  records: number;
  /** Bytes of journal read (the selected prefix). */
  cut: number;
  /** Bytes written to the output. */
  bytes: number;
  /** An incomplete final frame of an inactive journal (a crash tail): left in place, not exported. */
  ignoredTail: { offset: number; bytes: number } | null;
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
  flush(): void {
    if (this.chunks.length === 0) return;
    const buf = Buffer.from(this.chunks.join(""), "utf8");
    this.chunks = [];
    this.pending = 0;
    let done = 0;
    while (done < buf.length) done += fs.writeSync(this.fd, buf, done, buf.length - done, this.size + done);
    this.size += buf.length;
  }
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
 * Captures, validates and projects one agent's journal into `staging` (a descriptor from
 * openStaging). Throws before writing anything anywhere else; the caller copies staging out.
 */
export function stageTrace(opts: TraceOptions, stagingFd: number): TraceReport {
  const snap = captureAgentJournal(opts.stateDir, opts.agentId);
  try {
    const out = new Staging(stagingFd);
    const perf = opts.format === "perf" ? new PerfProjection() : null;
    const full = opts.full === true;
    // The semantic check runs just before onRecord for the same record: it hands over the typed event.
    let checked: Event | undefined;
    const semantic = agentJournalSemantics(snap.agentId, (e) => (checked = e));
    const onRecord = (r: JournalRecord) => {
      if (perf && checked) perf.add(checked, r.recorded_at);
      else if (!perf) out.write(opts.format === "native" ? nativeLine(r) : compactLine(r, full));
    };
    const scan = scanFrames<JournalRecord>(nodeIo, snap.fd, snap.file, { validate: validateJournalRecord, semantic, onRecord }, { offset: 0, seq: 0 }, { until: snap.cut });
    let ignoredTail: TraceReport["ignoredTail"] = null;
    if (snap.mode === "checkpoint") {
      // The checkpoint's boundary is a frame boundary with next_seq before it, or the checkpoint lies.
      if (scan.tornTail || scan.end !== snap.cut || scan.nextSeq !== snap.expectedNextSeq)
        throw new JournalCorruptError(snap.file, scan.end, `the checkpoint's boundary ${snap.cut} (next seq ${snap.expectedNextSeq}) is not where the frames end (${scan.end}, next seq ${scan.nextSeq})`);
    } else if (scan.tornTail) {
      ignoredTail = scan.tornTail;
    }
    if (scan.records === 0) throw new TraceError(`agent ${snap.agentId} has no complete record`);
    if (perf) for (const line of perf.lines()) out.write(line);
    out.flush();
    return { mode: snap.mode, records: scan.records, cut: scan.end, bytes: out.size, ignoredTail };
  } finally {
    closeSnapshot(snap);
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

/** Stages the trace, then writes it to `sink`: nothing reaches `sink` unless every step succeeded. */
export async function exportTrace(opts: TraceOptions, sink: NodeJS.WritableStream): Promise<TraceReport> {
  const fd = openStaging(opts.tmpDir);
  try {
    const report = stageTrace(opts, fd);
    await copyStaging(fd, report.bytes, sink);
    return report;
  } finally {
    fs.closeSync(fd);
  }
}
