// How a `tau run` ends (SPEC-cli-manners, "How a run ends"): every end has its own exit status and
// message, and `--json` begins with the run's `agent.started` and ends with one closing line that
// says how the run ended, every line valid against the run stream's schema (spec/run-stream.tsp).
// The real `tau` binary, its daemon and extensions against the loopback model server.
import type { ChildProcess } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EXIT_CODES, exitCodeOf, type TauErrorCode } from "../../../handwritten/cli/errors.js";
import { eventProblem } from "../../../handwritten/protocol/index.js";
import { listSessions } from "../../../handwritten/transport/index.js";
import { validateRunStreamLine } from "../../../generated/validators.js";
import { processesOf, waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { errorResponse, textResponse, toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { runTau, type TauRun } from "../../support/run-tau.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

/** One line of `tau run --json`, as the schema declares it. */
interface StreamLine {
  seq?: number;
  at_us: number;
  event: string;
  by?: string;
  data: Record<string, unknown>;
  replay?: true;
}

/** A workspace whose runs use the loopback server's `fake-model`. */
function workspace(harnessYaml?: string): Workspace {
  const w = workspaceIn(cleanups, harnessYaml);
  return { ...w, env: { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-ends", OPENAI_MODEL: "fake-model" } };
}

/**
 * The lines of a `--json` run, each checked against the run stream's schema, and each event line's
 * data against its event's schema; the stream ends with exactly one closing line.
 */
function stream(r: TauRun): StreamLine[] {
  expect(r.stdout.endsWith("\n"), r.stdout.slice(-200)).toBe(true);
  const lines = r.stdout
    .slice(0, -1)
    .split("\n")
    .map((text) => JSON.parse(text) as StreamLine);
  for (const line of lines) {
    expect(validateRunStreamLine(line), `${JSON.stringify(line).slice(0, 300)}: ${JSON.stringify(validateRunStreamLine.errors)}`).toBe(true);
    if (line.event !== "run.ended") expect(eventProblem({ name: line.event, data: line.data })?.message, line.event).toBeUndefined();
  }
  expect(lines.filter((l) => l.event === "run.ended")).toHaveLength(1);
  expect(lines.at(-1)?.event).toBe("run.ended");
  return lines;
}

/** The closing line's data. */
function endOf(lines: StreamLine[]): Record<string, unknown> {
  return (lines.at(-1) as StreamLine).data;
}

/** What a run that ends with `code` exits with, prints on stderr and says in its closing line. */
function expectEnd(r: TauRun, status: string, code: TauErrorCode, message: RegExp): void {
  expect(r.code, r.stderr).toBe(exitCodeOf(code));
  expect(r.stderr).toMatch(new RegExp(`^tau: .*\\[${code}\\]\\n$`, "m"));
  expect(r.stderr).toMatch(message);
  const end = endOf(stream(r));
  expect(end).toMatchObject({ status, exit_code: exitCodeOf(code), code, format_version: 1 });
  expect(String(end.message)).toMatch(message);
}

/** A tool call whose command marks that it runs, then runs until it is stopped. */
function longToolCall(w: Workspace): { marker: string; response: ReturnType<typeof toolCallResponse> } {
  const marker = join(w.project, "tool-running");
  return { marker, response: toolCallResponse([{ id: "call_long", name: "shell", arguments: JSON.stringify({ command: `touch ${marker} && sleep 60` }) }]) };
}

/** Stops whatever of this workspace is left (the tool's `sleep` outlives a killed daemon). */
function stopLeftovers(home: string): void {
  for (const pid of processesOf(home)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

describe("how a tau run ends", () => {
  it("[run.end.daemon-lost] a daemon killed while a tool runs ends the run non-zero, says so on stderr and in the closing line", async () => {
    for (const json of [true, false]) {
      const w = workspace();
      cleanups.push(() => stopLeftovers(w.home));
      const long = longToolCall(w);
      fake.enqueue(long.response);
      const run = runTau(["run", "--no-sandbox", ...(json ? ["--json"] : []), "-p", "run the long job"], { env: w.env, cwd: w.project });
      await waitFor(() => existsSync(long.marker), "the tool to run", 30_000);
      const [row] = (await listSessions(join(w.home, "runtime"))).rows;
      expect(row).toBeDefined();
      process.kill(row!.pid, "SIGKILL");
      const r = await run;
      expect(r.code, r.stderr).toBe(EXIT_CODES.daemon_lost);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(`tau: the session's daemon (pid ${row!.pid}) is gone`);
      expect(r.stderr).toMatch(/\[TAU-E0409\]\n$/);
      if (!json) continue;
      const lines = stream(r);
      expect(lines.map((l) => l.event)).toContain("tool.started");
      expect(endOf(lines)).toMatchObject({ status: "daemon_lost", exit_code: EXIT_CODES.daemon_lost, code: "TAU-E0409", agent_id: lines[0]?.data.agent_id });
    }
  });

  it("[run.end.cancelled] an interrupt while a tool runs cancels the prompt: exit 130, the cancel in stderr and the closing line", async () => {
    const w = workspace();
    cleanups.push(() => stopLeftovers(w.home));
    const long = longToolCall(w);
    fake.enqueue(long.response);
    let child!: ChildProcess;
    const run = runTau(["run", "--no-sandbox", "--json", "-p", "run the long job"], { env: w.env, cwd: w.project, onSpawn: (c) => (child = c) });
    await waitFor(() => existsSync(long.marker), "the tool to run", 30_000);
    child.kill("SIGINT");
    const r = await run;
    expect(r.code).toBe(130);
    expectEnd(r, "cancelled", "TAU-E0501", /the prompt was cancelled/);
    const lines = stream(r);
    const events = lines.map((l) => l.event);
    expect(events).toContain("agent.prompt_cancelled");
    expect(lines.find((l) => l.event === "agent.outer_turn_finished")).toMatchObject({ data: { outcome: "cancelled" } });
    // The cancelled command's end is in the stream too (it reports after the turn ended), before
    // the closing line: every started call has its outcome.
    const started = lines.filter((l) => l.event === "tool.started").map((l) => l.data.call_id);
    expect(started.length).toBeGreaterThan(0);
    for (const id of started) expect(lines.find((l) => l.event === "tool.result" && l.data.call_id === id), String(id)).toMatchObject({ data: { outcome: "cancelled" } });
    expect(events.indexOf("tool.result")).toBeLessThan(lines.length - 1);
  });

  // Each end the loopback server can bring about, in both output modes: its status, its code and its words.
  const SCRIPTED: Array<{ status: string; code?: TauErrorCode; exit: number; message: RegExp; set: (w: Workspace) => Workspace }> = [
    { status: "completed", exit: 0, message: /^the prompt completed$/, set: (w) => (fake.enqueue(textResponse("all done")), w) },
    {
      status: "failed",
      code: "TAU-E0301",
      exit: 1,
      message: /the prompt failed: authentication/,
      set: (w) => (fake.enqueue(errorResponse(401, { code: "invalid_api_key", message: "bad key" })), w),
    },
    {
      status: "refused",
      code: "TAU-E0309",
      exit: 4,
      message: /the prompt was refused: unknown model "no-such-model"/,
      set: (w) => {
        fake.setModels(["fake-model"]);
        return { ...w, env: { ...w.env, OPENAI_MODEL: undefined } };
      },
    },
    {
      status: "unreachable",
      code: "TAU-E0408",
      exit: 5,
      // The endpoint is named (a wrong or closed one is the usual cause).
      message: /the provider could not be reached: network: connection failed \(ECONNREFUSED\) at http:\/\/127\.0\.0\.1:9\/v1\/chat\/completions \(after \d+ attempts\)/,
      set: (w) => ({ ...w, env: { ...w.env, OPENAI_BASE_URL: "http://127.0.0.1:9/v1" } }),
    },
    {
      status: "cut_short",
      code: "TAU-E0304",
      exit: 6,
      message: /the answer is incomplete: it reached the model's output limit/,
      set: (w) => (fake.enqueue(textResponse("half an ans", { finishReason: "length" })), w),
    },
  ];

  it.each(SCRIPTED)("[run.end.each-status] $status: exit $exit, its message on stderr and in the closing line", async ({ status, code, exit, message, set }) => {
    for (const json of [true, false]) {
      const w = set(workspace(status === "refused" ? "model: no-such-model\n" : undefined));
      const r = await runTau(["run", ...(json ? ["--json"] : []), "-p", "hello"], { env: w.env, cwd: w.project });
      expect(r.code, r.stderr).toBe(exit);
      if (code !== undefined) expect(exitCodeOf(code)).toBe(exit);
      if (!json) {
        if (code === undefined) expect(r.stderr).toBe("");
        else expect(r.stderr).toMatch(new RegExp(`^tau: .*\\[${code}\\]$`, "m"));
        if (code !== undefined) expect(r.stderr).toMatch(message);
        continue;
      }
      if (code !== undefined && status !== "cut_short") expectEnd(r, status, code, message);
      const lines = stream(r);
      expect(lines[0]?.event).toBe("agent.started");
      expect(endOf(lines)).toMatchObject({ status, exit_code: exit, format_version: 1, agent_id: lines[0]?.data.agent_id, ...(code ? { code } : {}) });
      expect(String(endOf(lines).message)).toMatch(message);
    }
  });
});

describe("tau run --json", () => {
  it("[run.json.starts-with-agent-started] begins with the run's agent.started in every one of 20 fresh runs, and every line is the run's agent's", async () => {
    const w = workspace();
    for (let i = 0; i < 20; i++) {
      fake.enqueue(textResponse(`answer ${i}`));
      const r = await runTau(["run", "--json", "-p", `question ${i}`], { env: w.env, cwd: w.project });
      expect(r.code, r.stderr).toBe(0);
      const lines = stream(r);
      expect(lines[0], `run ${i}`).toMatchObject({ event: "agent.started", by: "harness", data: { creator: "ui" } });
      expect(lines[0]?.replay).toBeUndefined();
      const agent = lines[0]?.data.agent_id;
      for (const line of lines.slice(0, -1)) expect(line.data.agent_id, line.event).toBe(agent);
      expect(endOf(lines)).toMatchObject({ status: "completed", exit_code: 0, agent_id: agent });
    }
  }, 240_000);

  it("[run.json.schema] every line of a run with a tool call validates against the run stream's schema, which refuses a malformed line", async () => {
    const w = workspace();
    fake.enqueue(toolCallResponse([{ id: "call_ls", name: "ls", arguments: '{"path":"."}' }]), textResponse("one file"));
    const r = await runTau(["run", "--json", "-p", "what is here?"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    const lines = stream(r);
    const names = lines.map((l) => l.event);
    for (const name of ["agent.started", "agent.prompt_submitted", "tool.result", "provider.response_finished", "agent.outer_turn_finished"]) expect(names).toContain(name);
    for (const line of lines.slice(0, -1)) expect(line).toMatchObject({ seq: expect.any(Number), at_us: expect.any(Number), by: expect.any(String) });
    // The schema is not a formality: the old line shape, a stray field and a closing line without its status fail it.
    const [first] = lines as [StreamLine];
    expect(validateRunStreamLine({ seq: first.seq, name: first.event, data: first.data })).toBe(false);
    expect(validateRunStreamLine({ ...first, extra: 1 })).toBe(false);
    const end = lines.at(-1) as StreamLine;
    expect(validateRunStreamLine({ ...end, data: { ...end.data, status: "fine" } })).toBe(false);
  });

  it("[run.json.refused-early] a run refused before it has an agent writes only the closing line; a command line whose flags cannot be read writes nothing on stdout", async () => {
    const w = workspace();
    const colon = await runTau(["run", "--json", ":model x"], { env: w.env, cwd: w.project });
    expect(colon.code).toBe(exitCodeOf("TAU-E0103"));
    const refused = stream(colon);
    expect(refused).toHaveLength(1);
    expect(endOf(refused)).toMatchObject({ status: "usage", exit_code: exitCodeOf("TAU-E0103"), code: "TAU-E0103" });
    expect(endOf(refused).agent_id).toBeUndefined();
    // A configuration mistake the daemon stops on.
    writeFileSync(join(w.home, "config", "harness.yaml"), "model: [unclosed\n");
    const config = await runTau(["run", "--json", "-p", "hi"], { env: w.env, cwd: w.project });
    expect(config.code, config.stderr).toBe(exitCodeOf("TAU-E0201"));
    expect(stream(config).map((l) => l.event)).toEqual(["run.ended"]);
    expect(endOf(stream(config))).toMatchObject({ status: "config", code: "TAU-E0201" });
    const unreadable = await runTau(["run", "--json", "--bogus", "-p", "hi"], { env: w.env, cwd: w.project });
    expect(unreadable.code).toBe(exitCodeOf("TAU-E0101"));
    expect(unreadable.stdout).toBe("");
  });

  it("[run.json.continued-agent-started] a run that continues a saved session begins with its agent's agent.started, replayed", async () => {
    const w = workspace();
    fake.enqueue(textResponse("first"), textResponse("second"));
    const first = await runTau(["run", "--json", "-p", "one"], { env: w.env, cwd: w.project });
    expect(first.code, first.stderr).toBe(0);
    const started = stream(first)[0] as StreamLine;
    const second = await runTau(["run", "--continue", "--json", "-p", "two"], { env: w.env, cwd: w.project });
    expect(second.code, second.stderr).toBe(0);
    const lines = stream(second);
    expect(lines[0]).toEqual({ ...started, replay: true, seq: 0 });
    expect(endOf(lines)).toMatchObject({ status: "completed", agent_id: started.data.agent_id });
  });
});
