// How one ACP turn reads tau's events (SPEC-acp, "Updates", "Stop reasons"): only the submitted
// prompt's own events count; work statuses become the plan; the last answer's finish reason and the
// turn's outcome give the stop reason; a failure says what failed.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AcpTurn, clientServers, promptText } from "../../../handwritten/cli/acp/index.js";
import { readClientMcpServers } from "../../../handwritten/config/index.js";
import type { Delivery } from "../../../handwritten/cli/session-client.js";

const AGENT = "a-1";
const deliver = (name: string, data: Record<string, unknown>): Delivery => ({ seq: 1, event: { name, data } }) as unknown as Delivery;

/** A turn whose prompt `p-1` was submitted. */
function turn(root = "/project"): AcpTurn {
  const t = new AcpTurn(AGENT, "do it", root);
  t.updates(deliver("agent.prompt_submitted", { agent_id: AGENT, prompt_id: "p-0", source: "agent", mode: "queue", text: "do it" }));
  t.updates(deliver("agent.prompt_submitted", { agent_id: AGENT, prompt_id: "p-1", source: "human_ui", mode: "queue", text: "do it" }));
  return t;
}
const finished = (outcome: string, prompt = "p-1") => deliver("agent.outer_turn_finished", { agent_id: AGENT, prompt_id: prompt, outcome, rounds: 1 });
const response = (finish: string) => deliver("provider.response_finished", { agent_id: AGENT, prompt_id: "p-1", round: 0, model: "m", text: "t", tool_calls: [], finish_reason: finish });

describe("an ACP turn", () => {
  it("[acp.updates.mapping] takes only its own prompt's events, makes the plan from work statuses, and maps each end to its stop reason", () => {
    const t = turn();
    expect(t.promptId).toBe("p-1");
    // Another prompt's answer and another agent's are not this turn's.
    expect(t.updates(deliver("provider.response_updated", { agent_id: AGENT, prompt_id: "p-0", round: 0, text_delta: "no" }))).toEqual([]);
    expect(t.updates(deliver("provider.response_updated", { agent_id: "a-2", prompt_id: "p-1", round: 0, text_delta: "no" }))).toEqual([]);
    expect(t.updates(deliver("provider.response_updated", { agent_id: AGENT, prompt_id: "p-1", round: 0, reasoning_delta: "hm", text_delta: "yes" }))).toEqual([
      { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hm" } },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "yes" } },
    ]);
    const status = (phase: string, title: string, epoch: number) => t.updates(deliver("agent.work_status_set", { agent_id: AGENT, phase, title, epoch }));
    expect(status("planning", "read the code", 1)).toEqual([{ sessionUpdate: "plan", entries: [{ content: "read the code", priority: "medium", status: "in_progress" }] }]);
    expect(status("working", "fix the bug", 2)).toEqual([
      {
        sessionUpdate: "plan",
        entries: [
          { content: "read the code", priority: "medium", status: "completed" },
          { content: "fix the bug", priority: "medium", status: "in_progress" },
        ],
      },
    ]);
    expect((status("done", "fix the bug", 3)[0] as { entries: Array<{ status: string }> }).entries.map((e) => e.status)).toEqual(["completed", "completed"]);
    // A call's title, kind and absolute location.
    expect(t.updates(deliver("tool.request", { agent_id: AGENT, prompt_id: "p-1", call_id: "c1", tool: "edit", arguments_json: JSON.stringify({ path: "src/a.ts", old: "x", new: "y" }) }))).toEqual([
      { sessionUpdate: "tool_call", toolCallId: "c1", title: "edit src/a.ts", kind: "edit", status: "pending", locations: [{ path: "/project/src/a.ts" }], rawInput: { path: "src/a.ts", old: "x", new: "y" } },
    ]);

    expect(t.end(finished("completed", "p-0"))).toBeUndefined();
    expect(t.end(finished("completed"))).toEqual({ stopReason: "end_turn" });
    t.updates(response("length"));
    expect(t.end(finished("completed"))).toEqual({ stopReason: "max_tokens" });
    t.updates(response("content_filter"));
    expect(t.end(finished("completed"))).toEqual({ stopReason: "refusal" });
    expect(t.end(finished("cancelled"))).toEqual({ stopReason: "cancelled" });
    t.updates(deliver("provider.response_failed", { agent_id: AGENT, prompt_id: "p-1", round: 1, error_class: "authentication", diagnostic: "HTTP 401" }));
    expect(t.end(finished("failed"))).toEqual({ failed: "the prompt failed: authentication: HTTP 401" });
    expect(t.end(deliver("agent.prompt_failed", { agent_id: AGENT, prompt_id: "p-1", code: "no_model", diagnostic: "no provider serves m" }))).toEqual({ failed: "the prompt failed: no_model: no provider serves m" });
  });

  it("[acp.prompt.blocks] a prompt's blocks become one text: links by name and URI, embedded text in a context frame, the rest named", () => {
    expect(
      promptText([
        { type: "text", text: "look" },
        { type: "resource_link", name: "a.ts", uri: "file:///p/a.ts" },
        { type: "resource", resource: { uri: 'file:///p/"b".md', text: "B" } },
        { type: "resource", resource: { uri: "file:///p/c.bin", blob: "AAAA" } },
        { type: "image", data: "AAAA", mimeType: "image/png" },
      ]),
    ).toBe('look\n\n[a.ts](file:///p/a.ts)\n\n<context uri="file:///p/%22b%22.md">\nB\n</context>\n\n[file:///p/c.bin] (binary, not included)\n\n[image not included: tau takes text]');
  });
});

describe("an editor's MCP servers", () => {
  it("[acp.mcp.client-servers] become tau's entries (names made tau's, env and headers as maps); SSE, clashing and unusable names are refused; the daemon reads the file only when it is the user's alone, and removes it", () => {
    expect(
      clientServers([
        { name: "My-Files", command: "node", args: ["srv.js"], env: [{ name: "TOKEN", value: "t" }] },
        { type: "http", name: "remote", url: "https://mcp.example/mcp", headers: [{ name: "Authorization", value: "Bearer x" }] },
        { name: "bare", command: "srv", args: [], env: [] },
      ]),
    ).toEqual({ my_files: { command: "node", args: ["srv.js"], env: { TOKEN: "t" } }, remote: { url: "https://mcp.example/mcp", headers: { Authorization: "Bearer x" } }, bare: { command: "srv" } });
    expect(() => clientServers([{ type: "sse", name: "old", url: "https://x/sse", headers: [] }])).toThrow("uses SSE, which tau does not speak");
    expect(() => clientServers([{ name: "a-b", command: "x", args: [], env: [] }, { name: "a_b", command: "y", args: [], env: [] }])).toThrow("two MCP servers are named a_b");
    expect(() => clientServers([{ name: "!!!", command: "x", args: [], env: [] }])).toThrow("cannot be made a tau server name");

    const dir = mkdtempSync(join(tmpdir(), "tau-acp-mcp-"));
    try {
      const file = join(dir, "servers.json");
      writeFileSync(file, JSON.stringify({ mcp_servers: { files: { command: "node" } } }), { mode: 0o600 });
      expect(readClientMcpServers(file)).toEqual({ files: { command: "node" } });
      expect(existsSync(file)).toBe(false);
      writeFileSync(file, JSON.stringify({ mcp_servers: { files: { command: "node" } } }), { mode: 0o644 });
      expect(() => readClientMcpServers(file)).toThrow("must be a file of yours alone (0600)");
      expect(existsSync(file)).toBe(false);
      writeFileSync(file, JSON.stringify({ mcp_servers: { files: { command: "node", url: "https://x/mcp" } } }), { mode: 0o600 });
      expect(() => readClientMcpServers(file)).toThrow("give either command");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("an ACP turn's diffs", () => {
  it("[acp.updates.diffs] an edit's replacements and a write's new content go out as ACP diffs with the call; a write's old text is the project file's, none for a new one or one outside the project", () => {
    const root = mkdtempSync(join(tmpdir(), "tau-acp-diff-"));
    try {
      writeFileSync(join(root, "old.txt"), "before\n");
      const t = turn(root);
      const call = (id: string, tool: string, args: unknown) => t.updates(deliver("tool.request", { agent_id: AGENT, prompt_id: "p-1", call_id: id, tool, arguments_json: JSON.stringify(args) }))[0] as { content?: unknown };
      expect(call("e", "edit", { path: "a.ts", edits: [{ old_text: "x", new_text: "y" }, { old_text: "p", new_text: "q" }] }).content).toEqual([
        { type: "diff", path: join(root, "a.ts"), oldText: "x", newText: "y" },
        { type: "diff", path: join(root, "a.ts"), oldText: "p", newText: "q" },
      ]);
      expect(call("w1", "write", { path: "old.txt", content: "after\n" }).content).toEqual([{ type: "diff", path: join(root, "old.txt"), oldText: "before\n", newText: "after\n" }]);
      expect(call("w2", "write", { path: "new.txt", content: "fresh\n" }).content).toEqual([{ type: "diff", path: join(root, "new.txt"), oldText: null, newText: "fresh\n" }]);
      expect(call("w3", "write", { path: join(tmpdir(), "elsewhere.txt"), content: "z" }).content).toEqual([{ type: "diff", path: join(tmpdir(), "elsewhere.txt"), oldText: null, newText: "z" }]);
      // The unified diff of a call already shown as diffs is not sent again.
      expect(t.updates(deliver("tool.result_display", { agent_id: AGENT, call_id: "e", tool: "edit", outcome: "ok", display: { diff: "@@ -1 +1 @@\n-x\n+y" } }))).toEqual([]);
      expect(call("s", "shell", { command: "ls" }).content).toBeUndefined();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
