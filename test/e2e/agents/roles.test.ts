// Role policy over every tool, through a real daemon, its real provider, shell and a user's
// extension (test-dummy) against a loopback OpenAI-compatible server (SPEC-tool-routing, "Tool
// policy by role"). Written as an attacker would: a model of role `reviewer` (no shell, no
// `group:write`, nothing of the `plugin` extension) names those tools anyway — nothing runs, no file
// changes, no extension sees a call, and each error names the role. A prompt's tools are fixed at its
// first round: a tool registered mid-prompt is offered from the next prompt, one unregistered
// mid-prompt fails its calls.
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient } from "../../support/daemon.js";
import { agentHarnessYaml, agentJournal, attachUi, daemonIn, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse, type ReceivedRequest } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const ROLES = {
  reviewer: { description: "reads and reports; changes nothing", deny_tools: ["shell", "group:write", "ext:plugin"] },
  scout: { deny_tools: ["tag:writes", "group:plugin_tools"] },
};

function workspace(): { env: NodeJS.ProcessEnv; home: string; project: string } {
  // A user's extension: its tools declare a group and a tag of their own.
  const plugin = { name: "plugin", kind: "tool", command: ["tau", "ext", "test-dummy"], config: { tools: ["echo"], group: "plugin_tools", tags: ["network"], driver: true }, startup_timeout_seconds: 30 };
  const w = workspaceIn(cleanups, agentHarnessYaml(fake, { extensions: [plugin], settings: { roles: ROLES } }));
  writeFileSync(join(w.project, "keep.txt"), "original\n");
  return w;
}

type Msg = { role: string; content?: unknown; tool_call_id?: string };
const messagesOf = (r: ReceivedRequest): Msg[] => (r.body as { messages: Msg[] }).messages;
const rounds = (r: ReceivedRequest): number => messagesOf(r).filter((m) => m.role === "assistant").length;
const toolsOf = (r: ReceivedRequest): string[] => ((r.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name).sort();
const systemOf = (r: ReceivedRequest): string => String(messagesOf(r).find((m) => m.role === "system")?.content ?? "");
const toolMessage = (r: ReceivedRequest, callId: string): string => String(messagesOf(r).find((m) => m.role === "tool" && m.tool_call_id === callId)?.content);

/** The tool events any subscriber (an extension included) saw for a call. */
const seenFor = (c: TestClient, callId: string): string[] =>
  c
    .deliveries()
    .filter((d) => d.data.call_id === callId && (d.name === "tool.request" || d.name === "tool.started"))
    .map((d) => d.name);

describe("roles over every tool, through a real daemon", () => {
  it("[roles.every-tool.denied-not-offered] a reviewer's requests list neither shell, write, edit nor the plugin's tools; an agent without the role is offered them all", async () => {
    const { env, project } = workspace();
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d, { tools: ["read", "echo"] });
    const reviewer = await c.createAgent("r-reviewer", { role: "reviewer" });
    const lead = await c.createAgent("r-default");
    fake.respondWith(() => textResponse("nothing to do"));
    for (const agent_id of [reviewer, lead]) {
      c.emit("ui.prompt_submit", { agent_id, mode: "queue", text: "look around" });
      await c.delivered("agent.outer_turn_finished", (x) => x.agent_id === agent_id);
    }
    const [reviewerRequest, leadRequest] = fake.chatRequests;
    const offeredToReviewer = toolsOf(reviewerRequest!);
    for (const denied of ["shell", "write", "edit", "echo"]) expect(offeredToReviewer).not.toContain(denied);
    expect(offeredToReviewer).toEqual(expect.arrayContaining(["read", "grep", "find", "ls", "cd", "compact", "agent_start"]));
    expect(toolsOf(leadRequest!)).toEqual(expect.arrayContaining(["shell", "write", "edit", "echo", "read"]));
    // The canonical registration carries what the policy matched.
    const registered = (name: string) => c.deliveries().find((x) => x.name === "tool.register" && x.data.name === name)?.data;
    expect(registered("shell")).toMatchObject({ owner: "shell", group: "shell", tags: ["exec", "filesystem", "writes", "network"] });
    expect(registered("edit")).toMatchObject({ group: "write", tags: ["filesystem", "writes"] });
    expect(registered("echo")).toMatchObject({ owner: "plugin", group: "plugin_tools", tags: ["network"] });
  }, 120_000);

  it("[roles.every-tool.denied-not-callable] a reviewer's model that names shell, write, edit and the plugin's echo anyway runs none of them: no file changes, no extension sees a call, each error names the role", async () => {
    const { env, home, project } = workspace();
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d, { tools: ["read", "echo"] });
    const reviewer = await c.createAgent("r-reviewer", { role: "reviewer" });
    fake.respondWith((r) =>
      rounds(r) === 0
        ? toolCallResponse([
            { id: "call_shell", name: "shell", arguments: JSON.stringify({ command: "echo pwned > pwned.txt" }) },
            { id: "call_write", name: "write", arguments: JSON.stringify({ path: "planted.txt", content: "planted" }) },
            { id: "call_edit", name: "edit", arguments: JSON.stringify({ path: "keep.txt", edits: [{ old_text: "original", new_text: "tampered" }] }) },
            { id: "call_echo", name: "echo", arguments: JSON.stringify({ text: "smuggled" }) },
            // Still allowed, so the round shows that tools the role keeps run as before.
            { id: "call_read", name: "read", arguments: JSON.stringify({ path: "keep.txt" }) },
          ])
        : textResponse("done"),
    );
    c.emit("ui.prompt_submit", { agent_id: reviewer, mode: "queue", text: "review keep.txt" });
    await c.delivered("agent.outer_turn_finished", (x) => x.agent_id === reviewer);

    expect(existsSync(join(project, "pwned.txt"))).toBe(false);
    expect(existsSync(join(project, "planted.txt"))).toBe(false);
    expect(readFileSync(join(project, "keep.txt"), "utf8")).toBe("original\n");
    for (const id of ["call_shell", "call_write", "call_edit", "call_echo"]) expect(seenFor(c, id)).toEqual([]);
    expect(seenFor(c, "call_read")).toEqual(["tool.request", "tool.started"]);

    const errors = Object.fromEntries(agentJournal(home, reviewer).filter((r) => r.event.name === "provider.tool_error").map((r) => [r.event.data.call_id, r.event.data.error]));
    expect(errors).toEqual({
      call_shell: "tool shell is not available to agents of role reviewer (deny_tools: shell); the call was not run",
      call_write: "tool write is not available to agents of role reviewer (deny_tools: group:write); the call was not run",
      call_edit: "tool edit is not available to agents of role reviewer (deny_tools: group:write); the call was not run",
      call_echo: "tool echo is not available to agents of role reviewer (deny_tools: ext:plugin); the call was not run",
    });
    // The model reads the same errors in its next round, and the allowed read's output beside them.
    const next = fake.chatRequests[1]!;
    expect(toolMessage(next, "call_shell")).toBe(errors.call_shell);
    expect(toolMessage(next, "call_read")).toContain("original");
  }, 120_000);

  it("[roles.group-and-tag] deny entries match an extension tool by the group and tags it declared: tag:writes takes shell, write and edit; a user extension's group takes its tools", async () => {
    const { env, home, project } = workspace();
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d, { tools: ["read", "echo"] });
    const scout = await c.createAgent("r-scout", { role: "scout" });
    fake.respondWith((r) => (rounds(r) === 0 ? toolCallResponse([{ id: "call_echo", name: "echo", arguments: JSON.stringify({ text: "hi" }) }]) : textResponse("done")));
    c.emit("ui.prompt_submit", { agent_id: scout, mode: "queue", text: "look around" });
    await c.delivered("agent.outer_turn_finished", (x) => x.agent_id === scout);
    const offered = toolsOf(fake.chatRequests[0]!);
    for (const denied of ["shell", "write", "edit", "echo"]) expect(offered).not.toContain(denied);
    expect(offered).toEqual(expect.arrayContaining(["read", "grep", "find", "ls", "cd"]));
    const error = agentJournal(home, scout).find((r) => r.event.name === "provider.tool_error")?.event.data.error;
    expect(error).toBe("tool echo is not available to agents of role scout (deny_tools: group:plugin_tools); the call was not run");
    expect(seenFor(c, "call_echo")).toEqual([]);
  }, 120_000);

  it("[roles.snapshot-per-prompt] a prompt's tools are fixed at its first round: a tool registered mid-prompt is offered from the next prompt, one unregistered mid-prompt fails its calls", async () => {
    const { env, home, project } = workspace();
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d, { tools: ["read", "echo"] });
    const agent = await c.createAgent("r-default");
    let release!: () => void;
    const changed = new Promise<void>((resolve) => (release = resolve));
    let prompts = 0;
    fake.respondWith((r) => {
      if (rounds(r) === 0 && prompts++ === 0) {
        // Held until the plugin has withdrawn echo and declared progress.
        return {
          ...toolCallResponse([
            { id: "call_progress", name: "progress", arguments: "{}" },
            { id: "call_echo", name: "echo", arguments: JSON.stringify({ text: "hi" }) },
          ]),
          gate: changed,
        };
      }
      return textResponse("done");
    });
    c.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text: "first" });
    await c.next((m) => m.message === "deliver" && m.payload.event.name === "agent.prompt_started", 30_000);
    c.emit("extension.event", { category: "test", name: "unregister", payload: { tool: "echo" } });
    c.emit("extension.event", { category: "test", name: "register", payload: { tool: "progress" } });
    await c.delivered("tool.unregister", (x) => x.name === "echo");
    await c.delivered("tool.register", (x) => x.name === "progress");
    release();
    await c.delivered("agent.outer_turn_finished", (x) => x.agent_id === agent);

    const [round0, round1] = fake.chatRequests;
    expect(toolsOf(round0!)).toContain("echo");
    expect(toolsOf(round0!)).not.toContain("progress");
    // Every round of the prompt lists the tools and the system prompt of its first.
    expect(toolsOf(round1!)).toEqual(toolsOf(round0!));
    expect(systemOf(round1!)).toBe(systemOf(round0!));
    const errors = Object.fromEntries(agentJournal(home, agent).filter((r) => r.event.name === "provider.tool_error").map((r) => [r.event.data.call_id, r.event.data.error]));
    expect(errors).toEqual({
      call_progress: "tool progress was registered after this prompt started; it is offered from the next prompt, and the call was not run",
      call_echo: "tool echo was unregistered during this prompt (its extension plugin withdrew it or exited); the call was not run",
    });
    for (const id of ["call_progress", "call_echo"]) expect(seenFor(c, id)).toEqual([]);

    // The next prompt: the new tool is offered, the withdrawn one is not.
    c.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text: "second" });
    await c.delivered("agent.outer_turn_finished", (x) => x.agent_id === agent);
    const second = toolsOf(fake.chatRequests[2]!);
    expect(second).toContain("progress");
    expect(second).not.toContain("echo");
  }, 120_000);
});
