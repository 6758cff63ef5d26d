// An MCP server's sampling (SPEC-mcp, "Sampling"), end to end: the real `tau run` and daemon, `tau
// ext mcp` and the SDK-built fixture server, whose `sample` tool asks the client for a model's
// answer while the scripted model's call waits; the scripted model answers the sampling round too.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse, type ReceivedRequest } from "../../support/fake-openai.js";
import { runTau } from "../../support/run-tau.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();
const FIXTURE = join(import.meta.dirname, "../../fixtures/mcp/server.mjs");

function workspace(sampling: Record<string, unknown> | undefined): Workspace {
  const asker = { command: process.execPath, args: [FIXTURE, "tools"], wait_at_start: true, ...(sampling !== undefined ? { sampling } : {}) };
  const w = workspaceIn(cleanups, JSON.stringify({ model: "fake-model", mcp_servers: { asker } }));
  return { ...w, env: { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-mcp", OPENAI_MODEL: "fake-model" } };
}

type Msg = { role: string; content?: unknown; tool_call_id?: string };
const body = (r: ReceivedRequest) => r.body as { messages: Msg[]; max_completion_tokens?: number; tools?: unknown[] };
const toolMessage = (r: ReceivedRequest, callId: string): string => String(body(r).messages.find((m) => m.role === "tool" && m.tool_call_id === callId)?.content);
function extensionsLog(home: string): string {
  const [session] = readdirSync(join(home, "state", "sessions"));
  return readFileSync(join(home, "state", "sessions", session!, "extensions.log"), "utf8");
}

/** Runs one prompt whose model calls the fixture's `sample` (with `args`), then answers `final`. */
async function sampleThrough(w: Workspace, between: Parameters<FakeOpenAI["enqueue"]>, args: Record<string, unknown> = {}) {
  fake.enqueue(toolCallResponse([{ id: "call_sample", name: "mcp__asker__sample", arguments: JSON.stringify(args) }]), ...between, textResponse("all done"));
  const r = await runTau(["run", "-p", "sample something"], { env: w.env, cwd: w.project });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain("all done");
  const last = fake.chatRequests[fake.chatRequests.length - 1]!;
  return { r, result: toolMessage(last, "call_sample") };
}

describe("MCP sampling through tau run", () => {
  it("[mcp.sampling.answered] a configured server's sampling request is answered by its model: the provider gets the server's messages, bounded, and the server gets the text", async () => {
    const w = workspace({ model: "provider/fake-model", max_tokens: 200 });
    const { result } = await sampleThrough(w, [textResponse("Teal", { usage: { prompt_tokens: 11, completion_tokens: 1 } })]);
    expect(fake.chatRequests).toHaveLength(3);
    const sampled = body(fake.chatRequests[1]!);
    expect(sampled.messages).toEqual([
      { role: "system", content: "You answer in one word." },
      { role: "user", content: "Name one colour." },
      { role: "assistant", content: "Ready." },
      { role: "user", content: "Go." },
    ]);
    // The server asked for 5000 tokens; the entry allows 200. No tools are offered.
    expect(sampled.max_completion_tokens).toBe(200);
    expect(sampled.tools).toBeUndefined();
    expect(JSON.parse(/sample: (\{.*\})/.exec(result)![1]!)).toEqual({ model: "fake-model", role: "assistant", content: { type: "text", text: "Teal" }, stopReason: "endTurn" });
    // The agent's own rounds carry no bound; the user is told of the sampling.
    expect(body(fake.chatRequests[2]!).max_completion_tokens).toBeUndefined();
    expect(extensionsLog(w.home)).toContain("mcp server asker: sampled provider/fake-model for the server (11 tokens in, 1 out, at most 200 out)");
  }, 120_000);

  it("[mcp.sampling.unconfigured-refused] without sampling in its entry a server's sampling request is refused and no model is asked", async () => {
    const w = workspace(undefined);
    const { result } = await sampleThrough(w, []);
    expect(result).toContain("sample: refused (MCP error -32601: Method not found)");
    expect(fake.chatRequests).toHaveLength(2);
  }, 120_000);

  it("[mcp.sampling.unavailable-model] a configured model no running provider serves fails the request clearly, and no other provider is asked", async () => {
    const w = workspace({ model: "elsewhere/fake-model" });
    const { result, r } = await sampleThrough(w, []);
    expect(result).toContain("sample: refused (MCP error -32603: tau could not sample with elsewhere/fake-model: no running provider serves elsewhere/fake-model)");
    expect(fake.chatRequests).toHaveLength(2);
    expect(r.stderr + extensionsLog(w.home)).toContain("mcp server asker: sampling with elsewhere/fake-model failed: no running provider serves elsewhere/fake-model");
  }, 120_000);

  it("[mcp.sampling.timeout] a sampling round with no answer within the entry's timeout is cancelled and fails the request, and the session goes on", async () => {
    const w = workspace({ model: "provider/fake-model", timeout_ms: 500 });
    // How many model requests had come when tau closed the sampling's request (cancelled at the provider).
    let closedAt: number | undefined;
    const { result } = await sampleThrough(w, [{ chunks: [], end: "hang", onClientClose: () => (closedAt = fake.chatRequests.length) }]);
    expect(result).toContain("sample: refused (MCP error -32603: tau could not sample with provider/fake-model: no answer within 500 ms)");
    expect(fake.chatRequests).toHaveLength(3);
    expect(closedAt).toBe(2);
  }, 120_000);

  it("[mcp.sampling.withdrawn] a sampling request the server withdraws is cancelled at the provider at once, long before the entry's timeout", async () => {
    const w = workspace({ model: "provider/fake-model", timeout_ms: 600_000 });
    let closedAt: number | undefined;
    const { result } = await sampleThrough(w, [{ chunks: [], end: "hang", onClientClose: () => (closedAt = fake.chatRequests.length) }], { withdrawAfterMs: 300 });
    expect(result).toContain("sample: refused (MCP error -32001: Request timed out)");
    expect(closedAt).toBe(2);
  }, 120_000);

  it("[mcp.sampling.text-only] an image in a sampling request is refused with a clear error, and no model is asked", async () => {
    const w = workspace({ model: "provider/fake-model" });
    const { result } = await sampleThrough(w, [], { image: true });
    expect(result).toContain("sample: refused (MCP error -32602: tau refused the sampling request: message 1 holds image content; tau's sampling takes text only)");
    expect(fake.chatRequests).toHaveLength(2);
  }, 120_000);

  it("[mcp.sampling.config-checked] a sampling model that does not name its provider is a configuration error naming the entry, and nothing runs", async () => {
    const w = workspace({ model: "fake-model" });
    const r = await runTau(["run", "-p", "hello"], { env: w.env, cwd: w.project });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('harness.yaml: mcp_servers.asker: sampling.model must name its provider, PROVIDER/MODEL (got "fake-model")');
    expect(fake.chatRequests).toHaveLength(0);
    // max_tokens is bounded by the schema: one above the bound is refused naming the key.
    const over = workspace({ model: "provider/fake-model", max_tokens: 32_769 });
    const o = await runTau(["run", "-p", "hello"], { env: over.env, cwd: over.project });
    expect(o.code).toBe(2);
    expect(o.stderr).toContain("mcp_servers.asker.sampling.max_tokens: must be <= 32768");
  }, 60_000);

  it("[mcp.sampling.max-tokens-bound] an entry's max_tokens at its bound is taken and bounds the request", async () => {
    const w = workspace({ model: "provider/fake-model", max_tokens: 32_768 });
    const { result } = await sampleThrough(w, [textResponse("Teal")]);
    expect(result).toContain('"text":"Teal"');
    // The server asked for 5000, under the bound: its own ask stands.
    expect(body(fake.chatRequests[1]!).max_completion_tokens).toBe(5000);
  }, 120_000);
});
