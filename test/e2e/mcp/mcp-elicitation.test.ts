// An MCP server's request for input (SPEC-mcp, "Elicitation"), end to end: the real terminal UI in a
// pseudo-terminal, its daemon, `tau ext mcp` and the SDK-built fixture server asking for a form while
// the scripted model's tool call waits; and `tau run`, which has nobody to ask.
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { has, quitTau, startTau, tuiWorkspace } from "../../support/pty.js";
import { FakeOpenAI, textResponse, toolCallResponse } from "../../support/fake-openai.js";
import { mcpWorkspace, toolMessage } from "../../support/mcp.js";
import { waitFor } from "../../support/daemon.js";
import { runTau } from "../../support/run-tau.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();
const FIXTURE = join(import.meta.dirname, "../../fixtures/mcp/server.mjs");

const servers = { asker: { command: process.execPath, args: [FIXTURE, "tools"], wait_at_start: true } };

describe("MCP elicitation", () => {
  it("[mcp.elicitation.tui-form] the terminal UI shows a server's form while its tool call waits; the answer, field by field, goes back to the server checked against the form, and a decline does too", async () => {
    const w = tuiWorkspace(workspaceIn(cleanups, JSON.stringify({ model: "fake-model", mcp_servers: servers })), fake);
    const t = startTau(cleanups, w, [], { cols: 160, rows: 40 });
    await t.waitFor(has(" · ready"), "ready", 60_000);
    const log = () => {
      const [session] = existsSync(join(w.home, "state", "sessions")) ? readdirSync(join(w.home, "state", "sessions")) : [];
      const file = session === undefined ? "" : join(w.home, "state", "sessions", session, "extensions.log");
      return file !== "" && existsSync(file) ? readFileSync(file, "utf8") : "";
    };
    await waitFor(() => log().includes("mcp server asker: ready"), "the server ready", 60_000);

    fake.enqueue(toolCallResponse([{ id: "call_form", name: "mcp__asker__form", arguments: "{}" }]), textResponse("thanks, Ada"));
    t.type("who am I?\r");
    await t.waitFor(has("mcp server asker asks: Who are you?"), "the form", 30_000);
    expect(t.screen().join("\n")).toContain("[a] answer   [d] decline   [c] cancel");
    t.type("a");
    await t.waitFor(has("field 1 of 4: Your name (name)"), "the first field", 10_000);
    t.type("Ada\r");
    await t.waitFor(has("field 2 of 4: age"), "the age field", 10_000);
    // An answer out of the field's bounds is refused and asked again.
    t.type("200\r");
    await t.waitFor(has("type a number from 0 to 150"), "the bound said", 10_000);
    t.type("36\r");
    await t.waitFor(has("field 3 of 4: colour"), "the colour field", 10_000);
    expect(t.screen().join("\n")).toContain("2. Green (green)");
    t.type("2\r");
    await t.waitFor(has("field 4 of 4: subscribe"), "the yes/no field", 10_000);
    t.type("y\r");
    await t.waitFor(has("thanks, Ada"), "the model's answer", 30_000);
    expect(toolMessage(fake.chatRequests[1]!, "call_form")).toContain('form: {"action":"accept","content":{"name":"Ada","age":36,"colour":"green","subscribe":true}}');
    // What was typed into the form is no prompt: the model saw only the one prompt.
    expect(JSON.stringify(fake.chatRequests[1]!.body)).not.toContain('"content":"Ada"');

    fake.enqueue(toolCallResponse([{ id: "call_again", name: "mcp__asker__form", arguments: "{}" }]), textResponse("declined, fine"));
    t.type("again\r");
    await t.waitFor(has("mcp server asker asks: Who are you?"), "the form again", 30_000);
    t.type("d");
    await t.waitFor(has("declined, fine"), "the model's second answer", 30_000);
    expect(toolMessage(fake.chatRequests[3]!, "call_again")).toContain('form: {"action":"decline"}');
    expect(t.screen().join("\n")).toContain("mcp server asker: its request for input was declined");
    expect(await quitTau(t)).toBe(0);
  }, 120_000);

  it("[mcp.elicitation.headless-refused] tau run offers no elicitation: a server that asks anyway is refused, and the call goes on", async () => {
    const w = mcpWorkspace(cleanups, fake, servers);
    fake.enqueue(toolCallResponse([{ id: "call_form", name: "mcp__asker__form", arguments: "{}" }]), textResponse("nobody to ask"));
    const r = await runTau(["run", "-p", "ask me"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    expect(toolMessage(fake.chatRequests[1]!, "call_form")).toContain("form: refused (MCP error -32601: Method not found)");
  }, 120_000);

  it("[mcp.ask.tui-allow-deny] a server whose entry says ask: always has each call asked of the terminal UI first: allowed, it runs; denied, it is not called and the model is told", async () => {
    const asking = { asker: { ...servers.asker, ask: "always" } };
    const w = tuiWorkspace(workspaceIn(cleanups, JSON.stringify({ model: "fake-model", mcp_servers: asking })), fake);
    const t = startTau(cleanups, w, [], { cols: 160, rows: 40 });
    await t.waitFor(has(" · ready"), "ready", 60_000);
    await t.waitFor(has(" · mcp 1/1"), "the server ready", 60_000);
    fake.enqueue(toolCallResponse([{ id: "call_ok", name: "mcp__asker__echo", arguments: JSON.stringify({ text: "allowed" }) }]), textResponse("first done"));
    t.type("echo it\r");
    await t.waitFor(has('the model calls mcp__asker__echo with {"text":"allowed"}: allow this call?'), "the question", 30_000);
    expect(t.screen().join("\n")).toContain("[a] allow this call   [d] deny");
    t.type("a");
    await t.waitFor(has("first done"), "the first answer", 30_000);
    expect(toolMessage(fake.chatRequests[1]!, "call_ok")).toContain("echo: allowed");
    fake.enqueue(toolCallResponse([{ id: "call_no", name: "mcp__asker__echo", arguments: JSON.stringify({ text: "denied" }) }]), textResponse("second done"));
    t.type("again\r");
    await t.waitFor(has('with {"text":"denied"}: allow this call?'), "the second question", 30_000);
    t.type("d");
    await t.waitFor(has("second done"), "the second answer", 30_000);
    expect(toolMessage(fake.chatRequests[3]!, "call_no")).toContain("mcp__asker__echo was not called: the user did not allow it (the server's entry asks before every call (ask: always))");
    expect(t.screen().join("\n")).toContain("mcp server asker: the call was denied");
    expect(await quitTau(t)).toBe(0);
  }, 120_000);

  it("[mcp.ask.headless-refused] under tau run, a call the entry's ask holds is refused (nobody to ask) while a tool that says it only reads runs; a sandboxed stdio server is not asked about by default", async () => {
    const w = mcpWorkspace(cleanups, fake, { held: { ...servers.asker, ask: "writes" }, boxed: servers.asker });
    fake.enqueue(
      toolCallResponse([
        { id: "call_write", name: "mcp__held__echo", arguments: JSON.stringify({ text: "x" }) },
        { id: "call_read", name: "mcp__held__read", arguments: "{}" },
        { id: "call_boxed", name: "mcp__boxed__echo", arguments: JSON.stringify({ text: "y" }) },
      ]),
      textResponse("done"),
    );
    const r = await runTau(["run", "-p", "call them"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    const second = fake.chatRequests[1]!;
    expect(toolMessage(second, "call_write")).toContain("mcp__held__echo was not called: the server's entry asks before each call of a tool that does not say it only reads (ask: writes), and this run has nobody to ask");
    expect(toolMessage(second, "call_read")).toContain("the fixture's own read");
    expect(toolMessage(second, "call_boxed")).toContain("echo: y");
  }, 120_000);

  it("[mcp.ask.defaults] a stdio server that runs unsandboxed because sandbox.yaml says enabled: false is asked about as any unsandboxed one", async () => {
    const w = mcpWorkspace(cleanups, fake, { boxed: servers.asker });
    writeFileSync(join(w.home, "config", "sandbox.yaml"), "enabled: false\n");
    fake.enqueue(toolCallResponse([{ id: "call_off", name: "mcp__boxed__echo", arguments: JSON.stringify({ text: "z" }) }]), textResponse("done"));
    const r = await runTau(["run", "-p", "call it"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    expect(toolMessage(fake.chatRequests[1]!, "call_off")).toContain("mcp__boxed__echo was not called: the server's entry asks before each call of a tool that does not say it only reads (ask: writes), and this run has nobody to ask");
  }, 120_000);
});
