// A swarm on loopback (SPEC-swarm, GATE-swarm): `tau swarm serve` and worker daemons running
// `tau ext swarm`, real Iroh endpoints on 127.0.0.1 with relays disabled, the loopback model.
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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
/** The model requests (a listing of models is not one). */
const chats = (): ReceivedRequest[] => fake.requests.filter((r) => (r.body as { messages?: unknown } | undefined)?.messages !== undefined);
const lastRole = (r: ReceivedRequest): string => ((r.body as { messages: Msg[] }).messages.at(-1)?.role ?? "");

/** The credential is in no file of either home (secrets aside), no output and no diagnostic. */
function expectCredentialNowhere(credential: string, homes: string[], outputs: string[]): void {
  expect(credential).toMatch(/^[0-9a-f]{64}$/);
  for (const home of homes) for (const f of filesUnder(home)) expect(f.text.includes(credential), f.path).toBe(false);
  for (const o of outputs) expect(o.includes(credential)).toBe(false);
}

/** A coordinator admitting worker w1, and w1's daemon linked to it with its agent. */
async function oneWorker(config: Record<string, unknown> = {}) {
  const home = await coordinatorHome(cleanups, ["w1"]);
  const worker = await workerHome(cleanups, fake, home, "w1");
  const co = await serve(cleanups, home, { w1: worker.endpointId });
  worker.configure(co.port, { config });
  const session = await startWorker(cleanups, worker);
  const admitted = await co.line((l) => l.kind === "admitted" && l.worker === "w1", "admission");
  return { home, worker, co, admitted, ...session };
}

/** The model: a tool call of swarm_ask for NEED-HELP, a plain answer naming the prompt otherwise. */
function answering(): void {
  fake.respondWith((r) => {
    const text = lastUserText(r);
    if (lastRole(r) === "tool") return textResponse("asked; waiting");
    if (text.includes("NEED-HELP")) return toolCallResponse([{ id: "call_ask", name: "swarm_ask", arguments: JSON.stringify({ question: "which branch?" }) }]);
    return textResponse(`worker answer to: ${text}`);
  });
}

describe("a swarm over Iroh", () => {
  it("[swarm.prompt.round-trip] a remote prompt runs on the worker's agent through the internal-prompt path and its answer returns as a result; tau swarm status shows the worker", async () => {
    answering();
    const { home, co, c, agentId, admitted } = await oneWorker();
    expect(admitted.incarnation).toMatch(/^[0-9a-f]{32}$/);
    co.send("prompt w1 What is two and two?");
    const dispatched = await co.line((l) => l.kind === "dispatched", "dispatch");
    const result = await co.line((l) => l.update?.kind === "result" && l.update.command_id === dispatched.command_id, "result");
    expect(result.update?.text).toBe("worker answer to: What is two and two?");
    expect(co.lines.some((l) => l.update?.kind === "accepted" && l.update.command_id === dispatched.command_id)).toBe(true);
    // The prompt entered the agent as an extension's internal prompt, submitted by the swarm instance.
    const submitted = await c.delivered("agent.prompt_submitted", (d) => d.text === "What is two and two?");
    expect(submitted).toMatchObject({ agent_id: agentId, source: "extension", submitter: "swarm", mode: "queue" });
    const status = await tau(home.env, "swarm", "status");
    expect(status).toContain(`coordinator ${home.endpointId} running`);
    expect(status).toMatch(new RegExp(`w1  connected  incarnation ${admitted.incarnation}  1 result`));
  });

  it("[swarm.blocker.round-trip] the agent's swarm_ask question comes up as a blocker update, its answer goes down as a prompt naming it, and a second answer to it is refused", async () => {
    answering();
    const { co } = await oneWorker();
    co.send("prompt w1 NEED-HELP with the release");
    const blocker = await co.line((l) => l.update?.kind === "blocker", "blocker question");
    expect(blocker.update?.text).toBe("which branch?");
    expect(blocker.update?.blocker_id).toMatch(/^b[0-9a-f]{16}$/);
    co.send(`answer w1 ${blocker.update?.blocker_id} use main`);
    const answered = await co.line((l) => l.update?.kind === "result" && (l.update.text ?? "").includes("use main"), "the answer's turn");
    expect(answered.update?.text).toContain(`answered your question ${blocker.update?.blocker_id}`);
    co.send(`answer w1 ${blocker.update?.blocker_id} again`);
    await co.line((l) => l.update?.kind === "rejected" && l.update.reason === "unknown_blocker", "a second answer refused");
  });

  it("[swarm.credential.never-logged] after a round trip, the worker credential is in no file of either home (secrets aside), no coordinator output, no delivered event and no extensions.log line", async () => {
    answering();
    const { home, worker, co, c } = await oneWorker();
    co.send("prompt w1 hello");
    await co.line((l) => l.update?.kind === "result", "the result");
    const status = await tau(home.env, "swarm", "status", "--json");
    expect(extensionsLog(worker.w.home)).toContain("admitted by coordinator");
    expectCredentialNowhere(worker.credential, [worker.w.home, home.home], [co.stdout(), co.stderr(), status, JSON.stringify(c.inbox)]);
  });

  it("[swarm.identity.pinned] a worker whose pinned coordinator id is not the key of the peer at its addresses never sends hello or its credential: an impostor coordinator holding the same credential admits nothing", async () => {
    fake.respondWith(() => textResponse("unused"));
    const home = await coordinatorHome(cleanups, ["w1"]);
    const worker = await workerHome(cleanups, fake, home, "w1");
    // The impostor: another key, the same credential and worker admitted — it would admit a hello.
    const impostorHome = await coordinatorHome(cleanups, []);
    copyFileSync(join(home.home, "config", "secrets", "swarm-worker-w1"), join(impostorHome.home, "config", "secrets", "swarm-worker-w1"));
    const impostor = await serve(cleanups, impostorHome, { w1: worker.endpointId });
    worker.configure(impostor.port, { pin: home.endpointId });
    const { d } = await startWorker(cleanups, worker);
    await waitFor(() => (extensionsLog(worker.w.home).match(/the link to coordinator \S+ ended/g) ?? []).length >= 2, "two failed link attempts", 30_000);
    expect(impostor.lines.filter((l) => l.kind === "admitted" || l.kind === "refused_peer")).toEqual([]);
    killTree(d.pid);
    expectCredentialNowhere(worker.credential, [worker.w.home, impostorHome.home], [impostor.stdout(), impostor.stderr()]);
  });

  it("[swarm.identity.credential] a worker with the wrong credential is refused by the coordinator and says so in an error notice; nothing is admitted", async () => {
    fake.respondWith(() => textResponse("unused"));
    const home = await coordinatorHome(cleanups, ["w1"]);
    const worker = await workerHome(cleanups, fake, home, "w1");
    writeFileSync(join(worker.w.home, "config", "secrets", "swarm-credential"), "not-the-credential", { mode: 0o600 });
    const co = await serve(cleanups, home, { w1: worker.endpointId });
    worker.configure(co.port);
    const { c } = await startWorker(cleanups, worker);
    await co.line((l) => l.kind === "refused_peer" && l.reason === "credential", "the refusal");
    const notice = await c.delivered("extension.notice", (x) => String(x.text).includes("refused worker w1 (credential)"));
    expect(notice.level).toBe("error");
    expect(co.lines.some((l) => l.kind === "admitted")).toBe(false);
    expect(co.lines.filter((l) => l.kind === "refused_peer")).toHaveLength(1);
  });

  it("[swarm.bounds.oversize] a prompt over the worker's max_text_bytes is refused naming its command, and no model sees it", async () => {
    answering();
    const { co } = await oneWorker({ max_text_bytes: 64 });
    co.send(`prompt w1 ${"x".repeat(65)}`);
    const over = await co.line((l) => l.update?.kind === "rejected", "the refusal");
    expect(over.update).toMatchObject({ reason: "oversize", command_id: co.lines.find((l) => l.kind === "dispatched")?.command_id });
    co.send(`prompt w1 ${"y".repeat(64)}`);
    await co.line((l) => l.update?.kind === "result", "the bounded prompt's result");
    expect(chats().map(lastUserText)).toEqual(["y".repeat(64)]);
  });

  it("[swarm.bounds.table-full] with max_commands 2, the third and fourth commands are refused (table_full) without evicting, and reach no model", async () => {
    answering();
    const { co } = await oneWorker({ max_commands: 2 });
    for (const t of ["first", "second"]) {
      co.send(`prompt w1 ${t}`);
      await co.line((l) => l.update?.kind === "result" && l.update.text === `worker answer to: ${t}`, `the ${t} result`);
    }
    co.send("prompt w1 third");
    co.send("prompt w1 fourth");
    await waitFor(() => co.lines.filter((l) => l.update?.kind === "rejected" && l.update.reason === "table_full").length === 2, "two table_full refusals", 30_000);
    expect(chats().map(lastUserText)).toEqual(["first", "second"]);
  });

  it("[swarm.incarnation.fenced] a restarted worker declares a new incarnation, and the coordinator fences the old one's open command; an ordinary reconnect keeps the incarnation", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    cleanups.push(() => release());
    fake.respondWith((r) => (lastUserText(r) === "HOLD" ? { ...textResponse("late"), gate: held } : textResponse(`ok: ${lastUserText(r)}`)));
    const home = await coordinatorHome(cleanups, ["w1"]);
    const worker = await workerHome(cleanups, fake, home, "w1");
    const co = await serve(cleanups, home, { w1: worker.endpointId });
    worker.configure(co.port);
    const first = await startWorker(cleanups, worker);
    const a = await co.line((l) => l.kind === "admitted", "the first admission");
    co.send("prompt w1 HOLD");
    const held1 = await co.line((l) => l.update?.kind === "accepted", "the held command accepted");
    await waitFor(() => fake.requests.length === 1, "the held prompt at the model");

    // A crash: the coordinator hears nothing until the new process connects.
    killTree(first.d.pid);
    await startWorker(cleanups, worker);
    const b = await co.line((l) => l.kind === "admitted" && l.incarnation !== a.incarnation, "the replacement's admission");
    expect(b.incarnation).toMatch(/^[0-9a-f]{32}$/);
    const fenced = await co.line((l) => l.kind === "fenced", "the fenced command");
    expect(fenced).toMatchObject({ worker: "w1", command_id: held1.update?.command_id, incarnation: a.incarnation });
    // The replacement takes new commands under its own incarnation.
    co.send("prompt w1 after restart");
    await co.line((l) => l.update?.kind === "result" && l.update.text === "ok: after restart", "a result from the replacement");
    const status = JSON.parse(await tau(home.env, "swarm", "status", "--json")) as { workers: Array<{ incarnation: string; commands: Record<string, number> }> };
    expect(status.workers[0]).toMatchObject({ incarnation: b.incarnation, commands: { fenced: 1, result: 1 } });

    // An ordinary reconnect (the coordinator stopped and started again on its address) keeps the process's incarnation.
    co.child.kill("SIGTERM");
    const again = await serve(cleanups, home, { w1: worker.endpointId }, co.port);
    const c = await again.line((l) => l.kind === "admitted", "the reconnection");
    expect(c.incarnation).toBe(b.incarnation);
  }, 120_000);
});
