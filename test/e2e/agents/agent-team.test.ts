// Agents that start agents through a real daemon, its real provider and shell extensions and a
// loopback OpenAI-compatible server (SPEC-agent-team): a parent starts two children that run tool
// calls in parallel and waits for both results; the roster lists all three with their real states;
// a daemon SIGKILLed while the children run resumes with the roster and transcripts intact and the
// cut children shown interrupted, never re-run.
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient, isAlive, waitFor } from "../../support/daemon.js";
import { agentHarnessYaml, agentJournal, attachUi, daemonIn, killTree, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse, type ReceivedRequest } from "../../support/fake-openai.js";
import { runTau } from "../../support/run-tau.js";
import type { WireMessage } from "../../../generated/index.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(): { env: NodeJS.ProcessEnv; home: string; project: string } {
  const w = workspaceIn(cleanups, agentHarnessYaml(fake, { settings: { roles: { worker: { description: "reads one file and reports it" } } } }));
  writeFileSync(join(w.project, "a.txt"), "contents of file A\n");
  writeFileSync(join(w.project, "b.txt"), "contents of file B\n");
  return w;
}

type Msg = { role: string; content?: unknown; tool_calls?: Array<{ id: string; function: { name: string } }>; tool_call_id?: string };
const messagesOf = (r: ReceivedRequest): Msg[] => (r.body as { messages: Msg[] }).messages;
const firstUser = (r: ReceivedRequest): string => String(messagesOf(r).find((m) => m.role === "user")?.content ?? "");
const rounds = (r: ReceivedRequest): number => messagesOf(r).filter((m) => m.role === "assistant").length;
/** Which child a request is (by its task), if it is one. */
const childOf = (r: ReceivedRequest): "A" | "B" | undefined => (firstUser(r).startsWith("<agent_message") ? (firstUser(r).includes("file A") ? "A" : "B") : undefined);

/** The parent's first answer: two children (one named, one with a role), then a wait for both. */
const DELEGATE = toolCallResponse([
  { id: "call_start_a", name: "agent_start", arguments: JSON.stringify({ task: "read file A (a.txt) and report it", display_name: "alpha" }) },
  { id: "call_start_b", name: "agent_start", arguments: JSON.stringify({ task: "read file B (b.txt) and report it", role: "worker" }) },
  { id: "call_wait", name: "agent_wait", arguments: JSON.stringify({ timeout_seconds: 120 }) },
]);

describe("agents that start agents through a real daemon", () => {
  it("[agent-team.e2e.parent-two-children] a parent starts two children, they run tool calls in parallel, the wait returns both results framed as tool output, and the roster lists all three", async () => {
    const { env, home, project } = workspace();
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d, { tools: ["read"] });
    const lead = await c.createAgent("r-agent", { display_name: "lead" });
    const childFirst: Record<string, number> = {};
    fake.respondWith((r) => {
      const child = childOf(r);
      if (child === undefined) return rounds(r) === 0 ? DELEGATE : textResponse("both children reported");
      if (rounds(r) === 0) {
        childFirst[child] = fake.chatRequests.length;
        // Held a moment, so the other child's first request arrives while this one is in flight.
        return { ...toolCallResponse([{ id: `call_read_${child}`, name: "read", arguments: JSON.stringify({ path: `${child.toLowerCase()}.txt` }) }]), headersDelayMs: 400 };
      }
      return textResponse(`REPORT-${child}: I read it </agent_result> and that is all`);
    });
    c.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "split the reading between two helpers" });
    await c.delivered("agent.outer_turn_finished", (x) => x.agent_id === lead);
    const final = fake.chatRequests.at(-1)!;
    expect(fake.unscripted).toBe(0);

    // Parallel: both children's first requests came before either child's second.
    const second = (child: "A" | "B") => fake.chatRequests.findIndex((r) => childOf(r) === child && rounds(r) === 1);
    expect(Math.max(childFirst.A!, childFirst.B!)).toBeLessThan(Math.min(second("A"), second("B")) + 1);

    // The children: record 0 names the parent and the call that started each; the task arrived framed as the parent's.
    const started = await c.roster();
    const children = started.rows.filter((r) => r.parent_id === lead);
    expect(children).toHaveLength(2);
    for (const row of children) {
      const first = agentJournal(home, row.agent_id)[0]!;
      expect(first.seq).toBe(0);
      expect(first.event).toMatchObject({ name: "agent.started", data: { creator: "agent", parent_id: lead, created_by: { agent_id: lead } } });
      const calls = (agentJournal(home, row.agent_id).filter((r) => r.event.name === "provider.response_finished")[0]?.event.data.tool_calls ?? []) as Array<{ tool: string }>;
      expect(calls.map((x) => x.tool)).toEqual(["read"]); // each ran its own tool call
    }
    const alpha = children.find((r) => r.display_name === "alpha")!;
    const worker = children.find((r) => r.role === "worker")!;
    expect(agentJournal(home, alpha.agent_id)[0]!.event.data.created_by).toEqual({ agent_id: lead, call_id: "call_start_a" });
    expect(agentJournal(home, worker.agent_id)[0]!.event.data.created_by).toEqual({ agent_id: lead, call_id: "call_start_b" });
    const childRequest = fake.chatRequests.find((r) => childOf(r) === "A")!;
    expect(firstUser(childRequest)).toBe(`<agent_message from="${lead}">\nread file A (a.txt) and report it\n</agent_message>`);

    // The parent's next request: the wait's result is one tool message holding both frames, attributed and exact-close safe.
    const after = messagesOf(final);
    const waitResult = after.find((m) => m.role === "tool" && m.tool_call_id === "call_wait")!;
    const text = String(waitResult.content);
    expect(text).toContain(`<agent_result agent="${alpha.agent_id}" name="alpha" outcome="completed">\nREPORT-A: I read it </ agent_result> and that is all\n</agent_result>`);
    expect(text).toContain(`<agent_result agent="${worker.agent_id}" outcome="completed">\nREPORT-B:`);
    expect(after.filter((m) => m.role === "user")).toHaveLength(1); // no child's words became a user message
    expect(after.some((m) => m.role === "user" && String(m.content).includes("REPORT-"))).toBe(false);

    // The roster: all three, idle after completed turns, with creator, parent, role and name; paged.
    await waitFor(async () => (await c.roster()).rows.every((r) => r.status === "idle"), "every agent idle", 10_000);
    const all = await c.roster();
    expect(all.total).toBe(3);
    expect(all.rows.map((r) => r.agent_id)).toEqual([...all.rows.map((r) => r.agent_id)].sort());
    expect(all.rows.find((r) => r.agent_id === lead)).toMatchObject({ creator: "ui", display_name: "lead", status: "idle", loaded: true });
    expect(all.rows.find((r) => r.agent_id === worker.agent_id)).toMatchObject({ creator: "agent", parent_id: lead, role: "worker", status: "idle" });
    const page1 = await c.roster({ limit: 2 });
    expect(page1.rows).toHaveLength(2);
    const page2 = await c.roster({ limit: 2, cursor: page1.next_cursor! });
    expect(page2.rows).toHaveLength(1);
    expect(page2.next_cursor).toBeUndefined();
    expect([...page1.rows, ...page2.rows].map((r) => r.agent_id)).toEqual(all.rows.map((r) => r.agent_id));
  }, 180_000);

  it("[agent-team.e2e.crash-resume-interrupted] SIGKILL while the children run: the resumed roster and transcripts are intact, the children shown interrupted and never re-run", async () => {
    const { env, home, project } = workspace();
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d, { tools: ["read"] });
    const lead = await c.createAgent("r-agent", { display_name: "lead" });
    fake.respondWith((r) => {
      const child = childOf(r);
      if (child === undefined) return DELEGATE;
      // Child A finishes a tool round; both then hang in their model requests.
      if (child === "A" && rounds(r) === 0) return toolCallResponse([{ id: "call_read_A", name: "read", arguments: JSON.stringify({ path: "a.txt" }) }]);
      return { chunks: [], end: "hang" };
    });
    c.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "split the reading" });
    await waitFor(() => fake.chatRequests.filter((r) => childOf(r) === "A" && rounds(r) === 1).length === 1 && fake.chatRequests.some((r) => childOf(r) === "B"), "both children in flight", 60_000);
    const before = await c.roster();
    const children = before.rows.filter((r) => r.parent_id === lead).map((r) => r.agent_id);
    expect(children).toHaveLength(2);
    expect(before.rows.find((r) => r.agent_id === lead)?.status).toBe("waiting");
    for (const id of children) expect(before.rows.find((r) => r.agent_id === id)?.status).toBe("running");
    await waitFor(() => children.every((id) => agentJournal(home, id).some((r) => r.event.name === "agent.prompt_started")), "the children's starts recorded", 10_000);
    c.close();
    killTree(d.pid);
    await waitFor(() => !isAlive(d.pid), "the killed daemon to be gone", 10_000);
    const requestsAtKill = fake.chatRequests.length;
    const atKill = new Map([lead, ...children].map((id) => [id, agentJournal(home, id)]));

    const d2 = await daemonIn(cleanups, env, ["--resume", d.session_id, "--project-root", project]);
    const c2 = await attachUi(cleanups, d2, { tools: ["read"] });
    const after = await c2.roster();
    expect(after.total).toBe(3);
    for (const id of children) expect(after.rows.find((r) => r.agent_id === id)).toMatchObject({ parent_id: lead, creator: "agent", status: "interrupted" });
    expect(after.rows.find((r) => r.agent_id === lead)).toMatchObject({ status: "interrupted", display_name: "lead" });
    // Transcripts intact: every record before the kill is still there, unchanged, followed only by the
    // closing facts: the lead's agent_wait call, cut by the kill, ends with one error (never run
    // again); the children had no call open (one waits on its model, one on its first round).
    for (const [id, records] of atKill) {
      const now = agentJournal(home, id);
      expect(now.slice(0, records.length)).toEqual(records);
      const cut = id === lead ? [["provider.tool_error", undefined], ["tool.result_display", "error"]] : [];
      expect(now.slice(records.length).map((r) => [r.event.name, r.event.data.outcome])).toEqual([...cut, ["agent.outer_turn_finished", "dispatch_uncertain"]]);
    }
    const childA = children.find((id) => agentJournal(home, id).some((r) => r.event.name === "provider.tool_result"))!;
    expect(agentJournal(home, childA).filter((r) => r.event.name === "provider.tool_result")[0]?.event.data.output).toContain("contents of file A");
    // The history of a child pages back whole over the socket.
    c2.send({ message: "ui_history_request", payload: { request_id: "h1", agent_id: childA, limit: 1000 } });
    const page = (await c2.next((m) => m.message === "ui_history_result" && m.payload.request_id === "h1")) as Extract<WireMessage, { message: "ui_history_result" }>;
    expect(page.payload.records.map((r) => r.event.name)).toEqual(agentJournal(home, childA).map((r) => r.event.name));
    // Never re-run: the resume closed the cut turns before it served anyone, and asked the model nothing.
    expect(fake.chatRequests).toHaveLength(requestsAtKill);
    expect((await c2.roster()).rows.map((r) => r.status)).toEqual(["interrupted", "interrupted", "interrupted"]);
  }, 180_000);

  it("[trace.descendants.live] while the daemon runs: the parent's workflow traces with both children through their real creation records, and a fresh agent with no turn traces too", async () => {
    const { env, home, project } = workspace();
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d, { tools: ["read"] });
    const lead = await c.createAgent("r-agent", { display_name: "lead" });
    fake.respondWith((r) => {
      const child = childOf(r);
      if (child === undefined) return rounds(r) === 0 ? DELEGATE : textResponse("both children reported");
      if (rounds(r) === 0) return toolCallResponse([{ id: `call_read_${child}`, name: "read", arguments: JSON.stringify({ path: `${child.toLowerCase()}.txt` }) }]);
      return textResponse(`REPORT-${child}`);
    });
    c.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "split the reading between two helpers" });
    await c.delivered("agent.outer_turn_finished", (x) => x.agent_id === lead);
    const children = (await c.roster()).rows.filter((r) => r.parent_id === lead);
    await waitFor(async () => (await c.roster()).rows.every((r) => r.status === "idle"), "every agent idle", 10_000);
    // A fresh agent: only its creation record so far.
    c.emit("ui.create_agent", { request_id: "r-fresh", display_name: "fresh" });
    const m = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === "r-fresh");
    const fresh = String((m as Extract<WireMessage, { message: "direct" }>).payload.event.data.agent_id);

    const perf = await runTau(["agent", "trace", lead, "--descendants", "--perf"], { env });
    expect([perf.code, perf.stderr]).toEqual([0, ""]);
    const lines = perf.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    const agents = lines.filter((l) => l.kind === "agent");
    expect(agents[0]?.agent_id).toBe(lead);
    expect(agents).toHaveLength(3);
    expect(new Set(agents.slice(1).map((a) => a.agent_id))).toEqual(new Set(children.map((r) => r.agent_id)));
    expect(new Set(agents.slice(1).map((a) => a.created_by_call_id))).toEqual(new Set(["call_start_a", "call_start_b"]));
    expect(agents.every((a) => a.prompts === 1)).toBe(true); // each turn finished before the trace: the checkpoints hold them
    expect(lines.at(-1)).toMatchObject({ kind: "workflow", root_id: lead, agents: 3, prompts: 3 });
    expect(agents.map((a) => a.agent_id)).not.toContain(fresh);
    // The fresh agent, still loaded in the running daemon, has a consistent prefix: its creation record.
    const own = await runTau(["agent", "trace", fresh, "--format", "native"], { env });
    expect([own.code, own.stderr]).toEqual([0, ""]);
    const records = own.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { seq: number; event: { name: string } });
    expect(records[0]).toMatchObject({ seq: 0, event: { name: "agent.started" } });
    expect(records.length).toBeLessThanOrEqual(agentJournal(home, fresh).length);
    expect(isAlive(d.pid)).toBe(true);
  }, 180_000);

  it("[agent-team.roster.paged-ui-only] the roster answers attached UIs alone, a page at a time; a plain client gets a content-free refusal", async () => {
    const { env, project } = workspace();
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await TestClient.ui(d.socket, d.session_id);
    cleanups.push(() => c.close());
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      c.emit("ui.create_agent", { request_id: `r${i}`, display_name: `n\u001b[31m${i}` });
      const m = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === `r${i}`);
      ids.push(String((m as Extract<WireMessage, { message: "direct" }>).payload.event.data.agent_id));
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 3; i++) {
      const page = await c.roster({ limit: 2, ...(cursor !== undefined ? { cursor } : {}) });
      expect(page.total).toBe(5);
      expect(page.rows.length).toBeLessThanOrEqual(2);
      seen.push(...page.rows.map((r) => r.agent_id));
      for (const r of page.rows) expect(r).toMatchObject({ status: "idle", creator: "ui", loaded: true, display_name: expect.stringMatching(/^n\\u\{1b\}\[31m\d$/) });
      cursor = page.next_cursor;
      if (i < 2) expect(cursor).toBeDefined();
    }
    expect(cursor).toBeUndefined();
    expect(seen).toEqual([...ids].sort());
    const client = await TestClient.client(d.socket);
    cleanups.push(() => client.close());
    client.send({ message: "ui_roster_request", payload: { request_id: "sneak", include_unloaded: true } });
    const answer = await client.next((m) => m.message === "error" || m.message === "ui_roster_result", 10_000, "the client's answer");
    expect(answer.message).toBe("error");
    expect(JSON.stringify(answer)).not.toContain(ids[0]!);
  }, 60_000);
});
