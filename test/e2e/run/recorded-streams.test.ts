// Streams recorded from real OpenAI-compatible servers (test/fixtures/provider/recorded, sources in
// its sources.md) and a few synthetic ones for cases nobody published (test/fixtures/provider/
// synthetic), each replayed byte for byte by the loopback server through `tau run`: what is printed,
// what the journal keeps (text, reasoning, tool calls, usage, finish reasons), the notices on stderr
// and the exit status.
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runTau } from "../../support/run-tau.js";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, type ScriptedResponse } from "../../support/fake-openai.js";
import { onlyAgentJournal as agentJournal, replay } from "../../support/recorded-streams.js";
import { exitCodeOf } from "../../../handwritten/cli/errors.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

interface Expected {
  code: number;
  /** stdout exactly, or its length, start and end. */
  stdout: string | { length: number; startsWith: string; endsWith: string };
  /** Lines stderr must hold (each exactly, as a whole line). */
  stderr?: string[];
  /** The first `provider.response_finished` (a subset), with the reasoning's length and start. */
  finished?: Record<string, unknown> & { reasoning?: never };
  reasoning?: { length: number; startsWith: string };
  /** The `provider.response_failed` of a failing stream (a subset). */
  failed?: Record<string, unknown>;
}

interface Case {
  fixture: string;
  /** A GATE id this case also satisfies. */
  id?: string;
  model?: string;
  /** The answer to the round after a tool round. */
  then?: ScriptedResponse;
  expect: Expected;
}

const INCOMPLETE_LENGTH = "tau: the answer is incomplete: it reached the model's output limit (finish_reason length) [TAU-E0304]";
const INCOMPLETE_FILTER = "tau: the answer is incomplete: the provider's content filter stopped it (finish_reason content_filter) [TAU-E0304]";
const weather = (id: string, args: string) => [{ call_id: id, tool: "weather", arguments_json: args }];

const CASES: Case[] = [
  {
    fixture: "recorded/openai-gpt4o-refusal.sse",
    id: "run.openai.refusal-shown",
    expect: {
      code: 0,
      stdout: "I'm sorry, I can't assist with that request.\n",
      finished: { text: "I'm sorry, I can't assist with that request.", finish_reason: "stop", usage: { input_tokens: 79, output_tokens: 11, reasoning_tokens: 0 } },
    },
  },
  {
    fixture: "recorded/openai-gpt4o-length.sse",
    id: "run.openai.incomplete-answer-notice",
    expect: { code: exitCodeOf("TAU-E0304"), stdout: '{"\n', stderr: [INCOMPLETE_LENGTH], finished: { text: '{"', finish_reason: "length", usage: { input_tokens: 79, output_tokens: 1, reasoning_tokens: 0 } } },
  },
  {
    fixture: "synthetic/azure-content-filter.sse",
    id: "run.openai.incomplete-answer-notice",
    expect: { code: exitCodeOf("TAU-E0304"), stdout: "The story begins in a dark alley\n", stderr: [INCOMPLETE_FILTER], finished: { text: "The story begins in a dark alley", finish_reason: "content_filter" } },
  },
  {
    fixture: "recorded/openai-gpt4o-three-choices.sse",
    expect: { code: 0, stdout: '{"city":"San Francisco","temperature":65,"units":"f"}\n', finished: { finish_reason: "stop", usage: { input_tokens: 79, output_tokens: 42, reasoning_tokens: 0 } } },
  },
  {
    fixture: "recorded/openai-gpt5-moderation.sse",
    expect: { code: 0, stdout: "Paris.\n", finished: { text: "Paris.", usage: { input_tokens: 13, output_tokens: 11, cache_read_tokens: 0, reasoning_tokens: 0 } } },
  },
  {
    fixture: "recorded/azure-model-router-text.sse",
    expect: { code: 0, stdout: "Capital of Denmark.\n", finished: { finish_reason: "stop", usage: { input_tokens: 15, output_tokens: 78, cache_read_tokens: 0, reasoning_tokens: 64 } } },
  },
  {
    fixture: "recorded/deepseek-reasoner-text.sse",
    model: "deepseek-reasoner",
    expect: {
      code: 0,
      stdout: "Hello there! 😊 How can I help you today?\n",
      finished: { finish_reason: "stop", usage: { input_tokens: 6, output_tokens: 212, cache_read_tokens: 0, reasoning_tokens: 198 } },
      reasoning: { length: 882, startsWith: 'Hmm, the user just said "Hello".' },
    },
  },
  {
    fixture: "synthetic/ollama-think-tags.sse",
    id: "provider.stream.think-tags",
    expect: {
      code: 0,
      stdout: "Hello! How can I help?\n",
      finished: { text: "Hello! How can I help?", finish_reason: "stop", usage: { input_tokens: 7, output_tokens: 31 } },
      reasoning: { length: 41, startsWith: "\nThe user greets me; I should greet back." },
    },
  },
  {
    fixture: "recorded/zai-glm-thinking.sse",
    expect: { code: 0, stdout: "4\n", finished: { text: "4", usage: { input_tokens: 13, output_tokens: 564, cache_read_tokens: 0, reasoning_tokens: 561 } }, reasoning: { length: 2173, startsWith: "\n1.  **Analyze the User's Request:**" } },
  },
  {
    fixture: "recorded/openrouter-claude-reasoning.sse",
    expect: {
      code: 0,
      stdout: "2 + 2 = 4\n",
      finished: { text: "2 + 2 = 4", usage: { input_tokens: 43, output_tokens: 36, cache_read_tokens: 0, reasoning_tokens: 13 } },
      reasoning: { length: 51, startsWith: "This is a simple arithmetic question. 2+2 equals 4." },
    },
  },
  {
    fixture: "recorded/openrouter-minimax-length-then-error.sse",
    expect: {
      code: 1,
      stdout: "",
      stderr: ["tau: the prompt failed: invalid_request: stream error (code=400): Token limit reached [TAU-E0301]"],
      failed: { error_class: "invalid_request", diagnostic: "stream error (code=400): Token limit reached" },
    },
  },
  {
    fixture: "recorded/mistral-magistral-thinking-parts.sse",
    id: "run.openai.content-parts",
    expect: {
      code: 0,
      stdout: { length: 608, startsWith: "To cross the street safely, follow these steps:\n\n1. Look both ways", endsWith: "you can ensure a safe crossing.\n" },
      finished: { finish_reason: "stop", usage: { input_tokens: 10, output_tokens: 232 } },
      reasoning: { length: 421, startsWith: "Okay, the user is asking how to cross the street." },
    },
  },
  {
    fixture: "recorded/vllm-crusoe-llama-text.sse",
    expect: { code: 0, stdout: "1, 2, 3, 4, 5\n", finished: { text: "1, 2, 3, 4, 5", usage: { input_tokens: 46, output_tokens: 14, cache_read_tokens: 0 } } },
  },
  {
    fixture: "recorded/perplexity-sonar-text.sse",
    expect: { code: 0, stdout: "**EcoVista Day**[1][5]\n", finished: { finish_reason: "stop", usage: { input_tokens: 11, output_tokens: 434 } } },
  },
  {
    fixture: "synthetic/local-no-finish-reason.sse",
    id: "run.openai.clean-end-without-finish",
    expect: { code: 0, stdout: "Hello from a local server.\n", finished: { finish_reason: "stop", server_finish_reason: "", usage: { input_tokens: 9, output_tokens: 6 } } },
  },
  {
    fixture: "recorded/groq-gpt-oss-tool-use-failed.sse",
    id: "run.openai.stream-error-codes",
    expect: {
      code: 1,
      stdout: "",
      failed: { error_class: "invalid_request" },
      stderr: [
        "tau: the prompt failed: invalid_request: stream error (code=tool_use_failed, type=invalid_request_error): Tool call validation failed: tool call validation failed: parameters for tool get_something_by_name did not match schema: errors: [missing properties: 'name', additionalProperties 'invalid_param' not allowed] [TAU-E0301]",
      ],
    },
  },
  {
    fixture: "recorded/groq-gpt-oss-error-after-text.sse",
    id: "run.openai.error-after-text-newline",
    expect: {
      code: 1,
      stdout: "maybe\n",
      stderr: ["tau: the prompt failed: invalid_request: stream error (code=tool_use_failed, type=invalid_request_error): Tool choice is required, but model did not call a tool [TAU-E0301]"],
      failed: { error_class: "invalid_request" },
    },
  },
  {
    fixture: "synthetic/llamacpp-error-line.sse",
    id: "run.openai.stream-error-codes",
    expect: {
      code: 1,
      stdout: "",
      stderr: ["tau: the prompt failed: context_window_exceeded: stream error (code=400, type=exceed_context_size_error): the request exceeds the available context size, try increasing it [TAU-E0301]"],
      failed: { error_class: "context_window_exceeded" },
    },
  },
  {
    fixture: "recorded/groq-gpt-oss-tool-call.sse",
    then: textResponse("done"),
    expect: {
      code: 0,
      stdout: "done\n",
      finished: {
        finish_reason: "tool_calls",
        tool_calls: [{ call_id: "fc_bfb39741-3748-4def-9886-a93fc9c64a90", tool: "get_something_by_name", arguments_json: '{"name":"example"}' }],
        usage: { input_tokens: 304, output_tokens: 49, reasoning_tokens: 23 },
      },
      reasoning: { length: 92, startsWith: 'We need to call the function with correct parameter "name".' },
    },
  },
  {
    fixture: "recorded/groq-llama-tool-call.sse",
    then: textResponse("done"),
    expect: { code: 0, stdout: "done\n", finished: { finish_reason: "tool_calls", tool_calls: weather("tk85n1k4m", "{}"), usage: { input_tokens: 210, output_tokens: 15 } } },
  },
  {
    fixture: "recorded/alibaba-qwen3-tool-call.sse",
    then: textResponse("done"),
    expect: {
      code: 0,
      stdout: "done\n",
      finished: { finish_reason: "tool_calls", tool_calls: weather("call_eee11723464a4b9eb8cee71d", '{"location": "San Francisco"}'), usage: { input_tokens: 295, output_tokens: 22, cache_read_tokens: 0 } },
    },
  },
  {
    fixture: "recorded/xai-grok-tool-call.sse",
    then: textResponse("done"),
    expect: {
      code: 0,
      stdout: "done\n",
      finished: { finish_reason: "tool_calls", tool_calls: weather("call_55117580", '{"location":"San Francisco"}'), usage: { input_tokens: 291, output_tokens: 26, cache_read_tokens: 290, reasoning_tokens: 196 } },
      reasoning: { length: 18, startsWith: "First, the user is" },
    },
  },
  {
    fixture: "recorded/mistral-small-tool-call.sse",
    then: textResponse("done"),
    expect: { code: 0, stdout: "done\n", finished: { finish_reason: "tool_calls", tool_calls: weather("gSIMJiOkT", '{"location": "San Francisco"}'), usage: { input_tokens: 124, output_tokens: 22 } } },
  },
  {
    fixture: "recorded/together-deepseek-r1-think-tags.sse",
    id: "provider.stream.think-tags",
    expect: {
      code: 0,
      stdout: { length: 2559, startsWith: "Crossing the street safely requires attention and ", endsWith: "it could save your life! 🌟\n" },
      finished: { finish_reason: "stop", usage: { input_tokens: 10, output_tokens: 955, cache_read_tokens: 0 } },
      reasoning: { length: 1430, startsWith: '\nOkay, the user asked "How do I cross the street?"' },
    },
  },
  {
    fixture: "recorded/snowflake-claude-no-finish.sse",
    id: "run.openai.clean-end-without-finish",
    expect: { code: 0, stdout: "4\n", finished: { text: "4", finish_reason: "stop", server_finish_reason: "", usage: { input_tokens: 22, output_tokens: 5, cache_read_tokens: 0, reasoning_tokens: 0 } } },
  },
  {
    fixture: "recorded/snowflake-claude-reasoning-details.sse",
    id: "run.openai.reasoning-details",
    expect: {
      code: 0,
      stdout: "15 × 27 = **405**\n\nHere's the breakdown:\n- 15 × 20 = 300\n- 15 × 7 = 105\n- 300 + 105 = **405**\n",
      finished: { finish_reason: "stop", server_finish_reason: "", usage: { input_tokens: 45, output_tokens: 73, cache_read_tokens: 0, reasoning_tokens: 0 } },
      reasoning: { length: 13, startsWith: "15 * 27 = 405" },
    },
  },
  {
    fixture: "recorded/novita-llama-text.sse",
    expect: { code: 0, stdout: "Paris\n", finished: { text: "Paris", finish_reason: "stop", usage: { input_tokens: 40, output_tokens: 2 } } },
  },
  {
    fixture: "recorded/azure-deepseek-v4-sglang-text.sse",
    expect: {
      code: 0,
      stdout: { length: 2666, startsWith: "Exciting news, Knicks fans—there's a brand-new hol", endsWith: "See you next April\u202f4—from the logo! 🎯🧡💙\n" },
      finished: { finish_reason: "stop", usage: { input_tokens: 19, output_tokens: 1720, reasoning_tokens: 0 } },
      reasoning: { length: 3832, startsWith: "We need to invent a new holiday around the latest " },
    },
  },
  {
    fixture: "recorded/cerebras-glm-tool-call.sse",
    then: textResponse("done"),
    expect: {
      code: 0,
      stdout: "done\n",
      finished: {
        text: "",
        finish_reason: "tool_calls",
        tool_calls: [{ call_id: "bbd2b9d98", tool: "nonUsefulTool", arguments_json: "{}" }],
        usage: { input_tokens: 322, output_tokens: 104, cache_read_tokens: 256, reasoning_tokens: 97 },
      },
      reasoning: { length: 423, startsWith: 'The user is asking about a "magic number".' },
    },
  },
  {
    fixture: "recorded/mistral-glm-incremental-tool-call.sse",
    then: textResponse("done"),
    expect: {
      code: 0,
      stdout: "done\n",
      finished: {
        text: "",
        finish_reason: "tool_calls",
        tool_calls: [{ call_id: "chatcmpl-tool-9f149c74c42f265b", tool: "webSearchTool", arguments_json: '{"query": "current Berlin weather"}' }],
        usage: { input_tokens: 171, output_tokens: 14, cache_read_tokens: 128 },
      },
    },
  },
  {
    fixture: "recorded/ollama-qwen-parallel-tool-calls.sse",
    then: textResponse("done"),
    expect: {
      code: 0,
      stdout: "done\n",
      finished: {
        text: "",
        finish_reason: "tool_calls",
        tool_calls: [
          { call_id: "call_wteop8bt", tool: "run_command", arguments_json: '{"command":"ls"}' },
          { call_id: "call_rk2xye1l", tool: "run_command", arguments_json: '{"command":"ls -l"}' },
        ],
      },
    },
  },
  {
    fixture: "recorded/llamacpp-gpt-oss-timings-tail.sse",
    id: "run.openai.llamacpp-timings-usage",
    expect: { code: 0, stdout: "!\n", finished: { text: "!", finish_reason: "stop", usage: { input_tokens: 147, output_tokens: 2188, cache_read_tokens: 89 } } },
  },
  {
    fixture: "recorded/openrouter-deepseek-annotations-two-stops.sse",
    expect: {
      code: 0,
      stdout: "The URL for Pydantic AI's GitHub repository is:  \n\nhttps://github.com/pydantic/pydantic-ai\n",
      finished: { text: "The URL for Pydantic AI's GitHub repository is:  \n\nhttps://github.com/pydantic/pydantic-ai", finish_reason: "stop", usage: { input_tokens: 2317, output_tokens: 53, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 } },
    },
  },
  {
    fixture: "recorded/openai-gpt4o-mini-tool-call.sse",
    then: textResponse("done"),
    expect: {
      code: 0,
      stdout: "done\n",
      finished: {
        text: "",
        finish_reason: "tool_calls",
        tool_calls: [{ call_id: "call_ZR5UUuTt3pf61kjwAJIYdVMj", tool: "get_capital", arguments_json: '{"country":"UK"}' }],
        usage: { input_tokens: 53, output_tokens: 15, cache_read_tokens: 0, reasoning_tokens: 0 },
      },
    },
  },
  {
    fixture: "recorded/openai-gpt4o-parallel-tool-calls.sse",
    then: textResponse("done"),
    expect: {
      code: 0,
      stdout: "done\n",
      finished: {
        text: "",
        finish_reason: "tool_calls",
        tool_calls: [
          { call_id: "call_q2UyBRP7eXNTzAoR8lEhjc9Z", tool: "get_country", arguments_json: "{}" },
          { call_id: "call_b51ijcpFkDiTQG1bQzsrmtW5", tool: "get_product_name", arguments_json: "{}" },
        ],
        usage: { input_tokens: 364, output_tokens: 40, cache_read_tokens: 0, reasoning_tokens: 0 },
      },
    },
  },
  {
    fixture: "synthetic/gemini-tool-call-finish-stop.sse",
    id: "run.openai.tool-calls-finish-stop",
    then: textResponse("listed"),
    expect: {
      code: 0,
      stdout: "listed\n",
      stderr: ["[ls ok] ls ."],
      finished: {
        finish_reason: "tool_calls",
        server_finish_reason: "stop",
        tool_calls: [{ call_id: "function-call-13018313711924127325", tool: "ls", arguments_json: '{"path":"."}' }],
        usage: { input_tokens: 61, output_tokens: 15 },
      },
    },
  },
];

/** Replays one case through `tau run` and checks everything it expects. */
async function check(c: Case): Promise<void> {
  const model = c.model ?? "fake-model";
  const w = workspaceIn(cleanups, `model: ${model}\n`);
  writeFileSync(join(w.project, "notes.txt"), "remember the milk\n");
  const env = { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-recorded", OPENAI_MODEL: model };
  const before = fake.chatRequests.length;
  fake.enqueue(replay(c.fixture), ...(c.then ? [c.then] : []));
  const r = await runTau(["run", "-p", "replay"], { env, cwd: w.project });
  const e = c.expect;
  expect(fake.pending, r.stderr).toBe(0);
  expect(fake.chatRequests.length - before).toBe(c.then ? 2 : 1);
  if (typeof e.stdout === "string") expect(r.stdout).toBe(e.stdout);
  else {
    expect(r.stdout).toHaveLength(e.stdout.length);
    expect(r.stdout.startsWith(e.stdout.startsWith)).toBe(true);
    expect(r.stdout.endsWith(e.stdout.endsWith)).toBe(true);
  }
  const lines = r.stderr.split("\n");
  for (const line of e.stderr ?? []) expect(lines, r.stderr).toContain(line);
  if (e.code === 0) expect(r.stderr, r.stderr).not.toMatch(/^tau: /m);
  expect(r.code, r.stderr).toBe(e.code);
  const journal = agentJournal(w.home);
  const finished = journal.find((x) => x.name === "provider.response_finished")?.data;
  if (e.finished) expect(finished).toMatchObject(e.finished);
  // The server's own finish reason is kept as it sent it: where the case names none, the normalised one is that word.
  if (e.finished && !("server_finish_reason" in e.finished) && finished) expect(finished.server_finish_reason).toBe(finished.finish_reason);
  if (e.reasoning) {
    expect(String(finished?.reasoning)).toHaveLength(e.reasoning.length);
    expect(String(finished?.reasoning).startsWith(e.reasoning.startsWith)).toBe(true);
  } else if (finished) {
    expect(finished).not.toHaveProperty("reasoning");
  }
  if (e.failed) expect(journal.find((x) => x.name === "provider.response_failed")?.data).toMatchObject(e.failed);
  else expect(journal.some((x) => x.name === "provider.response_failed")).toBe(false);
  // A tool round is answered in the next request, whatever its tool's outcome.
  if (c.then) {
    const next = fake.chatRequests[before + 1]!.body as { messages: Array<{ role: string; tool_call_id?: string }> };
    const calls = (finished?.tool_calls as Array<{ call_id: string }>).map((x) => x.call_id);
    expect(next.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(calls);
  }
  expect(journal.at(-1)).toMatchObject({ name: "agent.outer_turn_finished", data: { outcome: e.failed ? "failed" : "completed" } });
}

/** The cases a GATE id names, each checked in turn. */
async function checkAll(id: string): Promise<void> {
  const cases = CASES.filter((c) => c.id === id);
  expect(cases.length).toBeGreaterThan(0);
  for (const c of cases) await check(c);
}

const RECORDED = CASES.filter((c) => c.id === undefined);

describe("recorded streams through tau run", () => {
  it.each(RECORDED)("[run.openai.recorded-streams] $fixture", check);

  it("[run.openai.refusal-shown] a refusal (delta.refusal) is printed and kept as the answer", () => checkAll("run.openai.refusal-shown"));

  it("[run.openai.incomplete-answer-notice] an answer cut short by length or a content filter is printed, with a one-line notice and the cut-short exit status", () =>
    checkAll("run.openai.incomplete-answer-notice"));

  it("[run.openai.content-parts] content streamed as lists of parts (Mistral magistral) keeps its text and its thinking", () => checkAll("run.openai.content-parts"));

  it("[run.openai.clean-end-without-finish] a whole answer that ends without any finish_reason is accepted", () => checkAll("run.openai.clean-end-without-finish"));

  it("[run.openai.stream-error-codes] in-stream errors (Groq's error event, llama.cpp's error line) keep their code and type", () => checkAll("run.openai.stream-error-codes"));

  it("[run.openai.error-after-text-newline] an error after streamed text is reported on a line of its own", () => checkAll("run.openai.error-after-text-newline"));

  it("[provider.stream.think-tags] reasoning inline as <think>…</think> (Ollama serving an R1 distill) is kept as reasoning, the answer alone printed", () => checkAll("provider.stream.think-tags"));

  it("[run.openai.reasoning-details] reasoning sent only as reasoning_details text entries (Snowflake Cortex) is kept as reasoning", () => checkAll("run.openai.reasoning-details"));

  it("[run.openai.llamacpp-timings-usage] llama.cpp's token counts in timings, with no usage object, are the answer's usage", () => checkAll("run.openai.llamacpp-timings-usage"));

  it("[run.openai.tool-calls-finish-stop] tool calls that end with finish_reason stop (Gemini) run", () => checkAll("run.openai.tool-calls-finish-stop"));
});

describe("reasoning sent back", () => {
  type Sent = { messages: Array<Record<string, unknown>> };

  it("[provider.request.thought-signature] Gemini's thought signature on a tool call is kept in the journal and sent back with the call in the next request", async () => {
    const w = workspaceIn(cleanups, "model: gemini-3-pro-preview\n");
    const env = { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-recorded", OPENAI_MODEL: "gemini-3-pro-preview" };
    fake.enqueue(replay("synthetic/gemini-thought-signature.sse"), textResponse("listed"));
    const r = await runTau(["run", "-p", "what is here?"], { env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    const signature = "CiQB0e2Kb8mE3Nq6hVd1wQ2v0Zx7Yr9PpL4sT1uK8eJfN5cA2xHbGkSd+Qo=";
    const [first] = agentJournal(w.home).filter((x) => x.name === "provider.response_finished").map((x) => x.data);
    expect(first?.tool_calls).toEqual([{ call_id: "function-call-5581234409817733001", tool: "ls", arguments_json: '{"path":"."}', thought_signature: signature }]);
    const assistant = (fake.chatRequests[1]!.body as Sent).messages.filter((m) => m.role === "assistant");
    expect(assistant).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "function-call-5581234409817733001", type: "function", function: { name: "ls", arguments: '{"path":"."}' }, extra_content: { google: { thought_signature: signature } } }],
      },
    ]);
  });

  it("[run.openai.deepseek-reasoning-replay] DeepSeek's thinking mode: the request after a tool round carries the round's reasoning_content, from the journal's transcript", async () => {
    const w = workspaceIn(cleanups, "model: deepseek-reasoner\n");
    const env = { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-recorded", OPENAI_MODEL: "deepseek-reasoner" };
    fake.enqueue(replay("recorded/deepseek-reasoner-tool-call.sse"), replay("recorded/deepseek-reasoner-text.sse"));
    const r = await runTau(["run", "-p", "weather in San Francisco?"], { env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("Hello there! 😊 How can I help you today?\n");
    const [first, second] = agentJournal(w.home).filter((x) => x.name === "provider.response_finished").map((x) => x.data);
    expect(String(first?.reasoning)).toMatch(/^The user is asking for the weather in San Francisco\./);
    expect(second?.reasoning).toHaveLength(882);
    expect(fake.chatRequests).toHaveLength(2);
    const assistant = (fake.chatRequests[1]!.body as Sent).messages.filter((m) => m.role === "assistant");
    expect(assistant).toEqual([
      {
        role: "assistant",
        content: null,
        reasoning_content: first?.reasoning,
        tool_calls: [{ id: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", type: "function", function: { name: "weather", arguments: '{"location": "San Francisco"}' } }],
      },
    ]);
    // The first request had no assistant message to carry it.
    expect((fake.chatRequests[0]!.body as Sent).messages.map((m) => m.role)).toEqual(["system", "user"]);
  });

  it("[run.openai.reasoning-replay-setting] a provider profile's reasoning_replay reaches the provider: `reasoning` sends the kept reasoning as `reasoning`", async () => {
    const yaml = `providers:\n  local:\n    base_url: ${fake.baseUrl}\n    models: [fake-model]\n    reasoning_replay: reasoning\nmodel: local/fake-model\n`;
    const w = workspaceIn(cleanups, yaml);
    fake.enqueue(replay("recorded/xai-grok-tool-call.sse"), textResponse("done"));
    const r = await runTau(["run", "-p", "weather?"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    const assistant = (fake.chatRequests[1]!.body as Sent).messages.find((m) => m.role === "assistant");
    expect(assistant).toMatchObject({ reasoning: "First, the user is", content: null });
    expect(assistant).not.toHaveProperty("reasoning_content");
  });
});
