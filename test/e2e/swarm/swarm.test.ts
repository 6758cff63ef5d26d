// A swarm on loopback (SPEC-swarm, GATE-swarm): `tau swarm serve` and worker daemons running
// `tau ext swarm`, real Iroh endpoints on 127.0.0.1 with relays disabled, the loopback model.
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, killTree } from "../../support/e2e.js";
import { textResponse, toolCallResponse, type FakeOpenAI, type ReceivedRequest } from "../../support/fake-openai.js";
import { extensionsLog } from "../../support/mcp.js";
import { waitFor } from "../../support/wait.js";
import { coordinatorHome, filesUnder, serve, startWorker, tau, workerHome } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

type Msg = { role: string; content?: unknown; tool_calls?: unknown[] };
const lastUserText = (r: ReceivedRequest): string => {
  const ms = (r.body as { messages: Msg[] }).messages;
  const last = [...ms].reverse().find((m) => m.role === "user");
  return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
};
const lastRole = (r: ReceivedRequest): string => ((r.body as { messages: Msg[] }).messages.at(-1)?.role ?? "");

/** The credential is in no file of either home (secrets aside), no output and no diagnostic. */
function expectCredentialNowhere(credential: string, homes: string[], outputs: string[]): void {
  expect(credential).toMatch(/^[0-9a-f]{64}$/);
  for (const home of homes) for (const f of filesUnder(home)) expect(f.text.includes(credential), f.path).toBe(false);
  for (const o of outputs) expect(o.includes(credential)).toBe(false);
}

describe("a swarm over Iroh", () => {
  it("[swarm.prompt.round-trip] [swarm.blocker.round-trip] [swarm.credential.never-logged] a remote prompt runs on the worker's agent through the internal-prompt path and its answer returns; a blocker question goes up and its answer comes back as a prompt; tau swarm status shows the worker; the credential is in no log", async () => {
    fake.respondWith((r) => {
      const text = lastUserText(r);
      if (lastRole(r) === "tool") return textResponse("asked; waiting");
      if (text.includes("NEED-HELP")) return toolCallResponse([{ id: "call_ask", name: "swarm_ask", arguments: JSON.stringify({ question: "which branch?" }) }]);
      return textResponse(`worker answer to: ${text}`);
    });
    const home = await coordinatorHome(cleanups, ["w1"]);
    const worker = await workerHome(cleanups, fake, home, "w1");
    const co = await serve(cleanups, home, { w1: worker.endpointId });
    worker.configure(co.port);
    const { c, agentId } = await startWorker(cleanups, worker);
    const admitted = await co.line((l) => l.kind === "admitted" && l.worker === "w1", "admission");
    expect(admitted.incarnation).toMatch(/^[0-9a-f]{32}$/);

    co.send("prompt w1 What is two and two?");
    const dispatched = await co.line((l) => l.kind === "dispatched", "dispatch");
    const result = await co.line((l) => l.update?.kind === "result" && l.update.command_id === dispatched.command_id, "result");
    expect(result.update?.text).toBe("worker answer to: What is two and two?");
    expect(co.lines.some((l) => l.update?.kind === "accepted" && l.update.command_id === dispatched.command_id)).toBe(true);
    // The prompt entered the agent as an extension's internal prompt, submitted by the swarm instance.
    const submitted = await c.delivered("agent.prompt_submitted", (d) => d.text === "What is two and two?");
    expect(submitted).toMatchObject({ agent_id: agentId, source: "extension", submitter: "swarm", mode: "queue" });

    // A blocker question up, its answer down as a new prompt naming it.
    co.send("prompt w1 NEED-HELP with the release");
    const blocker = await co.line((l) => l.update?.kind === "blocker", "blocker question");
    expect(blocker.update?.text).toBe("which branch?");
    expect(blocker.update?.blocker_id).toMatch(/^b[0-9a-f]{16}$/);
    co.send(`answer w1 ${blocker.update?.blocker_id} use main`);
    const answered = await co.line((l) => l.update?.kind === "result" && (l.update.text ?? "").includes("use main"), "the answer's turn");
    expect(answered.update?.text).toContain(`answered your question ${blocker.update?.blocker_id}`);
    // An answer to a question that is no longer open is refused.
    co.send(`answer w1 ${blocker.update?.blocker_id} again`);
    await co.line((l) => l.update?.kind === "rejected" && l.update.reason === "unknown_blocker", "a second answer refused");

    const status = await tau(home.env, "swarm", "status");
    expect(status).toContain(`coordinator ${home.endpointId} running`);
    expect(status).toMatch(new RegExp(`w1  connected  incarnation ${admitted.incarnation}`));

    expectCredentialNowhere(worker.credential, [worker.w.home, home.home], [co.stdout(), co.stderr(), status, JSON.stringify(c.inbox)]);
    expect(extensionsLog(worker.w.home)).toContain("admitted by coordinator");
  });
});
