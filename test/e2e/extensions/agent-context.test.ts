// Per-agent keyed context and readiness (SPEC-extension-declarations), through a real daemon and
// test-dummy processes that hold agents, declare context, drop it, die, and answer too late or for
// the wrong initialization: an agent's prompts wait for exactly its own holders.
import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TestClient } from "../../support/daemon.js";
import { agentHarnessYaml, agentJournal, daemonIn, workspaceIn } from "../../support/e2e.js";
import { textResponse } from "../../support/fake-openai.js";
import { committed, declarationSuite, dummy, rendered, submit } from "./support.js";

const suite = declarationSuite();
const { session } = suite;

const TICKET = { key: "ticket", text: "Ticket 42: the login page." };
const keeper = (extra: Record<string, unknown> = {}) => dummy("keeper", { driver: true, hold_agents: true, agent_context: [TICKET], ...extra });

/** A new agent and its initialization as the harness announced it. */
async function held(c: TestClient, request = "r-agent"): Promise<{ agent: string; init: Record<string, unknown> }> {
  const agent = await c.createAgent(request);
  const init = await c.delivered("agent.initialization_started", (x) => x.agent_id === agent);
  return { agent, init };
}

/** The driver says what `name` (`agent_ready`, `agent_context`) carries for `agent_id`. */
function drive(c: TestClient, name: "agent_ready" | "agent_context", payload: Record<string, unknown>): void {
  c.emit("extension.event", { category: "test", name, payload });
}

const turnOf = (c: TestClient, agent: string, marker: string) => suite.turnOf(c, agent, marker);

describe("per-agent keyed context and readiness", () => {
  it("[declarations.context.held-until-ready] a holder keeps an agent's prompts waiting until it is ready; its context is frozen into the agent and journaled once", async () => {
    const { c, home } = await session([keeper()]);
    const { agent, init } = await held(c);
    expect(init.waiting_for).toEqual(["keeper"]);
    await submit(c, agent, "held-1");
    await committed(c, "agent.context_declared", (x) => x.agent_id === agent && x.key === "ticket");
    expect(suite.systemSent("held-1")).toBeUndefined(); // held: nothing reached the model
    drive(c, "agent_ready", { agent_id: agent });
    const system = await turnOf(c, agent, "held-1");
    expect(system).toContain(rendered("agent_context", "keeper", "ticket", TICKET.text));
    // Context declared after the initialization finished names a stale id: it changes nothing.
    drive(c, "agent_context", { agent_id: agent, key: "later", text: "Too late." });
    await committed(c, "agent.context_declared", (x) => x.key === "later");
    expect(await suite.systemOf(c, agent, "held-2")).toBe(system);
    const sets = agentJournal(home, agent).filter((r) => r.event.name === "agent.initialization_context_set");
    expect(sets.map((r) => r.event.data)).toEqual([{ agent_id: agent, initialization_id: init.initialization_id, context: [{ instance: "keeper", ...TICKET }] }]);
    expect(agentJournal(home, agent).some((r) => r.event.name === "agent.context_declared" || r.event.name === "agent.readiness_declared")).toBe(false);
  });

  it("[declarations.context.first-agent-held] an agent created before the first extensions started (a UI's first agent) begins its initialization as the session begins, so their waiters hold it too", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tau-gate-"));
    suite.cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const gate = join(dir, "keeper-gate");
    writeFileSync(gate, "");
    const w = workspaceIn(suite.cleanups, agentHarnessYaml(suite.fake(), { shell: false, extensions: [keeper({ ready_gate: gate })] }));
    const d = await daemonIn(suite.cleanups, w.env, ["--project-root", w.project]);
    // Attached without waiting for the models: the provider's may wait for the keeper too.
    const c = await TestClient.ui(d.socket, d.session_id);
    suite.cleanups.push(() => c.close());
    c.send({ message: "subscribe", payload: { historical: [], live: ["*"] } });
    suite.fake().respondWith(() => textResponse("ok"));
    const agent = await c.createAgent("r-first");
    await submit(c, agent, "first-1");
    // The keeper is still starting: the session has not begun, so neither has the agent's initialization.
    await c.sync();
    expect(c.deliveriesOf("agent.initialization_started", (x) => x.agent_id === agent)).toEqual([]);
    rmSync(gate);
    const init = await c.delivered("agent.initialization_started", (x) => x.agent_id === agent);
    expect(init.waiting_for).toEqual(["keeper"]);
    await committed(c, "agent.context_declared", (x) => x.agent_id === agent && x.key === "ticket");
    expect(suite.systemSent("first-1")).toBeUndefined(); // held by the keeper
    drive(c, "agent_ready", { agent_id: agent });
    expect(await turnOf(c, agent, "first-1")).toContain(rendered("agent_context", "keeper", "ticket", TICKET.text));
  });

  it("[declarations.context.stale-initialization-id] readiness and context naming another initialization id or session change nothing", async () => {
    const { c } = await session([keeper({ agent_context: [] })]);
    const { agent } = await held(c);
    await submit(c, agent, "stale-1");
    drive(c, "agent_context", { agent_id: agent, key: "forged", text: "Wrong id.", initialization_id: "init-forged" });
    drive(c, "agent_ready", { agent_id: agent, initialization_id: "init-forged" });
    drive(c, "agent_ready", { agent_id: agent, session_id: "s-another-session" });
    await committed(c, "agent.readiness_declared", (x) => x.session_id === "s-another-session");
    expect(suite.systemSent("stale-1")).toBeUndefined();
    drive(c, "agent_ready", { agent_id: agent });
    const system = await turnOf(c, agent, "stale-1");
    expect(system).not.toContain("Wrong id.");
  });

  it("[declarations.context.one-agent-only] readiness for one agent releases that agent only", async () => {
    const { c } = await session([keeper()]);
    const a = await held(c, "r-a");
    const b = await held(c, "r-b");
    expect(a.init.initialization_id).not.toBe(b.init.initialization_id);
    await submit(c, a.agent, "only-a");
    await submit(c, b.agent, "only-b");
    // B's readiness carries B's id; sent for A's agent it matches nothing.
    drive(c, "agent_ready", { agent_id: a.agent, initialization_id: b.init.initialization_id });
    drive(c, "agent_ready", { agent_id: b.agent });
    await turnOf(c, b.agent, "only-b");
    await c.sync();
    expect(suite.systemSent("only-a")).toBeUndefined();
    drive(c, "agent_ready", { agent_id: a.agent });
    expect(await turnOf(c, a.agent, "only-a")).toContain(rendered("agent_context", "keeper", "ticket", TICKET.text));
  });

  it("[declarations.context.waiter-gone] a holder's exit releases the agent, and the context its dead connection declared is dropped", async () => {
    const { c, home } = await session([keeper(), dummy("other", { tools: [], agent_context: [{ key: "note", text: "From a live extension." }] })]);
    const { agent } = await held(c);
    await submit(c, agent, "gone-1");
    await committed(c, "agent.context_declared", (x) => x.agent_id === agent && x.key === "note");
    await committed(c, "agent.context_declared", (x) => x.agent_id === agent && x.key === "ticket");
    c.emit("extension.event", { category: "test", name: "exit", payload: {} });
    const system = await turnOf(c, agent, "gone-1");
    expect(system).toContain(rendered("agent_context", "other", "note", "From a live extension."));
    expect(system).not.toContain(TICKET.text);
    const [set] = agentJournal(home, agent).filter((r) => r.event.name === "agent.initialization_context_set");
    expect(set?.event.data).toMatchObject({ context: [{ instance: "other", key: "note" }] });
  });

  it("[declarations.context.interceptor-drop] context an interceptor drops never commits and never reaches the agent", async () => {
    const { c } = await session([keeper({ agent_context: [TICKET, { key: "secret", text: "Dropped." }] }), dummy("guard", { tools: [], drop_keys: ["secret"] })]);
    const { agent } = await held(c);
    await committed(c, "agent.context_declared", (x) => x.agent_id === agent && x.key === "ticket");
    drive(c, "agent_ready", { agent_id: agent });
    const system = await suite.systemOf(c, agent, "drop-1");
    expect(c.deliveriesOf("agent.context_declared", (x) => x.key === "secret")).toEqual([]);
    expect(system).toContain(TICKET.text);
    expect(system).not.toContain("Dropped.");
  });

  it("[declarations.context.late-subscriber] harness.agent_context_initialized is current state: a UI attaching later receives it", async () => {
    const { c, d } = await session([keeper()]);
    const { agent, init } = await held(c);
    drive(c, "agent_ready", { agent_id: agent });
    await c.delivered("harness.agent_context_initialized", (x) => x.agent_id === agent);
    const late = await TestClient.ui(d.socket, d.session_id);
    suite.cleanups.push(() => late.close());
    late.send({ message: "subscribe", payload: { historical: ["harness.agent_context_initialized"], live: [] } });
    const projection = await late.delivered("harness.agent_context_initialized", (x) => x.agent_id === agent);
    expect(projection).toEqual({ agent_id: agent, initialization_id: init.initialization_id, context: [{ instance: "keeper", key: "ticket" }] });
  });

  it("[declarations.context.bounds] past 16 keys or 32 KiB per instance and agent a declaration is refused whole, with a notice", async () => {
    const { c } = await session([keeper({ agent_context: [] })]);
    const { agent } = await held(c);
    for (let i = 0; i < 17; i++) drive(c, "agent_context", { agent_id: agent, key: `k${String(i).padStart(2, "0")}`, text: `context ${i}` });
    await c.delivered("harness.notice", (x) => String(x.text).startsWith(`agent context k16 from extension keeper for agent ${agent} refused: the instance already declared 16 keys`));
    const big = "y".repeat(16_000);
    for (const key of ["k00", "k01", "k02"]) drive(c, "agent_context", { agent_id: agent, key, text: big });
    await c.delivered("harness.notice", (x) => String(x.text).startsWith(`agent context k02 from extension keeper for agent ${agent} refused: the instance's context for this agent would exceed 32768 bytes`));
    drive(c, "agent_ready", { agent_id: agent });
    const system = await suite.systemOf(c, agent, "bounded");
    expect(system).toContain(rendered("agent_context", "keeper", "k00", big));
    expect(system).toContain(rendered("agent_context", "keeper", "k01", big));
    expect(system).toContain(rendered("agent_context", "keeper", "k02", "context 2"));
    expect(system).not.toContain('key="k16"');
  });
});
