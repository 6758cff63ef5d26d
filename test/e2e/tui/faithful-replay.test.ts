// What an attached or resumed UI shows equals what the live UI showed (GATE-faithful-replay): random
// sessions (answers, reasoning, tool calls that succeed, fail, edit with a diff or name no tool,
// retries, failed requests, answers cut short by the output limit or the content filter, and turns
// cancelled while the answer streams or while a tool runs) run through a real daemon with the real
// provider and shell extensions against a loopback model server. One client folds the session live
// from its start into the UI's transcript; a second attaches as `tau` does (a windowed replay) and
// folds the replay; after the daemon stops and the session resumes, a third does the same.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { isAlive, startDaemon } from "../../support/daemon.js";
import { waitFor } from "../../support/wait.js";
import { completionChunk, disconnectAfter, errorResponse, sseEvent, textResponse, toolCallResponse, type FakeOpenAI, type ScriptedResponse } from "../../support/fake-openai.js";
import { SessionClient, type Delivery } from "../../../handwritten/cli/session-client.js";
import { Transcript, type AgentView } from "../../../handwritten/cli/tui/transcript.js";
import { REPLAY_RECENT_RECORDS } from "../../../handwritten/cli/tui/app.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s));
const cleanups = useCleanups();

/** One tool call a scripted model makes. */
type Call = "echo" | "exit-code" | "read-missing" | "edit" | "no-such-tool";
/**
 * How a prompt's last round ends: an answer (with reasoning, after a retry, cut short by the output
 * limit or the content filter), a refused request, or the user's cancel while the answer streams
 * or while a slow shell call runs.
 */
type Ending = "answer" | "reasoned-answer" | "refused-request" | "retried-answer" | "length" | "content-filter" | "cancel-streaming" | "cancel-tool" | "failed-after-text";
const CANCELS: readonly Ending[] = ["cancel-streaming", "cancel-tool"];
interface PromptPlan {
  readonly rounds: readonly (readonly Call[])[];
  readonly ending: Ending;
}

const promptPlan: fc.Arbitrary<PromptPlan> = fc.record({
  rounds: fc.array(fc.array(fc.constantFrom<Call>("echo", "exit-code", "read-missing", "edit", "no-such-tool"), { minLength: 1, maxLength: 3 }), { maxLength: 2 }),
  ending: fc.constantFrom<Ending>("answer", "reasoned-answer", "refused-request", "retried-answer", "length", "content-filter", "cancel-streaming", "cancel-tool", "failed-after-text"),
});

let callSeq = 0;
function toolCall(call: Call): { id: string; name: string; arguments: string } {
  const id = `call_${++callSeq}`;
  switch (call) {
    case "echo":
      return { id, name: "shell", arguments: JSON.stringify({ command: `echo out-${callSeq}` }) };
    case "exit-code":
      return { id, name: "shell", arguments: JSON.stringify({ command: `echo err-${callSeq} >&2; exit 3` }) };
    case "read-missing":
      return { id, name: "read", arguments: JSON.stringify({ path: `missing-${callSeq}.txt` }) };
    case "edit":
      return { id, name: "edit", arguments: JSON.stringify({ path: "notes.txt", edits: [{ old_text: "line", new_text: `line ${callSeq}` }] }) };
    case "no-such-tool":
      return { id, name: "no_such_tool", arguments: "{}" };
  }
}

function responses(plan: PromptPlan, i: number): ScriptedResponse[] {
  const usage = { prompt_tokens: 100 + i, completion_tokens: 7 + i, total_tokens: 107 + 2 * i };
  const out = plan.rounds.map((calls) => toolCallResponse(calls.map(toolCall), { usage }));
  switch (plan.ending) {
    case "answer":
      out.push(textResponse(["answer ", `${i}`], { usage }));
      break;
    case "reasoned-answer":
      out.push(textResponse(`answer ${i}`, { usage, reasoning: ["thinking ", "hard"] }));
      break;
    case "refused-request":
      out.push(errorResponse(400, { message: `bad request ${i}` }));
      break;
    case "retried-answer":
      out.push(errorResponse(429, { message: "slow down" }, { "retry-after-ms": "1" }), textResponse(`answer ${i} after a retry`, { usage }));
      break;
    case "length":
      out.push(textResponse(["the first half ", `of answer ${i}`], { usage, finishReason: "length" }));
      break;
    case "content-filter":
      out.push(textResponse(`partly ${i}`, { usage, finishReason: "content_filter" }));
      break;
    case "cancel-streaming":
      // Part of an answer (and its reasoning), then nothing until the cancel closes the request.
      out.push({
        chunks: [
          sseEvent(completionChunk({ role: "assistant", content: "" })),
          sseEvent(completionChunk({ reasoning_content: `pondering ${i}` })),
          sseEvent(completionChunk({ content: `partial ${i}` })),
        ],
        end: "hang",
      });
      break;
    case "failed-after-text":
      // Part of an answer, then the connection drops: not retried once output streamed, the round fails.
      out.push(
        disconnectAfter([
          sseEvent(completionChunk({ role: "assistant", content: "" })),
          sseEvent(completionChunk({ reasoning_content: `musing ${i}` })),
          sseEvent(completionChunk({ content: `cut off ${i}` })),
        ]),
      );
      break;
    case "cancel-tool":
      // A shell call that runs until the cancel ends it.
      out.push(toolCallResponse([{ id: `call_${++callSeq}`, name: "shell", arguments: JSON.stringify({ command: `echo slow-${i}; sleep 60` }) }], { usage }));
      break;
  }
  return out;
}

/** Folds every delivery of a client into a transcript, as the interactive UI does. */
function folded(client: SessionClient): { transcript: Transcript; deliveries: Delivery[] } {
  const transcript = new Transcript();
  const deliveries: Delivery[] = [];
  client.onDeliver((d) => {
    deliveries.push(d);
    transcript.apply(d.event);
  });
  return { transcript, deliveries };
}

/** What a UI shows of an agent, as it is now. */
function shown(a: AgentView | undefined): AgentView | undefined {
  return structuredClone(a);
}

async function replayed(socket: string, sessionId: string, agentId: string): Promise<AgentView | undefined> {
  const client = await SessionClient.attach(socket, sessionId);
  try {
    const f = folded(client);
    client.subscribe(["*"], ["*"], REPLAY_RECENT_RECORDS);
    // The current state (snapshots: usage) comes before the replay's end.
    await waitFor(() => f.deliveries.some((d) => d.event.name === "session.replay_complete"), "the replay to complete");
    return shown(f.transcript.agents.get(agentId));
  } finally {
    client.close();
  }
}

describe("attach and resume replay what the live UI showed", () => {
  it("[tui.replay.faithful] the transcript folded from a replay equals the live one, over random sessions", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(promptPlan, { minLength: 1, maxLength: 3 }), async (plans) => {
        const w = workspaceIn(cleanups);
        writeFileSync(join(w.project, "notes.txt"), "first line\nsecond line\n");
        const env = { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "fake-model" };
        const d = await startDaemon(env, ["--project-root", w.project]);
        cleanups.push(() => {
          if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
        });
        const live = await SessionClient.attach(d.socket, d.session_id);
        const f = folded(live);
        live.subscribe(["*"], ["*"]);
        await waitFor(() => f.deliveries.some((x) => x.event.name === "harness.models_available" && x.event.data.models.length > 0), "a model");
        const agentId = (await live.request("ui.create_agent", {})).agent_id;
        for (const [i, plan] of plans.entries()) {
          fake.enqueue(...responses(plan, i));
          const slowCall = `call_${callSeq}`; // a cancel-tool plan's last call
          const before = f.deliveries.length;
          live.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: `prompt ${i}` });
          if (CANCELS.includes(plan.ending)) {
            // The user cancels once the live UI shows the partial answer, or the slow call running
            // (its started fact: its progress is transient, and a loaded machine may coalesce it).
            const shows = (x: Delivery) =>
              plan.ending === "cancel-streaming"
                ? x.event.name === "provider.response_updated" && (x.event.data.text_delta ?? "").includes(`partial ${i}`)
                : x.event.name === "tool.started" && x.event.data.call_id === slowCall;
            await waitFor(() => f.deliveries.slice(before).some(shows), `prompt ${i} to be under way`, { timeoutMs: 30_000 });
            live.emit("agent.cancel_request", { agent_id: agentId });
          }
          await waitFor(() => f.deliveries.slice(before).some((x) => x.event.name === "agent.outer_turn_finished"), `prompt ${i} to finish`, { timeoutMs: 30_000 });
        }
        // The usage of the last response reaches the live UI too.
        await waitFor(() => f.transcript.agents.get(agentId)?.busy === false, "the agent to be idle");
        // A cancelled call's row ends with its outcome, which may come after its turn ended.
        await waitFor(() => f.transcript.agents.get(agentId)?.items.every((it) => it.kind !== "tool" || it.done) === true, "every tool row to end");
        const liveView = shown(f.transcript.agents.get(agentId));
        live.close();
        // The property would pass on an empty transcript: the live one holds every prompt.
        expect(f.transcript.agents.get(agentId)?.items.filter((it) => it.kind === "user")).toHaveLength(plans.length);

        expect(await replayed(d.socket, d.session_id, agentId)).toEqual(liveView);

        // The daemon stops; the session resumes in a new one, which replays from the journals alone.
        process.kill(d.pid, "SIGTERM");
        await waitFor(() => !isAlive(d.pid), "the daemon to stop", { timeoutMs: 15_000 });
        const resumed = await startDaemon(env, ["--resume", d.session_id, "--project-root", w.project]);
        cleanups.push(() => {
          if (isAlive(resumed.pid)) process.kill(resumed.pid, "SIGKILL");
        });
        expect(await replayed(resumed.socket, resumed.session_id, agentId)).toEqual(liveView);
        process.kill(resumed.pid, "SIGTERM");
        await waitFor(() => !isAlive(resumed.pid), "the resumed daemon to stop", { timeoutMs: 15_000 });
      }),
      {
        numRuns: 4,
        // Every run begins with each way an answer is cut short or cancelled, after a failing call.
        examples: [
          [
            [
              { rounds: [["exit-code", "echo"]], ending: "cancel-streaming" },
              { rounds: [["edit"]], ending: "cancel-tool" },
              { rounds: [], ending: "length" },
            ],
          ],
          [
            [
              { rounds: [["read-missing"]], ending: "content-filter" },
              { rounds: [], ending: "cancel-tool" },
              { rounds: [], ending: "failed-after-text" },
            ],
          ],
        ],
      },
    );
  }, 300_000);
});
