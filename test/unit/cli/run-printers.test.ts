import { describe, expect, it } from "vitest";
import { RunJsonPrinter, RunTextPrinter } from "../../../handwritten/cli/run/index.js";
import type { Delivery } from "../../../handwritten/cli/session-client.js";

const delivery = (seq: number, name: string, data: Record<string, unknown>, replay = false, publisher: Delivery["publisher"] = { class: "harness" }): Delivery =>
  ({ seq, recorded_at: 1_000_000 + seq, publisher, event: { name, data }, ...(replay ? { replay: true } : {}) }) as unknown as Delivery;

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (s: string) => void out.push(s), stderr: (s: string) => void err.push(s) };
}

describe("tau run's printers", () => {
  it("text: streams the answer sanitized, tool results on stderr, and ends the text's line once", () => {
    const c = capture();
    const p = new RunTextPrinter(c.stdout, c.stderr);
    p.agentEvent(delivery(1, "provider.response_updated", { text_delta: "hi \u001b[31mred" }));
    p.agentEvent(delivery(2, "tool.result_display", { tool: "shell", outcome: "ok", display: { title: "ls \u001b[2J", summary: "exit code 0" } }));
    p.agentEvent(delivery(2, "tool.result_display", { tool: "shell", outcome: "error", display: { title: "make", summary: "exit code 2" } }));
    p.agentEvent(delivery(2, "tool.result_display", { tool: "read", outcome: "error", display: { summary: "error" } }));
    p.agentEvent(delivery(3, "provider.response_finished", { finish_reason: "stop" }));
    p.endText(); // nothing more streamed: no second newline
    expect(c.out.join("")).not.toContain("\u001b");
    expect(c.out.join("")).toMatch(/^hi .*red\n$/);
    expect(c.err).toEqual(["[shell ok] ls ␛[2J\n", "[shell failed: exit code 2] make\n", "[read error]\n"]);
    expect(p.live).not.toContain("*");
    expect(p.reportsCutShort).toBe(false);
  });

  it("text: a failure after streamed text starts on a new line; with no text, no empty line", () => {
    const c = capture();
    const p = new RunTextPrinter(c.stdout, c.stderr);
    p.agentEvent(delivery(1, "provider.response_failed", { error_class: "x", diagnostic: "y" }));
    expect(c.out).toEqual([]);
    p.agentEvent(delivery(2, "provider.response_updated", { text_delta: "part" }));
    p.agentEvent(delivery(3, "agent.prompt_failed", { diagnostic: "z" }));
    expect(c.out.join("")).toBe("part\n");
  });

  it("json: one object per event with a trace line's fields (seq, at_us, event, by, data), replayed ones marked, nothing else", () => {
    const c = capture();
    const p = new RunJsonPrinter(c.stdout);
    p.agentEvent(delivery(7, "provider.response_updated", { text_delta: "a\nb" }));
    p.agentEvent(delivery(8, "agent.prompt_submitted", { prompt_id: "p1" }, true));
    p.agentEvent(delivery(9, "tool.result", { tool: "shell" }, false, { class: "extension", instance: "shell", kind: "tool", generation: 3 }));
    p.endText();
    expect(c.out.map((l) => JSON.parse(l))).toEqual([
      { seq: 7, at_us: 1_000_007, event: "provider.response_updated", by: "harness", data: { text_delta: "a\nb" } },
      { seq: 8, at_us: 1_000_008, event: "agent.prompt_submitted", by: "harness", data: { prompt_id: "p1" }, replay: true },
      { seq: 9, at_us: 1_000_009, event: "tool.result", by: "extension:shell", data: { tool: "shell" } },
    ]);
    expect(c.out.every((l) => l.endsWith("\n") && !l.slice(0, -1).includes("\n"))).toBe(true);
    expect(p.live).toEqual(["*"]);
    expect(p.reportsCutShort).toBe(true);
  });
});
