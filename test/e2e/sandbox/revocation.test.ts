// Pending manual approvals are revoked by a cancel, a new user prompt and a policy change, through
// a real daemon, real bubblewrap, a loopback HTTP server and the loopback fake model (SPEC-sandbox,
// "Approvals"): the prompt closes as `revoked` in every UI, the waiting connection or command gets
// the deny outcome at once, the result says so, and a late answer grants nothing.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { textResponse, toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { SandboxSession, useLoopbackHost } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

/** The host outside the sandbox the commands connect to. */
const host = useLoopbackHost();

// Through the sandbox's proxy; curl's own limit (60 s) is far beyond the test's, so a connection
// left waiting would fail the test rather than end by itself.
const fetchCommand = (port: number) => `curl -sS -f --noproxy '' -m 60 http://127.0.0.1:${port}/`;

/** A session whose allowlist has no loopback host: a connection to `port` asks. */
async function networkSession(): Promise<SandboxSession> {
  const s = await SandboxSession.active(fake, cleanups, { globalYaml: "network:\n  allowed_domains: [only.example]\n" });
  return s;
}

/** The call's pending approval, checked to be the manual prompt the test expects. */
async function pendingFor(s: SandboxSession, callId: string, kind: string): Promise<string> {
  const ask = await s.approval((d) => d.call_id === callId);
  expect(ask).toMatchObject({ kind, agent_id: s.agentId, call_id: callId });
  return String(ask.approval_id);
}

/** The prompt closed as revoked, and nothing else closed it. */
async function revoked(s: SandboxSession, approvalId: string): Promise<void> {
  expect(await s.next("sandbox.approval_resolved", (d) => d.approval_id === approvalId)).toEqual({ approval_id: approvalId, outcome: "revoked" });
}

/**
 * Answers a revoked prompt late with `decision`, then waits for `:sandbox pending` (which the
 * extension handles after the answer): the answer closed nothing and nothing waits any more.
 */
async function answerLate(s: SandboxSession, approvalId: string, decision: string): Promise<void> {
  s.answer(approvalId, decision);
  expect(await s.command("pending")).toEqual({ ok: true, text: "0 pending approval(s)" });
  expect(s.client.deliveries().filter((d) => d.name === "sandbox.approval_resolved")).toEqual([]);
}

describe("revoking a pending network approval", () => {
  it("[sandbox.net.revoked-on-cancel] cancelling the agent's turn revokes the prompt its command's connection waits on; a late allow lets nothing through", async () => {
    const port = await host.start();
    const s = await networkSession();
    const callId = await s.callShell(fetchCommand(port));
    const approvalId = await pendingFor(s, callId, "network");
    s.client.emit("agent.cancel_request", { agent_id: s.agentId });
    await revoked(s, approvalId);
    expect(await s.next("tool.result", (d) => d.call_id === callId)).toMatchObject({ outcome: "cancelled" });
    expect(await s.next("agent.outer_turn_finished")).toMatchObject({ outcome: "cancelled" });
    await answerLate(s, approvalId, "allow");
    expect(host.hits).toBe(0);
  });

  it("[sandbox.net.revoked-on-new-prompt] a new user prompt to the agent, steered or queued, revokes its pending connection prompt: the connection is refused at once and the result says why", async () => {
    const port = await host.start();
    const s = await networkSession();
    // Steered: it joins the current turn at its next round, after the refused call's result.
    const steered = await s.callShell(fetchCommand(port));
    const first = await pendingFor(s, steered, "network");
    s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "steer", text: "never mind, stop that" });
    await revoked(s, first);
    const r1 = await s.result(steered);
    expect(r1.output).toContain("The requested URL returned error: 403");
    expect(r1.output).toContain(`[sandbox: the connection to 127.0.0.1:${port} was refused: its approval was withdrawn`);
    await answerLate(s, first, "allow");

    // Queued: it waits for the current turn, yet withdraws the decision at once.
    const queued = await s.callShell(fetchCommand(port));
    fake.enqueue(textResponse("queued prompt answered"));
    const second = await pendingFor(s, queued, "network");
    s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text: "do something else next" });
    await revoked(s, second);
    const r2 = await s.result(queued);
    expect(r2.output).toContain("The requested URL returned error: 403");
    expect(r2.output).toContain("its approval was withdrawn");
    await s.next("agent.outer_turn_finished");
    await answerLate(s, second, "allow");
    expect(host.hits).toBe(0);
  });

  it("[sandbox.net.kept-on-agent-message] a prompt from another agent is no user prompt: the pending connection prompt stays, and the user's allow still lets it through", async () => {
    const port = await host.start();
    const s = await networkSession();
    s.client.emit("ui.create_agent", { request_id: "r-other" });
    const created = await s.client.next((m) => m.message === "direct" && m.payload.event.data.request_id === "r-other");
    const other = created.message === "direct" ? String(created.payload.event.data.agent_id) : "";
    // The agent's call waits on the prompt; its next round is scripted only once the other agent is done.
    fake.enqueue(toolCallResponse([{ id: "call_fetch", name: "shell", arguments: [JSON.stringify({ command: fetchCommand(port) })] }]));
    s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text: "fetch it" });
    const approvalId = await pendingFor(s, "call_fetch", "network");
    fake.enqueue(
      toolCallResponse([{ id: "call_msg", name: "agent_message", arguments: [JSON.stringify({ agent_id: s.agentId, text: "are you done yet?" })] }]),
      textResponse("sent"),
    );
    s.client.emit("ui.prompt_submit", { agent_id: other, mode: "queue", text: "ask the first agent" });
    expect(await s.next("agent.prompt_submitted", (d) => d.agent_id === s.agentId && d.source === "agent")).toMatchObject({ mode: "queue" });
    expect(await s.next("agent.outer_turn_finished", (d) => d.agent_id === other)).toMatchObject({ outcome: "completed", rounds: 2 });
    expect(await s.command("pending")).toEqual({ ok: true, text: "1 pending approval(s)" });
    expect(s.client.deliveries().filter((d) => d.name === "sandbox.approval_resolved")).toEqual([]);
    fake.enqueue(textResponse("noted"), textResponse("message read"));
    s.answer(approvalId, "allow");
    expect(await s.next("sandbox.approval_resolved", (d) => d.approval_id === approvalId)).toMatchObject({ outcome: "allowed" });
    expect((await s.next("tool.result", (d) => d.call_id === "call_fetch")).output).toBe("hello from the host\n[exit code 0]");
    expect(host.hits).toBe(1);
  });

  it("[sandbox.net.revoked-on-policy-change] a policy change (:sandbox network allow add, :sandbox off) revokes the pending connection prompt: refused at once, a late allow lets nothing through", async () => {
    const port = await host.start();
    const s = await networkSession();
    const before = await s.callShell(fetchCommand(port));
    const first = await pendingFor(s, before, "network");
    expect(await s.command("network", "allow", "add", "other.example")).toMatchObject({ ok: true });
    await revoked(s, first);
    const r1 = await s.result(before);
    expect(r1.output).toContain("The requested URL returned error: 403");
    expect(r1.output).toContain("its approval was withdrawn");
    await answerLate(s, first, "allow");

    const off = await s.callShell(fetchCommand(port));
    const second = await pendingFor(s, off, "network");
    expect(await s.command("off")).toMatchObject({ ok: true });
    await revoked(s, second);
    const r2 = await s.result(off);
    expect(r2.output).toContain("The requested URL returned error: 403");
    expect(r2.output).toContain("its approval was withdrawn");
    await answerLate(s, second, "allow");
    expect(host.hits).toBe(0);
  });
});

describe("revoking a pending filesystem approval", () => {
  /** A session, a folder outside the project, and a command that counts its runs and writes there. */
  async function writeOutside(): Promise<{ s: SandboxSession; outside: string; target: string; counter: string; command: string }> {
    const s = await SandboxSession.active(fake, cleanups);
    const outside = s.outsideDir();
    const target = join(outside, "made.txt");
    const counter = join(s.w.project, "attempts");
    return { s, outside, target, counter, command: `echo x >> ${counter}; echo hello > ${target}` };
  }

  it("[sandbox.fs.revoked-on-cancel] cancelling the turn revokes the offered exception; a late allow_retry replays nothing and writes nothing", async () => {
    const { s, outside, target, counter, command } = await writeOutside();
    const callId = await s.callShell(command);
    const approvalId = await pendingFor(s, callId, "filesystem_write");
    expect(readFileSync(counter, "utf8")).toBe("x\n");
    s.client.emit("agent.cancel_request", { agent_id: s.agentId });
    await revoked(s, approvalId);
    expect(await s.next("tool.result", (d) => d.call_id === callId)).toMatchObject({ outcome: "cancelled" });
    expect(await s.next("agent.outer_turn_finished")).toMatchObject({ outcome: "cancelled" });
    await answerLate(s, approvalId, "allow_retry");
    expect(readFileSync(counter, "utf8")).toBe("x\n");
    expect(existsSync(target)).toBe(false);
    expect((await s.command("show")).text).not.toContain(outside);
  });

  it("[sandbox.fs.revoked-on-new-prompt] a new user prompt revokes the offered exception: the result says it was withdrawn, and a late allow_adapt grants nothing", async () => {
    const { s, outside, target, counter, command } = await writeOutside();
    const callId = await s.callShell(command);
    fake.enqueue(textResponse("queued prompt answered"));
    const approvalId = await pendingFor(s, callId, "filesystem_write");
    s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text: "do something else" });
    await revoked(s, approvalId);
    const r = await s.result(callId);
    expect(r.output).toContain(`write access to ${target} was not granted: the request was withdrawn`);
    expect(r.output).not.toContain("[first attempt]");
    await s.next("agent.outer_turn_finished");
    await answerLate(s, approvalId, "allow_adapt");
    expect(readFileSync(counter, "utf8")).toBe("x\n");
    expect(existsSync(target)).toBe(false);
    // The late answer added no session grant: the same write is refused and offered again.
    expect((await s.command("show")).text).not.toContain(outside);
    const again = await s.callShell(`echo hello > ${target}`);
    s.answer(await pendingFor(s, again, "filesystem_write"), "deny");
    expect((await s.result(again)).output).toContain("the user refused it");
    expect(existsSync(target)).toBe(false);
  });
});
