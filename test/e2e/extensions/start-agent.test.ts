// Start-agent requests from extensions (SPEC-extension-declarations, "Start-agent requests"),
// through a real daemon and test-dummy processes: roles and parents checked, a repeated request id
// rebound to the agent it started (after a restart too), another session's, a dead connection's and
// a socket's requests creating nothing.
import { describe, expect, it } from "vitest";
import { waitFor, type TestClient } from "../../support/daemon.js";
import { agentJournal } from "../../support/e2e.js";
import { declarationSuite, dummy } from "./support.js";

const suite = declarationSuite();
const ROLES = { roles: { scout: { description: "looks around" } } };

/** The driver asks for an agent (`tag` names the answer); resolves with the answer test-dummy saw. */
async function start(c: TestClient, tag: string, payload: Record<string, unknown>): Promise<Record<string, unknown>> {
  c.emit("extension.event", { category: "test", name: "start_agent", payload: { tag, ...payload } });
  const told = await c.delivered("extension.event", (x) => x.name === "start_result" && (x.payload as { tag?: string }).tag === tag, 30_000);
  return told.payload as Record<string, unknown>;
}

const startedAgents = (c: TestClient) => c.deliveriesOf("agent.started").map((d) => d.data);

describe("start-agent requests from extensions", () => {
  it("[declarations.start.created] an extension starts an agent of a role, as a child of a loaded agent, named; it is created like any other", async () => {
    const { c, home } = await suite.session([dummy("boss", { driver: true })], ROLES);
    const parent = await c.createAgent("r-parent");
    const answer = await start(c, "one", { role: "scout", parent_id: parent, display_name: "Scout" });
    expect(answer).toMatchObject({ ok: true });
    const agent = String(answer.agent_id);
    expect(startedAgents(c).find((a) => a.agent_id === agent)).toMatchObject({ creator: "extension", role: "scout", parent_id: parent });
    expect(agentJournal(home, agent)[0]?.event.name).toBe("agent.started");
    expect(c.deliveriesOf("agent.metadata_set", (x) => x.agent_id === agent && x.key === "display_name")[0]?.data.value).toBe("Scout");
    expect(await suite.systemOf(c, agent, "started-1")).not.toBe("");
  });

  it("[declarations.start.refused] an unknown role or parent is refused with the reason, and nothing is created", async () => {
    const { c } = await suite.session([dummy("boss", { driver: true })], ROLES);
    expect(await start(c, "role", { role: "wizard" })).toMatchObject({ ok: false, error: expect.stringContaining('unknown role "wizard"') });
    expect(await start(c, "parent", { parent_id: "a-nobody" })).toMatchObject({ ok: false, error: expect.stringContaining("unknown parent agent a-nobody") });
    expect(startedAgents(c)).toEqual([]);
  });

  it("[declarations.start.duplicate-rebinding] the same request id again — from the same process or its restarted one — answers the agent it started", async () => {
    const { c } = await suite.session([dummy("boss", { driver: true })], ROLES);
    const first = await start(c, "first", { request_id: "req-1" });
    expect(first).toMatchObject({ ok: true, request_id: "req-1" });
    expect(await start(c, "again", { request_id: "req-1" })).toMatchObject({ ok: true, agent_id: first.agent_id });
    c.emit("extension.event", { category: "test", name: "exit", payload: {} });
    await waitFor(() => c.deliveriesOf("tool.register", (x) => x.name === "echo").length >= 2, "the restarted process", 30_000);
    expect(await start(c, "restarted", { request_id: "req-1" })).toMatchObject({ ok: true, agent_id: first.agent_id });
    expect(startedAgents(c)).toHaveLength(1);
  });

  it("[declarations.start.stale-session] a request naming another session is an observation only: nothing created, nothing answered", async () => {
    const { c } = await suite.session([dummy("boss", { driver: true })], ROLES);
    c.emit("extension.event", { category: "test", name: "start_agent", payload: { tag: "other", request_id: "req-other", session_id: "s-another-session" } });
    await waitFor(() => c.deliveriesOf("agent.start_request", (x) => x.request_id === "req-other").length === 1, "the request to commit", 30_000);
    // A later request's answer comes after anything the first could have produced.
    expect(await start(c, "later", { request_id: "req-later" })).toMatchObject({ ok: true });
    expect(c.deliveriesOf("extension.event", (x) => x.name === "start_result" && (x.payload as { tag?: string }).tag === "other")).toEqual([]);
    expect(startedAgents(c)).toHaveLength(1);
  });

  it("[declarations.start.stale-generation] a request that commits after its connection ended creates nothing", async () => {
    const { c } = await suite.session([dummy("boss", { driver: true }), dummy("guard", { tools: [], hold_keys: ["start"] })], ROLES);
    c.emit("extension.event", { category: "test", name: "start_agent", payload: { tag: "dead", request_id: "req-dead", exit: true } });
    await waitFor(() => c.deliveriesOf("agent.start_request", (x) => x.request_id === "req-dead").length === 1, "the held request to commit", 30_000);
    await waitFor(() => c.deliveriesOf("tool.register", (x) => x.name === "echo").length >= 2, "the restarted process", 30_000);
    await c.sync();
    expect(startedAgents(c)).toEqual([]);
  });

  it("[declarations.start.socket-denied] a UI or other socket peer cannot publish a start-agent request", async () => {
    const { c } = await suite.session([dummy("boss", { driver: true })], ROLES);
    c.emit("agent.start_request", { request_id: "req-ui", session_id: "any" });
    const refused = await c.next((m) => m.message === "error", 10_000, "the refusal");
    expect(refused).toMatchObject({ message: "error", payload: { code: "unauthorized" } });
    await c.sync();
    expect(c.deliveriesOf("agent.start_request")).toEqual([]);
    expect(startedAgents(c)).toEqual([]);
  });
});
