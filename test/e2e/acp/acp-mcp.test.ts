// An MCP tool call held by its server's `ask` under `tau acp` (SPEC-acp, "Approvals"): asked of the
// editor as a permission on that call; allowed it runs, refused it is not called. The real `tau acp`,
// its daemon, `tau ext mcp` and the SDK-built fixture server, the SDK's client side as the editor.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RequestPermissionRequest } from "@agentclientprotocol/sdk";
import { asEditor, startAcp } from "../../support/acp.js";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { textResponse, toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { toolMessage } from "../../support/mcp.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();
const FIXTURE = join(import.meta.dirname, "../../fixtures/mcp/server.mjs");

describe("MCP calls under tau acp", () => {
  it("[acp.permission.mcp-call] a call its server's entry asks about is asked of the editor on that call: allowed it runs, refused it is not called", async () => {
    const servers = { asker: { command: process.execPath, args: [FIXTURE, "tools"], ask: "always", wait_at_start: true } };
    const w0 = workspaceIn(cleanups, JSON.stringify({ model: "fake-model", mcp_servers: servers }));
    const w = { ...w0, env: { ...process.env, ...w0.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-acp", OPENAI_MODEL: "fake-model" } };
    const echo = (id: string, text: string) => toolCallResponse([{ id, name: "mcp__asker__echo", arguments: JSON.stringify({ text }) }]);
    fake.enqueue(echo("call_yes", "allowed"), textResponse("one"), echo("call_no", "refused"), textResponse("two"));
    const asked: RequestPermissionRequest[] = [];
    const child = startAcp(cleanups, w);
    const answers = await asEditor(
      child,
      [],
      async (ctx) => {
        const { sessionId } = await ctx.request("session/new", { cwd: w.project, mcpServers: [] });
        const first = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "echo" }] });
        const second = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "echo again" }] });
        return [first, second];
      },
      {
        permission: (params) => {
          asked.push(params);
          return { outcome: { outcome: "selected", optionId: asked.length === 1 ? "allow" : "deny" } };
        },
      },
    );
    expect(answers).toEqual([{ stopReason: "end_turn" }, { stopReason: "end_turn" }]);
    expect(asked.map((a) => a.toolCall.toolCallId)).toEqual(["call_yes", "call_no"]);
    expect(asked[0]?.toolCall.title).toContain('mcp server asker: the model calls mcp__asker__echo with {"text":"allowed"}: allow this call?');
    expect(asked[0]?.options.map((o) => [o.optionId, o.kind])).toEqual([
      ["allow", "allow_once"],
      ["deny", "reject_once"],
    ]);
    expect(toolMessage(fake.chatRequests[1]!, "call_yes")).toContain("echo: allowed");
    expect(toolMessage(fake.chatRequests[3]!, "call_no")).toContain("mcp__asker__echo was not called: the user did not allow it");
  }, 90_000);
});
