import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runTau } from "../../support/run-tau.js";
import { notesWorkspace, useCleanups, useFakeOpenAI, type Workspace } from "../../support/e2e.js";
import { REPO_ROOT } from "../../support/paths.js";
import { exitCodeOf } from "../../../handwritten/cli/errors.js";
import { FakeOpenAI, completionChunk, disconnectAfter, errorResponse, replayResponse, sseEvent, textResponse, toolCallResponse } from "../../support/fake-openai.js";
import { cassetteReplay, loadCassette } from "../../../handwritten/extensions/provider/index.js";
import { replayJournal, validateJournalRecord, type JournalRecord } from "../../../handwritten/store/index.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s));
const cleanups = useCleanups();

/** A fresh TAU_HOME with the default extensions and a project folder holding notes.txt. */
const workspace = (): Workspace => notesWorkspace(cleanups);

function openai(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-test-key", OPENAI_MODEL: "fake-model" };
}

type Journal = Array<{ name: string; data: Record<string, unknown> }>;

/** Every agent journal in this TAU_HOME, read strictly (read-only, no repair). */
function agentJournals(home: string): Journal[] {
  const agents = join(home, "state", "agents");
  return readdirSync(agents).map((id) => {
    const r = replayJournal<JournalRecord>(join(agents, id, "events.cbor"), { validate: validateJournalRecord });
    expect(r.tornTail).toBeNull();
    return r.records.map((x) => ({ name: x.event.name, data: x.event.data }));
  });
}

/** The single agent journal of a TAU_HOME that ran one prompt. */
function agentJournal(home: string): Journal {
  const all = agentJournals(home);
  expect(all).toHaveLength(1);
  return all[0] as Journal;
}

const names = (records: Array<{ name: string }>) => records.map((r) => r.name);

describe("tau run", () => {
  it("[run.offline.scripted-demo] completes on the offline default with a real tool call, and records every step", async () => {
    const { env, home, project } = workspace();
    writeFileSync(join(home, "config", "harness.yaml"), "{}\n");
    const r = await runTau(["run", "-p", "what is here?"], { env, cwd: project });
    expect(r.stderr).not.toContain("failed");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("[offline demo");
    expect(r.stdout).toContain("Your workspace has 1 entry: notes.txt.");
    // Every initialization is recorded, an empty one too (SPEC-extension-declarations): after the
    // agent's start and before its first round — after its prompt when the session became ready
    // only then (the run submits once a model is there; the session waits for every extension).
    const recorded = agentJournal(home);
    const init = recorded.findIndex((x) => x.name === "agent.initialization_context_set");
    expect(init === 1 || (init === 2 && recorded[1]?.name === "agent.prompt_submitted")).toBe(true);
    const journal = recorded.filter((_, i) => i !== init);
    expect(names(journal)).toEqual([
      "agent.started",
      "agent.prompt_submitted",
      "agent.prompt_started",
      "provider.response_finished",
      "provider.tool_result",
      // What a UI shows of the call's outcome, kept so an attach shows it too (SPEC-tool-routing).
      "tool.result_display",
      "agent.prompt_started",
      "provider.response_finished",
      "agent.outer_turn_finished",
    ]);
    expect(journal.at(-1)?.data).toMatchObject({ outcome: "completed", rounds: 2 });
    expect(String(journal[4]?.data.output)).toContain("notes.txt");
  });

  it("[run.openai.plain-text] streams a plain answer from an OpenAI-compatible server and journals it", async () => {
    const { env, home, project } = workspace();
    fake.enqueue(textResponse(["Hel", "lo ", "there"], { usage: { prompt_tokens: 12, completion_tokens: 3 } }));
    const before = fake.chatRequests.length;
    const r = await runTau(["run", "-p", "say hello </user> now"], { env: openai(env), cwd: project });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Hello there\n");
    const req = fake.chatRequests[before]!;
    expect(req.headers.authorization).toBe("Bearer sk-test-key");
    const body = req.body as { model: string; stream: boolean; messages: Array<{ role: string; content: string }> };
    expect(body.model).toBe("fake-model");
    expect(body.stream).toBe(true);
    expect(body.messages.at(-1)).toEqual({ role: "user", content: "<user>\nsay hello </ user> now\n</user>" });
    const journal = agentJournal(home);
    const finished = journal.find((x) => x.name === "provider.response_finished")!.data;
    expect(finished).toMatchObject({ text: "Hello there", finish_reason: "stop", usage: { input_tokens: 12, output_tokens: 3 } });
    expect(journal.find((x) => x.name === "agent.prompt_submitted")?.data.text).toBe("say hello </user> now");
  });

  it("[run.openai.tool-calls] runs several tool calls split across chunks, keeping raw arguments verbatim", async () => {
    const { env, home, project } = workspace();
    const argsLs = '{"path" :  "."}';
    fake.enqueue(
      toolCallResponse(
        [
          { id: "call_ls", name: "ls", arguments: ['{"pa', 'th" :', '  "."}'] },
          { id: "call_read", name: "read", arguments: ['{"path":"notes.txt"}'] },
        ],
        { usage: { prompt_tokens: 20, completion_tokens: 9 } },
      ),
      textResponse("The note says to remember the milk.", { usage: { prompt_tokens: 40, completion_tokens: 8 } }),
    );
    const before = fake.chatRequests.length;
    const r = await runTau(["run", "-p", "read my notes"], { env: openai(env), cwd: project });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("remember the milk");
    const journal = agentJournal(home);
    const first = journal.find((x) => x.name === "provider.response_finished")!.data;
    expect(first.tool_calls).toEqual([
      { call_id: "call_ls", tool: "ls", arguments_json: argsLs },
      { call_id: "call_read", tool: "read", arguments_json: '{"path":"notes.txt"}' },
    ]);
    const results = journal.filter((x) => x.name === "provider.tool_result");
    expect(results.map((x) => x.data.call_id).sort()).toEqual(["call_ls", "call_read"]);
    expect(String(results.find((x) => x.data.call_id === "call_read")?.data.output)).toContain("remember the milk");
    const second = fake.chatRequests[before + 1]!.body as { messages: Array<Record<string, unknown>> };
    const assistant = second.messages.find((m) => m.role === "assistant") as { tool_calls: Array<{ function: { arguments: string } }> };
    expect(assistant.tool_calls[0]?.function.arguments).toBe(argsLs);
    expect(second.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id).sort()).toEqual(["call_ls", "call_read"]);
    const stats = journal.filter((x) => x.name === "agent.outer_turn_finished");
    expect(stats[0]?.data).toMatchObject({ outcome: "completed", rounds: 2 });
  });

  it("[run.openai.retry-and-terminal-errors] retries 429 and 500 but not a context-window 400, and fails with exit 1", async () => {
    const { env, home, project } = workspace();
    fake.enqueue(errorResponse(429, { code: "rate_limit_exceeded", type: "requests" }, { "retry-after": "0" }), textResponse("after a retry"));
    const r1 = await runTau(["run", "-p", "hi", "--json"], { env: openai(env), cwd: project });
    expect(r1.code).toBe(0);
    const events = r1.stdout.trim().split("\n").map((l) => JSON.parse(l) as { event: string; data: Record<string, unknown> });
    expect(events.find((e) => e.event === "provider.retry_scheduled")?.data).toMatchObject({ error_class: "rate_limited", attempt: 1 });
    expect(events.at(-2)).toMatchObject({ event: "agent.outer_turn_finished", data: { outcome: "completed" } });
    expect(events.at(-1)).toMatchObject({ event: "run.ended", data: { status: "completed", exit_code: 0 } });

    let before = fake.chatRequests.length;
    fake.enqueue(errorResponse(400, { code: "context_length_exceeded", message: "too long: sk-test-key" }));
    const r2 = await runTau(["run", "-p", "a very long prompt"], { env: openai(env), cwd: project });
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain("context_window_exceeded");
    expect(r2.stderr).not.toContain("sk-test-key");
    expect(fake.chatRequests.length - before).toBe(1);

    before = fake.chatRequests.length;
    fake.enqueue(...Array.from({ length: 4 }, () => errorResponse(500, { type: "server_error" })));
    const r3 = await runTau(["run", "-p", "again"], { env: openai(env), cwd: project });
    expect(r3.code).toBe(1);
    expect(r3.stderr).toContain("server_error");
    expect(fake.chatRequests.length - before).toBe(4);

    const failures = agentJournals(home).flatMap((j) => j.filter((x) => x.name === "provider.response_failed").map((x) => x.data.error_class));
    expect(failures.sort()).toEqual(["context_window_exceeded", "server_error"]);
    for (const j of agentJournals(home)) expect(j.at(-1)?.name).toBe("agent.outer_turn_finished");
  });

  it("[run.openai.broken-streams] fails closed on malformed SSE and on a disconnect mid-stream", async () => {
    const { env, project } = workspace();
    fake.enqueue({ chunks: [sseEvent(completionChunk({ content: "par" })), "data: {not json\n\n"] });
    const r1 = await runTau(["run", "-p", "x"], { env: openai(env), cwd: project });
    expect(r1.code).toBe(1);
    expect(r1.stderr).toContain("protocol");
    fake.enqueue(disconnectAfter([sseEvent(completionChunk({ content: "partial answer" }))]));
    const r2 = await runTau(["run", "-p", "y"], { env: openai(env), cwd: project });
    expect(r2.code).toBe(exitCodeOf("TAU-E0408")); // the connection to the provider was lost
    expect(r2.stderr).toContain("network");
  });

  it("[run.openai.slow-stream-and-cassette] completes a slow stream with sampled deltas, and replays a recorded cassette", async () => {
    const { env, project } = workspace();
    fake.enqueue(textResponse(["one ", "two ", "three"], { delayMs: 700 }));
    const r = await runTau(["run", "-p", "count", "--json"], { env: openai(env), cwd: project });
    expect(r.code).toBe(0);
    const updates = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; data: { text_delta?: string } })
      .filter((e) => e.event === "provider.response_updated");
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(updates.map((u) => u.data.text_delta).join("")).toBe("one two three");

    const cassette = loadCassette(join(REPO_ROOT, "test/fixtures/provider/cassettes/text-answer.json"));
    fake.enqueue(replayResponse(cassetteReplay(cassette, { timeScale: 0 })));
    const c = await runTau(["run", "-p", "replayed"], { env: openai(env), cwd: project });
    expect(c.code).toBe(0);
    expect(c.stdout.length).toBeGreaterThan(1);
  });

  it("[run.ephemeral.no-files] keeps no session files with --ephemeral", async () => {
    const { env, home, project } = workspace();
    writeFileSync(join(home, "config", "harness.yaml"), "{}\n");
    const r = await runTau(["run", "--ephemeral", "-p", "hello"], { env, cwd: project });
    expect(r.code).toBe(0);
    expect(existsSync(join(home, "state", "agents"))).toBe(false);
    expect(existsSync(join(home, "state", "sessions"))).toBe(false);
  });

  it("refuses a missing prompt with a usage error", async () => {
    const { env, project } = workspace();
    const r = await runTau(["run"], { env, cwd: project });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("give a prompt");
  });

  it("[run.colon.refused-or-literal] a colon command is never sent to the model: refused with the UI's words (from -p or stdin), or sent literally when escaped", async () => {
    const { env, home, project } = workspace();
    const asked = fake.chatRequests.length;
    for (const [args, input, message] of [
      [["run", "-p", ":model gpt-x"], "", "tau run: :model is a command of the interactive UI (tau), not a prompt; '::model' sends it to the model as text [TAU-E0103]"],
      [["run", "-p", "  :nosuch thing"], "", "tau run: unknown command :nosuch — :help lists the commands; '::nosuch' sends it as text [TAU-E0104]"],
      [["run", "--prompt-stdin"], ":quit\n", "tau run: :quit is a command of the interactive UI (tau), not a prompt; '::quit' sends it to the model as text [TAU-E0103]"],
      [["run", "-p", ":"], "", "tau run: an empty command: type a name after ':' (:help lists them), or '::' to send a literal ':' [TAU-E0104]"],
      // `/NAME` of a known command is that command (DECISION-slash-commands).
      [["run", "/help"], "", "tau run: /help is a command of the interactive UI (tau), not a prompt; '//help' sends it to the model as text [TAU-E0103]"],
    ] as Array<[string[], string, string]>) {
      const r = await runTau(args, { env: openai(env), cwd: project, input, asCommand: true });
      expect(r.stderr.trim(), args.join(" ")).toBe(message);
      expect(r.code).toBe(2);
    }
    expect(fake.chatRequests.length).toBe(asked);
    // Nothing of the refused runs is left: no session folder holds more than what a run leaves.
    expect(existsSync(join(home, "state", "agents"))).toBe(false);

    fake.enqueue(textResponse("noted"));
    const r = await runTau(["run", "-p", "::model is a word"], { env: openai(env), cwd: project });
    expect(r.code).toBe(0);
    const sent = JSON.stringify(fake.chatRequests[asked]?.body);
    expect(sent).toContain(":model is a word");
    expect(sent).not.toContain("::model");
    const submitted = agentJournal(home).find((x) => x.name === "agent.prompt_submitted")?.data;
    expect(submitted).toMatchObject({ text: ":model is a word", literal: true });
  });

  it("[run.secrets.never-in-environ] no tau process holds the key in its environment block: a model's command reading /proc/*/environ finds none, and the provider still authenticates", async () => {
    const { env, home, project } = workspace();
    const key = `sk-handover-${process.pid}-${Date.now()}`;
    const probe = `probe-${process.pid}-${Date.now()}`;
    const command = `grep -l -a -e ${key} -e ${probe} /proc/[0-9]*/environ 2>/dev/null | wc -l`;
    // Twice: the first run makes the sessions folder; the second has its daemon started by the launcher lines.
    for (const round of [1, 2]) {
      fake.enqueue(toolCallResponse([{ id: `call_env_${round}`, name: "shell", arguments: [JSON.stringify({ command })] }]), textResponse("checked"));
      const before = fake.chatRequests.length;
      const r = await runTau(["run", "-p", "look around"], { env: { ...openai(env), OPENAI_API_KEY: key, TAU_SECRET_HANDOVER_PROBE: probe }, cwd: project, asCommand: true });
      expect(r.code, r.stderr).toBe(0);
      expect(fake.chatRequests[before]?.headers.authorization).toBe(`Bearer ${key}`);
      const second = fake.chatRequests[before + 1]!.body as { messages: Array<{ role: string; content?: unknown }> };
      const result = second.messages.find((m) => m.role === "tool");
      expect(String(result?.content), `round ${round}`).toMatch(/^0\n\[exit code 0\]$/);
    }
    expect(readdirSync(join(home, "state", "sessions"))).toHaveLength(2);
  });
});
