// Streams recorded from real Responses API servers (test/fixtures/provider/recorded-responses, sources
// in its sources.md), each replayed byte for byte by the loopback server through `tau run` on a
// provider profile with `api: responses`: what is printed, what the journal keeps (text, reasoning,
// the encrypted reasoning items, tool calls, usage, finish reasons), the notices on stderr, the exit
// status, and what the request after a tool round sends back. Every expectation was read from the
// stream itself (its `response.output_item.done` items and the usage of its terminal event).
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runTau } from "../../support/run-tau.js";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, type ScriptedResponse } from "../../support/fake-openai.js";
import { responsesStream } from "../../support/fake-responses.js";
import { fixtureEvents, onlyAgentJournal, replay } from "../../support/recorded-streams.js";
import { exitCodeOf } from "../../../handwritten/cli/errors.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const DIR = "recorded-responses";

/** A text exactly, or its length, start and end. */
type Text = string | { length: number; startsWith: string; endsWith: string };

interface Expected {
  code: number;
  /** The answer as printed (without the newline tau ends it with); for a tool round, the text of both rounds. */
  stdout: Text;
  stderr?: string[];
  /** The first `provider.response_finished` (a subset). */
  finished?: Record<string, unknown> & { text?: never; reasoning?: never };
  /** That response's text and reasoning. */
  text?: Text;
  reasoning?: Text;
  /** Its kept reasoning items: id and the encrypted content's length and start. */
  reasoningItems?: Array<{ id: string; length: number; startsWith: string; summary?: boolean }>;
  /** The `provider.response_failed` of a failing stream (a subset). */
  failed?: Record<string, unknown>;
}

interface Case {
  fixture: string;
  /** The stream's events, changed as the case says (a cut-short stream); default: as recorded. */
  events?: (events: string[]) => string[];
  /** The answer to the round after a tool round. */
  then?: ScriptedResponse;
  expect: Expected;
}

const done = () => responsesStream([{ type: "message", id: "msg_done", text: "done" }]);
const usage = (input_tokens: number, output_tokens: number, cache_read_tokens: number, reasoning_tokens: number) => ({ input_tokens, output_tokens, cache_read_tokens, reasoning_tokens });
const call = (call_id: string, tool: string, arguments_json: string) => ({ call_id, tool, arguments_json });

const PARIS = "The capital of France is Paris.";
const SF_WEATHER = "I'll get the current weather information for San Francisco for you.";
const QUOTA =
  "stream error (code=insufficient_quota, type=insufficient_quota): You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.";

const CASES: Case[] = [
  {
    fixture: "azure-text.sse",
    expect: { code: 0, stdout: "Hello", text: "Hello", finished: { finish_reason: "stop", usage: usage(11, 11, 0, 0) } },
  },
  {
    fixture: "openai-gpt4o-logprobs-text.sse",
    expect: { code: 0, stdout: "The capital of Minas Gerais is Belo Horizonte.", finished: { finish_reason: "stop", usage: usage(25, 10, 0, 0) } },
  },
  {
    fixture: "openai-gpt5-moderation.sse",
    expect: {
      code: 0,
      stdout: "Paris.",
      finished: { finish_reason: "stop", usage: { ...usage(13, 59, 0, 0), cache_write_tokens: 0 } },
      reasoningItems: [{ id: "rs_06fe400e17c64daf006a5fa35397e8819c87342597af84fde1", length: 1272, startsWith: "gAAAAA" }],
    },
  },
  {
    fixture: "github-copilot-id-rotation.sse",
    expect: {
      code: 0,
      stdout: "There are **3** letter **“r”**s in **“strawberry.”**\n\nBreakdown: **s t r a w b e r r y**  \nYou can see **r** at positions **3, 8, and 9**.",
      reasoning: "**Counting character occurrences**",
      finished: { finish_reason: "stop", usage: { ...usage(19, 105, 0, 44), cache_write_tokens: 0 } },
    },
  },
  {
    fixture: "deepseek-reasoning-text.sse",
    expect: { code: 0, stdout: PARIS, reasoning: "We need answer capital of France.", finished: { finish_reason: "stop", usage: usage(90, 15, 0, 7) } },
  },
  {
    fixture: "openai-reasoning-summary-parts.sse",
    expect: {
      code: 0,
      stdout: { length: 1251, startsWith: "I'm not a road safety professional, but here ", endsWith: "cific to your area. Stay safe!" },
      // Four summary parts, kept as paragraphs.
      reasoning: { length: 2028, startsWith: "**Providing street crossing instructions**\n\nThe user is asking how to cross the ", endsWith: "" },
      reasoningItems: [{ id: "rs_68c42d1d0878819d8266007cd3d1402c08fbf9b1584184ff", length: 440, startsWith: "gAAAAABoxC0m", summary: true }],
      finished: { finish_reason: "stop", usage: usage(13, 1680, 0, 1408) },
    },
  },
  {
    fixture: "xai-reasoning-encrypted-text.sse",
    expect: {
      code: 0,
      stdout: { length: 2786, startsWith: "### Overview of Sonoran Cuisine\nSonoran cuisi", endsWith: "authentic, approachable meals." },
      reasoning: { length: 754, startsWith: 'First, the question is: "What is specifically', endsWith: "" },
      reasoningItems: [{ id: "rs_0b824fe9-3250-2588-0bbf-0810402fc822", length: 1731, startsWith: "WjtnRFdCMihg", summary: true }],
      finished: { finish_reason: "stop", usage: usage(216, 831, 192, 253) },
    },
  },
  {
    // Two messages (a `commentary` one, then the `final_answer`), their deltas shortened by whoever
    // published the file: the finished items are the answer, a paragraph apart.
    fixture: "openai-phase-two-messages.sse",
    expect: {
      code: 0,
      stdout: { length: 1640, startsWith: "Got it — I’ll quickly check reliable, up-to-d", endsWith: "morning brief with timestamps." },
      finished: { finish_reason: "stop", usage: usage(7112, 463, 3072, 64) },
    },
  },
  {
    fixture: "openai-web-search.sse",
    expect: {
      code: 0,
      stdout: { length: 212, startsWith: "San Francisco weather today (Tuesday, Septemb", endsWith: "seful for the cooler evening. " },
      reasoningItems: [
        { id: "rs_00a60507bf41223d0068c9d2fc927081a088e0b920cdfe3866", length: 2616, startsWith: "gAAAAABoydMA" },
        { id: "rs_00a60507bf41223d0068c9d300b23481a0b77a03d911213220", length: 2552, startsWith: "gAAAAABoydML" },
      ],
      finished: { finish_reason: "stop", usage: usage(9463, 582, 8320, 512) },
    },
  },
  {
    fixture: "azure-code-interpreter.sse",
    expect: {
      code: 0,
      stdout: { length: 807, startsWith: "Here's a simple Python program that generates", endsWith: " to a file for you. Want that?" },
      finished: { finish_reason: "stop", usage: usage(2143, 919, 1280, 576) },
    },
  },
  {
    fixture: "openai-mcp-list-tools-unfinished.sse",
    expect: {
      code: 0,
      stdout: { length: 398, startsWith: "Here are the available tools from each connec", endsWith: "fetch_generic_url_content\n\n---" },
      finished: { finish_reason: "stop", usage: usage(1199, 103, 0, 0) },
    },
  },
  {
    fixture: "xai-image-generation.sse",
    expect: { code: 0, stdout: "Here's a serene image of a paper boat sailing on a leaf-covered pond:", finished: { finish_reason: "stop", usage: usage(100, 50, 20, 30) } },
  },
  {
    fixture: "openai-error-insufficient-quota.sse",
    expect: { code: 1, stdout: "", stderr: [`tau: the prompt failed: rate_limited: ${QUOTA} [TAU-E0301]`], failed: { error_class: "rate_limited", diagnostic: QUOTA } },
  },
  {
    fixture: "openai-function-call.sse",
    then: replay(`${DIR}/openai-function-call-answer.sse`),
    expect: {
      code: 0,
      stdout: PARIS,
      text: "",
      finished: { finish_reason: "tool_calls", tool_calls: [call("call_kL0PCQV7M2WMoVX8V8OtYSAL", "get_capital", '{"country":"France"}')], usage: usage(255, 16, 0, 0) },
    },
  },
  {
    fixture: "deepseek-reasoning-tool-call.sse",
    then: done(),
    expect: {
      code: 0,
      stdout: "done",
      reasoning: "The user asks about temperature in Tokyo. I'll call the tool.",
      finished: { finish_reason: "tool_calls", tool_calls: [call("call_00_xjY8Z2BvSlzgEmmw0DtH0464", "get_temperature", '{"city": "Tokyo"}')], usage: usage(366, 59, 256, 14) },
    },
  },
  {
    // Text and a call in one answer; the call's arguments come only whole (no deltas).
    fixture: "lmstudio-reasoning-tool-call.sse",
    then: done(),
    expect: {
      code: 0,
      stdout: `${SF_WEATHER}\ndone`,
      text: SF_WEATHER,
      reasoning: { length: 242, startsWith: "The user is asking for the weather in San Fra", endsWith: "" },
      finished: { finish_reason: "tool_calls", tool_calls: [call("call_2025306790300011", "weather", '{"location":"San Francisco"}')], usage: usage(182, 61, 2, 48) },
    },
  },
  {
    // Encrypted reasoning with neither summary nor text, then a call.
    fixture: "bedrock-mantle-reasoning-tool-call.sse",
    then: done(),
    expect: {
      code: 0,
      stdout: "done",
      reasoningItems: [{ id: "rs_4a4c74f82a535c8f8bda7d43b75d75f7", length: 796, startsWith: "" }],
      finished: { finish_reason: "tool_calls", tool_calls: [call("call_1", "second_tool", "{}")], usage: { ...usage(115, 30, 0, 14), cache_write_tokens: 0 } },
    },
  },
];

const CUT_SHORT = "the stream ended before the response did (no response.completed, response.incomplete or response.failed)";

/** Streams that stop before their terminal event: a clear provider error, never a half answer. */
const CUT: Case[] = [
  {
    fixture: "deepseek-reasoning-text.sse",
    events: (evs) => evs.filter((e) => !e.startsWith("event: response.completed")),
    expect: { code: 1, stdout: PARIS, stderr: [`tau: the prompt failed: protocol: ${CUT_SHORT} [TAU-E0301]`], failed: { error_class: "protocol", diagnostic: CUT_SHORT } },
  },
  {
    // Cut in the middle of the call's arguments, after the reasoning was streamed.
    fixture: "deepseek-reasoning-tool-call.sse",
    events: (evs) => evs.slice(0, evs.findIndex((e) => e.startsWith("event: response.function_call_arguments.delta")) + 3),
    expect: { code: 1, stdout: "", stderr: [`tau: the prompt failed: protocol: ${CUT_SHORT} [TAU-E0301]`], failed: { error_class: "protocol" } },
  },
];

const INCOMPLETE_LENGTH = "tau: the answer is incomplete: it reached the model's output limit (finish_reason length) [TAU-E0304]";
const RIVERS = "Rivers are vital components of Earth's hydrological system, serving as lifelines for";
const REFUSAL = "I'm sorry, I can't assist with that request.";

/** Written to the documented shape (test/fixtures/provider/synthetic/README.md): no recording was found. */
const SYNTHETIC: Case[] = [
  {
    fixture: "synthetic/openai-responses-incomplete.sse",
    expect: {
      code: exitCodeOf("TAU-E0304"),
      stdout: RIVERS,
      stderr: [INCOMPLETE_LENGTH],
      finished: { finish_reason: "length", server_finish_reason: "incomplete:max_output_tokens", usage: { ...usage(16, 16, 0, 0), cache_write_tokens: 0 } },
    },
  },
  { fixture: "synthetic/openai-responses-refusal.sse", expect: { code: 0, stdout: REFUSAL, finished: { finish_reason: "stop", usage: usage(79, 11, 0, 0) } } },
];

function checkText(actual: unknown, expected: Text): void {
  const s = String(actual);
  if (typeof expected === "string") return void expect(s).toBe(expected);
  expect(s).toHaveLength(expected.length);
  expect(s.startsWith(expected.startsWith), s.slice(0, 80)).toBe(true);
  expect(s.endsWith(expected.endsWith), s.slice(-80)).toBe(true);
}

type Item = { type?: string; role?: string; id?: string; call_id?: string; encrypted_content?: string; arguments?: string };

/** Replays one case through `tau run` and checks everything it expects. */
async function check(c: Case): Promise<void> {
  const yaml = `providers:\n  rec:\n    api: responses\n    base_url: ${fake.baseUrl}\n    models: [fake-model]\n    list_models: false\nmodel: rec/fake-model\n`;
  const w = workspaceIn(cleanups, yaml);
  writeFileSync(join(w.project, "notes.txt"), "remember the milk\n");
  const file = c.fixture.includes("/") ? c.fixture : `${DIR}/${c.fixture}`;
  const first = c.events ? { ...replay(file), chunks: c.events(fixtureEvents(file)) } : replay(file);
  const before = fake.responsesRequests.length;
  fake.enqueue(first, ...(c.then ? [c.then] : []));
  const r = await runTau(["run", "-p", "replay"], { env: w.env, cwd: w.project });
  const e = c.expect;
  expect(fake.pending, r.stderr).toBe(0);
  expect(fake.chatRequests).toHaveLength(0);
  expect(fake.responsesRequests.length - before).toBe(c.then ? 2 : 1);
  checkText(r.stdout, typeof e.stdout === "string" ? (e.stdout === "" ? "" : `${e.stdout}\n`) : { ...e.stdout, endsWith: `${e.stdout.endsWith}\n`, length: e.stdout.length + 1 });
  const lines = r.stderr.split("\n");
  for (const line of e.stderr ?? []) expect(lines, r.stderr).toContain(line);
  if (e.code === 0) expect(r.stderr, r.stderr).not.toMatch(/^tau: /m);
  expect(r.code, r.stderr).toBe(e.code);

  const journal = onlyAgentJournal(w.home);
  const finished = journal.find((x) => x.name === "provider.response_finished")?.data;
  if (e.finished) {
    expect(finished).toMatchObject(e.finished);
    // What was printed is what the journal keeps.
    if (!c.then) expect(`${String(finished?.text)}\n`).toBe(r.stdout);
    checkText(finished?.text, e.text ?? (c.then ? "" : e.stdout));
    if (e.reasoning !== undefined) checkText(finished?.reasoning, e.reasoning);
    else expect(finished).not.toHaveProperty("reasoning");
    const items = (finished?.reasoning_items ?? []) as Array<{ id: string; encrypted_content: string; summary?: string }>;
    expect(items.map((x) => x.id)).toEqual((e.reasoningItems ?? []).map((x) => x.id));
    items.forEach((x, i) => {
      const want = e.reasoningItems![i]!;
      expect(x.encrypted_content).toHaveLength(want.length);
      expect(x.encrypted_content.startsWith(want.startsWith)).toBe(true);
      expect(x.summary === undefined).toBe(!want.summary);
    });
  } else {
    expect(finished).toBeUndefined();
  }
  if (e.failed) expect(journal.find((x) => x.name === "provider.response_failed")?.data).toMatchObject(e.failed);
  else expect(journal.some((x) => x.name === "provider.response_failed")).toBe(false);
  // The round after a tool round sends back the reasoning items, the calls as they came and one output per call.
  if (c.then) {
    const input = (fake.responsesRequests[before + 1]!.body as { input: Item[] }).input;
    const calls = finished?.tool_calls as Array<{ call_id: string; tool: string; arguments_json: string }>;
    const reasoning = (finished?.reasoning_items ?? []) as Array<{ id: string; encrypted_content: string }>;
    expect(input.filter((x) => x.type === "reasoning").map((x) => [x.id, x.encrypted_content])).toEqual(reasoning.map((x) => [x.id, x.encrypted_content]));
    expect(input.filter((x) => x.type === "function_call").map((x) => [x.call_id, x.arguments])).toEqual(calls.map((x) => [x.call_id, x.arguments_json]));
    expect(input.filter((x) => x.type === "function_call_output").map((x) => x.call_id)).toEqual(calls.map((x) => x.call_id));
  }
  expect(journal.at(-1)).toMatchObject({ name: "agent.outer_turn_finished", data: { outcome: e.failed ? "failed" : "completed" } });
}

describe("recorded Responses API rounds through tau run", () => {
  it("[run.responses.recorded-rounds] four recorded rounds of one conversation (a reasoning item, three calls, the answer): each request carries the encrypted reasoning and every call before it, as they came, with one output per call", async () => {
    const yaml = `providers:\n  rec:\n    api: responses\n    base_url: ${fake.baseUrl}\n    models: [fake-model]\n    list_models: false\nmodel: rec/fake-model\n`;
    const w = workspaceIn(cleanups, yaml);
    fake.enqueue(...[1, 2, 3, 4].map((n) => replay(`${DIR}/openai-calculator-round-${n}.sse`)));
    const r = await runTau(["run", "-p", "(12 + 7) * 3 * 10 with the calculator"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("The final result is **570**.\n");
    expect(fake.pending).toBe(0);
    expect(fake.responsesRequests).toHaveLength(4);
    const calls = [
      call("call_AB6AaRZ1FYZB2RwS6A5vbdqn", "calculator", '{"a":12,"b":7,"op":"add"}'),
      call("call_Q6pW65MUgW9vF59BmItYGos3", "calculator", '{"a":19,"b":3,"op":"multiply"}'),
      call("call_Zl5vIMnD7dVAjgU6FkhmiCZh", "calculator", '{"a":57,"b":10,"op":"multiply"}'),
    ];
    const finished = onlyAgentJournal(w.home).filter((x) => x.name === "provider.response_finished").map((x) => x.data);
    expect(finished).toHaveLength(4);
    expect(finished.map((f) => f.tool_calls)).toEqual([[calls[0]], [calls[1]], [calls[2]], []]);
    expect(finished.map((f) => f.finish_reason)).toEqual(["tool_calls", "tool_calls", "tool_calls", "stop"]);
    expect(finished.map((f) => f.usage)).toEqual([usage(134, 28, 0, 0), usage(221, 26, 0, 0), usage(260, 26, 0, 0), usage(299, 12, 0, 0)]);
    expect(finished[3]).toMatchObject({ text: "The final result is **570**." });
    const rs = "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9";
    const items = finished[0]!.reasoning_items as Array<{ id: string; encrypted_content: string; summary: string }>;
    expect(items.map((x) => [x.id, x.encrypted_content.length])).toEqual([[rs, 1060]]);
    expect(finished[0]!.reasoning).toBe(items[0]!.summary);
    expect(String(finished[0]!.reasoning).startsWith("**Calculating step-by-step using calculator**\n\nI'll compute ")).toBe(true);
    for (let n = 1; n < 4; n++) {
      const input = (fake.responsesRequests[n]!.body as { input: Item[] }).input.filter((x) => x.type !== undefined);
      // The reasoning item first, then each call followed by its output.
      expect(input.map((x) => x.type)).toEqual(["reasoning", ...calls.slice(0, n).flatMap(() => ["function_call", "function_call_output"])]);
      expect(input[0]).toMatchObject({ id: rs, encrypted_content: items[0]!.encrypted_content });
      const sent = input.filter((x) => x.type === "function_call").map((x) => [x.call_id, x.arguments]);
      expect(sent).toEqual(calls.slice(0, n).map((c) => [c.call_id, c.arguments_json]));
      expect(input.filter((x) => x.type === "function_call_output").map((x) => x.call_id)).toEqual(calls.slice(0, n).map((c) => c.call_id));
    }
  });
});

describe("recorded Responses API streams through tau run", () => {
  it.each(CASES)("[run.responses.recorded-streams] $fixture", check);

  it.each(SYNTHETIC)("[run.responses.incomplete-and-refusal] $fixture: an answer cut short by max_output_tokens is printed with the cut-short notice and status; a streamed refusal is the answer", check);

  it("[run.responses.cut-short-fails] a stream that ends before response.completed fails the prompt as a protocol error, whatever was shown", async () => {
    for (const c of CUT) await check(c);
  });
});
