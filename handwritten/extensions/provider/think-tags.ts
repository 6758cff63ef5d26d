// Reasoning written inline as `<think>…</think>` at the start of an answer's content (DeepSeek R1,
// Qwen and other open models behind servers that do not split it out): the text inside the tags is
// reasoning, the text after them the answer (SPEC-provider-chat-completions, "Inline think tags").
// Streamed content arrives in arbitrary pieces, so a tag may be cut anywhere; the splitter holds
// back only what could still be part of a tag.

const OPEN = "<think>";
const CLOSE = "</think>";

export interface Split {
  text: string;
  reasoning: string;
}

/** The longest suffix of `s` that is a proper prefix of `tag` (what may continue into the tag). */
function partialTail(s: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, s.length); n > 0; n--) if (tag.startsWith(s.slice(s.length - n))) return n;
  return 0;
}

export class ThinkTags {
  private state: "start" | "thinking" | "after" | "answer" = "start";
  private held = "";

  /** The next piece of content, split; text held back while a tag may be forming. */
  push(piece: string): Split {
    const out: Split = { text: "", reasoning: "" };
    let s = this.held + piece;
    this.held = "";
    while (s !== "") {
      switch (this.state) {
        case "start": {
          const lead = s.length - s.trimStart().length;
          const rest = s.slice(lead);
          if (rest.startsWith(OPEN)) {
            this.state = "thinking";
            s = rest.slice(OPEN.length);
          } else if (OPEN.startsWith(rest)) {
            this.held = s; // only whitespace and the start of `<think>` so far
            return out;
          } else {
            this.state = "answer";
          }
          break;
        }
        case "thinking": {
          const at = s.indexOf(CLOSE);
          if (at >= 0) {
            out.reasoning += s.slice(0, at);
            this.state = "after";
            s = s.slice(at + CLOSE.length);
          } else {
            const keep = partialTail(s, CLOSE);
            out.reasoning += s.slice(0, s.length - keep);
            this.held = s.slice(s.length - keep);
            return out;
          }
          break;
        }
        case "after": {
          // The blank lines that separate the reasoning from the answer are not the answer's.
          const t = s.replace(/^\s+/, "");
          if (t === "") return out;
          this.state = "answer";
          s = t;
          break;
        }
        case "answer":
          out.text += s;
          return out;
      }
    }
    return out;
  }

  /** The stream ended: whatever was held back is what it looked like (text, or unfinished reasoning). */
  end(): Split {
    const held = this.held;
    this.held = "";
    if (this.state === "thinking") return { text: "", reasoning: held };
    return { text: held, reasoning: "" };
  }
}
