// MCP server configuration (SPEC-mcp, "Configuration"): names, entry shapes, the trusted project
// layer, and the extension instance each server runs as.
import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadMcpServers, mcpExtension, mcpServerNameProblem, trustProject } from "../../../handwritten/config/index.js";
import type { HarnessConfig } from "../../../generated/index.js";

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop() as string, { recursive: true, force: true });
});

function layout(): { config: string; project: string } {
  const d = mkdtempSync(join(tmpdir(), "tau-mcp-config-"));
  dirs.push(d);
  const config = join(d, "config");
  const project = join(d, "project");
  mkdirSync(config);
  mkdirSync(join(project, ".tau"), { recursive: true });
  return { config, project };
}

async function refusal(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ConfigError);
  return (e as Error).message;
}

describe("MCP server configuration", () => {
  it("accepts lowercase words joined by single underscores, and says how to fix any other name", () => {
    for (const ok of ["github", "my_tools", "a1", "x".repeat(32)]) expect(mcpServerNameProblem(ok)).toBeUndefined();
    for (const bad of ["my-tools", "My", "a__b", "_a", "a_", "1a", "x".repeat(33), "my server!", ""]) expect(mcpServerNameProblem(bad)).toMatch(/is not a server name/);
    expect(mcpServerNameProblem("My-Tools")).toContain('(try "my_tools")');
  });

  it("refuses an entry with both command and url, or neither, or keys of the other transport, naming the server and never a value", async () => {
    const l = layout();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ command: "x", url: "https://a.example/mcp" }, /not both/],
      [{}, /not neither/],
      [{ url: "https://a.example/mcp", env: { TOKEN: "s3cret-value" } }, /args, env and cwd are for a server started with command/],
      [{ command: "x", headers: { Authorization: "Bearer s3cret-value" } }, /headers are for a server reached by url/],
    ];
    for (const [entry, why] of cases) {
      const message = await refusal(loadMcpServers({ mcp_servers: { srv: entry } } as HarnessConfig, l.config, l.project));
      expect(message).toMatch(why);
      expect(message).toContain("mcp_servers.srv");
      expect(message).not.toContain("s3cret-value");
    }
  });

  it("[mcp.config.project-trust] reads .tau/mcp.yaml of a trusted project only (its entry replacing the user's); an untrusted project's file is ignored with a warning", async () => {
    const l = layout();
    writeFileSync(join(l.project, ".tau", "mcp.yaml"), "mcp_servers:\n  tools:\n    command: project-server\n  extra:\n    url: https://mcp.example.com/mcp\n");
    const config = { mcp_servers: { tools: { command: "user-server" }, off: { command: "x", enable: false } } } as HarnessConfig;
    const untrusted = await loadMcpServers(config, l.config, l.project);
    expect(untrusted.servers.map(([n, d]) => [n, d.command])).toEqual([["tools", "user-server"]]);
    expect(untrusted.warnings).toEqual([expect.stringContaining(`${join(l.project, ".tau", "mcp.yaml")} ignored: this project is not trusted`)]);
    trustProject(l.config, l.project);
    const trusted = await loadMcpServers(config, l.config, l.project);
    expect(trusted.servers.map(([n, d]) => [n, d.command ?? d.url])).toEqual([
      ["extra", "https://mcp.example.com/mcp"],
      ["tools", "project-server"],
    ]);
    expect(trusted.warnings).toEqual([]);
    // The project file is validated like any configuration file: file, line and key.
    writeFileSync(join(l.project, ".tau", "mcp.yaml"), "mcp_servers:\n  bad-name:\n    command: x\n");
    expect(await refusal(loadMcpServers({}, l.config, l.project))).toContain('"bad-name" is not a server name');
    writeFileSync(join(l.project, ".tau", "mcp.yaml"), "mcp_servers:\n  srv:\n    comand: x\n");
    expect(await refusal(loadMcpServers({}, l.config, l.project))).toMatch(/mcp\.yaml:3: mcp_servers\.srv.*unknown key/);
  });

  it("runs each server as instance mcp-SERVER with prefix mcp__SERVER__, not required, allowed time for a held start", () => {
    expect(mcpExtension("github", { command: "gh-mcp" })).toMatchObject({
      name: "mcp-github",
      kind: "tool",
      require: false,
      command: ["tau", "ext", "mcp"],
      tool_prefix: "mcp__github__",
      config: { server: "github", definition: { command: "gh-mcp" } },
    });
    expect(mcpExtension("slow", { command: "x", wait_at_start: true, startup_timeout_ms: 120_000 }).startup_timeout_seconds).toBe(130);
    expect(mcpExtension("huge", { command: "x", wait_at_start: true, startup_timeout_ms: 4_000_000_000 }).startup_timeout_seconds).toBe(3600);
  });
});
