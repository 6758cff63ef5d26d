// The MCP client of `tau ext mcp` (handwritten/extensions/mcp/server.ts) against real servers: the
// SDK-built stdio fixture (test/fixtures/mcp/server.mjs) and a loopback Streamable HTTP server built
// on the SDK (SPEC-mcp, "Tools", "Lifecycle").
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { InMemoryEventStore } from "@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { McpServer, type ServerState } from "../../../handwritten/extensions/mcp/server.js";
import type { ListedTool } from "../../../handwritten/extensions/mcp/names.js";
import type { McpServerConfig } from "../../../generated/index.js";
import { waitFor } from "../../support/wait.js";

const FIXTURE = join(import.meta.dirname, "../../fixtures/mcp/server.mjs");
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

/** A started client, with the states and listings it reported. */
async function started(def: McpServerConfig): Promise<{ server: McpServer; states: string[]; tools: ListedTool[][] }> {
  const states: string[] = [];
  const tools: ListedTool[][] = [];
  const server = new McpServer("fx", def, process.cwd(), {
    state: (s: ServerState, detail) => states.push(detail ? `${s}: ${detail}` : s),
    tools: (t) => tools.push([...t]),
    note: () => undefined,
    runs: () => undefined,
  });
  cleanups.push(() => server.stop());
  server.start();
  await server.firstStart;
  return { server, states, tools };
}

/** A loopback HTTP server for one test, and the URL of its `/mcp`. */
async function loopback(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const http: HttpServer = createServer(handle);
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(resolve);
      }),
  );
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
}

async function jsonBody(req: IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const chunk of req) parts.push(chunk as Buffer);
  return parts.length === 0 ? undefined : JSON.parse(Buffer.concat(parts).toString("utf8"));
}

function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), "tau-mcp-client-"));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

describe("the MCP client", () => {
  it("[mcp.tools.cancel-sends-cancelled] an aborted call sends notifications/cancelled, which the server sees; its progress reached the caller first", async () => {
    const calls = join(scratch(), "calls.txt");
    writeFileSync(calls, "");
    const { server, states } = await started({ command: process.execPath, args: [FIXTURE, "tools"], env: { MCP_FIXTURE_CALLS: calls } });
    expect(states).toEqual(["ready"]);
    const abort = new AbortController();
    const progress: string[] = [];
    const call = server.call("sleep", {}, abort.signal, (t) => progress.push(t));
    call.catch(() => {});
    await waitFor(() => progress.length > 0, "progress");
    expect(progress).toEqual(["1/2 halfway"]);
    abort.abort();
    await expect(call).rejects.toBeDefined();
    await waitFor(() => readFileSync(calls, "utf8").includes("cancelled:sleep"), "the server to see the cancel");
  });

  it("[mcp.tools.call-timeout] a call past call_timeout_ms fails naming the timeout, and the server is told to cancel it", async () => {
    const calls = join(scratch(), "calls.txt");
    writeFileSync(calls, "");
    const { server } = await started({ command: process.execPath, args: [FIXTURE, "tools"], env: { MCP_FIXTURE_CALLS: calls }, call_timeout_ms: 200 });
    await expect(server.call("sleep", {}, new AbortController().signal, () => {})).rejects.toThrow(
      "MCP server fx: sleep did not answer within its call timeout (200 ms); the call was cancelled",
    );
    await waitFor(() => readFileSync(calls, "utf8").includes("cancelled:sleep"), "the server to see the cancel");
    // The server is still there for the next call.
    expect(await server.call("echo", { text: "after" }, new AbortController().signal, () => {})).toMatchObject({ content: [{ type: "text", text: "echo: after" }] });
  });

  it("[mcp.tools.list-changed] notifications/tools/list_changed lists the tools again", async () => {
    const { server, tools } = await started({ command: process.execPath, args: [FIXTURE, "tools"] });
    expect(tools[0]!.map((t) => t.name)).not.toContain("grown");
    await server.call("grow", {}, new AbortController().signal, () => {});
    await waitFor(() => tools.length === 2, "a second listing");
    expect(tools[1]!.map((t) => t.name)).toContain("grown");
  });

  it("[mcp.requests.sampling-elicitation-refused] a server's sampling requests are refused, and its elicitation requests when the client has no one to ask", async () => {
    const { server } = await started({ command: process.execPath, args: [FIXTURE, "tools"] });
    const result = await server.call("ask", {}, new AbortController().signal, () => {});
    const text = String(result.content?.[0]?.text);
    expect(text).toMatch(/^sampling\/createMessage: refused \(.*Method not found.*\)\nelicitation\/create: refused \(.*Method not found.*\)$/);
  });

  it("[mcp.http.headers-and-tools] a Streamable HTTP server is listed and called, with the configured headers on every request", async () => {
    const seen: Array<string | undefined> = [];
    const http: HttpServer = createServer((req, res) => {
      seen.push(req.headers.authorization);
      const mcp = new Server({ name: "http-fixture", version: "1.0.0" }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: "whoami", inputSchema: { type: "object", properties: {} } }] }));
      mcp.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: "text", text: "an http tool" }] }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on("close", () => void transport.close());
      void mcp.connect(transport).then(() => transport.handleRequest(req, res));
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => http.close(resolve)));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    const { server, states, tools } = await started({ url, headers: { Authorization: "Bearer loopback-token" } });
    expect(states).toEqual(["ready"]);
    expect(tools[0]!.map((t) => t.name)).toEqual(["whoami"]);
    expect(await server.call("whoami", {}, new AbortController().signal, () => {})).toMatchObject({ content: [{ text: "an http tool" }] });
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(new Set(seen)).toEqual(new Set(["Bearer loopback-token"]));
  });

  it("[mcp.http.sse-resume] a long call whose SSE stream the server drops mid-call resumes it with Last-Event-ID, trying again while the server turns the first attempts down, and returns the call's result", async () => {
    const mcp = new Server({ name: "resumable", version: "1.0.0" }, { capabilities: { tools: {} } });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), eventStore: new InMemoryEventStore() });
    let callStream: ServerResponse | undefined;
    const resumedFrom: string[] = [];
    const progress: string[] = [];
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: "long", inputSchema: { type: "object", properties: {} } }] }));
    mcp.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const progressToken = req.params._meta?.progressToken;
      if (progressToken !== undefined) await extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: 1, total: 2, message: "halfway" } });
      // Once the client has seen the progress, the connection carrying the call's stream breaks; the
      // result comes once the client is back.
      await waitFor(() => progress.length > 0, "the client to see the progress");
      callStream?.destroy();
      await waitFor(() => resumedFrom.length > 2, "the client to resume the stream", 15_000);
      return { content: [{ type: "text", text: "finished after the drop" }] };
    });
    await mcp.connect(transport);
    cleanups.push(() => mcp.close());
    const url = await loopback((req, res) => {
      void (async () => {
        const body = req.method === "POST" ? await jsonBody(req) : undefined;
        if ((body as { method?: string } | undefined)?.method === "tools/call") callStream = res;
        const lastEventId = req.headers["last-event-id"];
        if (req.method === "GET" && typeof lastEventId === "string") {
          resumedFrom.push(lastEventId);
          // The server is briefly away: the first two attempts to resume are turned down.
          if (resumedFrom.length <= 2) return void res.writeHead(503).end();
        }
        await transport.handleRequest(req, res, body);
      })();
    });
    const { server, states } = await started({ url, call_timeout_ms: 15_000 });
    expect(states).toEqual(["ready"]);
    const result = await server.call("long", {}, new AbortController().signal, (t) => progress.push(t));
    expect(result).toMatchObject({ content: [{ type: "text", text: "finished after the drop" }] });
    expect(progress).toEqual(["1/2 halfway"]);
    expect(resumedFrom).toHaveLength(3);
    expect(new Set(resumedFrom).size).toBe(1);
    expect(server.state).toBe("ready");
  });

  it("[mcp.lifecycle.failed-then-retried] a server that cannot start is failed with its reason, retried with backoff, left failed after six failures in a row, and never leaks its env values into the error", async () => {
    const { server, states } = await started({ command: join(scratch(), "no-such-server"), env: { API_TOKEN: "s3cret-token-value" }, startup_timeout_ms: 5_000 });
    expect(server.state).toBe("failed");
    expect(states[0]).toMatch(/^failed: could not start: /);
    await waitFor(() => states.some((s) => s.startsWith("restarting")), "a retry");
    // Six failures in a row (0.5 + 1 + 2 + 4 + 8 s of backoff between them), then it stays failed, saying so.
    await waitFor(() => states.some((s) => s.includes("given up after 6 failures in a row")), "giving up", 40_000);
    expect(server.state).toBe("failed");
    expect(states.filter((s) => s.startsWith("restarting"))).toHaveLength(5);
    expect(states.join("\n")).not.toContain("s3cret-token-value");
  }, 60_000);
});
