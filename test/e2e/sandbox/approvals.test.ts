// Approvals are bounded and named (SPEC-sandbox, "Approvals"; SPEC-sandbox-reviewer, "Approval
// scope"), tried as a model would try to flood or confuse them, through a real daemon, real
// bubblewrap, loopback HTTP servers and the loopback model: one call cannot open more than 16
// requests; concurrent connections to one host make one review and share its decision; every
// prompt names the agent, the call and the command — all of the commands running when a connection
// cannot be told apart — and none outlives the turn it belongs to.
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { textResponse, toolCallResponse, type FakeOpenAI, type ReceivedRequest } from "../../support/fake-openai.js";
import { waitFor } from "../../support/wait.js";
import { SandboxSession, useLoopbackHost } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const host = useLoopbackHost();
const other = useLoopbackHost();

const PER_CALL = 16;
/** No loopback host on the allowlist, whatever the defaults: a connection to one asks. */
const ONLY_EXAMPLE = "network:\n  allowed_domains: [only.example]\n";
const fetch = (url: string) => `curl -sS -f --noproxy '' -m 60 ${url}`;

/** The classifier requests the loopback model received. */
const reviews = (): ReceivedRequest[] =>
  fake.requests.filter((r) => {
    const first = (r.body as { messages?: { role: string; content?: unknown }[] } | undefined)?.messages?.[0];
    return first?.role === "system" && typeof first.content === "string" && first.content.startsWith("You review one permission request");
  });

/** Waits until `:sandbox doctor` says `n` connections wait for a decision (they are all held by the proxy). */
async function connectionsWaiting(s: SandboxSession, n: number): Promise<void> {
  await waitFor(async () => (await s.command("doctor")).text.includes(`connections waiting for a decision: ${n}\n`), `${n} connections waiting for a decision`, { timeoutMs: 30_000, pollMs: 50 });
}

/**
 * One model turn with two `shell` calls at once; each command waits until both run (a file each
 * makes), then runs its own `then`. Resolves with the two call ids once the turn was asked for.
 */
async function twoAtOnce(s: SandboxSession, tag: string, thenA: string, thenB: string): Promise<[string, string]> {
  const a = `call_${tag}_a`;
  const b = `call_${tag}_b`;
  const meet = (me: string, peer: string, then: string) =>
    `touch ${tag}-${me}.up; for i in $(seq 1 600); do [ -e ${tag}-${peer}.up ] && break; sleep 0.05; done; ${then}`;
  fake.enqueue(
    toolCallResponse([
      { id: a, name: "shell", arguments: [JSON.stringify({ command: meet("a", "b", thenA) })] },
      { id: b, name: "shell", arguments: [JSON.stringify({ command: meet("b", "a", thenB) })] },
    ]),
    textResponse("both done"),
  );
  s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text: `run ${tag}` });
  await s.next("tool.started", (d) => d.call_id === a);
  await s.next("tool.started", (d) => d.call_id === b);
  return [a, b];
}

describe("bounded, named approvals", () => {
  it("[sandbox.approvals.bounded-per-call] a command asking for 20 hosts at once gets 16 prompts; the rest are refused at once and its result says so", async () => {
    const s = await SandboxSession.start(fake, cleanups);
    expect(await s.settled()).toMatchObject({ state: "active" });
    const hosts = Array.from({ length: 20 }, (_, i) => `h${i + 1}.flood.example`);
    const callId = await s.callShell(`${hosts.map((h) => `${fetch(`http://${h}/`)} >/dev/null 2>&1 &`).join(" ")} wait; echo all-done`);
    // Sixteen prompts wait, and four connections were refused at once, with nobody asked.
    const asks: Record<string, unknown>[] = [];
    for (let i = 0; i < PER_CALL; i++) asks.push(await s.approval());
    for (let i = 0; i < 4; i++) await s.next("sandbox.diagnostic_recorded", (d) => d.kind === "network" && d.outcome === "refused" && d.call_id === callId);
    expect(asks.every((a) => a.call_id === callId)).toBe(true);
    expect(new Set(asks.map((a) => a.target)).size).toBe(PER_CALL);
    for (const a of asks) s.answer(a.approval_id, "deny");
    const r = await s.result(callId);
    expect(r.output).toContain("all-done");
    const refusedAtOnce = r.output.split("\n").filter((l) => l.includes(`was refused at once: the command already has ${PER_CALL} approval requests open, the most one call may have`));
    expect(refusedAtOnce).toHaveLength(4);
    expect(r.output.split("\n").filter((l) => l.includes("refused: the user refused"))).toHaveLength(PER_CALL);
    // No seventeenth prompt was ever shown.
    expect(s.client.deliveries().filter((d) => d.name === "sandbox.approval_requested")).toHaveLength(0);
  });

  it("[sandbox.review.once-per-host] six connections to one host at once make one review, whose approval releases them all; nobody is prompted", async () => {
    const port = await host.start();
    const s = await SandboxSession.start(fake, cleanups, { globalYaml: `${ONLY_EXAMPLE}classifier: provider/fake-model\n` });
    expect(await s.settled()).toMatchObject({ state: "active" });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const approve = textResponse(JSON.stringify({ decision: "approve", probability: 0.99, confidence: 0.99, reason: "the user asked for it" }));
    const six = Array.from({ length: 6 }, (_, i) => `${fetch(`http://127.0.0.1:${port}/${i}`)} > got-${i} &`).join(" ");
    fake.enqueue(toolCallResponse([{ id: "call_six", name: "shell", arguments: [JSON.stringify({ command: `${six} wait; cat got-*` })] }]), { ...approve, gate }, textResponse("noted"));
    s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text: `fetch http://127.0.0.1:${port}/ six times` });
    // The review is held until all six connections wait on it.
    await connectionsWaiting(s, 6);
    expect(reviews()).toHaveLength(1);
    release();
    const r = await s.result("call_six");
    expect(r.output).toBe(`${"hello from the host\n".repeat(6)}[exit code 0]`);
    expect(host.hits).toBe(6);
    expect(reviews()).toHaveLength(1);
    expect(s.client.deliveries().filter((d) => d.name === "sandbox.approval_requested")).toHaveLength(0);
  });

  it("[sandbox.approvals.named] a prompt names its agent, call and command; made while two commands run, it names both and both connections share it", async () => {
    const port = await host.start();
    const s = await SandboxSession.start(fake, cleanups, { globalYaml: ONLY_EXAMPLE });
    expect(await s.settled()).toMatchObject({ state: "active" });
    const [a, b] = await twoAtOnce(s, "named", fetch(`http://127.0.0.1:${port}/a`), fetch(`http://127.0.0.1:${port}/b`));
    const ask = await s.approval();
    // Which of the two asked cannot be told: it names both, each with its agent and command.
    const named = [{ agent_id: ask.agent_id, call_id: ask.call_id, command: ask.command }, ...((ask.other_calls as Record<string, unknown>[] | undefined) ?? [])];
    expect(named.map((c) => c.call_id).sort()).toEqual([a, b]);
    for (const c of named) {
      expect(c.agent_id).toBe(s.agentId);
      expect(String(c.command)).toMatch(/^touch named-[ab]\.up; /);
    }
    await connectionsWaiting(s, 2);
    expect(host.hits).toBe(0);
    s.answer(ask.approval_id, "allow");
    expect((await s.next("tool.result", (d) => d.call_id === a)).output).toContain("hello from the host");
    expect((await s.next("tool.result", (d) => d.call_id === b)).output).toContain("hello from the host");
    expect(host.hits).toBe(2);
    expect(s.client.deliveries().filter((d) => d.name === "sandbox.approval_requested")).toHaveLength(0);
  });

  it("[sandbox.approvals.revoked-with-turn] cancelling a turn whose two commands both wait on prompts revokes every one of them; a late allow lets nothing through", async () => {
    const p1 = await host.start();
    const p2 = await other.start();
    const s = await SandboxSession.start(fake, cleanups, { globalYaml: ONLY_EXAMPLE });
    expect(await s.settled()).toMatchObject({ state: "active" });
    const [a, b] = await twoAtOnce(s, "turn", fetch(`http://127.0.0.1:${p1}/`), fetch(`http://127.0.0.1:${p2}/`));
    const asks = [await s.approval(), await s.approval()];
    expect(asks.map((x) => x.target).sort()).toEqual([`127.0.0.1:${p1}`, `127.0.0.1:${p2}`].sort());
    s.client.emit("agent.cancel_request", { agent_id: s.agentId });
    for (const x of asks) expect(await s.next("sandbox.approval_resolved", (d) => d.approval_id === x.approval_id)).toEqual({ approval_id: x.approval_id, outcome: "revoked" });
    expect(await s.next("tool.result", (d) => d.call_id === a)).toMatchObject({ outcome: "cancelled" });
    expect(await s.next("tool.result", (d) => d.call_id === b)).toMatchObject({ outcome: "cancelled" });
    expect(await s.next("agent.outer_turn_finished")).toMatchObject({ outcome: "cancelled" });
    // Nothing is left waiting, and a late answer opens nothing.
    for (const x of asks) s.answer(x.approval_id, "allow");
    expect(await s.command("pending")).toEqual({ ok: true, text: "0 pending approval(s)" });
    expect(host.hits + other.hits).toBe(0);
  });
});
