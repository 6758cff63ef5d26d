// The editor's files under `tau acp` (SPEC-acp, "The editor's files"): an editor that reads files
// for the agent gives `read` its text, unsaved changes included, only for files the policy lets the
// tool read; `write` still writes the disk. The real `tau acp`, its daemon and the shell extension,
// the SDK's client side as the editor, a loopback model.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ReadTextFileRequest } from "@agentclientprotocol/sdk";
import { asEditor, startAcp } from "../../support/acp.js";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { textResponse, toolCallResponse, type FakeOpenAI, type ReceivedRequest } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

type Msg = { role: string; content?: unknown; tool_call_id?: string };
const toolMessage = (r: ReceivedRequest, callId: string): string => String((r.body as { messages: Msg[] }).messages.find((m) => m.role === "tool" && m.tool_call_id === callId)?.content);

describe("the editor's files", () => {
  it("[acp.files.editor-read] read takes the editor's text (unsaved changes included) of a file the policy allows; a denied file is never asked of the editor; write writes the disk", async () => {
    const w0 = workspaceIn(cleanups);
    const w = { ...w0, env: { ...process.env, ...w0.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-acp", OPENAI_MODEL: "fake-model" } };
    writeFileSync(join(w.home, "config", "sandbox.yaml"), `filesystem:\n  deny_read: [${JSON.stringify(join(w.project, "secret.txt"))}]\n`);
    writeFileSync(join(w.project, "open.txt"), "what the disk holds\n");
    writeFileSync(join(w.project, "secret.txt"), "the secret\n");
    const call = (id: string, name: string, args: object) => ({ id, name, arguments: JSON.stringify(args) });
    fake.enqueue(
      toolCallResponse([call("call_open", "read", { path: "open.txt" }), call("call_secret", "read", { path: "secret.txt" })]),
      toolCallResponse([call("call_write", "write", { path: "open.txt", content: "written by tau\n" })]),
      textResponse("done"),
    );
    const asked: ReadTextFileRequest[] = [];
    const child = startAcp(cleanups, w);
    const answer = await asEditor(
      child,
      [],
      async (ctx) => {
        const { sessionId } = await ctx.request("session/new", { cwd: w.project, mcpServers: [] });
        return ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "look and write" }] });
      },
      {
        readTextFile: (params) => {
          asked.push(params);
          return { content: "unsaved line in the editor\n" };
        },
      },
    );
    expect(answer).toEqual({ stopReason: "end_turn" });
    const opened = toolMessage(fake.chatRequests[1]!, "call_open");
    expect(opened).toContain("unsaved line in the editor");
    expect(opened).not.toContain("what the disk holds");
    expect(toolMessage(fake.chatRequests[1]!, "call_secret")).toContain("Cannot read secret.txt");
    expect(asked.map((a) => a.path)).toEqual([join(w.project, "open.txt")]);
    expect(asked[0]).toMatchObject({ line: 1 });
    expect(readFileSync(join(w.project, "open.txt"), "utf8")).toBe("written by tau\n");
  }, 90_000);
});
