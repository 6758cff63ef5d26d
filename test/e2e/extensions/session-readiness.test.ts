// Session readiness (SPEC-extension-declarations, "Session readiness"), through a real daemon and
// test-dummy processes that hold the session, answer for the wrong session or initialization, die,
// declare their wait too late or from a connection that is gone, or have their answer dropped.
import { describe, expect, it } from "vitest";
import { TestClient, waitFor } from "../../support/daemon.js";
import { agentJournal, attachUi, daemonIn, killTree, running } from "../../support/e2e.js";
import { committed, declarationSuite, dummy, rendered, submit } from "./support.js";

const suite = declarationSuite();
const { session } = suite;

const holder = (extra: Record<string, unknown> = {}) => dummy("holder", { driver: true, hold_session: true, ...extra });

/** The driver `instance` acts on `name` with `payload`. */
function drive(c: TestClient, instance: string, name: string, payload: Record<string, unknown> = {}): void {
  c.emit("extension.event", { category: "test", name, payload: { instance, ...payload } });
}

/**
 * Has `instance` declare fragment `key` and waits for it to commit: what the instance sent before
 * it (a readiness, a wait) has then been taken or dropped.
 */
async function marker(c: TestClient, instance: string, key: string): Promise<void> {
  drive(c, instance, "fragments", { fragments: [{ key, text: `marker ${key}` }] });
  await committed(c, "extension.prompt_fragment_declared", (x) => x.key === key);
}

/** The session's initialization as a subscriber that asks for current state sees it. */
async function sessionState(c: TestClient): Promise<{ name: string; data: Record<string, unknown> }> {
  c.send({ message: "subscribe", payload: { historical: ["session.initialization_started", "session.initialized"], live: [] } });
  await waitFor(() => c.deliveriesOf("session.initialization_started").length + c.deliveriesOf("session.initialized").length > 0, "the session's initialization", 30_000);
  const seen = [...c.deliveriesOf("session.initialization_started"), ...c.deliveriesOf("session.initialized")];
  return { name: c.deliveriesOf("session.initialized").length > 0 ? "session.initialized" : "session.initialization_started", data: (seen.at(-1) as { data: Record<string, unknown> }).data };
}

/** What a subscriber with no live subscription receives of the session's initialization: one current state. */
async function onlyState(c: TestClient): Promise<{ name: string; data: Record<string, unknown> }> {
  const state = await sessionState(c);
  await c.sync();
  expect(c.deliveriesOf("session.initialization_started").length + c.deliveriesOf("session.initialized").length).toBe(1);
  return state;
}

/** The session's pending initialization (it began before or after the UI attached). */
async function begun(c: TestClient): Promise<Record<string, unknown>> {
  const state = await sessionState(c);
  expect(state.name).toBe("session.initialization_started");
  return state.data;
}

/** A new agent with a prompt queued; its initialization began. */
async function queued(c: TestClient, text: string, request = "r-agent"): Promise<string> {
  const agent = await c.createAgent(request);
  await c.delivered("agent.initialization_started", (x) => x.agent_id === agent);
  await submit(c, agent, text);
  return agent;
}

const NOTE = "Conventions declared while the session was held.";

describe("session readiness", () => {
  it("[declarations.session.holds-agents] a session waiter holds every agent's initialization until it is ready; what it declared meanwhile reaches them", async () => {
    const { c, home, d } = await session([holder()]);
    const started = await begun(c);
    expect(started).toMatchObject({ session_id: d.session_id, waiting_for: ["holder"] });
    const agent = await queued(c, "held-s1");
    // Declared while the session is held: a fragment and a discovery snapshot (its AGENTS.md).
    drive(c, "holder", "fragments", { fragments: [{ key: "conventions", text: NOTE }] });
    drive(c, "holder", "discovery", { items: [{ kind: "agents_md", path: "/holder/AGENTS.md", text: "Team rule: small commits." }] });
    await committed(c, "extension.discovery_snapshot_declared", () => true);
    expect(suite.systemSent("held-s1")).toBeUndefined(); // held: nothing reached the model
    expect(agentJournal(home, agent).some((r) => r.event.name === "agent.initialization_context_set")).toBe(false);
    drive(c, "holder", "session_ready");
    expect(await c.delivered("session.initialized")).toEqual({ session_id: d.session_id, initialization_id: started.initialization_id });
    const system = await suite.turnOf(c, agent, "held-s1");
    expect(system).toContain(rendered("extension_fragment", "holder", "conventions", NOTE));
    expect(system).toContain('<agents_md path="/holder/AGENTS.md">\nTeam rule: small commits.\n</agents_md>');
    // The agent's finalization is recorded once the session was ready, before its first round.
    const names = agentJournal(home, agent).map((r) => r.event.name);
    expect(names.slice(0, 4)).toEqual(["agent.started", "agent.prompt_submitted", "agent.initialization_context_set", "agent.prompt_started"]);
    expect(agentJournal(home, agent).some((r) => r.event.name.startsWith("session."))).toBe(false);
  });

  it("[declarations.session.resumed-begins-again] a resumed session begins again with a fresh id, and holds its resumed agents", async () => {
    const { c, d, w, home } = await session([holder()]);
    const first = await begun(c);
    drive(c, "holder", "session_ready");
    const agent = await c.createAgent();
    await suite.systemOf(c, agent, "before-resume");
    c.close();
    killTree(d.pid);
    await waitFor(() => !running(d.pid), "the daemon to stop", 30_000);
    const resumed = await daemonIn(suite.cleanups, w.env, ["--resume", d.session_id, "--project-root", w.project]);
    const c2 = await attachUi(suite.cleanups, resumed, { tools: ["echo"] });
    const second = await begun(c2);
    expect(second.session_id).toBe(d.session_id);
    expect(second.waiting_for).toEqual(["holder"]);
    expect(second.initialization_id).not.toBe(first.initialization_id);
    await submit(c2, agent, "after-resume");
    await marker(c2, "holder", "after-resume-marker");
    expect(suite.systemSent("after-resume")).toBeUndefined();
    drive(c2, "holder", "session_ready");
    await suite.turnOf(c2, agent, "after-resume");
    const sets = agentJournal(home, agent).filter((r) => r.event.name === "agent.initialization_context_set");
    expect(sets).toHaveLength(2); // one finalization per process, each with its own id
  });

  it("[declarations.session.stale-session-id] readiness naming another session or another initialization id changes nothing", async () => {
    const { c } = await session([holder()]);
    await begun(c);
    const agent = await queued(c, "stale-s1");
    drive(c, "holder", "session_ready", { initialization_id: "init-forged" });
    drive(c, "holder", "session_ready", { session_id: "s-another-session" });
    await marker(c, "holder", "after-forged");
    expect(c.deliveriesOf("session.readiness_declared")).toHaveLength(2); // both committed: observations only
    expect(c.deliveriesOf("session.initialized")).toEqual([]);
    expect(suite.systemSent("stale-s1")).toBeUndefined();
    drive(c, "holder", "session_ready");
    await c.delivered("session.initialized");
    await suite.turnOf(c, agent, "stale-s1");
  });

  it("[declarations.session.stale-generation] a readiness that commits after its connection ended is an observation only: it releases no other waiter", async () => {
    // The guard holds the readiness past the interception deadline while its declarer exits, so it
    // commits from a connection that is gone; the second waiter still holds the session.
    const { c } = await session([holder(), dummy("second", { driver: true, tools: [], hold_session: true }), dummy("guard", { tools: [], hold_keys: ["session_ready"] })]);
    expect((await begun(c)).waiting_for).toEqual(["holder", "second"]);
    const agent = await queued(c, "stale-gen");
    drive(c, "holder", "session_ready", { exit: true });
    await waitFor(() => c.deliveriesOf("extension.exited", (x) => x.instance === "holder").length === 1, "the declarer's exit", 30_000);
    await committed(c, "session.readiness_declared", () => true);
    expect(c.deliveriesOf("session.initialized")).toEqual([]);
    expect(suite.systemSent("stale-gen")).toBeUndefined();
    drive(c, "second", "exit"); // the last captured waiter's end releases it
    await c.delivered("session.initialized");
    await suite.turnOf(c, agent, "stale-gen");
  });

  it("[declarations.session.not-captured] a waiter that declared after the session began holds nothing, and its readiness releases nothing", async () => {
    const { c } = await session([holder(), dummy("late", { driver: true, tools: [] })]);
    const started = await begun(c);
    expect(started.waiting_for).toEqual(["holder"]);
    const agent = await queued(c, "late-1");
    // Readiness for the exact pending initialization, from a connection that was not captured.
    drive(c, "late", "session_ready", { session_id: started.session_id, initialization_id: started.initialization_id });
    await marker(c, "late", "after-late");
    expect(c.deliveriesOf("session.initialized")).toEqual([]);
    expect(suite.systemSent("late-1")).toBeUndefined();
    // A wait declared after the session began holds nothing: the captured holder's readiness is enough.
    const waits = c.deliveriesOf("session.readiness_wait_declared").length;
    drive(c, "late", "session_wait");
    await waitFor(() => c.deliveriesOf("session.readiness_wait_declared").length > waits, "the late wait to commit", 30_000);
    await c.sync();
    drive(c, "holder", "session_ready");
    await c.delivered("session.initialized");
    await suite.turnOf(c, agent, "late-1");
  });

  it("[declarations.session.agent-readiness-keeps-session] per-agent readiness never releases the session", async () => {
    const { c } = await session([holder({ hold_agents: true })]);
    await begun(c);
    const agent = await queued(c, "agent-ready-1");
    drive(c, "holder", "agent_ready", { agent_id: agent });
    await committed(c, "agent.readiness_declared", (x) => x.agent_id === agent);
    await marker(c, "holder", "after-agent-ready");
    expect(c.deliveriesOf("session.initialized")).toEqual([]);
    expect(suite.systemSent("agent-ready-1")).toBeUndefined();
    drive(c, "holder", "session_ready");
    await suite.turnOf(c, agent, "agent-ready-1");
  });

  it("[declarations.session.session-readiness-keeps-agents] session readiness never releases an agent its own waiter holds", async () => {
    const { c } = await session([holder({ hold_agents: true })]);
    await begun(c);
    const agent = await queued(c, "session-ready-1");
    drive(c, "holder", "session_ready");
    await c.delivered("session.initialized");
    await marker(c, "holder", "after-session-ready");
    expect(c.deliveriesOf("harness.agent_context_initialized", (x) => x.agent_id === agent)).toEqual([]);
    expect(suite.systemSent("session-ready-1")).toBeUndefined();
    drive(c, "holder", "agent_ready", { agent_id: agent });
    await suite.turnOf(c, agent, "session-ready-1");
  });

  it("[declarations.session.waiter-gone] a captured waiter's exit releases the session", async () => {
    const { c } = await session([holder()]);
    await begun(c);
    const agent = await queued(c, "gone-s1");
    drive(c, "holder", "exit");
    await c.delivered("session.initialized");
    await suite.turnOf(c, agent, "gone-s1");
  });

  it("[declarations.session.interceptor-drop] a readiness an interceptor drops never commits and releases nothing", async () => {
    const { c } = await session([holder(), dummy("guard", { tools: [], drop_keys: ["session_ready"] })]);
    await begun(c);
    const agent = await queued(c, "drop-s1");
    drive(c, "holder", "session_ready");
    await marker(c, "holder", "after-dropped");
    expect(c.deliveriesOf("session.readiness_declared")).toEqual([]);
    expect(c.deliveriesOf("session.initialized")).toEqual([]);
    expect(suite.systemSent("drop-s1")).toBeUndefined();
    drive(c, "holder", "exit"); // only its end releases it now
    await suite.turnOf(c, agent, "drop-s1");
  });

  it("[declarations.session.late-subscriber] the session's initialization is current state: a late subscriber receives the pending one, then the finished one", async () => {
    const { c, d } = await session([holder()]);
    const started = await begun(c);
    const late = await TestClient.ui(d.socket, d.session_id);
    suite.cleanups.push(() => late.close());
    expect(await onlyState(late)).toEqual({ name: "session.initialization_started", data: started });
    drive(c, "holder", "session_ready");
    await c.delivered("session.initialized");
    const later = await TestClient.ui(d.socket, d.session_id);
    suite.cleanups.push(() => later.close());
    expect(await onlyState(later)).toEqual({ name: "session.initialized", data: { session_id: d.session_id, initialization_id: started.initialization_id } });
  });
});
