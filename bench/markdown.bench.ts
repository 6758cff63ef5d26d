// Markdown answers in the terminal UI: rendering a 2,000-line answer (prose, lists, highlighted
// code, tables) at 100 columns, whole and while it streams, beside the baseline of wrapping the same
// text as plain lines (what the UI drew before answers were markdown), in the same run.
import { DEFAULT_THEME, MarkdownStream, renderMarkdown, sanitize, wrap } from "../handwritten/cli/ui/index.js";
import { finalRows, renderItem, type Item } from "../handwritten/cli/tui/transcript.js";
import { fmt, median, report } from "./support.js";

const WIDTH = 100;

/** About `lines` lines of a typical answer: sections of prose, a list, a fenced block and a table. */
function answer(lines: number): string {
  const out: string[] = [];
  for (let s = 0; out.length < lines; s++) {
    out.push(`## Step ${s}`, "", `The **change** in \`module_${s}.ts\` keeps *every* caller working; see [the notes](https://example.com/notes/${s}) for the reasons behind it.`, "");
    out.push("- read the file", "- change the function", "  - keep its name", "- run the tests", "");
    out.push("```ts", `export function step${s}(input: string, limit = ${s}): number {`, "  // count the words, at most the limit", "  return Math.min(input.split(/\\s+/).length, limit);", "}", "```", "");
    out.push("| file | lines | status |", "|---|---:|---|", `| src/a${s}.ts | ${s * 3} | changed |`, `| src/b${s}.ts | ${s * 7} | unchanged |`, "");
  }
  return out.slice(0, lines).join("\n");
}

function timeMs(fn: () => void, rounds: number): number[] {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  return times;
}

export async function run(): Promise<void> {
  const text = answer(2000);
  let sink = 0;
  // The first render loads markdown-it and the TypeScript grammar: reported apart.
  const first = timeMs(() => (sink += renderMarkdown("```ts\nconst a = 1;\n```\n\n**x**", WIDTH, DEFAULT_THEME).length), 1)[0] as number;
  const plain = () => (sink += wrap(sanitize(text), WIDTH).length);
  const whole = () => {
    const s = new MarkdownStream();
    s.update(text);
    for (let i = 0; i < s.chunks; i++) sink += s.rows(i, WIDTH, DEFAULT_THEME, false).length;
  };
  plain();
  whole();
  const plainMs = median(timeMs(plain, 15));
  const wholeMs = median(timeMs(whole, 15));
  report("render a 2,000-line markdown answer, 100 cols", `${fmt(wholeMs, 1)} ms`, "plain wrap of the same text", `${fmt(plainMs, 1)} ms`, plainMs / wholeMs);

  // Streaming: the answer arrives in 40-character deltas; each frame renders the item and its final
  // rows, as the UI does. Reported: the mean cost of a frame over the last 10% of the stream (where
  // the text is longest), beside wrapping the whole text as plain lines at that point.
  const item: Item = { kind: "assistant", key: "p#1", text: "", reasoning: "", done: false };
  const frames: number[] = [];
  const plainFrames: number[] = [];
  for (let at = 0; at < text.length; at += 40) {
    item.text = text.slice(0, at + 40);
    const t0 = performance.now();
    sink += renderItem(item, WIDTH, DEFAULT_THEME).length + finalRows(item, WIDTH, DEFAULT_THEME, false);
    const t1 = performance.now();
    if (at > text.length * 0.9) {
      frames.push(t1 - t0);
      const t2 = performance.now();
      sink += wrap(sanitize(item.text), WIDTH).length;
      plainFrames.push(performance.now() - t2);
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  report("streaming frame near the end of it", `${fmt(mean(frames) * 1000, 0)} µs`, "plain wrap of the text so far", `${fmt(mean(plainFrames) * 1000, 0)} µs`, mean(plainFrames) / mean(frames));
  console.log(`first markdown render (loads markdown-it and one grammar): ${fmt(first, 1)} ms; ${text.length} characters, ${text.split("\n").length} lines (sink ${sink > 0 ? "ok" : "?"})`);
}
