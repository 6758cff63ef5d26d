// A resumed agent loads its transcript from where its fold says it may start (the last compaction's
// cut, or an earlier submission of a prompt whose text enters the transcript later), never from seq
// 0. Whatever the journal — prompts queued and steered, rounds, tool calls, compactions started,
// summarized, committed or failed in between — the transcript loaded from there must equal the one
// folded from the start (issue: a prompt submitted before a compaction's cut and taken in after it
// was lost on resume, while the model had been sent it).
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Event } from "../../../handwritten/protocol/index.js";
import { emptyAgentFold, foldAgentRecord } from "../../../handwritten/harness/agent-fold.js";
import { foldTranscript } from "../../../handwritten/harness/conversation.js";
import { emptyTranscript } from "../../../handwritten/harness/compaction.js";
import type { TranscriptFold } from "../../../handwritten/harness/agent-loop-state.js";

type Step = "submit_queue" | "submit_steer" | "round" | "answer_text" | "answer_tool" | "result" | "finish" | "compact_start" | "compact_summarize" | "compact_commit" | "compact_fail";

const ev = (name: string, data: Record<string, unknown>): Event => ({ name, data: { agent_id: "a1", ...data } }) as unknown as Event;

/** Turns drawn steps into a journal a harness could have written: each step is taken only when it fits. */
function journal(drawn: ReadonlyArray<Step | readonly [Step, number]>): Event[] {
  const out: Event[] = [ev("agent.started", { ephemeral: false, creator: "ui" })];
  const queue: string[] = [];
  const steers: string[] = [];
  let turn: { id: string; round: number; open: string[] } | undefined;
  let answered = false;
  let compaction: { id: string; cut: number; summarized: boolean } | undefined;
  let n = 0;
  // Where a cut may fall: before a round's start, after an answer without calls or a turn's end,
  // and the end of the journal — never between a call and its results (a closed prefix).
  const boundaries: number[] = [];
  let lastCut = 0;
  for (const d of drawn) {
    const [s, pick] = typeof d === "string" ? [d, 0] : d;
    switch (s) {
      case "submit_queue":
      case "submit_steer": {
        const id = `p${++n}`;
        const steer = s === "submit_steer" && turn !== undefined;
        out.push(ev("agent.prompt_submitted", { prompt_id: id, source: "human_ui", mode: steer ? "steer" : "queue", text: `text of ${id}` }));
        (steer ? steers : queue).push(id);
        break;
      }
      case "round":
        if (turn === undefined) {
          // A queued prompt starts only while no compaction of the agent is under way.
          const id = queue.shift();
          if (id === undefined || compaction) break;
          turn = { id, round: 0, open: [] };
        } else if (turn.open.length === 0 && answered) {
          turn.round++;
        } else break;
        answered = false;
        steers.length = 0;
        boundaries.push(out.length);
        out.push(ev("agent.prompt_started", { prompt_id: turn.id, round: turn.round, model: "m" }));
        break;
      case "answer_text":
      case "answer_tool": {
        if (!turn || answered) break;
        const calls = s === "answer_tool" ? [{ call_id: `c${++n}`, name: "read", arguments: "{}" }] : [];
        out.push(ev("provider.response_finished", { prompt_id: turn.id, round: turn.round, model: "m", text: `answer ${n}`, tool_calls: calls }));
        turn.open = calls.map((c) => c.call_id);
        answered = true;
        break;
      }
      case "result": {
        const call = turn?.open.shift();
        if (!turn || call === undefined) break;
        out.push(ev("provider.tool_result", { prompt_id: turn.id, call_id: call, tool: "read", output: `output of ${call}` }));
        break;
      }
      case "finish":
        if (!turn || !answered || turn.open.length > 0) break;
        out.push(ev("agent.outer_turn_finished", { prompt_id: turn.id, outcome: "completed", rounds: turn.round + 1 }));
        boundaries.push(out.length);
        turn = undefined;
        break;
      case "compact_start": {
        if (compaction || (turn && turn.open.length > 0)) break;
        // Any closed boundary after the last cut, the end included (the real cut keeps a recent suffix).
        const choices = [...boundaries.filter((b) => b > lastCut), out.length];
        const cut = choices[pick % choices.length] as number;
        compaction = { id: `k${++n}`, cut, summarized: false };
        out.push(ev("agent.compaction_started", { compaction_id: compaction.id, cut_seq: compaction.cut, trigger: "manual", model: "m" }));
        break;
      }
      case "compact_summarize":
        if (!compaction || compaction.summarized) break;
        compaction.summarized = true;
        out.push(ev("agent.compaction_summarized", { compaction_id: compaction.id, summary: `summary of ${compaction.id}` }));
        break;
      case "compact_commit":
        if (!compaction?.summarized) break;
        out.push(ev("agent.compaction_committed", { compaction_id: compaction.id, cut_seq: compaction.cut }));
        lastCut = compaction.cut;
        compaction = undefined;
        break;
      case "compact_fail":
        if (!compaction) break;
        out.push(ev("agent.compaction_failed", { compaction_id: compaction.id, watermark: compaction.cut, reason: "r" }));
        compaction = undefined;
        break;
    }
  }
  return out;
}

function transcriptFrom(records: readonly Event[], from: number): TranscriptFold {
  const f: TranscriptFold = { transcript: emptyTranscript(), unsent: new Map(), summaries: new Map() };
  records.forEach((e, seq) => seq >= from && foldTranscript(f, e, seq));
  return f;
}

const step = (name: Step, weight: number) => ({ arbitrary: fc.tuple(fc.constant(name), fc.nat(1000)), weight });
// Weighted so that turns get far (rounds, tool calls, results) and compactions often open mid-turn.
const steps = fc.array(
  fc.oneof(
    step("submit_queue", 2),
    step("submit_steer", 3),
    step("round", 5),
    step("answer_text", 2),
    step("answer_tool", 3),
    step("result", 4),
    step("finish", 2),
    step("compact_start", 2),
    step("compact_summarize", 2),
    step("compact_commit", 2),
    step("compact_fail", 1),
  ),
  { minLength: 20, maxLength: 160, size: "max" },
);

describe("loading a resumed agent's transcript", () => {
  it("[compaction.resume.transcript-from-equals-whole] the transcript loaded from the fold's start equals the one folded from seq 0, at every prefix of any journal", () => {
    fc.assert(
      fc.property(steps, (drawn) => {
        const records = journal(drawn);
        const fold = emptyAgentFold();
        for (let end = 1; end <= records.length; end++) {
          foldAgentRecord(fold, records[end - 1] as Event, 0);
          const prefix = records.slice(0, end);
          const whole = transcriptFrom(prefix, 0);
          const loaded = transcriptFrom(prefix, fold.transcript_from ?? 0);
          expect(loaded.transcript?.messages).toEqual(whole.transcript?.messages);
          expect(loaded.transcript?.seqs).toEqual(whole.transcript?.seqs);
          expect([...loaded.unsent]).toEqual([...whole.unsent]);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("[compaction.resume.steer-across-cut] a prompt steered before a compaction's cut and taken in by a round after it is in the transcript loaded on resume", () => {
    const records = journal(["submit_queue", "round", "answer_tool", "submit_steer", "result", "compact_start", "round", "compact_summarize", "compact_commit"]);
    expect(records.map((r) => r.name)).toContain("agent.compaction_committed");
    const fold = emptyAgentFold();
    for (const r of records) foldAgentRecord(fold, r, 0);
    const loaded = transcriptFrom(records, fold.transcript_from ?? 0);
    expect(loaded.transcript?.messages.filter((m) => m.text?.includes("text of p3"))).toHaveLength(1);
  });
});
