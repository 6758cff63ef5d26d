// A stdio MCP server inside the sandbox (SPEC-mcp, "The sandbox"): the real client, the real sandbox
// runtime (bubblewrap, its proxy), the SDK-built fixture server probing what it may do, and a real
// loopback HTTP listener as the host it tries to reach.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { McpServerConfig } from "../../../generated/index.js";
import type { Roots } from "../../../handwritten/config/index.js";
import { McpServer } from "../../../handwritten/extensions/mcp/server.js";
import { ServerSandbox } from "../../../handwritten/extensions/shell/sandbox/index.js";

const FIXTURE = join(import.meta.dirname, "../../fixtures/mcp/server.mjs");
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

interface Place {
  readonly roots: Roots;
  readonly project: string;
  /** A folder outside the project and tau's roots. */
  readonly outside: string;
}

function place(): Place {
  const home = mkdtempSync(join(tmpdir(), "tau-mcp-sbx-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  const roots = { config: join(home, "config"), state: join(home, "state"), runtime: join(home, "run") };
  for (const d of [roots.config, roots.state, join(home, "project"), join(home, "outside")]) mkdirSync(d, { recursive: true });
  const cwd = process.cwd();
  cleanups.push(() => process.chdir(cwd));
  return { roots, project: join(home, "project"), outside: join(home, "outside") };
}

async function listener(): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server: Server = createServer((_req, res) => {
    hits++;
    res.end("hello from the host");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, hits: () => hits };
}

/** A sandboxed fixture server, started; the notes it reported. */
async function sandboxed(p: Place, allowedHosts: string[] = []): Promise<{ server: McpServer; notes: string[]; states: string[] }> {
  const notes: string[] = [];
  const states: string[] = [];
  const def: McpServerConfig = { command: process.execPath, args: [FIXTURE, "tools"] };
  const sandbox = new ServerSandbox({ owner: "mcp-fx", projectRoot: p.project, roots: p.roots, allowedHosts, refused: (host) => notes.push(`refused ${host}`) });
  const server = new McpServer("fx", def, p.project, { state: (s, d) => states.push(d ? `${s}: ${d}` : s), tools: () => {}, note: (_l, t) => notes.push(t), runs: () => {} }, sandbox);
  cleanups.push(() => server.stop());
  server.start();
  await server.firstStart;
  expect(states.at(-1), states.join("\n")).toBe("ready");
  return { server, notes, states };
}

const probe = async (server: McpServer, args: Record<string, string>): Promise<string> => {
  const r = await server.call("probe", args, new AbortController().signal, () => {});
  return (r.content as unknown as Array<{ text: string }>).map((c) => c.text).join("\n");
};

describe("a stdio MCP server inside the sandbox", () => {
  it("[mcp.sandbox.confined] writes in the project only, cannot read tau's secrets, and reaches no host off the allowlist (refused and reported); its allowed_hosts it reaches", async () => {
    const p = place();
    mkdirSync(join(p.roots.config, "secrets"), { recursive: true });
    writeFileSync(join(p.roots.config, "secrets", "openai"), "sk-secret-key");
    const host = await listener();
    const { server, notes } = await sandboxed(p);
    const answer = await probe(server, { write: join(p.project, "made.txt"), read: join(p.roots.config, "secrets", "openai"), get: host.url });
    expect(answer).toContain("write: ok");
    expect(readFileSync(join(p.project, "made.txt"), "utf8")).toContain("written by the fixture");
    expect(answer).not.toContain("sk-secret-key");
    expect(answer).toMatch(/read: failed/);
    expect(answer).toMatch(/get: failed/);
    expect(host.hits()).toBe(0);
    expect(notes).toContain("refused 127.0.0.1");
    const outside = await probe(server, { write: join(p.outside, "escaped.txt"), read: join(p.roots.config, "secrets") });
    expect(outside).toMatch(/write: failed/);
    expect(existsSync(join(p.outside, "escaped.txt"))).toBe(false);
    // tau's own configuration is not the server's to write either.
    expect(await probe(server, { write: join(p.roots.config, "harness.yaml") })).toMatch(/write: failed/);
    expect(existsSync(join(p.roots.config, "harness.yaml"))).toBe(false);
    await server.stop();

    const again = await sandboxed(p, ["127.0.0.1"]);
    expect(await probe(again.server, { get: host.url })).toContain("get: ok 200 hello from the host");
    expect(host.hits()).toBe(1);
  }, 60_000);

  it("[mcp.sandbox.protected-created] a protected file the server makes in the project (a shell start-up file) is moved out when it ends, and the move is reported; an ordinary file stays", async () => {
    const p = place();
    const { server, notes } = await sandboxed(p);
    expect(await probe(server, { write: join(p.project, ".bashrc") })).toContain("write: ok");
    expect(await probe(server, { write: join(p.project, "ordinary.txt") })).toContain("write: ok");
    await server.stop();
    expect(existsSync(join(p.project, ".bashrc"))).toBe(false);
    expect(existsSync(join(p.project, "ordinary.txt"))).toBe(true);
    expect(notes.join("\n")).toMatch(/^\[sandbox: moved .*\.bashrc out of the project/m);
  }, 60_000);
});
