// Where a resumed agent's transcript load may start (SPEC-compaction, "Resume"): the fold's
// `transcript_from` is the last committed cut, or the submission of a prompt still waiting then.
import { describe, expect, it } from "vitest";
import { emptyAgentFold, foldAgentRecord, parseAgentFold } from "../../../handwritten/harness/agent-fold.js";
import type { Event } from "../../../handwritten/protocol/index.js";

const A = "a-fold-1";
function fold(events: Array<[string, Record<string, unknown>]>) {
  const f = emptyAgentFold();
  for (const [name, data] of events) foldAgentRecord(f, { name, data: { agent_id: A, ...data } } as unknown as Event, 1);
  return f;
}
const started: [string, Record<string, unknown>] = ["agent.started", { session_id: "s-1", creator: "ui", cwd: "/w", ephemeral: false }];
const turn = (p: string): Array<[string, Record<string, unknown>]> => [
  ["agent.prompt_submitted", { prompt_id: p, source: "human_ui", mode: "queue", text: p }],
  ["agent.prompt_started", { prompt_id: p, round: 0 }],
  ["provider.response_finished", { prompt_id: p, round: 0, model: "m", text: "ok", tool_calls: [], finish_reason: "stop", usage: { input_tokens: 900, output_tokens: 10 } }],
  ["agent.outer_turn_finished", { prompt_id: p, outcome: "completed", rounds: 1 }],
];
const compaction = (cut: number, context?: number): Array<[string, Record<string, unknown>]> => [
  ["agent.compaction_started", { compaction_id: "k-1", cut_seq: cut, trigger: "user", model: "m" }],
  ["agent.compaction_summarized", { compaction_id: "k-1", summary: "S" }],
  ["agent.compaction_committed", { compaction_id: "k-1", cut_seq: cut, ...(context !== undefined ? { context_tokens: context } : {}) }],
];

describe("the agent fold after a compaction", () => {
  it("[compaction.resume.load-from-cut] a commit lets the transcript load start at its cut, or at an earlier waiting prompt's submission", () => {
    // seq 0 started, 1–4 turn p1, 5–8 turn p2, then the compaction at cut 5.
    const plain = fold([started, ...turn("p1"), ...turn("p2"), ...compaction(5)]);
    expect(plain.transcript_from).toBe(5);
    expect(plain.cut).toBe(5);
    // A prompt submitted at seq 3 (queued behind p1) and still waiting at the commit: its text enters
    // the transcript only when it starts, so the load must reach back to its submission.
    const waiting = fold([started, ...turn("p1").slice(0, 2), ["agent.prompt_submitted", { prompt_id: "q", source: "human_ui", mode: "queue", text: "queued" }], ...turn("p1").slice(2), ...turn("p2"), ...compaction(6)]);
    expect(waiting.waiting).toEqual({ q: false });
    expect(waiting.submitted_seq).toEqual({ q: 3 });
    expect(waiting.transcript_from).toBe(3);
    // Once it started, the next commit goes back to its own cut.
    const later = fold([started, ...turn("p1").slice(0, 2), ["agent.prompt_submitted", { prompt_id: "q", source: "human_ui", mode: "queue", text: "queued" }], ...turn("p1").slice(2), ["agent.prompt_started", { prompt_id: "q", round: 0 }], ["agent.outer_turn_finished", { prompt_id: "q", outcome: "completed", rounds: 1 }], ...compaction(8)]);
    expect(later.submitted_seq).toEqual({});
    expect(later.transcript_from).toBe(8);
    // What a checkpoint stores reads back the same, and a malformed value is refused.
    const round = JSON.parse(JSON.stringify(waiting)) as Record<string, unknown>;
    expect(parseAgentFold(round, waiting.next_seq)).toEqual(waiting);
    expect(parseAgentFold({ ...round, transcript_from: waiting.next_seq + 1 }, waiting.next_seq)).toBeUndefined();
    expect(parseAgentFold({ ...round, submitted_seq: { q: -1 } }, waiting.next_seq)).toBeUndefined();
  });

  it("[compaction.resume.context-estimate] a commit's context estimate replaces the last response's context use; without one it stays", () => {
    expect(fold([started, ...turn("p1"), ...compaction(1, 120)]).usage.context_tokens).toBe(120);
    expect(fold([started, ...turn("p1"), ...compaction(1)]).usage.context_tokens).toBe(910);
  });
});
