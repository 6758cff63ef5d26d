// Navigation modes through a real daemon (SPEC-agent-navigation): only an attached UI changes them,
// the answer goes to it alone, nothing is published or journaled, a resume starts from the
// defaults, and a UI's admitted human prompt makes its agent active.
import { afterEach, describe, expect, it } from "vitest";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { TestClient, isAlive, startDaemon, startDaemonWithExtensions, tauHome, waitFor, type StartedDaemon } from "../../support/daemon.js";
import { REPO_ROOT } from "../../support/paths.js";
import type { NavigationMode, WireMessage } from "../../../generated/index.js";

const NAVIGATOR = ["node", "--import", "tsx", join(REPO_ROOT, "test/fixtures/host/navigation-extension.ts")];
const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()?.();
});

async function daemon(env: NodeJS.ProcessEnv, args: string[] = []): Promise<StartedDaemon> {
  const d = await startDaemon(env, args);
  cleanups.push(() => {
    if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
  });
  return d;
}

async function ui(d: StartedDaemon): Promise<TestClient> {
  const c = await TestClient.ui(d.socket, d.session_id);
  cleanups.push(() => c.close());
  return c;
}

async function createAgent(c: TestClient, requestId: string): Promise<string> {
  c.emit("ui.create_agent", { request_id: requestId });
  const m = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === requestId);
  if (m.message !== "direct" || m.payload.event.data.ok !== true) throw new Error("agent not created");
  return String(m.payload.event.data.agent_id);
}

let requests = 0;
async function modeOf(c: TestClient, agentId: string): Promise<NavigationMode | undefined> {
  const request_id = `roster-${++requests}`;
  c.send({ message: "ui_roster_request", payload: { request_id, include_unloaded: false } });
  const m = await c.next((x) => x.message === "ui_roster_result" && x.payload.request_id === request_id);
  return (m as Extract<WireMessage, { message: "ui_roster_result" }>).payload.rows.find((r) => r.agent_id === agentId)?.navigation;
}

async function navigate(c: TestClient, agentId: string, mode: NavigationMode): Promise<WireMessage> {
  const request_id = `nav-${++requests}`;
  c.send({ message: "ui_navigation_request", payload: { request_id, agent_id: agentId, mode } });
  return c.next((x) => (x.message === "ui_navigation_result" || x.message === "error") && x.payload.request_id === request_id);
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe("navigation modes", () => {
  it("[agent-navigation.ui-only] an attached UI sets a mode and alone hears the answer; a client is refused content-free, an extension silently, and nothing changes", async () => {
    const cleanup: Array<() => void> = [];
    cleanups.push(() => cleanup.forEach((f) => f()));
    const d = await startDaemonWithExtensions([{ name: "navigator", command: NAVIGATOR, startup_timeout_seconds: 30 }], cleanup);
    const a = await ui(d);
    const b = await ui(d);
    b.send({ message: "subscribe", payload: { historical: ["extension.ready"], live: ["*"] } });
    await b.next((m) => m.message === "deliver" && m.payload.event.name === "extension.ready", 30_000, "the extension ready");
    const agent = await createAgent(a, "r-1");
    expect(await modeOf(a, agent)).toBe("active");

    expect(await navigate(a, agent, "suspended")).toMatchObject({ message: "ui_navigation_result", payload: { agent_id: agent, mode: "suspended" } });
    expect(await modeOf(b, agent)).toBe("suspended");
    expect(b.inbox.some((m) => m.message === "ui_navigation_result")).toBe(false);
    expect(await navigate(a, "a-nobody", "active")).toMatchObject({ message: "error", payload: { code: "invalid" } });

    const client = await TestClient.client(d.socket);
    cleanups.push(() => client.close());
    client.send({ message: "ui_navigation_request", payload: { request_id: "r-sneak", agent_id: agent, mode: "active" } });
    expect((await client.next((m) => m.message === "error")).payload).toEqual({ code: "unauthorized", request_id: "r-sneak" });
    expect(client.inbox.some((m) => m.message === "ui_navigation_result")).toBe(false);
    expect(await modeOf(a, agent)).toBe("suspended");

    // The extension asks to make it active again and to read the roster: no answer, nothing changed.
    a.emit("extension.event", { category: "test", name: "navigate", payload: { agent_id: agent } });
    const report = await b.next((m) => m.message === "deliver" && m.payload.event.name === "extension.event" && m.payload.event.data.category === "nav", 20_000, "the extension's report");
    expect((report as Extract<WireMessage, { message: "deliver" }>).payload.event.data.payload).toEqual({ answers: [] });
    expect(await modeOf(a, agent)).toBe("suspended");
    // Nothing about navigation was ever published to the subscriber.
    expect(b.deliveries().filter((x) => x.name.includes("navigation") || JSON.stringify(x.data).includes("suspended"))).toEqual([]);
  }, 60_000);

  it("[agent-navigation.not-durable] a mode is never journaled: no state file holds it, and a resumed session starts from the defaults", async () => {
    const h = tauHome();
    cleanups.push(h.dispose);
    const d = await daemon(h.env);
    const a = await ui(d);
    const agent = await createAgent(a, "r-1");
    expect(await navigate(a, agent, "suspended")).toMatchObject({ message: "ui_navigation_result" });
    expect(await modeOf(a, agent)).toBe("suspended");
    a.close();
    process.kill(d.pid, "SIGTERM");
    await waitFor(() => !isAlive(d.pid), "the daemon to stop", 10_000);
    const files = filesUnder(join(h.home, "state"));
    expect(files.some((f) => f.endsWith("events.cbor"))).toBe(true);
    for (const f of files) {
      const bytes = readFileSync(f);
      expect(bytes.includes("suspended"), f).toBe(false);
      expect(bytes.includes("navigation"), f).toBe(false);
    }
    const d2 = await daemon(h.env, ["--resume", d.session_id]);
    const a2 = await ui(d2);
    expect(await modeOf(a2, agent)).toBe("active");
  }, 60_000);

  it("[agent-navigation.implicit-active] a UI's human prompt, once admitted, makes its suspended agent active", async () => {
    const h = tauHome();
    cleanups.push(h.dispose);
    const d = await daemon(h.env);
    const a = await ui(d);
    a.send({ message: "subscribe", payload: { historical: [], live: ["agent.prompt_submitted"] } });
    await a.sync();
    const agent = await createAgent(a, "r-1");
    const other = await createAgent(a, "r-2");
    await navigate(a, agent, "suspended");
    await navigate(a, other, "suspended");
    a.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text: "hello" });
    await a.next((m) => m.message === "deliver" && m.payload.event.name === "agent.prompt_submitted" && m.payload.event.data.agent_id === agent);
    await waitFor(async () => (await modeOf(a, agent)) === "active", "the prompted agent active", 10_000);
    // Only the agent the prompt reached.
    expect(await modeOf(a, other)).toBe("suspended");
  }, 60_000);
});
