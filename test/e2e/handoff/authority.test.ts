// A handoff carries no new authority (SPEC-handoff, "Authority carried"): through a real source
// daemon, the real shell extension with real bubblewrap, a loopback HTTP server and the loopback
// model, the replacement session starts with the source's configuration (its `--harness-config`
// overrides), its agent with the source agent's role, and none of the source session's own sandbox
// grants or choices.
import { describe, expect, it } from "vitest";
import { useLoopbackHost } from "../sandbox/support.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient, waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { command, daemon, delivered, handoffWorkspace, kill, messages, runningSession, scriptHandoff, toolNames } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

/** The host outside the sandbox the commands connect to. */
const host = useLoopbackHost();

/** Attaches a UI, live on everything and given the agents' creations and finished turns, once the models and the handoff tools are there. */
async function attachWithAgents(d: { socket: string; session_id: string }): Promise<TestClient> {
  const c = await TestClient.ui(d.socket, d.session_id);
  cleanups.push(() => c.close());
  c.send({ message: "subscribe", payload: { historical: ["harness.models_available", "tool.register", "agent.started", "agent.outer_turn_finished"], live: ["*"] } });
  await c.next((m) => m.message === "deliver" && m.payload.event.name === "harness.models_available" && (m.payload.event.data.models as unknown[]).length > 0, 30_000, "models");
  await c.next((m) => m.message === "deliver" && m.payload.event.name === "tool.register" && m.payload.event.data.name === "session_handoff_finish", 30_000, "session_handoff_finish");
  return c;
}

let sandboxRequests = 0;
/** `:sandbox ARGS` as the interactive UI sends it; the shell extension's answer. */
async function sandbox(c: TestClient, ...args: string[]): Promise<{ ok: boolean; text: string }> {
  const request_id = `sbx-${++sandboxRequests}`;
  c.emit("sandbox.command_request", { request_id, args });
  const r = await delivered(c, "sandbox.command_result", (x) => x.request_id === request_id, 30_000);
  return { ok: r.ok === true, text: String(r.text) };
}

/** The model's `shell` call fetching the loopback server (FETCH-IT in the prompt); its result. */
async function fetchThroughShell(c: TestClient, agentId: string, tag: string): Promise<string> {
  c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: `FETCH-IT ${tag}` });
  const r = await delivered(c, "tool.result", (x) => x.tool === "shell", 60_000);
  await delivered(c, "agent.outer_turn_finished");
  return String(r.output);
}

describe("a handoff carries no new authority", () => {
  it("[handoff.authority.no-broader] the replacement starts with the source's configuration overrides and agent role, and without the source session's sandbox grants, classifier choice or :sandbox off", async () => {
    const port = await host.start();
    const w = handoffWorkspace(fake, cleanups, {}, {
      // Without its role the replacement's agent would get the default policy, which grants more.
      roles: { default: { allow_tools: ["agent_compact"] }, narrow: { deny_tools: ["compact", "group:agents"] } },
    });
    writeFileSync(join(w.home, "config", "sandbox.yaml"), "network:\n  allowed_domains: [only.example]\n");
    const outside = join(w.home, "outside");
    mkdirSync(outside);
    const fetch = `curl -sS -f --noproxy '' -m 20 http://127.0.0.1:${port}/`;
    let calls = 0;
    scriptHandoff(fake, {
      other: (_r, text) => (text.includes("FETCH-IT") ? toolCallResponse([{ id: `call_fetch_${++calls}`, name: "shell", arguments: JSON.stringify({ command: fetch }) }]) : undefined),
    });
    // The source runs non-interactive (no approval is ever asked): an override the replacement must keep.
    const d = await daemon(w.env, ["--project-root", w.project, "--harness-config", "sandbox.approval=never"], cleanups);
    const c = await attachWithAgents(d);
    c.emit("ui.create_agent", { request_id: "r-agent", role: "narrow" });
    const created = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === "r-agent");
    if (created.message !== "direct" || created.payload.event.data.ok !== true) throw new Error("agent not created");
    const agentId = String(created.payload.event.data.agent_id);

    // The source session's own grants: the loopback host, a folder to write, a reviewer model.
    expect((await sandbox(c, "network", "allow", "add", "127.0.0.1")).ok).toBe(true);
    expect((await sandbox(c, "filesystem", "allow-write", "add", outside)).ok).toBe(true);
    expect((await sandbox(c, "classifier", "provider/fake-model")).ok).toBe(true);
    const sourceShow = (await sandbox(c, "show")).text;
    expect(sourceShow).toContain("mode: non-interactive (--approval never)");
    expect(sourceShow).toMatch(/network allowed .* \+ session:\n(.*\n)*  127\.0\.0\.1\n/);
    // The grant works in the source: the fetch goes through, unasked.
    expect(await fetchThroughShell(c, agentId, "in the source")).toBe("hello from the host\n[exit code 0]");
    expect(host.hits).toBe(1);
    const sourceRequest = fake.chatRequests.find((r) => JSON.stringify(messages(r).at(-1)).includes("FETCH-IT in the source"))!;
    const sourceTools = toolNames(sourceRequest);
    expect(sourceTools).toContain("shell");
    expect(sourceTools).not.toContain("compact");
    expect(sourceTools).not.toContain("agent_compact");
    // Last, the source suspends its sandbox altogether.
    expect((await sandbox(c, "off")).ok).toBe(true);

    expect((await command(c, agentId, "h1", "start")).ok).toBe(true);
    const successor = String((await delivered(c, "session.handed_off")).successor_session_id);
    let row: Awaited<ReturnType<typeof runningSession>>;
    await waitFor(async () => (row = await runningSession(w.home, successor)) !== undefined, "the replacement daemon", 30_000);
    cleanups.push(() => kill(row!.pid));
    const r = await attachWithAgents(row!);

    // Its agent has the source agent's role, and is offered exactly the source agent's tools.
    const started = await delivered(r, "agent.started", () => true, 30_000);
    expect(started.role).toBe("narrow");
    const replacementId = String(started.agent_id);
    await waitFor(() => fake.chatRequests.some((q) => JSON.stringify(messages(q)).includes("# Handoff from session")), "the replacement's first request", 30_000);
    const firstTurn = fake.chatRequests.find((q) => JSON.stringify(messages(q)).includes("# Handoff from session"))!;
    expect(toolNames(firstTurn)).toEqual(sourceTools);

    // Its sandbox: the configuration and the source's override, active, none of the session's grants.
    const show = (await sandbox(r, "show")).text;
    expect(show).toMatch(/^sandbox: active/);
    expect(show).toContain("mode: non-interactive (--approval never)");
    expect(show).not.toContain("+ session");
    expect(show).not.toContain("127.0.0.1");
    expect(show).not.toContain(outside);
    expect(show).not.toContain("provider/fake-model");
    // And it acts so: the fetch the source was granted is refused, at once, nobody asked.
    await delivered(r, "agent.outer_turn_finished", (x) => x.agent_id === replacementId, 30_000);
    const refused = await fetchThroughShell(r, replacementId, "in the replacement");
    expect(refused).not.toContain("hello from the host");
    expect(refused).toMatch(/\[exit code [1-9]\d*\]\n/);
    expect(refused).toContain("nobody was asked (non-interactive)");
    expect(host.hits).toBe(1);
    expect(r.deliveries().some((x) => x.name === "sandbox.approval_requested")).toBe(false);
  }, 180_000);
});
