// `tau acp` driven as an editor drives it (SPEC-acp): the official SDK's client side over the real
// process's standard input and output, against a loopback model server — a new session, a prompt
// with a tool call and context blocks, a cancel mid-stream, loading the saved session in a new
// connection, and malformed or unknown messages answered with errors while the agent goes on.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { RequestPermissionRequest, SessionNotification } from "@agentclientprotocol/sdk";
import { asEditor, startAcp as startEditorAcp } from "../../support/acp.js";
import { commandLine, processTree, useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { FakeOpenAI, completionChunk, sseEvent, textResponse, toolCallResponse } from "../../support/fake-openai.js";
import { TestClient, waitFor, waitForOwnedDaemons } from "../../support/daemon.js";
import { runTau } from "../../support/run-tau.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();
const FIXTURE = join(import.meta.dirname, "../../fixtures/mcp/server.mjs");

function workspace(): Workspace {
  const w = workspaceIn(cleanups);
  return { ...w, env: { ...process.env, ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-acp", OPENAI_MODEL: "fake-model" } };
}

const startAcp = (w: Workspace) => startEditorAcp(cleanups, w);

type Msg = { role: string; content?: unknown };
const userTexts = (i: number) => ((fake.chatRequests[i]?.body as { messages: Msg[] }).messages ?? []).filter((m) => m.role === "user").map((m) => String(m.content));
const kinds = (updates: SessionNotification[]) => updates.map((u) => u.update.sessionUpdate);

describe("tau acp", () => {
  it("[acp.session.prompt-streams] a new session in the editor's folder: a prompt with a link and an embedded file streams the answer and a tool call with kind, title, location and end; stop reason end_turn", async () => {
    const w = workspace();
    writeFileSync(join(w.project, "notes.txt"), "remember the milk\n");
    fake.enqueue(toolCallResponse([{ id: "call_read", name: "read", arguments: JSON.stringify({ path: "notes.txt" }) }]), textResponse(["the notes ", "say milk"]));
    const updates: SessionNotification[] = [];
    const child = startAcp(w);
    const { sessionId, answer } = await asEditor(child, updates, async (ctx) => {
      const { sessionId } = await ctx.request("session/new", { cwd: w.project, mcpServers: [] });
      const answer = await ctx.request("session/prompt", {
        sessionId,
        prompt: [
          { type: "text", text: "what do my notes say?" },
          { type: "resource_link", name: "notes", uri: `file://${join(w.project, "notes.txt")}` },
          { type: "resource", resource: { uri: "file:///spec.md", text: "the spec's text" } },
        ],
      });
      return { sessionId, answer };
    });
    expect(answer).toEqual({ stopReason: "end_turn" });
    expect(sessionId).toMatch(/^s-/);
    // The model got every block as text.
    const sent = userTexts(0)[0] ?? "";
    expect(sent).toContain("what do my notes say?");
    expect(sent).toContain(`[notes](file://${join(w.project, "notes.txt")})`);
    expect(sent).toContain('<context uri="file:///spec.md">\nthe spec\'s text\n</context>');
    // Updates in order: the call, its start and its end, then the answer's chunks.
    const mine = updates.filter((u) => u.sessionId === sessionId);
    const call = mine.find((u) => u.update.sessionUpdate === "tool_call")?.update;
    expect(call).toMatchObject({ toolCallId: "call_read", kind: "read", status: "pending", title: "read notes.txt", locations: [{ path: join(w.project, "notes.txt") }] });
    const end = mine.find((u) => u.update.sessionUpdate === "tool_call_update" && "status" in u.update && u.update.status === "completed")?.update as { content?: Array<{ content: { text: string } }> } | undefined;
    expect(end?.content?.[0]?.content.text).toContain("remember the milk");
    expect(kinds(mine).indexOf("tool_call")).toBeLessThan(kinds(mine).indexOf("agent_message_chunk"));
    const text = mine.filter((u) => u.update.sessionUpdate === "agent_message_chunk").map((u) => (u.update as { content: { text: string } }).content.text).join("");
    expect(text).toBe("the notes say milk");
  }, 60_000);

  it("[acp.session.cancel] session/cancel mid-stream ends the prompt with stop reason cancelled, and the session takes the next prompt", async () => {
    const w = workspace();
    fake.enqueue({ chunks: [sseEvent(completionChunk({ content: "thinking about it" }))], end: "hang" }, textResponse("second answer"));
    const updates: SessionNotification[] = [];
    const child = startAcp(w);
    const answers = await asEditor(child, updates, async (ctx) => {
      const { sessionId } = await ctx.request("session/new", { cwd: w.project, mcpServers: [] });
      const first = ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "a long one" }] });
      // Cancelled once the answer has begun streaming.
      await waitFor(() => updates.some((u) => u.update.sessionUpdate === "agent_message_chunk"), "the answer streaming", 30_000);
      await ctx.notify("session/cancel", { sessionId });
      const cancelled = await first;
      const second = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "and now?" }] });
      return [cancelled, second];
    });
    expect(answers).toEqual([{ stopReason: "cancelled" }, { stopReason: "end_turn" }]);
  }, 60_000);

  it("[acp.session.load] session/load in a new connection replays the saved conversation as updates, and the next prompt goes on with it", async () => {
    const w = workspace();
    fake.enqueue(textResponse("noted: kiwi"), textResponse("the word was kiwi"));
    const first = startAcp(w);
    const sessionId = await asEditor(first, [], async (ctx) => {
      const { sessionId } = await ctx.request("session/new", { cwd: w.project, mcpServers: [] });
      await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "remember the word kiwi" }] });
      return sessionId;
    });
    first.stdin.end();
    await new Promise((r) => first.once("exit", r));
    waitForOwnedDaemons(w.home);

    const updates: SessionNotification[] = [];
    const second = startAcp(w);
    const answer = await asEditor(second, updates, async (ctx) => {
      await ctx.request("session/load", { sessionId, cwd: w.project, mcpServers: [] });
      // The history arrived before load's answer (the options' updates — models declared, the
      // sandbox's mode said — may come on their own time).
      const history = updates.filter((u) => u.update.sessionUpdate !== "config_option_update" && u.update.sessionUpdate !== "current_mode_update");
      expect(history.map((u) => [u.update.sessionUpdate, (u.update as { content?: { text?: string } }).content?.text])).toEqual([
        ["user_message_chunk", "remember the word kiwi"],
        ["agent_message_chunk", "noted: kiwi"],
      ]);
      return ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "which word?" }] });
    });
    expect(answer).toEqual({ stopReason: "end_turn" });
    expect(userTexts(1)).toEqual(["<user>\nremember the word kiwi\n</user>", "<user>\nwhich word?\n</user>"]);
  }, 90_000);

  it("[acp.permission.allow-and-reject] a sandbox request of a running prompt is asked of the editor with tau's choices; its allow replays the command, its reject refuses it", async () => {
    const w = workspace();
    const outside = join(w.home, "outside");
    mkdirSync(outside);
    const shell = (id: string, command: string) => toolCallResponse([{ id, name: "shell", arguments: JSON.stringify({ command }) }]);
    fake.enqueue(shell("call_allowed", `echo hello > ${join(outside, "allowed.txt")}`), textResponse("wrote it"), shell("call_refused", `echo nope > ${join(outside, "refused.txt")}`), textResponse("could not"));
    const asked: RequestPermissionRequest[] = [];
    const choices = ["allow_retry", "deny"];
    const child = startAcp(w);
    const answers = await asEditor(
      child,
      [],
      async (ctx) => {
        const { sessionId } = await ctx.request("session/new", { cwd: w.project, mcpServers: [] });
        const first = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "write it" }] });
        const second = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "write another" }] });
        return [first, second];
      },
      {
        permission: (params) => {
          asked.push(params);
          return { outcome: { outcome: "selected", optionId: choices[asked.length - 1] as string } };
        },
      },
    );
    expect(answers).toEqual([{ stopReason: "end_turn" }, { stopReason: "end_turn" }]);
    expect(asked).toHaveLength(2);
    expect(asked[0]).toMatchObject({ toolCall: { toolCallId: "call_allowed", title: expect.stringContaining(`wants to write to ${outside}`) } });
    expect(asked[0]?.options.map((o) => [o.optionId, o.kind])).toEqual([
      ["allow_retry", "allow_once"],
      ["allow_adapt", "allow_always"],
      ["deny", "reject_once"],
    ]);
    expect(asked[0]?.options[1]?.name).toContain("for the rest of this session");
    expect(readFileSync(join(outside, "allowed.txt"), "utf8")).toBe("hello\n");
    expect(existsSync(join(outside, "refused.txt"))).toBe(false);
    const refusedResult = (fake.chatRequests[3]?.body as { messages: Array<{ role: string; content?: unknown; tool_call_id?: string }> }).messages.find((m) => m.tool_call_id === "call_refused");
    expect(String(refusedResult?.content)).toContain("the user refused it");
  }, 90_000);

  it("[acp.session.modes] the session offers the sandbox's modes: Never ask refuses what the policy does not allow without asking the editor, Ask asks again; an unknown mode is refused", async () => {
    const w = workspace();
    const outside = join(w.home, "outside");
    mkdirSync(outside);
    const shell = (id: string, command: string) => toolCallResponse([{ id, name: "shell", arguments: JSON.stringify({ command }) }]);
    fake.enqueue(shell("call_quiet", `echo nope > ${join(outside, "quiet.txt")}`), textResponse("refused quietly"), shell("call_asked", `echo yes > ${join(outside, "asked.txt")}`), textResponse("asked"));
    const asked: RequestPermissionRequest[] = [];
    const updates: SessionNotification[] = [];
    const child = startAcp(w);
    const r = await asEditor(
      child,
      updates,
      async (ctx) => {
        const created = await ctx.request("session/new", { cwd: w.project, mcpServers: [] });
        const unknown = await ctx.request("session/set_mode", { sessionId: created.sessionId, modeId: "yolo" }).then(
          () => undefined,
          (err: { code?: number }) => err,
        );
        await ctx.request("session/set_mode", { sessionId: created.sessionId, modeId: "non-interactive" });
        const quiet = await ctx.request("session/prompt", { sessionId: created.sessionId, prompt: [{ type: "text", text: "write it" }] });
        const back = await ctx.request("session/set_config_option", { sessionId: created.sessionId, configId: "mode", value: "interactive" });
        const loud = await ctx.request("session/prompt", { sessionId: created.sessionId, prompt: [{ type: "text", text: "write again" }] });
        return { created, unknown, quiet, back, loud };
      },
      {
        permission: (params) => {
          asked.push(params);
          return { outcome: { outcome: "selected", optionId: "allow_retry" } };
        },
      },
    );
    expect(r.created.modes).toEqual({ currentModeId: "interactive", availableModes: [expect.objectContaining({ id: "interactive", name: "Ask" }), expect.objectContaining({ id: "non-interactive", name: "Never ask" })] });
    expect(r.unknown).toMatchObject({ code: -32602 });
    expect(r.quiet).toEqual({ stopReason: "end_turn" });
    expect(existsSync(join(outside, "quiet.txt"))).toBe(false);
    expect(asked.map((a) => a.toolCall.toolCallId)).toEqual(["call_asked"]);
    expect(readFileSync(join(outside, "asked.txt"), "utf8")).toBe("yes\n");
    expect(r.back.configOptions.find((o) => o.id === "mode")).toMatchObject({ category: "mode", currentValue: "interactive" });
    // Each way of choosing tells the other: set_mode updates the options, the option updates the mode.
    expect(updates.some((u) => u.update.sessionUpdate === "config_option_update" && (u.update.configOptions ?? []).some((o) => o.id === "mode" && o.currentValue === "non-interactive"))).toBe(true);
    expect(updates.some((u) => u.update.sessionUpdate === "current_mode_update" && u.update.currentModeId === "interactive")).toBe(true);
  }, 90_000);

  it("[acp.session.model-option] the session offers the providers' models as its model option; choosing one sends the next prompt to it, and an unknown one is refused", async () => {
    const server = await FakeOpenAI.start({ models: ["fake-model", "other-model"] });
    cleanups.push(() => server.close());
    const w = workspaceIn(cleanups);
    const env = { ...process.env, ...w.env, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: "sk-acp", OPENAI_MODEL: "fake-model" };
    server.enqueue(textResponse("from the other one"));
    const updates: SessionNotification[] = [];
    const child = startAcp({ ...w, env });
    const result = await asEditor(child, updates, async (ctx) => {
      const created = await ctx.request("session/new", { cwd: w.project, mcpServers: [] });
      // The models arrive with the session, or in an update once the provider declared them.
      const modelOption = () =>
        [created.configOptions ?? [], ...updates.filter((u) => u.update.sessionUpdate === "config_option_update").map((u) => (u.update as { configOptions: typeof created.configOptions }).configOptions ?? [])]
          .flat()
          .filter((o) => o?.id === "model")
          .at(-1);
      await waitFor(() => (modelOption() as { options?: unknown[] } | undefined)?.options?.length === 2, "the model option", 30_000);
      const option = modelOption() as { currentValue: string; options: Array<{ value: string; name: string }> };
      const other = option.options.find((o) => o.name === "other-model") as { value: string };
      const refused = await ctx.request("session/set_config_option", { sessionId: created.sessionId, configId: "model", value: "nowhere/none" }).then(
        () => undefined,
        (err: { code?: number; message?: string }) => err,
      );
      const set = await ctx.request("session/set_config_option", { sessionId: created.sessionId, configId: "model", value: other.value });
      const answer = await ctx.request("session/prompt", { sessionId: created.sessionId, prompt: [{ type: "text", text: "hi" }] });
      return { option, other, refused, set, answer };
    });
    expect(result.option.currentValue.endsWith("/fake-model")).toBe(true);
    expect(result.refused).toMatchObject({ code: -32602 });
    expect(result.set.configOptions[0]).toMatchObject({ id: "model", currentValue: result.other.value });
    expect(result.answer).toEqual({ stopReason: "end_turn" });
    expect((server.chatRequests[0]?.body as { model: string }).model).toBe("other-model");
  }, 60_000);

  it("[acp.session.mcp-servers] the editor's MCP servers join its session (names made tau's), reached through a private file, never the daemon's command line", async () => {
    const w = workspace();
    // In the project: the editor's server runs in the sandbox, which lets it write there.
    const starts = join(w.project, "starts.txt");
    writeFileSync(starts, "");
    const updates: SessionNotification[] = [];
    const child = startAcp(w);
    const toolsOf = (i: number) => ((fake.chatRequests[i]?.body as { tools?: Array<{ function: { name: string } }> } | undefined)?.tools ?? []).map((t) => t.function.name);
    const outcome = await asEditor(child, updates, async (ctx) => {
      const { sessionId } = await ctx.request("session/new", {
        cwd: w.project,
        mcpServers: [{ name: "Fixture-Tools", command: process.execPath, args: [FIXTURE, "tools"], env: [{ name: "MCP_FIXTURE_STARTS", value: starts }, { name: "API_TOKEN", value: "acp-secret-token" }] }],
      });
      // No command line of the session's processes carries the server's env values.
      const cmdlines = processTree(child.pid as number).map((p) => commandLine(p));
      await waitFor(() => readFileSync(starts, "utf8").trim() !== "", "the editor's server to start", 30_000);
      // Its tools join when it is ready: prompt until the model is offered them.
      for (let i = 0; !toolsOf(fake.chatRequests.length - 1).includes("mcp__fixture_tools__echo"); i++) {
        if (i > 40) throw new Error("the editor's MCP tools never joined");
        fake.enqueue(textResponse("pong"));
        await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "ping" }] });
      }
      fake.enqueue(toolCallResponse([{ id: "call_echo", name: "mcp__fixture_tools__echo", arguments: JSON.stringify({ text: "hi from the editor" }) }]), textResponse("echoed"));
      const answer = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "echo it" }] });
      return { answer, cmdlines };
    });
    expect(outcome.answer).toEqual({ stopReason: "end_turn" });
    const last = fake.chatRequests.at(-1)?.body as { messages: Array<{ role: string; content?: unknown; tool_call_id?: string }> };
    expect(String(last.messages.find((m) => m.tool_call_id === "call_echo")?.content)).toContain("echo: hi from the editor");
    expect(outcome.cmdlines.join("\n")).not.toContain("acp-secret-token");
    expect(outcome.cmdlines.join("\n")).toContain("--mcp-servers-file");
    // The file is gone once the daemon read it.
    expect(readdirSync(join(w.home, "runtime")).filter((n) => n.startsWith("acp-mcp-"))).toEqual([]);
  }, 90_000);

  it("[acp.permission.outside-prompt] a sandbox request of a turn another UI started is asked of the editor too, and its answer counts", async () => {
    const w = workspace();
    const outside = join(w.home, "outside");
    mkdirSync(outside);
    fake.enqueue(toolCallResponse([{ id: "call_other", name: "shell", arguments: JSON.stringify({ command: `echo other > ${join(outside, "other.txt")}` }) }]), textResponse("done"));
    const asked: RequestPermissionRequest[] = [];
    const child = startAcp(w);
    await asEditor(
      child,
      [],
      async (ctx) => {
        const { sessionId } = await ctx.request("session/new", { cwd: w.project, mcpServers: [] });
        // A terminal attaches to the editor's session and prompts its agent.
        const listed = JSON.parse((await runTau(["session", "list", "--json"], { env: w.env })).stdout) as Array<{ session_id: string; socket: string }>;
        const row = listed.find((r) => r.session_id === sessionId) as { socket: string };
        const ui = await TestClient.ui(row.socket, sessionId);
        cleanups.push(() => ui.close());
        const agent = (await ui.roster()).rows[0] as { agent_id: string };
        ui.emit("ui.prompt_submit", { agent_id: agent.agent_id, mode: "queue", text: "write elsewhere" });
        // The whole line: `echo other > FILE` makes the file before it writes to it.
        await waitFor(() => existsSync(join(outside, "other.txt")) && readFileSync(join(outside, "other.txt"), "utf8") === "other\n", "the approved write", 30_000);
      },
      {
        permission: (params) => {
          asked.push(params);
          return { outcome: { outcome: "selected", optionId: "allow_retry" } };
        },
      },
    );
    expect(asked.map((a) => a.toolCall.toolCallId)).toEqual(["call_other"]);
    expect(readFileSync(join(outside, "other.txt"), "utf8")).toBe("other\n");
  }, 90_000);

  it("[acp.session.modes] a mode another UI sets for the session (:sandbox mode) reaches the editor as updates", async () => {
    const w = workspace();
    const updates: SessionNotification[] = [];
    const child = startAcp(w);
    const created = await asEditor(child, updates, async (ctx) => {
      const made = await ctx.request("session/new", { cwd: w.project, mcpServers: [] });
      const listed = JSON.parse((await runTau(["session", "list", "--json"], { env: w.env })).stdout) as Array<{ session_id: string; socket: string }>;
      const row = listed.find((r) => r.session_id === made.sessionId) as { socket: string };
      const ui = await TestClient.ui(row.socket, made.sessionId);
      cleanups.push(() => ui.close());
      ui.emit("sandbox.command_request", { request_id: "mode-1", args: ["mode", "non-interactive"] });
      await waitFor(() => updates.some((u) => u.update.sessionUpdate === "current_mode_update" && u.update.currentModeId === "non-interactive"), "the mode's update", 30_000);
      return made;
    });
    expect(created.modes?.currentModeId).toBe("interactive");
    expect(updates.some((u) => u.update.sessionUpdate === "config_option_update" && (u.update.configOptions ?? []).some((o) => o.id === "mode" && o.currentValue === "non-interactive"))).toBe(true);
  }, 90_000);

  it("[acp.protocol.errors] malformed JSON, an unknown method, an unknown session and a folder that is not one are answered with JSON-RPC errors; the agent goes on", async () => {
    const w = workspace();
    const child = startAcp(w);
    const lines: Array<Record<string, unknown>> = [];
    let buffered = "";
    child.stdout.on("data", (b: Buffer) => {
      buffered += b.toString("utf8");
      for (let i = buffered.indexOf("\n"); i >= 0; i = buffered.indexOf("\n")) {
        lines.push(JSON.parse(buffered.slice(0, i)) as Record<string, unknown>);
        buffered = buffered.slice(i + 1);
      }
    });
    const send = (m: unknown) => child.stdin.write(`${typeof m === "string" ? m : JSON.stringify(m)}\n`);
    const answer = async (id: number) => {
      await waitFor(() => lines.some((l) => l.id === id), `the answer to ${id}`, 30_000);
      return lines.find((l) => l.id === id) as { result?: unknown; error?: { code: number; message: string } };
    };
    send("{not json");
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
    expect((await answer(1)).result).toMatchObject({ protocolVersion: 1 });
    send({ jsonrpc: "2.0", id: 2, method: "session/teleport", params: {} });
    send({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId: "s-nosuch", prompt: [{ type: "text", text: "hi" }] } });
    send({ jsonrpc: "2.0", id: 4, method: "session/new", params: { cwd: "relative/folder", mcpServers: [] } });
    send({ jsonrpc: "2.0", id: 5, method: "session/new", params: { cwd: 42 } });
    expect((await answer(2)).error?.code).toBe(-32601);
    expect((await answer(3)).error).toMatchObject({ code: -32002 });
    expect((await answer(4)).error).toMatchObject({ code: -32602, message: expect.stringContaining("cwd must be an absolute path of a folder") });
    expect((await answer(5)).error?.code).toBe(-32602);
    expect(lines.some((l) => l.id === null && (l.error as { code: number }).code === -32700)).toBe(true);
    // Still serving.
    send({ jsonrpc: "2.0", id: 6, method: "session/new", params: { cwd: w.project, mcpServers: [] } });
    expect((await answer(6)).result).toMatchObject({ sessionId: expect.stringMatching(/^s-/) });
    child.stdin.end();
    expect(await new Promise((r) => child.once("exit", (code) => r(code)))).toBe(0);
  }, 60_000);
});
