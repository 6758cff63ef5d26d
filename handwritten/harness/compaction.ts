// Compaction's pure parts (SPEC-compaction): where a cut may fall in a transcript, what the summary
// request holds, and what the transcript becomes once a summary is committed.
import type { ProviderMessage } from "../../generated/index.js";

/** The provider transcript of an agent, as its journal folds into it. */
export interface Transcript {
  readonly messages: ProviderMessage[];
  /** The journal seq each message entered at; a summary stands at its compaction's cut. */
  readonly seqs: number[];
  /** Call ids of the assistant messages in `messages`: a tool message must answer one of them. */
  readonly calls: Set<string>;
  /** The cut of the last committed compaction (0: none). */
  cut: number;
}

export function emptyTranscript(): Transcript {
  return { messages: [], seqs: [], calls: new Set(), cut: 0 };
}

/** Characters per estimated token: a rough, provider-independent measure for choosing a cut. */
const CHARS_PER_TOKEN = 4;

function charsOf(m: ProviderMessage): number {
  let chars = (m.text?.length ?? 0) + (m.reasoning?.length ?? 0);
  for (const c of m.tool_calls ?? []) chars += c.tool.length + c.arguments_json.length;
  for (const r of m.reasoning_items ?? []) chars += r.encrypted_content.length;
  return chars;
}

export function estimateTokens(messages: readonly ProviderMessage[]): number {
  let chars = 0;
  for (const m of messages) chars += charsOf(m);
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * The message indices a cut may fall at: `b` splits `messages` into `[0, b)` and `[b, n)`, and is
 * closed when no tool message at or after `b` answers a call made before it and no call made before
 * it is still running (`open`). The index after a committed summary is the earliest: a cut never
 * goes back past the last one.
 */
export function closedBoundaries(t: Transcript, open: ReadonlySet<string>): number[] {
  const n = t.messages.length;
  const blocked = new Array<boolean>(n + 1).fill(false);
  const madeAt = new Map<string, number>();
  t.messages.forEach((m, i) => {
    for (const c of m.tool_calls ?? []) {
      madeAt.set(c.call_id, i);
      // A running call keeps its response, and everything after it, in the suffix.
      if (open.has(c.call_id)) for (let b = i + 1; b <= n; b++) blocked[b] = true;
    }
    if (m.role === "tool" && m.call_id !== undefined) {
      const a = madeAt.get(m.call_id);
      if (a !== undefined) for (let b = a + 1; b <= i; b++) blocked[b] = true;
    }
  });
  const first = t.cut > 0 && t.seqs[0] === t.cut && t.messages[0]?.role === "user" ? 1 : 0;
  const out: number[] = [];
  // Messages that entered at one record (a round start's prompts) are never split: a cut is a seq.
  for (let b = first + 1; b <= n; b++) if (!blocked[b] && (b === n || t.seqs[b - 1] !== t.seqs[b])) out.push(b);
  return out;
}

/**
 * Chooses the cut: the earliest closed boundary whose suffix is estimated at no more than
 * `keepTokens`, else the latest closed boundary. Undefined when no boundary leaves anything new to
 * summarize.
 */
export function chooseCut(t: Transcript, open: ReadonlySet<string>, keepTokens: number): number | undefined {
  const bounds = closedBoundaries(t, open);
  if (bounds.length === 0) return undefined;
  // Suffix sizes from the end, once: each boundary's estimate is then a lookup.
  const n = t.messages.length;
  const suffixChars = new Array<number>(n + 1).fill(0);
  for (let i = n - 1; i >= 0; i--) suffixChars[i] = (suffixChars[i + 1] as number) + charsOf(t.messages[i] as ProviderMessage);
  for (const b of bounds) if (Math.ceil((suffixChars[b] as number) / CHARS_PER_TOKEN) <= keepTokens) return b;
  return bounds[bounds.length - 1];
}

export const SUMMARY_SYSTEM_PROMPT =
  "You write the summary that replaces the earlier part of a coding agent's conversation. The agent will continue from your summary alone, " +
  "followed by the most recent messages. Keep every fact the work still needs: the user's requests and constraints, decisions made and why, " +
  "files and commands involved, results found, errors met, and what remains to do. Be concise; do not invent anything.";

export function summaryRequestText(instructions: string | undefined): string {
  const extra = instructions !== undefined && instructions.trim() !== "" ? `\n\nAdditional instructions for this summary:\n${instructions}` : "";
  return `Summarize the conversation above for the agent that continues it.${extra}`;
}

/** The user message a committed summary becomes at the head of the transcript. */
export function summaryMessage(summary: string): ProviderMessage {
  return { role: "user", text: `<summary>\nThe earlier part of this conversation was compacted into this summary:\n\n${summary}\n</summary>` };
}

/** The estimated tokens of the transcript `applySummary(t, summary, cutSeq)` would leave. */
export function estimateAfterSummary(t: Transcript, summary: string, cutSeq: number): number {
  if (cutSeq <= t.cut) return estimateTokens(t.messages);
  return estimateTokens([summaryMessage(summary), ...t.messages.filter((_, i) => (t.seqs[i] ?? 0) >= cutSeq)]);
}

/**
 * The transcript once a summary replaces the messages that entered before `cutSeq` (the previous
 * summary among them: it stands at the previous cut, which is earlier). A cut that does not move
 * past the previous one changes nothing, so no summary is ever held twice.
 */
export function applySummary(t: Transcript, summary: string, cutSeq: number): boolean {
  if (cutSeq <= t.cut) return false;
  const keptMessages: ProviderMessage[] = [summaryMessage(summary)];
  const keptSeqs = [cutSeq];
  t.messages.forEach((m, i) => {
    if ((t.seqs[i] ?? 0) >= cutSeq) {
      keptMessages.push(m);
      keptSeqs.push(t.seqs[i] ?? 0);
    }
  });
  t.messages.splice(0, t.messages.length, ...keptMessages);
  t.seqs.splice(0, t.seqs.length, ...keptSeqs);
  t.calls.clear();
  for (const m of t.messages) for (const c of m.tool_calls ?? []) t.calls.add(c.call_id);
  t.cut = cutSeq;
  return true;
}
