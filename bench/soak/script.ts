// What the soak's scripted model is told to do, and the marks it leaves in the text it reads and
// writes: a prompt carries `[[soak:ID]]`, the id of a script of model rounds; every answer carries
// a nonce `(nN)` (tool call ids end in `_nN`); a summary lists the prompt marks it summarized as
// `{{seen:ID,ID}}`, so a transcript shows which prompts it still holds, verbatim or summarized, and
// the prompt whose turn it cut as `{{current:ID@N}}`.

/** One tool call a model round makes. */
export type Action =
  | { readonly t: "shell"; readonly sleepMs: number }
  | { readonly t: "read" }
  | { readonly t: "write" }
  | { readonly t: "compact" }
  | { readonly t: "start"; readonly child: string }
  | { readonly t: "wait" };

/** One answer: tool calls, or a final text streamed over `streamMs`. `hot` reports a context use past the compaction threshold. */
export type ModelRound =
  | { readonly kind: "calls"; readonly calls: readonly Action[]; readonly hot?: boolean }
  | { readonly kind: "text"; readonly streamMs: number; readonly hot?: boolean };

export interface Script {
  readonly id: string;
  readonly rounds: readonly ModelRound[];
}

const MARK = /\[\[soak:([A-Za-z0-9_]+)\]\]/g;
const SEEN = /\{\{seen:([A-Za-z0-9_,]*)\}\}/g;
const CURRENT = /\{\{current:([A-Za-z0-9_]+)@(\d+)\}\}/;

export function promptText(id: string, words = "do the next piece of work"): string {
  return `[[soak:${id}]] ${words}`;
}

/** The prompt marks in a text. */
export function marksIn(text: string): string[] {
  return [...text.matchAll(MARK)].map((m) => m[1] as string);
}

/** The marks a summary says it summarized. */
export function seenIn(text: string): string[] {
  return [...text.matchAll(SEEN)].flatMap((m) => (m[1] as string).split(",").filter((x) => x !== ""));
}

/**
 * The prompt a summary cut in the middle of its turn, and how many answers of that turn it
 * summarized (`{{current:ID@N}}`), so the model goes on with the turn's script after the cut.
 */
export function currentIn(text: string): { id: string; answers: number } | undefined {
  const m = CURRENT.exec(text);
  return m ? { id: m[1] as string, answers: Number(m[2]) } : undefined;
}

export function currentMark(id: string, answers: number): string {
  return `{{current:${id}@${answers}}}`;
}

export function seenList(marks: Iterable<string>): string {
  return `{{seen:${[...new Set(marks)].sort().join(",")}}}`;
}

/** The soak id a tool call id was made for: `call_<script>_<round>_<i>_n<nonce>`. */
export function scriptOfCall(callId: string): string | undefined {
  return /^call_([A-Za-z0-9]+)_\d+_\d+_n\d+$/.exec(callId)?.[1];
}

/** The one-line summary of a script, for failure reports. */
export function describeScript(s: Script): string {
  return s.rounds
    .map((r) => (r.kind === "text" ? `text${r.streamMs}ms` : r.calls.map((c) => (c.t === "shell" ? `shell${c.sleepMs}ms` : c.t === "start" ? `start(${c.child})` : c.t)).join("+")) + (r.hot ? "!" : ""))
    .join(" | ");
}
