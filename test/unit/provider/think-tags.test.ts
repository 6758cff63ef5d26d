// Inline `<think>` reasoning at the start of streamed content is split out whatever the pieces it
// arrives in; anything else passes through untouched.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ThinkTags } from "../../../handwritten/extensions/provider/think-tags.js";

/** Runs `content` through a splitter in the given pieces. */
function split(pieces: string[]): { text: string; reasoning: string } {
  const t = new ThinkTags();
  const out = { text: "", reasoning: "" };
  for (const p of [...pieces.map((x) => t.push(x)), t.end()]) {
    out.text += p.text;
    out.reasoning += p.reasoning;
  }
  return out;
}

/** `s` cut at the given offsets. */
function cut(s: string, at: number[]): string[] {
  const points = [...new Set(at.map((a) => a % (s.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of points) {
    out.push(s.slice(from, p));
    from = p;
  }
  out.push(s.slice(from));
  return out;
}

const body = fc.string({ unit: fc.constantFrom("a", " ", "\n", "<", ">", "/", "t", "h", "i", "n", "k", "é") });

describe("inline think tags", () => {
  it("[provider.stream.think-tags] leading <think>…</think> is reasoning and the rest the answer, however the stream cuts it", () => {
    fc.assert(
      fc.property(body.filter((r) => !r.includes("</think>")), body, fc.array(fc.nat(), { maxLength: 12 }), fc.constantFrom("", "\n", "  \n"), (reasoning, answer, at, lead) => {
        const trimmed = answer.replace(/^\s+/, "");
        const content = `${lead}<think>${reasoning}</think>\n\n${trimmed}`;
        expect(split(cut(content, at))).toEqual({ reasoning, text: trimmed });
      }),
    );
  });

  it("[provider.stream.think-tags] content that does not open with <think> passes through whole, tags and all; an unclosed think is all reasoning", () => {
    fc.assert(
      fc.property(body.filter((s) => !s.trimStart().startsWith("<think>")), fc.array(fc.nat(), { maxLength: 12 }), (content, at) => {
        expect(split(cut(content, at))).toEqual({ text: content, reasoning: "" });
      }),
    );
    expect(split(["Use <think>", " tags"])).toEqual({ text: "Use <think> tags", reasoning: "" });
    expect(split(["<thinking>x</thinking>"])).toEqual({ text: "<thinking>x</thinking>", reasoning: "" });
    expect(split(["<thi", "nk>still thinking</th"])).toEqual({ text: "", reasoning: "still thinking</th" });
    expect(split(["  "])).toEqual({ text: "  ", reasoning: "" });
  });
});
