// A tool call the daemon's end cut (issue 33): a call running when the daemon was SIGKILLed — or
// cancelled, with the cancel recorded but its outcome not yet reported — stayed `running` on every
// resume forever, with no outcome in the journal. Now a resume records exactly one error for it
// (once, however often the session is resumed), never runs it again, and the session goes on.
// The cut is exact: the shell extension is stopped (SIGSTOP) before the cancel, so its outcome can
// never land before the SIGKILL; without a cancel, the call's `sleep` outlives the daemon.
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient, isAlive, startDaemon, waitFor, type StartedDaemon } from "../../support/daemon.js";
import { killTree, processTree, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse } from "../../support/fake-openai.js";
import { replayJournal, validateJournalRecord, type JournalRecord } from "../../../handwritten/store/index.js";
import { CUT_CALL_ERROR } from "../../../handwritten/harness/restore-calls.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(): { env: NodeJS.ProcessEnv; home: string; project: string } {
  const yaml = JSON.stringify({
    model: "fake-model",
    extensions: [
      { name: "provider", kind: "provider", command: ["tau", "ext", "provider"], config: { profile: "chat_completions", base_url: fake.baseUrl, models: [{ id: "fake-model" }] }, startup_timeout_seconds: 30 },
      { name: "shell", kind: "tool", require: true, command: ["tau", "ext", "shell"], startup_timeout_seconds: 30 },
    ],
  });
  return workspaceIn(cleanups, yaml);
}

function kill(d: StartedDaemon): void {
  killTree(d.pid);
}

const ARGS = ["--harness-config", "sandbox.enabled=false"];

async function daemon(env: NodeJS.ProcessEnv, args: string[]): Promise<StartedDaemon> {
  const d = await startDaemon(env, [...args, ...ARGS]);
  cleanups.push(() => kill(d));
  return d;
}

async function attach(d: StartedDaemon): Promise<TestClient> {
  const c = await TestClient.ui(d.socket, d.session_id);
  cleanups.push(() => c.close());
  c.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: ["*"] } });
  // Current state: replayed to a late subscriber, or live once the provider is up.
  await c.next((m) => m.message === "deliver" && m.payload.event.name === "harness.models_available" && (m.payload.event.data.models as unknown[]).length > 0, 60_000);
  return c;
}

/** A live (not replayed) delivery. */
function delivered(c: TestClient, name: string, pred: (d: Record<string, unknown>) => boolean = () => true): Promise<Record<string, unknown>> {
  return c
    .next((m) => m.message === "deliver" && m.payload.replay !== true && m.payload.event.name === name && pred(m.payload.event.data), 60_000, name)
    .then((m) => (m.message === "deliver" ? m.payload.event.data : {}));
}

const journal = (home: string, agentId: string): JournalRecord[] => replayJournal<JournalRecord>(join(home, "state", "agents", agentId, "events.cbor"), { validate: validateJournalRecord }).records;
const outcomesOf = (home: string, agentId: string, callId: string, names: string[]) =>
  journal(home, agentId).filter((r) => names.includes(r.event.name) && r.event.data.call_id === callId);

/** Stops the SIGKILLed daemon's whole tree, and resumes the session in a new one. */
async function crashAndResume(d: StartedDaemon, env: NodeJS.ProcessEnv, project: string): Promise<StartedDaemon> {
  kill(d);
  await waitFor(() => !isAlive(d.pid), "the daemon gone", 10_000);
  return daemon(env, ["--resume", d.session_id, "--project-root", project]);
}

async function cutCall(cancelFirst: boolean): Promise<void> {
  const { env, home, project } = workspace();
  const ran = join(project, "ran.txt");
  let rounds = 0;
  fake.respondWith(() => (++rounds === 1 ? toolCallResponse([{ id: "call_slow", name: "shell", arguments: JSON.stringify({ command: `echo ran >> ${ran}; sleep 300` }) }]) : textResponse("done")));
  const d = await daemon(env, ["--project-root", project]);
  const c = await attach(d);
  c.emit("ui.create_agent", { request_id: "r-agent" });
  const created = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === "r-agent");
  if (created.message !== "direct") throw new Error("no agent");
  const agent = String(created.payload.event.data.agent_id);
  c.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text: "run the slow thing" });
  await delivered(c, "tool.started", (x) => x.call_id === "call_slow");
  await waitFor(() => existsSync(ran), "the command running", 30_000);

  if (cancelFirst) {
    // The shell extension can no longer answer: the cancel is recorded, the call's outcome is not.
    const shell = processTree(d.pid).find((pid) => /\bext shell\b/.test(readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")));
    if (shell === undefined) throw new Error("no shell extension");
    process.kill(shell, "SIGSTOP");
    c.emit("agent.cancel_request", { agent_id: agent });
    await delivered(c, "agent.outer_turn_finished", (x) => x.agent_id === agent && x.outcome === "cancelled");
  }
  c.close();
  const ends = ["provider.tool_result", "provider.tool_error", "tool.result_display"];
  let next = await crashAndResume(d, env, project);
  // Before the fix nothing ended the call; now the resume recorded one error and its display.
  const first = outcomesOf(home, agent, "call_slow", ends);
  expect(first.map((r) => [r.event.name, r.event.data.error ?? r.event.data.outcome])).toEqual([
    ["provider.tool_error", CUT_CALL_ERROR],
    ["tool.result_display", "error"],
  ]);
  const closed = journal(home, agent).filter((r) => r.event.name === "agent.outer_turn_finished").map((r) => r.event.data.outcome);
  expect(closed).toEqual([cancelFirst ? "cancelled" : "dispatch_uncertain"]);

  // The session goes on: a next prompt completes, and the model is told the call's outcome.
  const c2 = await attach(next);
  c2.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text: "and now?" });
  await delivered(c2, "agent.outer_turn_finished", (x) => x.agent_id === agent && x.outcome === "completed");
  const told = JSON.stringify((fake.chatRequests.at(-1)?.body as { messages: unknown[] }).messages);
  expect(told).toContain(CUT_CALL_ERROR);
  c2.close();

  // Resumed again: still one outcome, and the command never ran a second time.
  next = await crashAndResume(next, env, project);
  expect(outcomesOf(home, agent, "call_slow", ends)).toEqual(first);
  expect(readFileSync(ran, "utf8")).toBe("ran\n");
  kill(next);
}

describe("a call the daemon's end cut (issue 33)", () => {
  it("[soak.repro.cut-call-after-cancel] a call cancelled but cut before its outcome ends with one recorded error on resume, once, and is never run again", async () => {
    await cutCall(true);
  }, 180_000);

  it("[soak.repro.cut-call-running] a call running when the daemon was SIGKILLed ends with one recorded error on resume, once, and is never run again", async () => {
    await cutCall(false);
  }, 180_000);
});
