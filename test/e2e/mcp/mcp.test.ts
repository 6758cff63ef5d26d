// MCP servers as tau tools (SPEC-mcp), end to end: the real `tau run` and daemon, the real `tau ext
// mcp` instances, real MCP servers installed from npm (server-everything, server-filesystem) and a
// small SDK-built fixture server (test/fixtures/mcp/server.mjs), against the scripted model.
import { describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { TestClient, startDaemon, waitFor, type StartedDaemon } from "../../support/daemon.js";
import { killTree, useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse, type ReceivedRequest } from "../../support/fake-openai.js";
import { extensionsLog, mcpWorkspace, messagesOf, toolMessage, toolsOf } from "../../support/mcp.js";
import { runTau } from "../../support/run-tau.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve("@modelcontextprotocol/server-everything/dist/index.js");
const FILESYSTEM = require.resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
const FIXTURE = join(import.meta.dirname, "../../fixtures/mcp/server.mjs");

const workspace = (servers: Record<string, unknown>): Workspace => mcpWorkspace(cleanups, fake, servers);
/** harness.yaml with PROJECT replaced by the workspace's project folder. */
function inProject(w: Workspace): void {
  const file = join(w.home, "config", "harness.yaml");
  writeFileSync(file, readFileSync(file, "utf8").replaceAll("PROJECT", w.project));
}

describe("MCP servers through tau run", () => {
  it("[mcp.tools.everything-and-filesystem] a scripted model is offered and calls echo of server-everything and read_text_file of server-filesystem", async () => {
    const w = workspace({
      everything: { command: process.execPath, args: [EVERYTHING, "stdio"], wait_at_start: true },
      files: { command: process.execPath, args: [FILESYSTEM, "PROJECT"], wait_at_start: true },
    });
    // The filesystem server serves the project folder only.
    inProject(w);
    writeFileSync(join(w.project, "notes.txt"), "remember the milk\n");
    fake.enqueue(
      toolCallResponse([
        { id: "call_echo", name: "mcp__everything__echo", arguments: JSON.stringify({ message: "hello from the model" }) },
        { id: "call_read", name: "mcp__files__read_text_file", arguments: JSON.stringify({ path: join(w.project, "notes.txt") }) },
      ]),
      textResponse("both done"),
    );
    const r = await runTau(["run", "-p", "use the mcp tools"], { env: w.env, cwd: w.project });
    expect(r.stderr).not.toContain("mcp server everything: failed");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("both done");
    const [first, second] = fake.chatRequests;
    expect(toolsOf(first!)).toEqual(expect.arrayContaining(["mcp__everything__echo", "mcp__files__read_text_file", "read", "shell"]));
    const echoed = toolMessage(second!, "call_echo");
    expect(echoed).toContain("hello from the model");
    expect(echoed).toContain('<mcp_result server="everything" tool="echo" trust="untrusted">');
    expect(toolMessage(second!, "call_read")).toContain("remember the milk");
  }, 120_000);

  it("[mcp.lifecycle.hang-at-start] a server that hangs at start is reported failed after its start-up timeout, and the session still answers", async () => {
    const w = workspace({ stuck: { command: process.execPath, args: [FIXTURE, "hang"], env: { API_TOKEN: "s3cret-e2e-token" }, startup_timeout_ms: 300, wait_at_start: true } });
    fake.enqueue(textResponse("still here"));
    const r = await runTau(["run", "-p", "hello"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("still here");
    expect(extensionsLog(w.home)).toContain("mcp server stuck: failed (did not become ready within its start-up timeout (300 ms))");
    // Its env value is in no log and no output.
    for (const text of [extensionsLog(w.home), r.stderr, r.stdout]) expect(text).not.toContain("s3cret-e2e-token");
    expect(toolsOf(fake.chatRequests[0]!).filter((t) => t.startsWith("mcp__"))).toEqual([]);
  }, 120_000);

  it("[mcp.lifecycle.slow-does-not-delay] a server still starting (its start-up timeout 10 minutes) does not hold the first prompt: the run answers without its tools", async () => {
    const w = workspace({ slow: { command: process.execPath, args: [FIXTURE, "hang"], startup_timeout_ms: 600_000 } });
    fake.enqueue(textResponse("answered at once"));
    const r = await runTau(["run", "-p", "hello"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("answered at once");
    expect(toolsOf(fake.chatRequests[0]!).filter((t) => t.startsWith("mcp__"))).toEqual([]);
  }, 120_000);

  it("[mcp.lifecycle.no-orphans] a server that ignores the end of its input and SIGTERM does not outlive the session", async () => {
    const starts = join(workspaceIn(cleanups).home, "starts.txt");
    writeFileSync(starts, "");
    // Unsandboxed (the sandboxed case is mcp.sandbox.no-orphans): its pid, written outside the project, is the host's.
    const w = workspace({ stubborn: { command: process.execPath, args: [FIXTURE, "stubborn"], env: { MCP_FIXTURE_STARTS: starts }, wait_at_start: true, sandbox: false } });
    fake.enqueue(textResponse("bye"));
    const r = await runTau(["run", "-p", "hello"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    const pid = Number(readFileSync(starts, "utf8").trim().split("\n")[0]);
    expect(pid).toBeGreaterThan(0);
    cleanups.push(() => {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone, as it should be
      }
    });
    const alive = (): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitFor(() => !alive(), "the stubborn server to be gone", 15_000);
  }, 120_000);

  it("[mcp.results.bounded] a tool returning 20 MiB reaches the model cut to 64 KiB, with a note saying so", async () => {
    const w = workspace({ fixture: { command: process.execPath, args: [FIXTURE, "tools"], wait_at_start: true } });
    fake.enqueue(toolCallResponse([{ id: "call_big", name: "mcp__fixture__big", arguments: "{}" }]), textResponse("got it"));
    const r = await runTau(["run", "-p", "fetch the big thing"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    const out = toolMessage(fake.chatRequests[1]!, "call_big");
    expect(Buffer.byteLength(out)).toBeLessThan(64 * 1024 + 1024);
    expect(out).toContain("[result cut: the first 65536 bytes shown; the server sent about 20971520 characters");
  }, 120_000);

  it("[mcp.tools.prefix-no-clash] a server tool named like a built-in is offered under its prefix beside the built-in; a schema tau cannot offer is reported by name", async () => {
    const w = workspace({ fixture: { command: process.execPath, args: [FIXTURE, "tools"], wait_at_start: true } });
    writeFileSync(join(w.project, "a.txt"), "built-in read\n");
    fake.enqueue(
      toolCallResponse([
        { id: "call_builtin", name: "read", arguments: JSON.stringify({ path: "a.txt" }) },
        { id: "call_mcp", name: "mcp__fixture__read", arguments: "{}" },
      ]),
      textResponse("read both"),
    );
    const r = await runTau(["run", "-p", "read twice"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    const offered = toolsOf(fake.chatRequests[0]!);
    expect(offered).toEqual(expect.arrayContaining(["read", "mcp__fixture__read", "mcp__fixture__echo"]));
    expect(offered.filter((t) => t.includes("huge"))).toEqual([]);
    // Reported by name in the session's extensions.log (and as a live notice).
    expect(extensionsLog(w.home)).toContain("mcp server fixture: tool hugeSchema: its input schema is larger than 65536 bytes; it is not offered");
    expect(toolMessage(fake.chatRequests[1]!, "call_builtin")).toContain("built-in read");
    expect(toolMessage(fake.chatRequests[1]!, "call_mcp")).toContain("the fixture's own read");
  }, 120_000);

  it("[mcp.authority.role-deny] a role denying ext:mcp-fixture is offered none of its tools, and a call naming one anyway never reaches the server; another server's tools stay offered", async () => {
    const calls = join(workspaceIn(cleanups).home, "calls.txt");
    writeFileSync(calls, "");
    const server = { command: process.execPath, args: [FIXTURE, "tools"], env: { MCP_FIXTURE_CALLS: calls }, wait_at_start: true };
    const w = workspaceIn(cleanups, JSON.stringify({ model: "fake-model", mcp_servers: { fixture: server, other: server }, roles: { default: { deny_tools: ["ext:mcp-fixture"] } } }));
    const env = { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-mcp", OPENAI_MODEL: "fake-model" };
    fake.enqueue(toolCallResponse([{ id: "call_denied", name: "mcp__fixture__echo", arguments: JSON.stringify({ text: "sneak" }) }]), textResponse("refused"));
    const r = await runTau(["run", "-p", "try it"], { env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    const offered = toolsOf(fake.chatRequests[0]!);
    expect(offered.filter((t) => t.startsWith("mcp__fixture__"))).toEqual([]);
    expect(offered).toEqual(expect.arrayContaining(["mcp__other__echo", "mcp__other__read"]));
    expect(toolMessage(fake.chatRequests[1]!, "call_denied")).toBe("tool mcp__fixture__echo is not available to agents of role default (deny_tools: ext:mcp-fixture); the call was not run");
    expect(readFileSync(calls, "utf8")).toBe("");
  }, 120_000);

  it("[mcp.config.untrusted-project-warned] an untrusted project's .tau/mcp.yaml starts nothing, and the run warns naming the file", async () => {
    const w = workspace({});
    const starts = join(w.home, "starts.txt");
    mkdirSync(join(w.project, ".tau"));
    writeFileSync(join(w.project, ".tau", "mcp.yaml"), JSON.stringify({ mcp_servers: { planted: { command: process.execPath, args: [FIXTURE, "tools"], env: { MCP_FIXTURE_STARTS: starts }, wait_at_start: true } } }));
    fake.enqueue(textResponse("nothing planted"));
    const r = await runTau(["run", "-p", "hello"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`tau: warning: ${join(w.project, ".tau", "mcp.yaml")} ignored: this project is not trusted`);
    expect(toolsOf(fake.chatRequests[0]!).filter((t) => t.startsWith("mcp__"))).toEqual([]);
    expect(existsSync(starts)).toBe(false);
  }, 120_000);

  it("[mcp.config.bad-server-name] a server name with odd characters is refused with a configuration error naming it, and nothing runs", async () => {
    const w = workspace({ "my server!": { command: process.execPath, args: [FIXTURE] } });
    const r = await runTau(["run", "-p", "hello"], { env: w.env, cwd: w.project });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('harness.yaml: mcp_servers.my server!: "my server!" is not a server name');
    expect(r.stderr).toContain("is not a server name: use lowercase letters, digits and single underscores");
    expect(fake.chatRequests).toHaveLength(0);
  }, 60_000);
});

describe("MCP server crashes, through a daemon", () => {
  async function daemon(env: NodeJS.ProcessEnv, project: string): Promise<StartedDaemon> {
    const d = await startDaemon(env, ["--project-root", project]);
    cleanups.push(() => killTree(d.pid));
    return d;
  }

  it("[mcp.tools.model-told-when-tools-join] a tool a server adds mid-session is offered from the next prompt, and that prompt's first request tells the model it joined", async () => {
    const w = workspace({ growing: { command: process.execPath, args: [FIXTURE, "tools"], wait_at_start: true } });
    const d = await daemon(w.env, w.project);
    const c = await TestClient.ui(d.socket, d.session_id);
    cleanups.push(() => c.close());
    c.send({ message: "subscribe", payload: { historical: ["tool.register"], live: ["*"] } });
    await waitFor(() => c.deliveries().some((x) => x.name === "tool.register" && x.data.name === "mcp__growing__grow"), "the growing tools", 60_000);
    c.emit("ui.create_agent", { request_id: "r1" });
    const created = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === "r1");
    const agent_id = String(created.message === "direct" ? created.payload.event.data.agent_id : "");
    const finished = (n: number) => waitFor(() => c.deliveries().filter((x) => x.name === "agent.outer_turn_finished").length >= n, `turn ${n}`, 60_000);
    const told = (r: ReceivedRequest): string[] => messagesOf(r).filter((m) => m.role === "user" && String(m.content).includes("The tools you can call changed")).map((m) => String(m.content));

    fake.enqueue(toolCallResponse([{ id: "call_grow", name: "mcp__growing__grow", arguments: "{}" }]), textResponse("grown"));
    c.emit("ui.prompt_submit", { agent_id, mode: "queue", text: "grow" });
    await finished(1);
    await waitFor(() => c.deliveries().some((x) => x.name === "tool.register" && x.data.name === "mcp__growing__grown"), "the grown tool", 60_000);
    // Within the prompt that grew it, the tool set stayed as it was, and nothing was told.
    expect(toolsOf(fake.chatRequests[1]!)).not.toContain("mcp__growing__grown");
    expect(told(fake.chatRequests[1]!)).toEqual([]);

    fake.enqueue(textResponse("noted"));
    c.emit("ui.prompt_submit", { agent_id, mode: "queue", text: "what changed?" });
    await finished(2);
    expect(toolsOf(fake.chatRequests[2]!)).toContain("mcp__growing__grown");
    expect(told(fake.chatRequests[2]!)).toEqual([expect.stringContaining("now available: mcp__growing__grown.")]);
  }, 120_000);

  it("[mcp.state.late-subscriber] each server's latest state (its tool count and how it runs) is re-synthesised for a subscriber that comes later, one per instance", async () => {
    const w = workspace({
      boxed: { command: process.execPath, args: [FIXTURE, "tools"], wait_at_start: true },
      free: { command: process.execPath, args: [FIXTURE, "tools"], wait_at_start: true, sandbox: false },
    });
    const d = await daemon(w.env, w.project);
    const first = await TestClient.ui(d.socket, d.session_id);
    cleanups.push(() => first.close());
    first.send({ message: "subscribe", payload: { historical: ["tool.register"], live: ["*"] } });
    await waitFor(() => ["mcp__boxed__echo", "mcp__free__echo"].every((n) => first.deliveries().some((x) => x.name === "tool.register" && x.data.name === n)), "both servers' tools", 60_000);
    const late = await TestClient.ui(d.socket, d.session_id);
    cleanups.push(() => late.close());
    late.send({ message: "subscribe", payload: { historical: ["mcp.server_state_reported"], live: [] } });
    await waitFor(() => late.inbox.some((x) => x.message === "deliver" && x.payload.event.name === "session.replay_complete"), "the late replay", 30_000);
    const states = late.inbox.flatMap((x) => (x.message === "deliver" && x.payload.event.name === "mcp.server_state_reported" ? [{ instance: x.payload.publisher.instance, ...x.payload.event.data }] : []));
    expect(states.sort((a, b) => String(a.instance).localeCompare(String(b.instance)))).toEqual([
      { instance: "mcp-boxed", state: "ready", tools: 10, confinement: "sandboxed" },
      { instance: "mcp-free", state: "ready", tools: 10, confinement: "unsandboxed" },
    ]);
  }, 120_000);

  it("[mcp.lifecycle.crash-mid-call] a call in flight when its server exits fails with a clear error; the server is restarted and its tools work again", async () => {
    // Sandboxed: its starts are written in the project, which it may write.
    const w = workspace({ crashy: { command: process.execPath, args: [FIXTURE, "tools"], env: { MCP_FIXTURE_STARTS: "PROJECT/starts.txt" } } });
    const starts = join(w.project, "starts.txt");
    writeFileSync(starts, "");
    inProject(w);
    const d = await daemon(w.env, w.project);
    const c = await TestClient.ui(d.socket, d.session_id);
    cleanups.push(() => c.close());
    c.send({ message: "subscribe", payload: { historical: ["harness.models_available", "tool.register"], live: ["*"] } });
    await waitFor(() => c.deliveries().some((x) => x.name === "tool.register" && x.data.name === "mcp__crashy__crash"), "the crashy tools", 60_000);
    c.emit("ui.create_agent", { request_id: "r1" });
    const created = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === "r1");
    const agent_id = String(created.message === "direct" ? created.payload.event.data.agent_id : "");
    const finished = (n: number) => waitFor(() => c.deliveries().filter((x) => x.name === "agent.outer_turn_finished").length >= n, `turn ${n}`, 60_000);

    fake.enqueue(toolCallResponse([{ id: "call_crash", name: "mcp__crashy__crash", arguments: "{}" }]), textResponse("it crashed"));
    c.emit("ui.prompt_submit", { agent_id, mode: "queue", text: "crash it" });
    await finished(1);
    expect(toolMessage(fake.chatRequests[1]!, "call_crash")).toContain("MCP server crashy exited during the call to crash; it is being restarted");
    // Restarted: a second start, announced, then ready again.
    const notices = () => c.deliveries().filter((x) => x.name === "extension.notice" && x.data.instance === "mcp-crashy").map((x) => String(x.data.text));
    await waitFor(() => readFileSync(starts, "utf8").trim().split("\n").length >= 2, "a second start", 60_000);
    await waitFor(() => notices().slice(notices().findIndex((t) => t.startsWith("mcp server crashy: restarting (the server exited"))).includes("mcp server crashy: ready"), "ready again", 60_000);
    expect(notices().some((t) => t.startsWith("mcp server crashy: restarting (the server exited"))).toBe(true);

    fake.enqueue(toolCallResponse([{ id: "call_echo", name: "mcp__crashy__echo", arguments: JSON.stringify({ text: "back" }) }]), textResponse("fine again"));
    c.emit("ui.prompt_submit", { agent_id, mode: "queue", text: "echo" });
    await finished(2);
    expect(toolMessage(fake.chatRequests[3]!, "call_echo")).toContain("echo: back");
  }, 120_000);
});
